package server_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestSavesOnAssumedVersionsSeeChangesBehindTheServer: a save runs on the
// app's versions as the server last saw them (on PostgreSQL, checked by
// its transaction's first statement), and a change the server did not
// make (another node, the command line) to the account, its overrides,
// its token version or the catalog still decides the very next create or
// update: the first run, made from stale caches, writes nothing and its
// answer is never sent; the second run answers as a request that read the
// versions first. Each change is followed once by a create first and once
// by an update first.
func TestSavesOnAssumedVersionsSeeChangesBehindTheServer(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		for _, updateFirst := range []bool{false, true} {
			t.Run(map[bool]string{false: "create first", true: "update first"}[updateFirst], func(t *testing.T) {
				savesAfterChanges(t, e, updateFirst)
			})
		}
	})
}

// savesAfterChanges runs the steps of
// TestSavesOnAssumedVersionsSeeChangesBehindTheServer on a new app.
func savesAfterChanges(t *testing.T, e store.Engine, updateFirst bool) {
	f := newDig(t, e)
	ctx, db := t.Context(), f.app.DB
	find := f.create(t, f.writer, "finds", `{"label":"amph","weight":12.5}`)
	writer := f.userID(t, "writer@example.org")
	now := func() time.Time { return time.Now().UTC() }
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	// state is what the table holds: its rows and the record's values.
	state := func(col string) string {
		t.Helper()
		var n int
		var v *string
		if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Qualify("finds")).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow(ctx, `SELECT CAST(`+db.Engine.Quote(col)+` AS TEXT) FROM `+db.Qualify("finds")+` WHERE id = ?`, find).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v == nil {
			return fmt.Sprintf("%d rows, <null>", n)
		}
		return fmt.Sprintf("%d rows, %s", n, *v)
	}
	save := func(body string) (int, string) {
		t.Helper()
		req := httptest.NewRequest("POST", "/dig/api/record/finds", strings.NewReader(body))
		req.Header.Set("Authorization", f.writer)
		rec := httptest.NewRecorder()
		f.inst.Server.ServeHTTP(rec, req)
		if tags := rec.Header().Values("ETag"); len(tags) > 1 {
			t.Fatalf("POST %s: ETag %v (two answers)", body, tags)
		}
		return rec.Code, rec.Body.String()
	}
	type want struct {
		status int
		has    string
	}
	steps := []struct {
		name   string
		change func()
		col    string // the record's column to watch
		send   string // the field the saves write (default col)
		create want
		update want
		value  string // the update's new value of col
	}{
		{name: "as it is", col: "weight", create: want{200, `"success_created"`}, update: want{200, `"success_saved"`}, value: "7.5"},
		{name: "override to read only", change: func() {
			exec(`INSERT INTO `+db.Sys("table_privileges")+` (user_id, table_name, privilege, created_at, updated_at) VALUES (?, 'finds', ?, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`, writer, auth.Reader)
		}, col: "weight", create: want{403, `"not_enough_privilege"`}, update: want{403, `"not_enough_privilege"`}, value: "8.5"},
		{name: "override removed", change: func() {
			exec(`DELETE FROM `+db.Sys("table_privileges")+` WHERE user_id = ?`, writer)
		}, col: "weight", create: want{200, `"success_created"`}, update: want{200, `"success_saved"`}, value: "9.5"},
		{name: "a field added by another node", change: func() {
			if _, err := schema.AddField(ctx, db, "finds", schema.FieldDef{Name: "period", Label: "Period"}, now()); err != nil {
				t.Fatal(err)
			}
		}, col: "period", create: want{200, `"success_created"`}, update: want{200, `"success_saved"`}, value: "Roman"},
		{name: "a field renamed by another node", change: func() {
			if _, err := schema.RenameField(ctx, db, "finds", "period", "epoch", now()); err != nil {
				t.Fatal(err)
			}
		}, col: "epoch", create: want{200, `"success_created"`}, update: want{200, `"success_saved"`}, value: "Greek"},
		{name: "the old name after the rename", change: func() {
			if _, err := schema.RenameField(ctx, db, "finds", "epoch", "era", now()); err != nil {
				t.Fatal(err)
			}
		}, col: "era", send: "epoch", create: want{400, `"invalid_field"`}, update: want{400, `"invalid_field"`}, value: "Bronze"},
		{name: "writer demoted to reader in the database", change: func() {
			exec(`UPDATE `+db.Sys("users")+` SET privilege = ? WHERE id = ?`, auth.Reader, writer)
		}, col: "weight", create: want{403, `"not_enough_privilege"`}, update: want{403, `"not_enough_privilege"`}, value: "10.5"},
		{name: "writer restored", change: func() {
			exec(`UPDATE `+db.Sys("users")+` SET privilege = ? WHERE id = ?`, auth.Writer, writer)
		}, col: "weight", create: want{200, `"success_created"`}, update: want{200, `"success_saved"`}, value: "11.5"},
		{name: "token version bumped", change: func() {
			exec(`UPDATE `+db.Sys("users")+` SET token_version = token_version + 1 WHERE id = ?`, writer)
		}, col: "weight", create: want{401, `"token_invalidated"`}, update: want{401, `"token_invalidated"`}, value: "12.25"},
		{name: "token version back", change: func() {
			exec(`UPDATE `+db.Sys("users")+` SET token_version = token_version - 1 WHERE id = ?`, writer)
		}, col: "weight", create: want{200, `"success_created"`}, update: want{200, `"success_saved"`}, value: "13.5"},
	}
	label := 0
	for _, st := range steps {
		name := st.name
		if st.change != nil {
			st.change()
		}
		send := st.send
		if send == "" {
			send = st.col
		}
		before := state(st.col)
		ops := []func(){
			func() {
				label++
				code, body := save(fmt.Sprintf(`{"core":{"label":"n%d","%s":%q}}`, label, send, st.value))
				if code != st.create.status || !strings.Contains(body, st.create.has) {
					t.Fatalf("%s: create: %d %s, want %d %s", name, code, body, st.create.status, st.create.has)
				}
			},
			func() {
				code, body := save(fmt.Sprintf(`{"id":%d,"core":{%q:%q}}`, find, send, st.value))
				if code != st.update.status || !strings.Contains(body, st.update.has) {
					t.Fatalf("%s: update: %d %s, want %d %s", name, code, body, st.update.status, st.update.has)
				}
			},
		}
		if updateFirst {
			ops[0], ops[1] = ops[1], ops[0]
		}
		for _, op := range ops {
			op()
		}
		after := state(st.col)
		if st.create.status != 200 && after != before {
			t.Errorf("%s: refused saves changed the table: %s, then %s", name, before, after)
		}
		if st.create.status == 200 && !strings.HasSuffix(after, st.value) {
			t.Errorf("%s: after the saves: %s, want the record's %s %s", name, after, st.col, st.value)
		}
	}
}
