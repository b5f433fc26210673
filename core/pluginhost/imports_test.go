package pluginhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// What the BraDypUS major upgrade uses to fill a plugin's storage: a
// value sealed by the Manager opens through the plugin's Host.Open; rows
// inserted in the caller's transaction keep their ids (in an application
// where the plugin never ran, so its tables are made there), roll back
// with it, and the plugin's own later rows follow them.
func TestManagerSealAndInsertSystemRows(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), nil)
		ctx := context.Background()
		later := testenv.NewApp(t, f.reg, "later")

		sealed, err := f.mgr.Seal("testplug", "later", "api_key", "hunter2")
		if err != nil || !strings.HasPrefix(sealed, "enc:v1:") || strings.Contains(sealed, "hunter2") {
			t.Fatalf("seal: %q %v", sealed, err)
		}
		open, _ := json.Marshal(map[string]string{"op": "open", "app": "later", "purpose": "api_key", "value": sealed})
		if o := f.sys("testplug", string(open)); o["clear"] != "hunter2" {
			t.Fatalf("the plugin opens: %v", o)
		}
		for name, c := range map[string]struct{ plugin, app, purpose string }{
			"unknown plugin": {"nobody", "later", "api_key"}, "no app": {"testplug", "", "api_key"}, "no purpose": {"testplug", "later", ""},
		} {
			if _, err := f.mgr.Seal(c.plugin, c.app, c.purpose, "x"); err == nil {
				t.Errorf("%s: sealed", name)
			}
		}

		insert := func(table string, rows ...map[string]any) error {
			return later.DB.Tx(ctx, func(tx *store.DB) error {
				return f.mgr.InsertSystemRows(ctx, tx, "testplug", table, rows)
			})
		}
		if err := insert("notes", map[string]any{"id": int64(5), "body": "five", "n": "5", "done": true},
			map[string]any{"id": 9, "body": "nine"}, map[string]any{"body": "next"}); err != nil {
			t.Fatal(err)
		}
		// A bad row rolls the whole call back with the caller's transaction.
		bad := []map[string]any{{"id": 20, "body": "x"}, {"password": "x"}}
		if err := insert("notes", bad...); err == nil || !strings.Contains(err.Error(), "invalid_value") {
			t.Errorf("unknown column: %v", err)
		}
		if err := insert("notes", map[string]any{"id": 5, "body": "again"}); err == nil {
			t.Error("an id taken twice was inserted")
		}
		if err := insert("users", map[string]any{"body": "x"}); err == nil {
			t.Error("a table outside the manifest")
		}
		if err := f.mgr.InsertSystemRows(ctx, later.DB, "nobody", "notes", nil); err == nil {
			t.Error("an unknown plugin")
		}
		r := rowsOf(f.sys("testplug", `{"op":"read","app":"later","table":"notes"}`))
		if len(r) != 3 || r[0]["id"] != 5.0 || r[0]["n"] != 5.0 || r[0]["done"] != true || r[1]["id"] != 9.0 || r[2]["id"] != 10.0 {
			t.Fatalf("rows: %v", r)
		}
		if w := f.sys("testplug", `{"op":"write","app":"later","table":"notes","rows":[{"body":"mine"}]}`); fmt.Sprint(w["ids"]) != "[11]" {
			t.Errorf("the plugin's next row: %v", w)
		}
	})
}
