package batch_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/batch"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// spyHook is a feature hook that looks at the database from outside the
// batch's transaction whenever it is called.
type spyHook struct {
	app *apps.App
	mu  sync.Mutex
	// rows of finds visible to another connection at each call, and the
	// number of rows each call carried.
	beforeSeen, afterSeen []int
	beforeRows, afterRows []int
	afterIDs              []int64
}

func (h *spyHook) visible(ctx context.Context) int {
	var n int
	if err := h.app.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+h.app.DB.Qualify("finds")).Scan(&n); err != nil {
		return -1
	}
	return n
}

func (h *spyHook) BeforeSave(ctx context.Context, call records.HookCall) ([]records.HookResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.beforeSeen, h.beforeRows = append(h.beforeSeen, h.visible(ctx)), append(h.beforeRows, len(call.Rows))
	out := make([]records.HookResult, len(call.Rows))
	for i, r := range call.Rows {
		// Every create calls the hook, with or without a label.
		label, sent := r.Values["label"].(string)
		out[i].Values = map[string]any{"size": len(label)}
		if sent {
			out[i].Values["label"] = label
		}
		if r.Values["label"] == "bad" {
			out[i].Errors = []records.FieldError{{Field: "label", Rule: "format", Message: "not a label"}}
		}
	}
	return out, nil
}

func (h *spyHook) AfterSave(ctx context.Context, call records.HookCall) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.afterSeen, h.afterRows = append(h.afterSeen, h.visible(ctx)), append(h.afterRows, len(call.Rows))
	for _, r := range call.Rows {
		h.afterIDs = append(h.afterIDs, r.ID)
	}
	return nil
}

func setup(t *testing.T, e store.Engine) (*apps.App, batch.ScopeFunc, *spyHook) {
	t.Helper()
	return appWith(t, e, []schema.FieldDef{{Name: "code", Required: true}, {Name: "label"}, {Name: "size", DBType: "int", Readonly: true}},
		auth.SuperAdmin, nil)
}

// appWith is the app "bt" with a table finds of fields, and its scopes:
// the caller at level with the row subset restrict on finds (none when
// nil), and the spy hook as a feature that sees label and computes size.
func appWith(t *testing.T, e store.Engine, fields []schema.FieldDef, level int, restrict func(a *apps.App) *records.Cond) (*apps.App, batch.ScopeFunc, *spyHook) {
	t.Helper()
	ctx, now := context.Background(), time.Now().UTC()
	a := testenv.NewApp(t, testenv.NewRegistry(t, e), "bt")
	if _, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "finds"}, now); err != nil {
		t.Fatal(err)
	}
	for _, f := range fields {
		if _, err := schema.AddField(ctx, a.DB, "finds", f, now); err != nil {
			t.Fatal(err)
		}
	}
	cat, err := schema.Load(ctx, a.DB)
	if err != nil {
		t.Fatal(err)
	}
	hook := &spyHook{app: a}
	scope := func(table string) (*records.Scope, error) {
		tb, ok := cat.Table(table)
		if !ok {
			return nil, schema.ErrTableNotFound
		}
		var rows *records.Cond
		if restrict != nil {
			rows = restrict(a)
		}
		return &records.Scope{DB: a.DB, Catalog: cat, Table: tb, Actor: &auth.Actor{UserID: 1, Privilege: level},
			Level: level, App: "bt", Restrict: rows, Features: []records.ActiveFeature{{Name: "spy", Columns: []string{"label"},
				Computed: []string{"size"}, Before: true, After: true, Hook: hook}}}, nil
	}
	return a, scope, hook
}

func parse(t *testing.T, body string) []batch.Op {
	t.Helper()
	var raw map[string]any
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatal(err)
	}
	ops, err := batch.Parse(raw, "bt", 0)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// BeforeSave runs once for the whole batch before the transaction, and
// AfterSave once after the commit: another connection already sees every
// row when it is called. A refused batch calls no AfterSave.
func TestHooksAroundTheTransaction(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		a, scope, hook := setup(t, e)
		ctx := context.Background()
		res, err := batch.Run(ctx, a.DB, scope, parse(t, `{"create":{"finds":[{"code":"1","label":"ab"},{"code":"2","label":"abc"},{"code":"3"}]}}`))
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 3 || res[2].ID != 3 {
			t.Fatalf("results: %+v", res)
		}
		if len(hook.beforeRows) != 1 || hook.beforeRows[0] != 3 || hook.beforeSeen[0] != 0 {
			t.Errorf("BeforeSave: calls with %v rows, saw %v rows", hook.beforeRows, hook.beforeSeen)
		}
		if len(hook.afterRows) != 1 || hook.afterRows[0] != 3 || hook.afterSeen[0] != 3 {
			t.Errorf("AfterSave: calls with %v rows, saw %v committed rows", hook.afterRows, hook.afterSeen)
		}
		var size int
		if err := a.DB.QueryRow(ctx, `SELECT "size" FROM `+a.DB.Qualify("finds")+` WHERE "id" = 2`).Scan(&size); err != nil || size != 3 {
			t.Errorf("computed column: %d %v", size, err)
		}

		// Refused: by the plugin (before the transaction), by validation
		// and by a missing record (inside it).
		for _, body := range []string{
			`{"create":{"finds":[{"code":"4","label":"ok"},{"code":"5","label":"bad"}]}}`,
			`{"create":{"finds":[{"code":"4","label":"ok"},{"label":"no code"}]}}`,
			`{"requests":[{"method":"POST","url":"/record/finds","body":{"code":"4","label":"ok"}},{"method":"POST","url":"/record/finds/99","body":{"code":"x"}}]}`,
		} {
			if _, err := batch.Run(ctx, a.DB, scope, parse(t, body)); err == nil {
				t.Errorf("%s: accepted", body)
			}
		}
		if n := hook.visible(ctx); n != 3 {
			t.Errorf("refused batches wrote: %d rows", n)
		}
		if len(hook.afterRows) != 1 {
			t.Errorf("AfterSave ran for refused batches: %v", hook.afterRows)
		}
	})
}

// raceHook computes size = len(label) + len(code) from the row's Record
// (code is a DependsOn field); on its first meddles calls it runs meddle
// first, another save of the record as another process would make while
// the plugin is called.
type raceHook struct {
	records []map[string]any
	meddles int
	meddle  func()
}

func (h *raceHook) BeforeSave(_ context.Context, call records.HookCall) ([]records.HookResult, error) {
	if h.meddles > 0 {
		h.meddles--
		h.meddle()
	}
	out := make([]records.HookResult, len(call.Rows))
	for i, r := range call.Rows {
		h.records = append(h.records, r.Record)
		label, _ := r.Record["label"].(string)
		code, _ := r.Record["code"].(string)
		out[i].Values = map[string]any{"size": len(label) + len(code)}
	}
	return out, nil
}

func (h *raceHook) AfterSave(context.Context, records.HookCall) error { return nil }

// A batch whose record changes between its hooks' read and its lock runs
// again from the requests as sent, on a fresh read; a record that keeps
// changing answers 409 save_conflict and nothing of the batch is written.
func TestBatchRunsAgainWhenTheRecordMoved(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		a, plain, _ := setup(t, e)
		ctx := context.Background()
		hook := &raceHook{}
		scope := func(table string) (*records.Scope, error) {
			s, err := plain(table)
			if err != nil {
				return nil, err
			}
			s.Features = []records.ActiveFeature{{Name: "race", Columns: []string{"label"}, Computed: []string{"size"},
				DependsOn: []string{"code"}, Before: true, Hook: hook}}
			return s, nil
		}
		noHooks := func() *records.Scope {
			s, _ := plain("finds")
			s.Features = nil
			return s
		}
		if _, _, err := records.Save(ctx, noHooks(), records.SaveInput{Core: map[string]any{"code": "1", "label": "ab"}}); err != nil {
			t.Fatal(err)
		}
		size := func() (code, label string, n int) {
			if err := a.DB.QueryRow(ctx, `SELECT "code", "label", "size" FROM `+a.DB.Qualify("finds")+` WHERE "id" = 1`).Scan(&code, &label, &n); err != nil {
				t.Fatal(err)
			}
			return code, label, n
		}

		// The batch sends code only (a DependsOn field): the hook is called
		// with the stored label; another save changes the label meanwhile.
		hook.meddles = 1
		hook.meddle = func() {
			if _, _, err := records.Save(ctx, noHooks(), records.SaveInput{ID: 1, Core: map[string]any{"label": "abcdef"}}); err != nil {
				t.Error(err)
			}
		}
		if _, err := batch.Run(ctx, a.DB, scope, parse(t, `{"update":{"finds":[{"id":1,"code":"1bb"}]}}`)); err != nil {
			t.Fatal(err)
		}
		if len(hook.records) != 2 || hook.records[0]["label"] != "ab" || hook.records[1]["label"] != "abcdef" || hook.records[1]["code"] != "1bb" {
			t.Errorf("hook records: %v, want two, the second with the new label and the sent code", hook.records)
		}
		if code, label, n := size(); code != "1bb" || label != "abcdef" || n != 9 {
			t.Errorf("stored %q %q size %d, want 1bb abcdef 9", code, label, n)
		}

		// A record that keeps changing.
		hook.records, hook.meddles = nil, records.MaxHookAttempts
		k := 0
		hook.meddle = func() {
			k++
			if _, _, err := records.Save(ctx, noHooks(), records.SaveInput{ID: 1, Core: map[string]any{"label": strings.Repeat("x", k)}}); err != nil {
				t.Error(err)
			}
		}
		_, err := batch.Run(ctx, a.DB, scope, parse(t, `{"update":{"finds":[{"id":1,"code":"zz"}]}}`))
		if e, ok := errs.As(err); !ok || e.Code != "save_conflict" {
			t.Fatalf("a record that keeps changing: %v, want save_conflict", err)
		}
		if code, _, _ := size(); code != "1bb" || len(hook.records) != records.MaxHookAttempts {
			t.Errorf("code %q after a conflict, %d hook calls", code, len(hook.records))
		}
	})
}
