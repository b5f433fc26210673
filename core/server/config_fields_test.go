package server_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// fieldsByName decodes the data array (every field configuration) of a response.
func fieldsByName(t *testing.T, body map[string]any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, f := range body["data"].([]any) {
		m := f.(map[string]any)
		out[m["name"].(string)] = m
	}
	return out
}

func TestConfigFields(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newConfigEnv(t, e)
		created := env.super(t, 200, "POST", "/config/table/finds/field",
			`{"name":"material","label":"Material","type":"select","vocabulary_set":"materials","required":true,"min":1,"help":"h"}`)
		f := created["field"].(map[string]any)
		if created["code"] != "field_created" || f["id"] == nil || f["db_type"] != "text" || f["required"] != true || f["min"] != 1.0 {
			t.Fatalf("POST field: %v", created)
		}
		env.super(t, 200, "POST", "/config/table/finds/field", `{"name":"colour","type":"combo_select","get_values_from_tb":"sites:name"}`)
		env.super(t, 200, "POST", "/config/table/finds/field", `{"name":"weight"}`)
		env.sql(t, `UPDATE `+env.app.DB.Qualify("finds")+` SET weight = '12' WHERE id = 1`)

		fields := fieldsByName(t, env.super(t, 200, "GET", "/config/table/finds/fields", ""))
		// Every FieldDef key, plus id, sort and options_source.
		keys := []string{"id", "name", "label", "type", "db_type", "sort", "readonly", "hide", "vocabulary_set",
			"get_values_from_tb", "id_from_tb", "widget", "required", "unique", "min", "max", "max_length", "pattern",
			"def_value", "help", "disabled", "options_source"}
		for _, k := range keys {
			if _, ok := fields["label"][k]; !ok {
				t.Errorf("field JSON lacks %s: %v", k, fields["label"])
			}
		}
		for name, want := range map[string]string{
			"material": `{"set":"materials","type":"vocabulary"}`,
			"colour":   `{"ref":"sites:name","type":"db"}`,
			"site":     `{"ref":"sites","type":"id_from_tb"}`,
			"label":    `null`,
		} {
			if got, _ := json.Marshal(fields[name]["options_source"]); string(got) != want {
				t.Errorf("%s options_source %s, want %s", name, got, want)
			}
		}

		// PUT changes what is sent; a db_type change converts the data.
		put := env.super(t, 200, "PUT", "/config/table/finds/field/weight", `{"label":"Weight (g)","db_type":"float","min":null,"max":100}`)
		if w := put["field"].(map[string]any); put["code"] != "field_saved" || w["db_type"] != "float" || w["label"] != "Weight (g)" || w["max"] != 100.0 {
			t.Errorf("PUT: %v", put)
		}
		var weight float64
		if err := env.app.DB.QueryRow(t.Context(), `SELECT weight FROM `+env.app.DB.Qualify("finds")+` WHERE id = 1`).Scan(&weight); err != nil || weight != 12 {
			t.Errorf("weight after conversion %v %v", weight, err)
		}
		// Rename: the value source of another field follows.
		env.super(t, 200, "POST", "/config/table/sites/field", `{"name":"region"}`)
		if out := env.super(t, 200, "PATCH", "/config/table/sites/field/name", `{"new_name":"title"}`); out["field"].(map[string]any)["name"] != "title" {
			t.Errorf("PATCH: %v", out)
		}
		if c := fieldsByName(t, env.super(t, 200, "GET", "/config/table/finds/fields", ""))["colour"]; c["get_values_from_tb"] != "sites:title" {
			t.Errorf("value source after rename: %v", c)
		}
		env.super(t, 200, "POST", "/config/table/sites/fields/sort", `{"sort":["region","code","title"]}`)
		if got := fmt.Sprint(env.super(t, 200, "GET", "/config/table/sites", "")["fields"].([]any)[0].(map[string]any)["name"]); got != "region" {
			t.Errorf("first field after sort: %s", got)
		}

		env.sql(t, `UPDATE `+env.app.DB.Qualify("finds")+` SET label = 'not a number' WHERE id = 1`)
		env.refusals(t, []testenv.Scenario{
			refusal("GET", "/config/table/nowhere/fields", "", 404, "table_not_found"),
			refusal("POST", "/config/table/nowhere/field", `{"name":"x"}`, 404, "table_not_found"),
			refusal("PUT", "/config/table/finds/field/nothing", `{"label":"x"}`, 404, "field_not_found"),
			refusal("DELETE", "/config/table/finds/field/nothing", "", 404, "field_not_found"),
			refusal("PATCH", "/config/table/finds/field/nothing", `{"new_name":"x"}`, 404, "field_not_found"),
			refusal("POST", "/config/table/finds/field", `{"name":"label"}`, 409, "fld_already_available"),
			refusal("POST", "/config/table/finds/field", `{"name":"id"}`, 400, "invalid_field_name"),
			refusal("POST", "/config/table/finds/field", `{"name":"x","type":"blob"}`, 400, "invalid_field_type"),
			refusal("POST", "/config/table/finds/field", `{"name":"x","type":"text","vocabulary_set":"v"}`, 400, "invalid_field_parameter"),
			refusal("PUT", "/config/table/finds/field/label", `{"db_type":"int"}`, 400, "conversion_failed", `"count":2`, `"ids":[1,2]`),
			refusal("PUT", "/config/table/finds/field/label", `{"min":"low"}`, 400, "invalid_json"),
			refusal("PUT", "/config/table/finds/field/site_ref", `{"db_type":"text"}`, 409, "field_in_use"),
			refusal("PATCH", "/config/table/finds/field/label", `{"new_name":"weight"}`, 409, "fld_already_available"),
			refusal("PATCH", "/config/table/finds/field/label", `{"new_name":"creator"}`, 400, "invalid_field_name"),
			refusal("DELETE", "/config/table/finds/field/site_ref", "", 409, "field_in_use", `"kind":"relation"`),
			refusal("DELETE", "/config/table/sites/field/title", "", 409, "field_in_use", `"kind":"values_from"`),
			refusal("POST", "/config/table/finds/fields/sort", `{"sort":["label"]}`, 400, "invalid_sort"),
		})
		// A relation's target keeps its unique index.
		env.super(t, 200, "POST", "/config/tables", `{"name":"people"}`)
		env.super(t, 200, "POST", "/config/table/people/field", `{"name":"site_code","db_type":"int"}`)
		env.super(t, 200, "POST", "/config/relations", `{"from_tb":"people","from_col":"site_code","to_tb":"sites","to_col":"code"}`)
		env.refusals(t, []testenv.Scenario{
			refusal("PUT", "/config/table/sites/field/code", `{"unique":false}`, 409, "field_in_use", `"kind":"relation"`),
			refusal("DELETE", "/config/table/sites/field/code", "", 409, "field_in_use", `"kind":"relation"`),
		})

		// Delete with cascade takes the relation along.
		del := env.super(t, 200, "DELETE", "/config/table/finds/field/site_ref?cascade=1", "")
		if del["code"] != "ok_cfg_column_delete" || len(del["removed"].([]any)) != 1 {
			t.Errorf("DELETE: %v", del)
		}
		// Left: people.site_code and the relation the lookup finds.site implies.
		if rels := env.super(t, 200, "GET", "/config/relations", "")["relations"].([]any); len(rels) != 2 ||
			rels[0].(map[string]any)["from_col"] != "site_code" || rels[1].(map[string]any)["from_col"] != "site" {
			t.Errorf("relations after cascade: %v", rels)
		}
		env.super(t, 200, "DELETE", "/config/table/finds/field/weight", "")
		if v := env.super(t, 200, "GET", "/config/table/finds/validation", ""); v["consistent"] != true {
			t.Errorf("validation %v", v)
		}
	})
}
