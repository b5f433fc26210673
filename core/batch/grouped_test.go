package batch_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/batch"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// groupedSetup is setup's finds table (code required, label sent to the
// spy hook, size computed by it) with a unique tag and a lookup to itself
// (parent), the caller a writer whose row subset on finds hides the rows
// whose code starts with "hidden".
func groupedSetup(t *testing.T, e store.Engine) (*apps.App, batch.ScopeFunc, *spyHook) {
	t.Helper()
	return appWith(t, e, []schema.FieldDef{{Name: "code", Required: true}, {Name: "label"}, {Name: "size", DBType: "int", Readonly: true},
		{Name: "tag", Unique: true}, {Name: "parent", Type: "select", IDFromTb: "finds"}, {Name: "weight", DBType: "float"}},
		auth.Writer, func(a *apps.App) *records.Cond {
			return &records.Cond{SQL: a.DB.Qualify("finds") + `."code" NOT LIKE 'hidden%'`}
		})
}

// creates is a batch of n creates of finds; row(i) is the body of the i-th.
func creates(n int, row func(i int) string) string {
	reqs := make([]string, n)
	for i := range reqs {
		reqs[i] = `{"method":"POST","url":"/record/finds","body":` + row(i) + `}`
	}
	return `{"requests":[` + strings.Join(reqs, ",") + `]}`
}

// plainRow is a valid find; every seventh sends no label and every fifth
// no weight, so that runs of rows with other columns meet in one batch.
func plainRow(i int) string {
	s := fmt.Sprintf(`"code":"c%d","tag":"t%d"`, i, i)
	if i%7 != 0 {
		s += fmt.Sprintf(`,"label":"l%d"`, i%13)
	}
	if i%5 != 0 {
		s += fmt.Sprintf(`,"weight":%d.25`, i)
	}
	return "{" + s + "}"
}

// dump reads what a save leaves behind, ids and times aside where they
// differ by nature: the rows of finds (with their ids, which both ways
// hand out from 1), the history, the change log and the versions.
func dump(t *testing.T, a *apps.App) map[string][][]any {
	t.Helper()
	ctx := context.Background()
	out := map[string][][]any{}
	for name, q := range map[string]string{
		"finds":    `SELECT "id", "code", "label", "size", "tag", "parent", "weight", "creator" FROM ` + a.DB.Qualify("finds") + ` ORDER BY "id"`,
		"history":  `SELECT user_id, tb, record_id, action FROM ` + a.DB.Sys("history") + ` ORDER BY record_id`,
		"changes":  `SELECT tb, record_id, op, version, user_id, actor FROM ` + a.DB.Sys("changes") + ` WHERE tb = 'finds' ORDER BY record_id`,
		"versions": `SELECT tb, record_id, operation FROM ` + a.DB.Sys("versions") + ` ORDER BY record_id`,
	} {
		rows, err := a.DB.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				// One form per value across drivers and engines.
				switch x := v.(type) {
				case []byte:
					vals[i] = string(x)
				case int32:
					vals[i] = int64(x)
				}
			}
			out[name] = append(out[name], vals)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// A batch of creates writes the rows, history, change log and versions
// that the same creates sent one at a time write, and answers their ids
// in request order; the AfterSave hook gets them all once.
func TestGroupedCreatesWriteWhatSingleCreatesWrite(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		const n = 700 // several statements on either engine, and column sets that change
		batched, scope, hook := groupedSetup(t, e)
		res, err := batch.Run(ctx, batched.DB, scope, parse(t, creates(n, plainRow)))
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.ID != int64(i+1) || r.Code != "success_created" {
				t.Fatalf("result %d: %+v, want id %d", i, r, i+1)
			}
		}
		if len(hook.afterIDs) != n || hook.afterIDs[0] != 1 || hook.afterIDs[n-1] != n {
			t.Errorf("AfterSave ids: %d of them", len(hook.afterIDs))
		}

		single, scope1, _ := groupedSetup(t, e)
		for _, op := range parse(t, creates(n, plainRow)) {
			sc, err := scope1("finds")
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := records.Save(ctx, sc, op.Input); err != nil {
				t.Fatal(err)
			}
		}
		got, want := dump(t, batched), dump(t, single)
		for _, name := range []string{"finds", "history", "changes", "versions"} {
			if !reflect.DeepEqual(got[name], want[name]) {
				t.Errorf("%s: batch and single creates differ\nbatch:  %.600v\nsingle: %.600v", name, got[name], want[name])
			}
		}
		if len(got["finds"]) != n || len(got["changes"]) != n || len(got["history"]) != n {
			t.Errorf("%d finds, %d changes, %d history rows; want %d each", len(got["finds"]), len(got["changes"]), len(got["history"]), n)
		}
		// The ids follow the requests: find i+1 is the i-th request.
		for i, row := range got["finds"] {
			if row[1] != fmt.Sprintf("c%d", i) {
				t.Fatalf("find %v holds code %v, want c%d", row[0], row[1], i)
			}
		}
	})
}

// A batch of a thousand creates with one bad request anywhere writes
// nothing and names that request, as when the creates are applied one by
// one; runs broken by updates and deletes keep the batch's order.
func TestGroupedCreatesRefused(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		a, scope, _ := groupedSetup(t, e)
		// Two stored finds: one the caller sees (id 1, tag "taken"), one
		// outside its row subset (id 2).
		sc, _ := scope("finds")
		for _, core := range []map[string]any{{"code": "seen", "tag": "taken"}, {"code": "hidden-1"}} {
			if _, _, err := records.Save(ctx, sc, records.SaveInput{Core: core}); err != nil {
				t.Fatal(err)
			}
		}
		count := func(q string) int {
			var n int
			if err := a.DB.QueryRow(ctx, q).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		state := func() [3]int {
			return [3]int{count(`SELECT COUNT(*) FROM ` + a.DB.Qualify("finds")), count(`SELECT COUNT(*) FROM ` + a.DB.Sys("changes")),
				count(`SELECT COUNT(*) FROM ` + a.DB.Sys("history"))}
		}
		before := state()
		at := func(k int, bad string) func(int) string {
			return func(i int) string {
				if i == k {
					return bad
				}
				return fmt.Sprintf(`{"code":"c%d","tag":"t%d","parent":1}`, i, i)
			}
		}
		for _, c := range []struct {
			name    string
			body    string
			code    string
			index   int   // the "index" of the answer; -1: none
			indexes []int // validation_failed's indexes
		}{
			{name: "required field missing in the middle", body: creates(1000, at(500, `{"label":"no code"}`)),
				code: "validation_failed", index: -1, indexes: []int{500}},
			{name: "tag of a stored record", body: creates(1000, at(737, `{"code":"x","tag":"taken"}`)),
				code: "validation_failed", index: -1, indexes: []int{737}},
			{name: "tag of an earlier request", body: creates(1000, at(737, `{"code":"x","tag":"t12"}`)),
				code: "validation_failed", index: -1, indexes: []int{737}},
			{name: "two bad requests", body: creates(1000, func(i int) string {
				if i == 3 || i == 998 {
					return `{"code":"","tag":"t5"}`
				}
				return at(-1, "")(i)
			}), code: "validation_failed", index: -1, indexes: []int{3, 998}}, // 3 is not written: 5 may take t5, 998 not
			{name: "refused by the plugin", body: creates(1000, at(900, `{"code":"x","label":"bad"}`)),
				code: "validation_failed", index: -1, indexes: []int{900}},
			{name: "lookup outside the caller's rows", body: creates(1000, at(321, `{"code":"x","parent":2}`)),
				code: "validation_failed", index: -1, indexes: []int{321}},
			{name: "lookup to no record", body: creates(1000, at(654, `{"code":"x","parent":99999}`)),
				code: "validation_failed", index: -1, indexes: []int{654}},
			{name: "unknown field", body: creates(1000, at(400, `{"code":"x","nope":1}`)),
				code: "invalid_field", index: 400},
			{name: "wrong type", body: creates(1000, at(10, `{"code":"x","weight":"heavy"}`)),
				code: "validation_failed", index: -1, indexes: []int{10}},
			{name: "update of a hidden record between creates",
				body: `{"requests":[{"method":"POST","url":"/record/finds","body":{"code":"a","tag":"a"}},{"method":"POST","url":"/record/finds","body":{"code":"b"}},` +
					`{"method":"POST","url":"/record/finds/2","body":{"label":"x"}},{"method":"POST","url":"/record/finds","body":{"code":"c"}}]}`,
				code: "record_not_found", index: 2},
			{name: "delete of a missing record after creates",
				body: `{"requests":[{"method":"POST","url":"/record/finds","body":{"code":"a"}},{"method":"POST","url":"/record/finds","body":{"code":"b"}},` +
					`{"method":"DELETE","url":"/record/finds/77"}]}`,
				code: "record_not_found", index: 2},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := batch.Run(ctx, a.DB, scope, parse(t, c.body))
				ee, ok := errs.As(err)
				if !ok || ee.Code != c.code {
					t.Fatalf("answer %v, want %s", err, c.code)
				}
				if idx, has := ee.Extra["index"]; c.index >= 0 && idx != c.index || c.index < 0 && has {
					t.Errorf("index %v, want %d", idx, c.index)
				}
				if c.indexes != nil && !reflect.DeepEqual(ee.Extra["indexes"], c.indexes) {
					t.Errorf("indexes %v, want %v (errors %+v)", ee.Extra["indexes"], c.indexes, ee.Extra["errors"])
				}
				if got := state(); got != before {
					t.Errorf("finds, changes, history: %v after a refused batch, want %v", got, before)
				}
			})
		}

		// A mixed batch keeps its order: creates, an update of the first
		// new record, a delete, more creates. (In a fresh app: PostgreSQL's
		// sequences moved on with the refused batches.)
		a, scope, _ = groupedSetup(t, e)
		sc, _ = scope("finds")
		for _, core := range []map[string]any{{"code": "seen", "tag": "taken"}, {"code": "hidden-1"}} {
			if _, _, err := records.Save(ctx, sc, records.SaveInput{Core: core}); err != nil {
				t.Fatal(err)
			}
		}
		body := `{"requests":[{"method":"POST","url":"/record/finds","body":{"code":"m0"}},{"method":"POST","url":"/record/finds","body":{"code":"m1"}},` +
			`{"method":"POST","url":"/record/finds/3","body":{"label":"changed"}},{"method":"DELETE","url":"/record/finds/4"},` +
			`{"method":"POST","url":"/record/finds","body":{"code":"m4","parent":3}},{"method":"POST","url":"/record/finds","body":{"code":"m5"}}]}`
		res, err := batch.Run(ctx, a.DB, scope, parse(t, body))
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range res {
			ids = append(ids, r.ID)
		}
		if !reflect.DeepEqual(ids, []int64{3, 4, 3, 4, 5, 6}) {
			t.Errorf("ids %v", ids)
		}
		var label string
		if err := a.DB.QueryRow(ctx, `SELECT "label" FROM `+a.DB.Qualify("finds")+` WHERE "id" = 3`).Scan(&label); err != nil || label != "changed" {
			t.Errorf("update after creates: %q %v", label, err)
		}
		if n := count(`SELECT COUNT(*) FROM ` + a.DB.Qualify("finds")); n != 5 {
			t.Errorf("%d finds after the mixed batch, want 5", n)
		}
	})
}
