package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
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
			refusal("PATCH", "/config/table/finds/field/label", `{"new_name":"weight"}`, 409, "error_renaming_column"),
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

// TestConfigFieldStructure: the description of field settings that
// BraDypUS's field editor is built from, in its order, with the values
// allowed in this app; and a field made from it is accepted.
func TestConfigFieldStructure(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		if _, err := f.app.DB.Exec(t.Context(), `INSERT INTO `+f.app.DB.Sys("vocabularies")+` (voc, value, sort) VALUES ('materials', 'bronze', 0), ('materials', 'iron', 1), ('colours', 'red', 0)`); err != nil {
			t.Fatal(err)
		}
		url := "/dig/api/config/field-structure"
		for _, s := range []testenv.Scenario{
			{Name: "super_admin only", URL: url, Headers: testenv.Bearer(f.writer), ExpectedStatus: 403},
			{Name: "signed in only", URL: url, ExpectedStatus: 401},
		} {
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
		rec := testenv.Scenario{URL: url, Headers: testenv.Bearer(f.super), ExpectedStatus: 200}.Run(t, f.inst.Server)
		var body struct {
			Structure json.RawMessage `json:"structure"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		// Keys in editor order.
		dec := json.NewDecoder(bytes.NewReader(body.Structure))
		var keys []string
		depth := 0
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			switch v := tok.(type) {
			case json.Delim:
				if v == '{' || v == '[' {
					depth++
				} else {
					depth--
				}
			case string:
				if depth == 1 {
					keys = append(keys, v)
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if want := "name label type db_type vocabulary_set vocab_free get_values_from_tb id_from_tb check required unique readonly hide def_value max_length min max pattern help widget"; strings.Join(keys, " ") != want {
			t.Fatalf("keys %v", keys)
		}
		var st map[string]struct {
			Type     string `json:"type"`
			Values   []any  `json:"values"`
			Required bool   `json:"required"`
			Readonly bool   `json:"readonly"`
			Pattern  string `json:"pattern"`
			Help     string `json:"help"`
		}
		if err := json.Unmarshal(body.Structure, &st); err != nil {
			t.Fatal(err)
		}
		for k, want := range map[string]string{
			"name":           "input true true ^[a-z][a-z0-9_]{0,62}$",
			"type":           "select [text long_text md select combo_select multi_select date boolean slider link_to link_out] true false",
			"db_type":        "select [text int float date bool] false false",
			"vocabulary_set": "select [colours materials] false false",
			"id_from_tb":     "select [sites units finds] false false",
			"check":          "multi_select [not_empty no_dupl email int range regex] false false",
			"required":       "boolean false false",
			"max_length":     "input false false ^[0-9]+$",
		} {
			m := st[k]
			got := fmt.Sprint(m.Type, " ", m.Required, " ", m.Readonly, " ", m.Pattern)
			if m.Values != nil {
				got = fmt.Sprint(m.Type, " ", m.Values, " ", m.Required, " ", m.Readonly)
			}
			if strings.TrimSpace(got) != want || m.Help == "" {
				t.Errorf("%s: %q (help %q), want %q", k, got, m.Help, want)
			}
		}
		// A field the editor would send is accepted.
		code, m := f.do(t, f.super, "POST", "/dig/api/config/table/finds/field",
			`{"name":"material","label":"Material","type":"select","db_type":"text","vocabulary_set":"materials","get_values_from_tb":"","id_from_tb":"",
			  "check":["not_empty"],"required":false,"unique":false,"readonly":false,"hide":false,"def_value":"","max_length":"","min":"","max":"","pattern":"","help":"","widget":""}`)
		if code != 200 {
			t.Fatalf("field from the structure: %d %v", code, m)
		}
	})
}
