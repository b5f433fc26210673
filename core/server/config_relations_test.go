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
		rels := list["data"].([]any)
		if list["code"] != "relations" || len(rels) != 2 || list["enforced"] != pg || jsonOf(list["relations"]) != jsonOf(rels) {
			t.Fatalf("GET /config/relations: %v", list)
		}
		r := rels[0].(map[string]any)
		if r["from_tb"] != "finds" || r["from_col"] != "site_ref" || r["to_col"] != "id" || r["on_delete"] != "RESTRICT" ||
			r["enforced"] != pg || r["from_label"] != "Finds" || r["to_label"] != "Sites" || r["lookup"] != false {
			t.Errorf("relation %v", r)
		}
		// The lookup finds.site implies a relation, listed with a negative id.
		if lk := rels[1].(map[string]any); lk["from_col"] != "site" || lk["to_tb"] != "sites" || lk["lookup"] != true ||
			lk["id"].(float64) >= 0 || lk["enforced"] != false || lk["not_enforced"] != "lookup_not_recorded" {
			t.Errorf("lookup relation %v", lk)
		}
		id := int64(r["id"].(float64))

		env.super(t, 200, "POST", "/config/tables", `{"name":"people"}`)
		env.super(t, 200, "POST", "/config/table/people/field", `{"name":"site_code","db_type":"int"}`)
		env.super(t, 200, "POST", "/config/table/people/field", `{"name":"note"}`)
		created := env.super(t, 200, "POST", "/config/relations",
			`{"from_tb":"people","from_col":"site_code","to_tb":"sites","to_col":"code","on_delete":"set_null","on_update":"cascade"}`)
		nr := created["relation"].(map[string]any)
		if created["code"] != "relation_saved" || created["id"] != nr["id"] || created["enforced"] != pg || nr["on_delete"] != "SET NULL" {
			t.Fatalf("POST: %v", created)
		}
		nid := int64(nr["id"].(float64))
		env.sql(t, `INSERT INTO `+env.app.DB.Qualify("people")+` (site_code) VALUES (10)`)

		env.refusals(t, []testenv.Scenario{
			refusal("POST", "/config/relations", `{"from_tb":"finds","from_col":"site_ref","to_tb":"sites","to_col":"id"}`, 409, "relation_already_exists"),
			refusal("POST", "/config/relations", `{"from_tb":"finds_radiocarbon","from_col":"lab","to_tb":"finds","to_col":"label"}`, 400, "invalid_relation"),
			refusal("POST", "/config/relations", `{"from_tb":"people","from_col":"note","to_tb":"sites","to_col":"id"}`, 400, "invalid_relation", `"parameter":"to_col"`),
			refusal("POST", "/config/relations", `{"from_tb":"finds","from_col":"label","to_tb":"sites","to_col":"nothing"}`, 400, "invalid_relation", `"parameter":"to_col"`),
			refusal("POST", "/config/relations", `{"from_tb":"finds","from_col":"label","to_tb":"sites","to_col":"name","on_delete":"drop"}`, 400, "invalid_on_delete", `"allowed":["RESTRICT","CASCADE","SET NULL","NO ACTION"]`),
			refusal("POST", "/config/relations", `{"from_tb":"finds"}`, 400, "parameter_missing"),
			refusal("POST", "/config/relations", `{"from_tb":{"a":1}}`, 400, "invalid_json"),
			refusal("PUT", "/config/relations/9999", `{"on_delete":"cascade"}`, 404, "not_found"),
			refusal("PUT", "/config/relations/abc", `{}`, 400, "invalid_id"),
			refusal("PUT", fmt.Sprintf("/config/relations/%d", nid), `{"to_col":"id"}`, 400, "relation_violated"),
			refusal("DELETE", "/config/relations/9999", "", 404, "not_found"),
			refusal("DELETE", "/config/relations/0", "", 400, "invalid_id"),
		})

		up := env.super(t, 200, "PUT", fmt.Sprintf("/config/relations/%d", id), `{"on_delete":"cascade"}`)
		if ur := up["relation"].(map[string]any); up["code"] != "relation_saved" || up["id"] != float64(id) || ur["on_delete"] != "CASCADE" || ur["from_col"] != "site_ref" {
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
		if rels := env.super(t, 200, "GET", "/config/relations", "")["data"].([]any); len(rels) != 2 {
			t.Errorf("relations after delete: %v", rels)
		}
	})
}

// TestConfigRelationsBraDypUS: what BraDypUS's relations panel sends —
// text-to-text relations, relations of a table to itself, lookups' own
// relations — and its refusal codes, on both engines.
func TestConfigRelationsBraDypUS(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newConfigEnv(t, e)
		pg := e == store.Postgres
		env.super(t, 200, "POST", "/config/table/sites/field", `{"name":"parent"}`)
		env.super(t, 200, "POST", "/config/table/finds/field", `{"name":"site_name"}`)
		notUnique := map[bool]string{true: "to_col_not_unique", false: "engine_cannot_add_constraint"}[pg]
		lookupID := int64(-1)
		for _, x := range env.super(t, 200, "GET", "/config/relations", "")["data"].([]any) {
			if r := x.(map[string]any); r["lookup"] == true {
				lookupID = int64(r["id"].(float64))
			}
		}
		for _, c := range []struct {
			name, method, path, body string
			onDelete, onUpdate       string
			notEnforced              string
		}{
			{"text to text", "POST", "/config/relations", `{"from_tb":"finds","from_col":"site_name","to_tb":"sites","to_col":"name","on_delete":"CASCADE","on_update":"CASCADE"}`,
				"CASCADE", "CASCADE", notUnique},
			{"self-referential, policy forced", "POST", "/config/relations", `{"from_tb":"sites","from_col":"parent","to_tb":"sites","to_col":"name","on_delete":"CASCADE","on_update":"NO ACTION"}`,
				"RESTRICT", "CASCADE", notUnique},
			{"a lookup's relation recorded", "PUT", fmt.Sprintf("/config/relations/%d", lookupID), `{"on_delete":"set null"}`,
				"SET NULL", "CASCADE", map[bool]string{true: "", false: "engine_cannot_add_constraint"}[pg]},
		} {
			out := env.super(t, 200, c.method, c.path, c.body)
			r := out["relation"].(map[string]any)
			ne, _ := r["not_enforced"].(string)
			_, msg := out["message"].(string)
			if out["code"] != "relation_saved" || out["id"].(float64) <= 0 || r["on_delete"] != c.onDelete || r["on_update"] != c.onUpdate ||
				ne != c.notEnforced || out["enforced"] != (c.notEnforced == "") || msg != (c.notEnforced != "") {
				t.Errorf("%s: %v", c.name, out)
			}
		}
		if v := env.super(t, 200, "GET", "/config/table/finds/validation", ""); v["consistent"] != true {
			t.Errorf("validation %v", v)
		}

		env.super(t, 200, "POST", "/config/table/finds/field", `{"name":"sites_ref","type":"select","id_from_tb":"sites"}`)
		var newLookup int64
		for _, x := range env.super(t, 200, "GET", "/config/relations", "")["data"].([]any) {
			if r := x.(map[string]any); r["lookup"] == true {
				newLookup = int64(r["id"].(float64))
			}
		}
		env.refusals(t, []testenv.Scenario{
			refusal("POST", "/config/relations", `{"from_tb":"finds","to_tb":"sites","to_col":"id"}`, 400, "parameter_missing", `"parameter":"from_col"`),
			refusal("POST", "/config/relations", `{"from_tb":"finds","from_col":"label","to_tb":"sites"}`, 400, "parameter_missing", `"parameter":"to_col"`),
			refusal("POST", "/config/relations", `{"from_tb":"finds","from_col":"label","to_tb":"sites","to_col":"name","on_delete":"EXPLODE"}`, 400, "invalid_on_delete"),
			refusal("POST", "/config/relations", `{"from_tb":"finds","from_col":"label","to_tb":"sites","to_col":"name","on_delete":"RESTRICT","on_update":"BOOM"}`, 400, "invalid_on_update"),
			refusal("POST", "/config/relations", `{"from_tb":"finds","from_col":"sites_ref","to_tb":"sites","to_col":"name"}`, 409, "relation_already_exists"),
			refusal("POST", "/config/relations", `{"from_tb":"finds","from_col":"site_name","to_tb":"sites","to_col":"name"}`, 409, "relation_already_exists"),
			refusal("POST", "/config/relations", `{"from_tb":"finds","from_col":"label","to_tb":"sites","to_col":"code"}`, 400, "invalid_relation", `"parameter":"to_col"`),
			refusal("POST", "/config/relations", `{"from_tb":"nowhere","from_col":"label","to_tb":"sites","to_col":"id"}`, 400, "invalid_relation", `"parameter":"from_tb"`),
			refusal("PUT", "/config/relations/999999", `{"from_tb":"finds","from_col":"site_ref","to_tb":"sites","to_col":"id"}`, 404, "not_found"),
			refusal("PUT", fmt.Sprintf("/config/relations/%d", lookupID), `{}`, 404, "not_found"),
			refusal("PUT", fmt.Sprintf("/config/relations/%d", newLookup), `{"to_tb":"finds"}`, 400, "invalid_relation"),
			refusal("DELETE", "/config/relations/999999", "", 404, "not_found"),
			refusal("DELETE", fmt.Sprintf("/config/relations/%d", newLookup), "", 409, "relation_from_lookup"),
		})

		// apply-constraints: nothing is missing; what cannot be enforced is listed.
		ap := env.super(t, 200, "POST", "/config/apply-constraints", "")
		wantAlready, wantNot := map[bool]float64{true: 2, false: 0}[pg], map[bool]int{true: 3, false: 5}[pg]
		if ap["code"] != "constraints_applied" || ap["applied"] != float64(0) || ap["skipped"] != float64(0) ||
			len(ap["errors"].([]any)) != 0 || ap["already_enforced"] != wantAlready || len(ap["not_enforced"].([]any)) != wantNot ||
			ap["enforced"] != pg {
			t.Errorf("apply-constraints: %v", ap)
		}
		if pg {
			// A constraint dropped behind the catalog's back comes back;
			// one the data violates is skipped and says why.
			env.sql(t, `ALTER TABLE `+env.app.DB.Qualify("finds")+` DROP CONSTRAINT fk_1`)
			env.sql(t, `ALTER TABLE `+env.app.DB.Qualify("finds")+` DROP CONSTRAINT fk_4`)
			env.sql(t, `UPDATE `+env.app.DB.Qualify("finds")+` SET site = 777`)
			status, body := env.do(t, env.superTok, "POST", "/config/apply-constraints", "")
			errsList, _ := body["errors"].([]any)
			if status != 200 || body["status"] != "warning" || body["applied"] != float64(1) || body["skipped"] != float64(1) || len(errsList) != 1 ||
				errsList[0].(map[string]any)["reason"] != "orphans_found" || errsList[0].(map[string]any)["orphans"] != float64(2) {
				t.Errorf("apply-constraints after drops: %d %v", status, body)
			}
		}
		if status, body := env.do(t, env.adminTok, "POST", "/config/apply-constraints", ""); status != 403 {
			t.Errorf("apply-constraints as an admin: %d %v", status, body)
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
		created := env.super(t, 200, "POST", "/config/table/finds/indexes", `{"name":"ix_label_site","columns":["label","site"],"unique":true}`)
		ix := created["index"].(map[string]any)
		name, _ := ix["name"].(string)
		if created["code"] != "index_saved" || name == "" || ix["unique"] != true || fmt.Sprint(ix["columns"]) != "[label site]" {
			t.Fatalf("POST: %v", created)
		}
		if idx := env.super(t, 200, "GET", "/config/table/finds/indexes", "")["indexes"].([]any); len(idx) != 1 {
			t.Errorf("indexes %v", idx)
		}
		env.sql(t, `INSERT INTO `+env.app.DB.Qualify("sites")+` (name, code) VALUES ('Alpha', 30)`)
		env.refusals(t, []testenv.Scenario{
			refusal("GET", "/config/table/nowhere/indexes", "", 404, "table_not_found"),
			refusal("POST", "/config/table/nowhere/indexes", `{"name":"ix_x","columns":["x"]}`, 404, "table_not_found"),
			refusal("POST", "/config/table/finds/indexes", `{}`, 400, "parameter_missing"),
			refusal("POST", "/config/table/finds/indexes", `{"name":"ix_a"}`, 400, "parameter_missing"),
			refusal("POST", "/config/table/finds/indexes", `{"columns":["label"]}`, 400, "parameter_missing"),
			refusal("POST", "/config/table/finds/indexes", `{"name":"  ","columns":["label"]}`, 400, "parameter_missing"),
			refusal("POST", "/config/table/finds/indexes", `{"name":"ix_b","columns":["nothing"]}`, 400, "invalid_index"),
			refusal("POST", "/config/table/finds/indexes", `{"name":"ix_c","columns":"label"}`, 400, "invalid_json"),
			refusal("POST", "/config/table/finds/indexes", `{"name":"ix_label_site","columns":["label"]}`, 409, "index_already_exists"),
			refusal("POST", "/config/table/sites/indexes", `{"name":"ix_d","columns":["name"],"unique":true}`, 400, "unique_violated"),
			refusal("DELETE", "/config/table/finds/indexes/ix_0_u0", "", 404, "not_found"),
			refusal("DELETE", "/config/table/sites/indexes/"+name, "", 404, "not_found"),
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
