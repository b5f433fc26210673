package server_test

import (
	"fmt"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestNamedIndexes: BraDypUS's clients name their indexes, may index the
// same columns twice under two names, read is_unique and tb, and delete
// by id; a name is unique in the app and must be an identifier.
func TestNamedIndexes(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api/config/table"
		create := func(tb, body string) (int, map[string]any) {
			return f.do(t, f.super, "POST", api+"/"+tb+"/indexes", body)
		}
		code, m := create("finds", `{"name":"idx_finds_label","columns":["label"],"is_unique":false}`)
		if code != 200 || m["code"] != "index_saved" {
			t.Fatalf("named: %d %v", code, m)
		}
		id := m["id"]
		if code, m := create("finds", `{"name":"idx_finds_label_2","columns":["label"]}`); code != 200 {
			t.Fatalf("same columns, another name: %d %v", code, m)
		}
		for _, tc := range []struct{ name, tb, body, code string }{
			{"name taken", "finds", `{"name":"idx_finds_label","columns":["inv"]}`, "index_already_exists"},
			{"name taken on another table", "sites", `{"name":"idx_finds_label","columns":["name"]}`, "index_already_exists"},
			{"not an identifier", "finds", `{"name":"idx; DROP TABLE finds","columns":["inv"]}`, "invalid_index"},
			{"a system name", "finds", `{"name":"sys_x","columns":["inv"]}`, "invalid_index"},
			{"no columns", "finds", `{"name":"idx_x"}`, "parameter_missing"},
		} {
			if code, m := create(tc.tb, tc.body); code < 400 || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		_, m = f.do(t, f.super, "GET", api+"/finds/indexes", "")
		first := m["data"].([]any)[0].(map[string]any)
		if first["name"] != "idx_finds_label" || first["tb"] != "finds" || first["is_unique"] != false {
			t.Fatalf("data: %v", m["data"])
		}
		if code, _ := f.do(t, f.super, "DELETE", fmt.Sprintf("%s/sites/indexes/%v", api, id), ""); code != 404 {
			t.Fatalf("delete by another table: %d", code)
		}
		if code, m := f.do(t, f.super, "DELETE", fmt.Sprintf("%s/finds/indexes/%v", api, id), ""); code != 200 {
			t.Fatalf("delete by id: %d %v", code, m)
		}
		if code, m := f.do(t, f.super, "DELETE", api+"/finds/indexes/idx_finds_label_2", ""); code != 200 {
			t.Fatalf("delete by name: %d %v", code, m)
		}
	})
}
