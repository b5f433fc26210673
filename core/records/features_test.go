package records_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// labelHook stands in for a plugin process: it fills "year" from "label"
// (a computed column), refuses the label "bad", and records what it saw.
type labelHook struct {
	calls []records.HookCall
	after int
	fail  error
}

func (h *labelHook) BeforeSave(_ context.Context, call records.HookCall) ([]records.HookResult, error) {
	if h.fail != nil {
		return nil, h.fail
	}
	h.calls = append(h.calls, call)
	out := make([]records.HookResult, len(call.Rows))
	for i, r := range call.Rows {
		label, _ := r.Values["label"].(string)
		if label == "bad" {
			out[i].Errors = []records.FieldError{{Field: "label", Rule: "format", Message: "not a label"}}
			continue
		}
		out[i].Values = map[string]any{"label": strings.ToUpper(label), "year": float64(len(label))}
	}
	return out, nil
}

func (h *labelHook) AfterSave(context.Context, records.HookCall) error { h.after++; return nil }

func TestFeatureHooksOnSave(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx, now := context.Background(), time.Now().UTC()
		a := testenv.NewApp(t, testenv.NewRegistry(t, e), "hooks")
		if _, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "units"}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.AddField(ctx, a.DB, "units", schema.FieldDef{Name: "code"}, now); err != nil {
			t.Fatal(err)
		}
		spec := schema.FeatureSpec{Plugin: "labels", Name: "labels", Computed: []string{"year"},
			Columns: []schema.FieldDef{{Name: "label"}, {Name: "year", DBType: "int"}}}
		if err := schema.ActivateFeature(ctx, a.DB, "units", spec, now); err != nil {
			t.Fatal(err)
		}
		cat, _ := schema.Load(ctx, a.DB)
		cat = cat.Visible()
		units, _ := cat.Table("units")
		hook := &labelHook{}
		scope := func(h records.FeatureHook) *records.Scope {
			return &records.Scope{DB: a.DB, Catalog: cat, Table: units, Level: auth.Writer, App: "hooks",
				Actor: &auth.Actor{UserID: 1, Privilege: auth.Writer},
				Features: []records.ActiveFeature{{Name: "labels", Columns: []string{"label", "year"}, Computed: []string{"year"},
					Before: true, After: true, Required: true, Hook: h}}}
		}
		read := func(id int64) map[string]any {
			rec, err := records.Read(ctx, scope(hook), id)
			if err != nil {
				t.Fatal(err)
			}
			core := rec["core"].(map[string]any)
			return map[string]any{"label": core["label"].(map[string]any)["val"], "year": core["year"].(map[string]any)["val"]}
		}

		// The plugin patches the label and computes year; the client's year is ignored.
		id, _, err := records.Save(ctx, scope(hook), records.SaveInput{Core: map[string]any{"code": "US1", "label": "abc", "year": 999}})
		if err != nil {
			t.Fatal(err)
		}
		if got := read(id); got["label"] != "ABC" || got["year"] != int64(3) {
			t.Fatalf("after save: %v", got)
		}
		if len(hook.calls) != 1 || hook.calls[0].Rows[0].Values["year"] != nil || hook.after != 1 {
			t.Fatalf("the hook saw %+v (after %d): the client's computed value must not reach it", hook.calls, hook.after)
		}
		// A save that does not touch the feature's columns calls nothing.
		if _, _, err := records.Save(ctx, scope(hook), records.SaveInput{ID: id, Core: map[string]any{"code": "US1b"}}); err != nil {
			t.Fatal(err)
		}
		if len(hook.calls) != 1 {
			t.Fatalf("the hook was called for a save without its columns")
		}
		// The plugin's field errors refuse the save with validation_failed, nothing written.
		_, _, err = records.Save(ctx, scope(hook), records.SaveInput{ID: id, Core: map[string]any{"label": "bad", "code": "changed"}})
		if e, ok := errs.As(err); !ok || e.Code != "validation_failed" {
			t.Fatalf("plugin field error: %v", err)
		}
		if got := read(id); got["label"] != "ABC" {
			t.Fatalf("a refused save wrote: %v", got)
		}
		// A required plugin that is down (no hook) or failing refuses the save.
		for name, h := range map[string]records.FeatureHook{"down": nil, "failing": &labelHook{fail: errors.New("connection refused")}} {
			_, _, err := records.Save(ctx, scope(h), records.SaveInput{Core: map[string]any{"code": "US2", "label": "x"}})
			if e, ok := errs.As(err); !ok || e.Code != "plugin_unavailable" {
				t.Fatalf("%s plugin: %v", name, err)
			}
		}
		var n int
		if err := a.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+a.DB.Qualify("units")).Scan(&n); err != nil || n != 1 {
			t.Fatalf("rows after refused saves: %d %v", n, err)
		}
		// With the plugin down, a record that leaves the feature's columns
		// empty can still be created.
		if _, _, err := records.Save(ctx, scope(nil), records.SaveInput{Core: map[string]any{"code": "US3"}}); err != nil {
			t.Fatalf("create without the feature's columns while the plugin is down: %v", err)
		}
		// A save on assumed versions (a request that may run again)
		// calls the plugin only once they are known to hold: when they
		// moved, neither the plugin nor the table sees anything.
		v, err := a.DB.Counters(ctx, "schema_version")
		if err != nil {
			t.Fatal(err)
		}
		calls := len(hook.calls)
		moved := store.WithAssumed(ctx, a.DB.Assume([]string{"schema_version"}, []int64{v[0] + 1}))
		if _, _, err := records.Save(moved, scope(hook), records.SaveInput{Core: map[string]any{"code": "US4", "label": "abc"}}); !errors.Is(err, store.ErrAssumptionFailed) {
			t.Fatalf("save on moved versions: %v", err)
		}
		if len(hook.calls) != calls {
			t.Fatalf("the plugin was called by a save on moved versions")
		}
		held := store.WithAssumed(ctx, a.DB.Assume([]string{"schema_version"}, v))
		if _, _, err := records.Save(held, scope(hook), records.SaveInput{Core: map[string]any{"code": "US4", "label": "abc"}}); err != nil {
			t.Fatalf("save on held versions: %v", err)
		}
		if len(hook.calls) != calls+1 {
			t.Fatalf("the plugin was not called by a save on held versions")
		}
		if err := a.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+a.DB.Qualify("units")).Scan(&n); err != nil || n != 3 {
			t.Fatalf("rows after the saves on assumed versions: %d %v", n, err)
		}
	})
}

// sumHook computes total = a + b from the row's Record; before answering
// it runs meddle (another save of the record, as another server process
// would make while the plugin is called) for as many calls as meddles.
type sumHook struct {
	calls   []records.HookRow
	meddles int
	meddle  func()
}

func (h *sumHook) BeforeSave(_ context.Context, call records.HookCall) ([]records.HookResult, error) {
	out := make([]records.HookResult, len(call.Rows))
	for i, r := range call.Rows {
		h.calls = append(h.calls, r)
		vals := map[string]any{"total": asInt(r.Record["a"]) + asInt(r.Record["b"])}
		for k, v := range r.Values {
			vals[k] = v
		}
		out[i].Values = vals
	}
	if h.meddles > 0 {
		h.meddles--
		h.meddle()
	}
	return out, nil
}

// asInt reads a number of a Record: stored (int64) or as sent (int).
func asInt(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	}
	return 0
}

func (h *sumHook) AfterSave(context.Context, records.HookCall) error { return nil }

// The hooks get the row as it will be stored (Record); when the record
// changes between that read and the save's lock, the save runs the hooks
// again on a fresh read, and after MaxHookAttempts answers 409
// save_conflict with nothing written.
func TestHookRecordVersionCheck(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx, now := context.Background(), time.Now().UTC()
		a := testenv.NewApp(t, testenv.NewRegistry(t, e), "sums")
		if _, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "units"}, now); err != nil {
			t.Fatal(err)
		}
		spec := schema.FeatureSpec{Plugin: "sums", Name: "sums", Computed: []string{"total"},
			Columns: []schema.FieldDef{{Name: "a", DBType: "int"}, {Name: "b", DBType: "int"}, {Name: "total", DBType: "int"}}}
		if err := schema.ActivateFeature(ctx, a.DB, "units", spec, now); err != nil {
			t.Fatal(err)
		}
		cat, _ := schema.Load(ctx, a.DB)
		cat = cat.Visible()
		units, _ := cat.Table("units")
		scope := func(h records.FeatureHook) *records.Scope {
			s := &records.Scope{DB: a.DB, Catalog: cat, Table: units, Level: auth.Writer, App: "sums",
				Actor: &auth.Actor{UserID: 1, Privilege: auth.Writer}}
			if h != nil {
				s.Features = []records.ActiveFeature{{Name: "sums", Columns: []string{"a", "b", "total"}, Computed: []string{"total"},
					Before: true, Hook: h}}
			}
			return s
		}
		stored := func(id int64) (int64, int64, int64) {
			var x, y, z int64
			if err := a.DB.QueryRow(ctx, `SELECT "a", "b", "total" FROM `+a.DB.Qualify("units")+` WHERE "id" = ?`, id).Scan(&x, &y, &z); err != nil {
				t.Fatal(err)
			}
			return x, y, z
		}
		h := &sumHook{}
		id, _, err := records.Save(ctx, scope(h), records.SaveInput{Core: map[string]any{"a": 1, "b": 2}})
		if err != nil {
			t.Fatal(err)
		}
		if x, y, z := stored(id); x != 1 || y != 2 || z != 3 {
			t.Fatalf("after create: %d %d %d", x, y, z)
		}

		// Another save sets b while the hook computes with the old b: the
		// save runs the hook again, with the new b in its Record.
		h.calls, h.meddles = nil, 1
		h.meddle = func() {
			if _, _, err := records.Save(ctx, scope(nil), records.SaveInput{ID: id, Core: map[string]any{"b": 40}}); err != nil {
				t.Error(err)
			}
		}
		if _, _, err := records.Save(ctx, scope(h), records.SaveInput{ID: id, Core: map[string]any{"a": 10}}); err != nil {
			t.Fatal(err)
		}
		if len(h.calls) != 2 || h.calls[0].Record["b"] != int64(2) || h.calls[1].Record["b"] != int64(40) ||
			h.calls[1].Record["a"] != 10 || h.calls[1].Record["id"] != id {
			t.Errorf("hook calls: %+v, want two, the second with the new b and the sent a", h.calls)
		}
		if x, y, z := stored(id); x != 10 || y != 40 || z != 50 {
			t.Errorf("stored: a %d b %d total %d, want 10 40 50", x, y, z)
		}

		// A record that keeps changing: 409 save_conflict, the client's
		// change not written.
		h.calls, h.meddles = nil, records.MaxHookAttempts
		n := int64(100)
		h.meddle = func() {
			n++
			if _, _, err := records.Save(ctx, scope(nil), records.SaveInput{ID: id, Core: map[string]any{"b": n}}); err != nil {
				t.Error(err)
			}
		}
		_, _, err = records.Save(ctx, scope(h), records.SaveInput{ID: id, Core: map[string]any{"a": 7}})
		if e, ok := errs.As(err); !ok || e.Code != "save_conflict" || e.Kind != errs.Conflict {
			t.Fatalf("a record that keeps changing: %v, want save_conflict", err)
		}
		if len(h.calls) != records.MaxHookAttempts {
			t.Errorf("%d hook calls, want %d", len(h.calls), records.MaxHookAttempts)
		}
		if x, y, _ := stored(id); x != 10 || y != n {
			t.Errorf("stored a %d b %d: the refused save wrote", x, y)
		}
	})
}
