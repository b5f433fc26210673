package server_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestReadsOnAssumedVersionsSeeChangesBehindTheServer: the record read
// and the list run on the app's versions as the server last saw them
// (on PostgreSQL, checked in the read's own batch), and a change the
// server did not make (another node, the command line), to the account,
// its overrides and row subsets, its token version, the catalog or a
// table's features, still decides the very next read: the first answer,
// made from stale caches, is never sent. With nothing changed, a read is
// one round trip on PostgreSQL, the versions check included, and one
// statement on SQLite, the versions read with the record's row (a list's,
// with its page's first row).
func TestReadsOnAssumedVersionsSeeChangesBehindTheServer(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		ctx, db := t.Context(), f.app.DB
		find := f.create(t, f.writer, "finds", `{"label":"amph","weight":12.5}`)
		f.create(t, f.writer, "finds", `{"label":"bowl","weight":3}`)
		reader := f.userID(t, "reader@example.org")
		exec := func(q string, args ...any) {
			t.Helper()
			if _, err := db.Exec(ctx, q, args...); err != nil {
				t.Fatal(err)
			}
		}
		now := func() time.Time { return time.Now().UTC() }
		record := fmt.Sprintf("/dig/api/record/finds/%d", find)
		get := func(url string) (*httptest.ResponseRecorder, map[string]any, int64) {
			t.Helper()
			var n atomic.Int64
			req := httptest.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", f.reader)
			req = req.WithContext(store.CountRounds(req.Context(), &n))
			rec := httptest.NewRecorder()
			f.inst.Server.ServeHTTP(rec, req)
			// One answer, never a held one followed by another.
			var m map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
				t.Fatalf("GET %s: %v: %s", url, err, rec.Body.String())
			}
			if tags := rec.Header().Values("ETag"); len(tags) > 1 {
				t.Fatalf("GET %s: ETag %v", url, tags)
			}
			return rec, m, n.Load()
		}
		type want struct {
			status int
			has    string // in the body
			hasnt  string
		}
		steps := []struct {
			name       string
			change     func()
			read, list want
			listURL    string // default: the finds, total included
			readRounds int64  // on PostgreSQL with nothing changed since the step's change: 0 unchecked
		}{
			{name: "as it is", read: want{200, `"amph"`, ""}, list: want{200, `"total":2`, ""}, readRounds: 1},
			{name: "override without read in the database", change: func() {
				exec(`INSERT INTO `+db.Sys("table_privileges")+` (user_id, table_name, privilege, created_at, updated_at) VALUES (?, 'finds', ?, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`, reader, auth.Pending)
			}, read: want{403, `"not_enough_privilege"`, ""}, list: want{403, `"not_enough_privilege"`, ""}},
			{name: "override back to read with a row subset", change: func() {
				exec(`UPDATE `+db.Sys("table_privileges")+` SET privilege = ?, subset = ? WHERE user_id = ?`, auth.Reader, `{"label":{"_eq":"bowl"}}`, reader)
			}, read: want{404, "", `"amph"`}, list: want{200, `"total":1`, `"amph"`}, readRounds: 1},
			{name: "override removed", change: func() {
				exec(`DELETE FROM `+db.Sys("table_privileges")+` WHERE user_id = ?`, reader)
			}, read: want{200, `"amph"`, ""}, list: want{200, `"total":2`, ""}, readRounds: 1},
			{name: "a field added by another node", change: func() {
				if _, err := schema.AddField(ctx, db, "finds", schema.FieldDef{Name: "period", Label: "Period"}, now()); err != nil {
					t.Fatal(err)
				}
			}, read: want{200, `"period"`, ""}, list: want{200, `"period"`, ""}, listURL: "/dig/api/records/finds?columns=period", readRounds: 1},
			{name: "a field renamed by another node", change: func() {
				if _, err := schema.RenameField(ctx, db, "finds", "weight", "mass", now()); err != nil {
					t.Fatal(err)
				}
			}, read: want{200, `"mass"`, `"weight"`}, list: want{200, `"total":2`, ""}, listURL: "/dig/api/records/finds?sort_field=mass&columns=mass", readRounds: 1},
			{name: "a feature activated by another node", change: func() {
				spec := schema.FeatureSpec{Plugin: "test", Name: "dating", Columns: []schema.FieldDef{{Name: "dating_from", Label: "From", DBType: "int"}}}
				if err := schema.ActivateFeature(ctx, db, "finds", spec, now()); err != nil {
					t.Fatal(err)
				}
			}, read: want{200, `"dating_from"`, ""}, list: want{200, `"total":2`, ""}, readRounds: 1},
			{name: "the feature deactivated by another node", change: func() {
				if err := schema.DeactivateFeature(ctx, db, "finds", "dating", now()); err != nil {
					t.Fatal(err)
				}
			}, read: want{200, `"mass"`, `"dating_from"`}, list: want{200, `"total":2`, ""}, readRounds: 1},
			{name: "reader demoted to pending in the database", change: func() {
				exec(`UPDATE `+db.Sys("users")+` SET privilege = ? WHERE id = ?`, auth.Pending, reader)
			}, read: want{403, `awaiting approval`, ""}, list: want{403, `awaiting approval`, ""}},
			{name: "reader restored", change: func() {
				exec(`UPDATE `+db.Sys("users")+` SET privilege = ? WHERE id = ?`, auth.Reader, reader)
			}, read: want{200, `"amph"`, ""}, list: want{200, `"total":2`, ""}, readRounds: 1},
			{name: "token version bumped", change: func() {
				exec(`UPDATE `+db.Sys("users")+` SET token_version = token_version + 1 WHERE id = ?`, reader)
			}, read: want{401, `"token_invalidated"`, ""}, list: want{401, `"token_invalidated"`, ""}},
		}
		check := func(step, url string, w want) int64 {
			t.Helper()
			rec, _, rounds := get(url)
			body := rec.Body.String()
			if rec.Code != w.status || (w.has != "" && !strings.Contains(body, w.has)) || (w.hasnt != "" && strings.Contains(body, w.hasnt)) {
				t.Fatalf("%s: GET %s: %d %s, want %d with %q without %q", step, url, rec.Code, body, w.status, w.has, w.hasnt)
			}
			return rounds
		}
		for _, st := range steps {
			listURL := st.listURL
			if listURL == "" {
				listURL = "/dig/api/records/finds"
			}
			if st.change != nil {
				st.change()
			}
			// The read first, then the list, and the other way round:
			// each is the first request after a change once.
			check(st.name, record, st.read)
			check(st.name, listURL, st.list)
			listRounds := check(st.name+" (again)", listURL, st.list)
			if st.list.status == 200 && listRounds != 1 {
				t.Errorf("%s: GET %s took %d rounds with nothing changed, want 1 (the versions checked in the list's batch, on SQLite with its page)", st.name, listURL, listRounds)
			}
			rounds := check(st.name+" (again)", record, st.read)
			want := st.readRounds
			if st.read.status == 404 {
				want++ // no row to read them with: checked at the end
			}
			if st.readRounds > 0 && rounds != want {
				t.Errorf("%s: GET %s took %d rounds with nothing changed, want %d (the versions checked with the record's row)", st.name, record, rounds, want)
			}
		}
		// The list first after a change too.
		exec(`UPDATE `+db.Sys("users")+` SET token_version = token_version - 1 WHERE id = ?`, reader)
		check("token version back", "/dig/api/records/finds", want{200, `"total":2`, ""})
		// A deleted account's token stops working at once.
		check("before deletion", record, want{200, `"amph"`, ""})
		exec(`DELETE FROM `+db.Sys("users")+` WHERE id = ?`, reader)
		check("account deleted", record, want{401, `"user_deleted"`, ""})
	})
}
