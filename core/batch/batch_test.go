package batch_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/batch"
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
	ctx, now := context.Background(), time.Now().UTC()
	a := testenv.NewApp(t, testenv.NewRegistry(t, e), "bt")
	if _, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "finds"}, now); err != nil {
		t.Fatal(err)
	}
	for _, f := range []schema.FieldDef{{Name: "code", Required: true}, {Name: "label"}, {Name: "size", DBType: "int", Readonly: true}} {
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
		return &records.Scope{DB: a.DB, Catalog: cat, Table: tb, Actor: &auth.Actor{UserID: 1, Privilege: auth.SuperAdmin},
			Level: auth.SuperAdmin, App: "bt", Features: []records.ActiveFeature{{Name: "spy", Columns: []string{"label"},
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
