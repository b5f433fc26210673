package server_test

import (
	"fmt"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestConfigRelations(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newConfigEnv(t, e)
		pg := e == store.Postgres
		list := env.super(t, 200, "GET", "/config/relations", "")
		rels := list["relations"].([]any)
		if len(rels) != 1 || list["enforced"] != pg {
			t.Fatalf("GET /config/relations: %v", list)
		}
		r := rels[0].(map[string]any)
		if r["from_tb"] != "finds" || r["to_col"] != "id" || r["on_delete"] != "RESTRICT" || r["enforced"] != pg {
			t.Errorf("relation %v", r)
		}
		id := int64(r["id"].(float64))

		env.super(t, 200, "POST", "/config/tables", `{"name":"people"}`)
		env.super(t, 200, "POST", "/config/table/people/field", `{"name":"site_code","db_type":"int"}`)
		env.super(t, 200, "POST", "/config/table/people/field", `{"name":"note"}`)
		created := env.super(t, 200, "POST", "/config/relations",
			`{"from_tb":"people","from_col":"site_code","to_tb":"sites","to_col":"code","on_delete":"set_null","on_update":"cascade"}`)
		nr := created["relation"].(map[string]any)
		if created["code"] != "relation_created" || created["enforced"] != pg || nr["on_delete"] != "SET NULL" {
			t.Fatalf("POST: %v", created)
		}
		nid := int64(nr["id"].(float64))
		env.sql(t, `INSERT INTO `+env.app.DB.Qualify("people")+` (site_code) VALUES (10)`)

		env.refusals(t, []testenv.Scenario{
			refusal("POST", "/config/relations", `{"from_tb":"finds","from_col":"site_ref","to_tb":"sites"}`, 409, "relation_already_exist"),
			refusal("POST", "/config/relations", `{"from_tb":"finds_radiocarbon","from_col":"lab","to_tb":"finds"}`, 400, "invalid_relation"),
			refusal("POST", "/config/relations", `{"from_tb":"people","from_col":"note","to_tb":"sites"}`, 400, "invalid_relation", `"parameter":"from_col"`),
			refusal("POST", "/config/relations", `{"from_tb":"finds","from_col":"site","to_tb":"sites","to_col":"name"}`, 400, "invalid_relation", `"parameter":"to_col"`),
			refusal("POST", "/config/relations", `{"from_tb":"finds","from_col":"site","to_tb":"sites","on_delete":"drop"}`, 400, "invalid_relation", `"allowed":["RESTRICT","CASCADE","SET NULL","NO ACTION"]`),
			refusal("POST", "/config/relations", `{"from_tb":"finds"}`, 400, "parameter_missing"),
			refusal("POST", "/config/relations", `{"from_tb":{"a":1}}`, 400, "invalid_json"),
			refusal("PUT", "/config/relations/9999", `{"on_delete":"cascade"}`, 404, "relation_not_found"),
			refusal("PUT", "/config/relations/abc", `{}`, 400, "invalid_id"),
			refusal("PUT", fmt.Sprintf("/config/relations/%d", nid), `{"to_col":"id"}`, 400, "relation_violated"),
			refusal("DELETE", "/config/relations/9999", "", 404, "relation_not_found"),
			refusal("DELETE", "/config/relations/0", "", 400, "invalid_id"),
		})

		up := env.super(t, 200, "PUT", fmt.Sprintf("/config/relations/%d", id), `{"on_delete":"cascade"}`)
		if ur := up["relation"].(map[string]any); up["code"] != "relation_saved" || ur["on_delete"] != "CASCADE" || ur["from_col"] != "site_ref" {
			t.Errorf("PUT: %v", up)
		}
		if pg {
			// on_delete cascade is real: the finds of a deleted site go.
			env.sql(t, `UPDATE `+env.app.DB.Qualify("people")+` SET site_code = NULL`)
			env.sql(t, `DELETE FROM `+env.app.DB.Qualify("sites")+` WHERE id = 1`)
			var n int
			_ = env.app.DB.QueryRow(t.Context(), `SELECT COUNT(*) FROM `+env.app.DB.Qualify("finds")).Scan(&n)
			if n != 1 {
				t.Errorf("%d finds after deleting a site with on_delete cascade", n)
			}
		}
		env.super(t, 200, "DELETE", fmt.Sprintf("/config/relations/%d", id), "")
		if rels := env.super(t, 200, "GET", "/config/relations", "")["relations"].([]any); len(rels) != 1 {
			t.Errorf("relations after delete: %v", rels)
		}
	})
}

func TestConfigIndexes(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newConfigEnv(t, e)
		if idx := env.super(t, 200, "GET", "/config/table/finds/indexes", "")["indexes"].([]any); len(idx) != 0 {
			t.Fatalf("fresh table indexes %v", idx)
		}
		created := env.super(t, 200, "POST", "/config/table/finds/indexes", `{"columns":["label","site"],"unique":true}`)
		ix := created["index"].(map[string]any)
		name, _ := ix["name"].(string)
		if created["code"] != "index_created" || name == "" || ix["unique"] != true || fmt.Sprint(ix["columns"]) != "[label site]" {
			t.Fatalf("POST: %v", created)
		}
		if idx := env.super(t, 200, "GET", "/config/table/finds/indexes", "")["indexes"].([]any); len(idx) != 1 {
			t.Errorf("indexes %v", idx)
		}
		env.sql(t, `INSERT INTO `+env.app.DB.Qualify("sites")+` (name, code) VALUES ('Alpha', 30)`)
		env.refusals(t, []testenv.Scenario{
			refusal("GET", "/config/table/nowhere/indexes", "", 404, "table_not_found"),
			refusal("POST", "/config/table/nowhere/indexes", `{"columns":["x"]}`, 404, "table_not_found"),
			refusal("POST", "/config/table/finds/indexes", `{}`, 400, "parameter_missing"),
			refusal("POST", "/config/table/finds/indexes", `{"columns":["nothing"]}`, 400, "invalid_index"),
			refusal("POST", "/config/table/finds/indexes", `{"columns":"label"}`, 400, "invalid_json"),
			refusal("POST", "/config/table/finds/indexes", `{"columns":["label","site"],"unique":true}`, 409, "index_already_exists"),
			refusal("POST", "/config/table/sites/indexes", `{"columns":["name"],"unique":true}`, 400, "unique_violated"),
			refusal("DELETE", "/config/table/finds/indexes/ix_0_u0", "", 404, "index_not_found"),
			refusal("DELETE", "/config/table/sites/indexes/"+name, "", 404, "index_not_found"),
		})
		if v := env.super(t, 200, "GET", "/config/table/finds/validation", ""); v["consistent"] != true {
			t.Errorf("validation %v", v)
		}
		if out := env.super(t, 200, "DELETE", "/config/table/finds/indexes/"+name, ""); out["code"] != "index_deleted" {
			t.Errorf("DELETE: %v", out)
		}
		if idx := env.super(t, 200, "GET", "/config/table/finds/indexes", "")["indexes"].([]any); len(idx) != 0 {
			t.Errorf("indexes after delete %v", idx)
		}
		// Validation reports what changed behind the catalog's back.
		env.sql(t, `ALTER TABLE `+env.app.DB.Qualify("finds")+` ADD COLUMN stray TEXT`)
		v := env.super(t, 200, "GET", "/config/table/finds/validation", "")
		if d := v["differences"].([]any); v["consistent"] != false || len(d) != 1 || d[0].(map[string]any)["kind"] != "column_extra" {
			t.Errorf("validation %v", v)
		}
	})
}
