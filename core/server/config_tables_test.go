package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// configEnv is the user-administration app "dig" with a small catalog
// made through the API: sites (name, code unique int), finds (label, site
// → sites lookup, site_ref int related to sites.id) and finds_radiocarbon,
// a plugin table of finds (lab).
type configEnv struct{ *userAdminEnv }

func newConfigEnv(t *testing.T, e store.Engine) *configEnv {
	t.Helper()
	env := &configEnv{newUserAdminEnv(t, e)}
	for _, step := range []struct{ method, path, body string }{
		{"POST", "/config/tables", `{"name":"sites","label":"Sites"}`},
		{"POST", "/config/table/sites/field", `{"name":"name","type":"text"}`},
		{"POST", "/config/table/sites/field", `{"name":"code","type":"text","db_type":"int","unique":true}`},
		{"POST", "/config/tables", `{"name":"finds","label":"Finds"}`},
		{"POST", "/config/table/finds/field", `{"name":"label"}`},
		{"POST", "/config/table/finds/field", `{"name":"site","type":"select","id_from_tb":"sites"}`},
		{"POST", "/config/table/finds/field", `{"name":"site_ref","db_type":"int"}`},
		{"POST", "/config/tables", `{"name":"finds_radiocarbon","plugin_of":"finds"}`},
		{"POST", "/config/table/finds_radiocarbon/field", `{"name":"lab"}`},
		{"POST", "/config/relations", `{"from_tb":"finds","from_col":"site_ref","to_tb":"sites","to_col":"id"}`},
	} {
		if status, body := env.do(t, env.superTok, step.method, step.path, step.body); status != http.StatusOK {
			t.Fatalf("%s %s %s: %d %v", step.method, step.path, step.body, status, body)
		}
	}
	env.sql(t, `INSERT INTO `+env.app.DB.Qualify("sites")+` (name, code) VALUES ('Alpha', 10), ('Beta', 20)`)
	env.sql(t, `INSERT INTO `+env.app.DB.Qualify("finds")+` (label, site, site_ref) VALUES ('bowl', 1, 1), ('coin', 2, 2)`)
	// Density paths end at a table with chronology active (a plugin
	// feature): record it as active where the tests' paths end.
	for _, tb := range []string{"finds", "finds_radiocarbon"} {
		env.sql(t, `INSERT INTO `+env.app.DB.Sys("table_features")+` (table_name, feature, plugin, active, changed_at) VALUES (?, 'chronology', 'chronology', ?, CURRENT_TIMESTAMP)`, tb, true)
	}
	return env
}

func (env *configEnv) sql(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := env.app.DB.Exec(t.Context(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// super sends a request as the super_admin and fails unless it answers want.
func (env *configEnv) super(t *testing.T, want int, method, path, body string) map[string]any {
	t.Helper()
	status, out := env.do(t, env.superTok, method, path, body)
	if status != want {
		t.Fatalf("%s %s %s: %d, want %d; %v", method, path, body, status, want, out)
	}
	return out
}

// state is the whole configuration as the API shows it: tables, each
// table with its fields, indexes and validation, and the relations.
func (env *configEnv) state(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	tables := env.super(t, 200, "GET", "/config/tables", "")
	js := func(v any) string { s, _ := json.Marshal(v); return string(s) + "\n" }
	b.WriteString(js(tables))
	for _, tb := range tables["tables"].([]any) {
		name := tb.(map[string]any)["name"].(string)
		for _, p := range []string{"", "/indexes", "/validation"} {
			b.WriteString(js(env.super(t, 200, "GET", "/config/table/"+name+p, "")))
		}
	}
	b.WriteString(js(env.super(t, 200, "GET", "/config/relations", "")))
	return b.String()
}

// refusals runs scenarios as the super_admin and checks that the
// configuration is unchanged afterwards.
func (env *configEnv) refusals(t *testing.T, cases []testenv.Scenario) {
	t.Helper()
	before := env.state(t)
	for _, c := range cases {
		c.URL = digAPI + c.URL
		c.Headers = testenv.Bearer(env.superTok)
		if c.Name == "" {
			c.Name = c.Method + " " + c.URL + " " + c.Body
		}
		t.Run(c.Name, func(t *testing.T) { c.Run(t, env.inst.Server) })
	}
	if after := env.state(t); after != before {
		t.Errorf("refused requests changed the configuration:\nbefore %s\nafter  %s", before, after)
	}
}

// refusal is a scenario answering status with code.
func refusal(method, path, body string, status int, code string, more ...string) testenv.Scenario {
	return testenv.Scenario{Method: method, URL: path, Body: body, ExpectedStatus: status,
		ExpectedContent: append([]string{`"code":"` + code + `"`}, more...)}
}

// configRoutes is every configuration route with a body it accepts.
var configRoutes = []struct{ method, path, body string }{
	{"GET", "/config/tables", ""},
	{"POST", "/config/tables", `{"name":"x"}`},
	{"POST", "/config/tables/sort", `{"sort":[]}`},
	{"GET", "/config/table/sites", ""},
	{"PUT", "/config/table/sites", `{"label":"x"}`},
	{"DELETE", "/config/table/sites", ""},
	{"PATCH", "/config/table/sites", `{"new_name":"x"}`},
	{"GET", "/config/table/sites/validation", ""},
	{"GET", "/config/validation", ""},
	{"POST", "/config/validation/fix", `{"action":"create","tb":"sites"}`},
	{"GET", "/config/table/sites/fields", ""},
	{"POST", "/config/table/sites/fields/sort", `{"sort":[]}`},
	{"POST", "/config/table/sites/field", `{"name":"x"}`},
	{"PUT", "/config/table/sites/field/name", `{"label":"x"}`},
	{"DELETE", "/config/table/sites/field/name", ""},
	{"PATCH", "/config/table/sites/field/name", `{"new_name":"x"}`},
	{"GET", "/config/relations", ""},
	{"POST", "/config/relations", `{}`},
	{"PUT", "/config/relations/1", `{}`},
	{"DELETE", "/config/relations/1", ""},
	{"POST", "/config/apply-constraints", ""},
	{"GET", "/config/table/sites/indexes", ""},
	{"POST", "/config/table/sites/indexes", `{"name":"ix_name","columns":["name"]}`},
	{"DELETE", "/config/table/sites/indexes/ix_1_u1", ""},
}

func TestConfigRoutesAreSuperAdminOnly(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newConfigEnv(t, e)
		before := env.state(t)
		for _, r := range configRoutes {
			for _, as := range []struct {
				who, tok string
				status   int
			}{{"nobody", "", 401}, {"writer", env.writeTok, 403}, {"admin", env.adminTok, 403}} {
				status, body := env.do(t, as.tok, r.method, r.path, r.body)
				if status != as.status {
					t.Errorf("%s %s as %s: %d, want %d; %v", r.method, r.path, as.who, status, as.status, body)
				}
			}
		}
		if after := env.state(t); after != before {
			t.Error("refused callers changed the configuration")
		}
		// The super_admin passes the gate on every route (reads here; the
		// writes are exercised below).
		for _, r := range configRoutes {
			if r.method != "GET" {
				continue
			}
			if status, body := env.do(t, env.superTok, r.method, r.path, ""); status != 200 {
				t.Errorf("%s %s as super_admin: %d %v", r.method, r.path, status, body)
			}
		}
	})
}

func TestConfigTables(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newConfigEnv(t, e)
		list := env.super(t, 200, "GET", "/config/tables", "")
		got, _ := json.Marshal(list["tables"])
		// (decoded maps marshal with sorted keys)
		want := `[{"is_plugin":false,"label":"Sites","name":"sites","plugin_of":null},` +
			`{"is_plugin":false,"label":"Finds","name":"finds","plugin_of":null},` +
			`{"is_plugin":true,"label":"finds_radiocarbon","name":"finds_radiocarbon","plugin_of":"finds"}]`
		if string(got) != want {
			t.Errorf("GET /config/tables\n got %s\nwant %s", got, want)
		}

		put := env.super(t, 200, "PUT", "/config/table/sites", `{"label":"Excavation sites","order":5,"id_field":"code",
			"preview":["name","code"],"rs":true,"geodata":true,"refmgr":true,"chrono_density_path":["finds","finds_radiocarbon"],
			"backlinks":["finds:finds:site"],"unknown_key":1,"name":"ignored"}`)
		if put["code"] != "table_saved" {
			t.Errorf("PUT: %v", put)
		}
		one := env.super(t, 200, "GET", "/config/table/sites", "")
		tbl := one["table"].(map[string]any)
		for k, want := range map[string]string{
			"backlinks": `["finds:finds:site"]`, "chrono_density_path": `["finds","finds_radiocarbon"]`, "geodata": "true",
			"id_field": `"code"`, "is_plugin": "false", "label": `"Excavation sites"`, "name": `"sites"`,
			"sort": "5", "order": `""`, "plugin_of": "null", "preview": `["name","code"]`, "refmgr": "true", "rs": "true",
			"plugin": "[]",
			// finds' two relations to sites, from sites' side.
			"link": `[{"fld":[{"my":"id","other":"site_ref"},{"my":"id","other":"site"}],"other_tb":"finds"}]`,
		} {
			if got, _ := json.Marshal(tbl[k]); string(got) != want {
				t.Errorf("GET /config/table/sites: %s = %s, want %s", k, got, want)
			}
		}
		if fl := one["field_labels"].(map[string]any); len(fl) != 2 {
			t.Errorf("field_labels %v", fl)
		}
		if fields := one["fields"].([]any); len(fields) != 2 {
			t.Errorf("fields %v", fields)
		}

		env.super(t, 200, "POST", "/config/tables/sort", `{"sort":["finds_radiocarbon","finds","sites"]}`)
		list = env.super(t, 200, "GET", "/config/tables", "")
		if first := list["tables"].([]any)[0].(map[string]any)["name"]; first != "finds_radiocarbon" {
			t.Errorf("after sort the first table is %v", first)
		}

		env.refusals(t, []testenv.Scenario{
			refusal("GET", "/config/table/nowhere", "", 404, "table_not_found"),
			refusal("PUT", "/config/table/nowhere", `{"label":"x"}`, 404, "table_not_found"),
			refusal("DELETE", "/config/table/nowhere", "", 404, "table_not_found"),
			refusal("PATCH", "/config/table/nowhere", `{"new_name":"x"}`, 404, "table_not_found"),
			refusal("GET", "/config/table/nowhere/validation", "", 404, "table_not_found"),
			refusal("GET", "/config/table/Bad%20Name", "", 404, "table_not_found"),
			refusal("POST", "/config/tables", `{"name":"sites"}`, 409, "table_already_exists"),
			refusal("POST", "/config/tables", `{"name":"sys_x"}`, 400, "invalid_table_name"),
			refusal("POST", "/config/tables", `{"label":"no name"}`, 400, "parameter_missing"),
			refusal("POST", "/config/tables", `{"name":"x","plugin_of":"finds_radiocarbon"}`, 400, "invalid_plugin_parent"),
			refusal("POST", "/config/tables", `[]`, 400, "invalid_json"),
			refusal("POST", "/config/tables/sort", `{}`, 400, "parameter_missing", `"parameter":"sort"`),
			refusal("POST", "/config/tables/sort", `{"sort":["sites"]}`, 400, "invalid_sort", `"missing":["finds_radiocarbon","finds"]`),
			refusal("PUT", "/config/table/sites", `{"id_field":"nothing"}`, 400, "invalid_table_config", `"parameter":"id_field"`),
			refusal("PUT", "/config/table/sites", `{"preview":"name"}`, 400, "invalid_json"),
			refusal("PUT", "/config/table/sites", `{"chrono_density_path":["finds_radiocarbon"]}`, 400, "invalid_chrono_density_path"),
			refusal("PUT", "/config/table/sites", `{"backlinks":["finds:finds:label"]}`, 400, "invalid_table_config"),
			refusal("PUT", "/config/table/finds_radiocarbon", `{"rs":true}`, 400, "invalid_table_config"),
			refusal("PATCH", "/config/table/sites", `{}`, 400, "parameter_missing", `"parameter":"new_name"`),
			refusal("PATCH", "/config/table/sites", `{"new_name":"finds"}`, 409, "error_renaming_table"),
			refusal("PATCH", "/config/table/sites", `{"new_name":"Sites!"}`, 400, "invalid_table_name"),
			refusal("DELETE", "/config/table/sites", "", 409, "table_in_use", `"kind":"lookup"`, `"kind":"relation"`),
			refusal("DELETE", "/config/table/finds", "", 409, "table_in_use", `"kind":"plugin_table"`, `"kind":"backlink"`, `"kind":"chrono_density_path"`),
		})
		if v := env.super(t, 200, "GET", "/config/table/finds/validation", ""); v["consistent"] != true || len(v["differences"].([]any)) != 0 {
			t.Errorf("validation %v", v)
		}
	})
}

func TestConfigTableRenameAndDelete(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newConfigEnv(t, e)
		// A table privilege and a lookup from another table follow a rename.
		env.super(t, 200, "POST", fmt.Sprintf("/user/%d/privileges", env.writer.ID), `{"table_name":"finds","privilege":30}`)
		env.super(t, 200, "POST", "/config/tables", `{"name":"people"}`)
		env.super(t, 200, "POST", "/config/table/people/field", `{"name":"fav","type":"select","id_from_tb":"finds"}`)

		out := env.super(t, 200, "PATCH", "/config/table/finds", `{"new_name":"objects"}`)
		if out["code"] != "ok_renaming_table" || out["name"] != "objects" || len(out["renamed"].([]any)) != 2 {
			t.Fatalf("PATCH: %v", out)
		}
		privs := env.super(t, 200, "GET", fmt.Sprintf("/user/%d/privileges", env.writer.ID), "")
		if p := privs["data"].([]any); len(p) != 1 || p[0].(map[string]any)["table_name"] != "objects" {
			t.Errorf("privilege after rename: %v", privs)
		}
		fields := env.super(t, 200, "GET", "/config/table/people/fields", "")
		fav := fields["data"].([]any)[0].(map[string]any)
		if fav["id_from_tb"] != "objects" || fmt.Sprint(fav["options_source"]) != "map[ref:objects type:id_from_tb]" {
			t.Errorf("lookup after rename: %v", fav)
		}
		rows, err := env.app.DB.Query(t.Context(), `SELECT label FROM `+env.app.DB.Qualify("objects")+` ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		var labels []string
		for rows.Next() {
			var s string
			_ = rows.Scan(&s)
			labels = append(labels, s)
		}
		rows.Close()
		if strings.Join(labels, ",") != "bowl,coin" {
			t.Errorf("rows after rename %v", labels)
		}
		env.super(t, 404, "GET", "/config/table/finds", "")
		rc := env.super(t, 200, "GET", "/config/table/objects_radiocarbon", "")
		if rc["table"].(map[string]any)["plugin_of"] != "objects" {
			t.Errorf("plugin table after rename %v", rc)
		}

		// Cascade: the plugin table goes, the lookup is cleared, the other
		// tables stay with their rows.
		del := env.super(t, 200, "DELETE", "/config/table/objects?cascade=1", "")
		if del["code"] != "ok_cfg_tb_delete" || fmt.Sprint(del["dropped"]) != "[objects_radiocarbon objects]" {
			t.Errorf("DELETE: %v", del)
		}
		list := env.super(t, 200, "GET", "/config/tables", "")
		if n := len(list["tables"].([]any)); n != 2 {
			t.Errorf("%d tables left: %v", n, list)
		}
		fields = env.super(t, 200, "GET", "/config/table/people/fields", "")
		if fav := fields["data"].([]any)[0].(map[string]any); fav["id_from_tb"] != "" || fav["options_source"] != nil {
			t.Errorf("lookup after cascade: %v", fav)
		}
		privs = env.super(t, 200, "GET", fmt.Sprintf("/user/%d/privileges", env.writer.ID), "")
		if p := privs["data"].([]any); len(p) != 0 {
			t.Errorf("privileges of a deleted table: %v", p)
		}
		var n int
		if err := env.app.DB.QueryRow(t.Context(), `SELECT COUNT(*) FROM `+env.app.DB.Qualify("sites")).Scan(&n); err != nil || n != 2 {
			t.Errorf("sites rows %d %v", n, err)
		}
		if v := env.super(t, 200, "GET", "/config/table/sites/validation", ""); v["consistent"] != true {
			t.Errorf("sites after cascade: %v", v)
		}
		// Without references, no cascade is needed.
		env.super(t, 200, "DELETE", "/config/table/people", "")
	})
}

// TestConfigReservedNamePrefixes: sqlite_ and pg_ are the engines' (SQLite
// refuses to create sqlite_ tables, PostgreSQL keeps pg_ for its catalogs)
// and sys_ Strata's. A table or field named with one is refused with the
// name's code on both engines, whether created or renamed to it, so no
// app holds a name the other engine could not restore; nothing changes.
func TestConfigReservedNamePrefixes(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		env := newConfigEnv(t, e)
		var cases []testenv.Scenario
		for _, name := range []string{"sqlite_x", "pg_x", "sys_x", "sqlite_", "pg_class"} {
			prefix := `"reserved_prefix":"` + name[:strings.IndexByte(name, '_')+1] + `"`
			cases = append(cases,
				refusal("POST", "/config/tables", `{"name":"`+name+`"}`, 400, "invalid_table_name", prefix),
				refusal("PATCH", "/config/table/sites", `{"new_name":"`+name+`"}`, 400, "invalid_table_name", prefix),
				refusal("POST", "/config/table/sites/field", `{"name":"`+name+`"}`, 400, "invalid_field_name", prefix),
				refusal("PATCH", "/config/table/sites/field/name", `{"new_name":"`+name+`"}`, 400, "invalid_field_name", prefix),
			)
		}
		env.refusals(t, cases)
		// Names that only contain the prefixes are anyone's.
		env.super(t, 200, "POST", "/config/tables", `{"name":"my_pg_sqlite_sys_x"}`)
		env.super(t, 200, "POST", "/config/table/sites/field", `{"name":"pgx"}`)
	})
}
