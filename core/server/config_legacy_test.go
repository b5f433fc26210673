package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestConfigBraDypUSForms drives configuration the way the BraDypUS Vue
// client and scripts written for BraDypUS do: flags and numbers as strings,
// SQL type names, check lists, inline value lists, plugin tables created
// before their parent is named, "order" and "rs" as field names.
func TestConfigBraDypUSForms(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := &configEnv{newUserAdminEnv(t, e)}
		created := env.super(t, 200, "POST", "/config/tables", `{"name":"siti","label":"Siti","is_plugin":"0"}`)
		if created["tb"] != "siti" {
			t.Fatalf("create answer lacks tb: %v", created)
		}
		env.super(t, 200, "POST", "/config/tables", `{"name":"misure","label":"Misure","is_plugin":"1"}`)
		for _, body := range []string{
			`{"name":"nome","label":"Nome","type":"text","db_type":"TEXT","check":["not_empty","no_dupl"]}`,
			`{"name":"anno","label":"Anno","type":"text","db_type":"INTEGER","check":["int","range"],"min":"1900","max":"2100"}`,
			`{"name":"punti","label":"Punti","type":"integer","db_type":"INTEGER","check":["int"]}`,
			`{"name":"email","label":"Email","type":"text","db_type":"VARCHAR(255)","check":"email"}`,
			`{"name":"verificata","label":"Verificata","type":"boolean","db_type":"TEXT"}`,
			`{"name":"periodo","label":"Periodo","type":"combo_select","db_type":"TEXT","dic":["Arcaico","Romano"]}`,
			`{"name":"area","label":"Area","type":"text","db_type":"REAL"}`,
		} {
			env.super(t, 200, "POST", "/config/table/siti/field", body)
		}
		env.super(t, 200, "POST", "/config/table/misure/field", `{"name":"valore","type":"text","db_type":"TEXT"}`)

		// A plugin table created detached is attached by its PUT.
		env.super(t, 200, "PUT", "/config/table/misure", `{"name":"misure","label":"Misure","is_plugin":"1","plugin_of":"siti","id_field":"id"}`)
		env.super(t, 200, "PUT", "/config/table/siti", `{"name":"siti","label":"Siti","is_plugin":"0","order":"nome",
			"id_field":"nome","preview":["nome","anno"],"rs":"nome","geodata":1,"zotero":"1"}`)
		// "link" is BraDypUS's list of the relations from a table: saving it
		// records them, and the table's answer lists the relations.
		env.super(t, 200, "POST", "/config/tables", `{"name":"saggi","label":"Saggi"}`)
		env.super(t, 200, "POST", "/config/table/saggi/field", `{"name":"sito_nome","type":"text","db_type":"TEXT"}`)
		env.super(t, 200, "POST", "/config/table/saggi/field", `{"name":"anno_sito","type":"text","db_type":"INTEGER"}`)
		env.super(t, 200, "PUT", "/config/table/saggi", `{"link":[{"other_tb":"siti","fld":[{"my":"sito_nome","other":"nome"},{"my":"anno_sito","other":"anno"}]}]}`)
		saggi := env.super(t, 200, "GET", "/config/table/saggi", "")["table"].(map[string]any)
		if got, _ := json.Marshal(saggi["link"]); string(got) != `[{"fld":[{"my":"sito_nome","other":"nome"},{"my":"anno_sito","other":"anno"}],"other_tb":"siti"}]` {
			t.Errorf("saggi link %s", got)
		}
		rels := env.super(t, 200, "GET", "/config/relations", "")["data"].([]any)
		if len(rels) != 2 {
			t.Errorf("relations after a link: %v", rels)
		}
		env.super(t, 200, "PUT", "/config/table/saggi", `{"link":[{"other_tb":"siti","fld":[{"my":"sito_nome","other":"nome"}]}]}`)
		if rels := env.super(t, 200, "GET", "/config/relations", "")["data"].([]any); len(rels) != 1 || rels[0].(map[string]any)["from_col"] != "sito_nome" {
			t.Errorf("relations after dropping a link pair: %v", rels)
		}

		one := env.super(t, 200, "GET", "/config/table/siti", "")
		tbl := one["table"].(map[string]any)
		for k, want := range map[string]string{
			"order": `"nome"`, "rs": `"nome"`, "geodata": "true", "refmgr": "true", "plugin": `["misure"]`,
			"id_field": `"nome"`,
			// saggi's relation to siti is one of siti's links too, as
			// BraDypUS lists both sides.
			"link": `[{"fld":[{"my":"nome","other":"sito_nome"}],"other_tb":"saggi"}]`,
		} {
			if got, _ := json.Marshal(tbl[k]); string(got) != want {
				t.Errorf("table %s = %s, want %s", k, got, want)
			}
		}
		// Saving the link list back as read records nothing new.
		env.super(t, 200, "PUT", "/config/table/siti", `{"link":[{"other_tb":"saggi","fld":[{"my":"nome","other":"sito_nome"}]}]}`)
		if rels := env.super(t, 200, "GET", "/config/relations", "")["data"].([]any); len(rels) != 1 || rels[0].(map[string]any)["from_tb"] != "saggi" {
			t.Errorf("relations after saving a read-back link: %v", rels)
		}
		fields := tbl["fields"].(map[string]any)
		for name, want := range map[string]map[string]string{
			"nome":       {"db_type": `"text"`, "required": "true", "unique": "true", "check": `["not_empty","no_dupl"]`},
			"anno":       {"db_type": `"int"`, "min": "1900", "max": "2100", "check": `["int","range"]`},
			"punti":      {"type": `"text"`, "db_type": `"int"`},
			"email":      {"db_type": `"text"`, "check": `["email"]`},
			"verificata": {"type": `"boolean"`, "db_type": `"text"`},
			"periodo":    {"dic": `["Arcaico","Romano"]`},
			"area":       {"db_type": `"float"`},
		} {
			f, ok := fields[name].(map[string]any)
			if !ok {
				t.Errorf("table.fields lacks %s", name)
				continue
			}
			for k, w := range want {
				if got, _ := json.Marshal(f[k]); string(got) != w {
					t.Errorf("field %s: %s = %s, want %s", name, k, got, w)
				}
			}
		}
		if fl := one["field_labels"].(map[string]any); fl["anno"] != "Anno" || len(fl) != 7 {
			t.Errorf("field_labels %v", fl)
		}
		labels := env.super(t, 200, "GET", "/config/table/siti/fields", "")
		if m := labels["fields"].(map[string]any); m["nome"] != "Nome" || len(labels["data"].([]any)) != 7 {
			t.Errorf("GET fields: %v", labels)
		}
		plugin := env.super(t, 200, "GET", "/config/table/misure", "")["table"].(map[string]any)
		if plugin["plugin_of"] != "siti" || plugin["is_plugin"] != true {
			t.Errorf("attached plugin table: %v", plugin)
		}

		// The checks hold on records; plugin rows save through the parent.
		status, body := env.do(t, env.superTok, "POST", "/record/siti", `{"core":{"nome":"","anno":"1850","email":"nope"}}`)
		if status != http.StatusBadRequest || body["code"] != "validation_failed" {
			t.Fatalf("invalid record: %d %v", status, body)
		}
		saved := env.super(t, 200, "POST", "/record/siti", `{"core":{"nome":"Alpha","anno":"1950","email":"a@b.org","verificata":"1"},
			"plugins":{"misure":[{"_isNew":"1","fields":{"valore":"12"}}]}}`)
		if saved["code"] != "success_created" {
			t.Fatalf("save: %v", saved)
		}

		env.refusals(t, []testenv.Scenario{
			refusal("POST", "/config/tables", `{"name":"siti","is_plugin":"0"}`, 409, "table_already_exists"),
			refusal("POST", "/config/table/siti/field", `{"name":"nome"}`, 409, "fld_already_available"),
			refusal("POST", "/config/table/siti/field", `{"name":"x","db_type":"BLOB"}`, 400, "invalid_db_type"),
			refusal("POST", "/config/table/siti/field", `{"name":"x","check":["telepathy"]}`, 400, "invalid_field_parameter"),
			refusal("PUT", "/config/table/siti", `{"order":"nowhere"}`, 400, "invalid_table_config"),
			refusal("PUT", "/config/table/siti", `{"rs":"nowhere"}`, 400, "invalid_table_config"),
			refusal("PUT", "/config/table/siti", `{"link":[{"other_tb":"nowhere","fld":[]}]}`, 400, "invalid_table_config"),
			refusal("PUT", "/config/table/saggi", `{"link":[{"other_tb":"siti","fld":[{"my":"anno_sito","other":"nome"}]}]}`, 400, "invalid_table_config", `"parameter":"link"`),
			refusal("PUT", "/config/table/misure", `{"plugin_of":"misure"}`, 400, "invalid_table_config"),
			refusal("PUT", "/config/table/siti", `{"order":"abc","geodata":"maybe"}`, 400, "invalid_json", "geodata must be a boolean"),
		})
	})
}
