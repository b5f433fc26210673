package server_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// reportItem is a line of GET /config/validation as BraDypUS's
// ConfigValidation screen reads it.
type reportItem struct {
	Status  string   `json:"status"`
	Text    string   `json:"text"`
	Suggest string   `json:"suggest"`
	Fix     []string `json:"fix"`
	Check   string   `json:"check"`
}

// report gets the configuration check and checks its shape: every line
// has a status of BraDypUS's set and a text, a fix only with a suggestion.
func (env *configEnv) report(t *testing.T) []reportItem {
	t.Helper()
	out := env.super(t, 200, "GET", "/config/validation", "")
	if out["status"] != "success" {
		t.Fatalf("report: %v", out)
	}
	b, _ := json.Marshal(out["report"])
	var items []reportItem
	if err := json.Unmarshal(b, &items); err != nil || len(items) == 0 {
		t.Fatalf("report %s: %v", b, err)
	}
	if items[0].Status != "head" {
		t.Errorf("the report starts with a section head, got %+v", items[0])
	}
	for _, it := range items {
		if !slices.Contains([]string{"head", "success", "info", "warning", "danger"}, it.Status) || it.Text == "" {
			t.Errorf("line outside BraDypUS's shape: %+v", it)
		}
		if it.Fix != nil && (it.Suggest == "" || len(it.Fix) < 2 || len(it.Fix) > 3) {
			t.Errorf("a fix needs a suggestion and [action, tb, col?]: %+v", it)
		}
	}
	return items
}

// problems are the report's warning and danger lines.
func problems(items []reportItem) []reportItem {
	var out []reportItem
	for _, it := range items {
		if it.Status == "warning" || it.Status == "danger" {
			out = append(out, it)
		}
	}
	return out
}

// fixOf finds the line of check whose fix is want.
func fixOf(items []reportItem, check string, want ...string) (reportItem, bool) {
	for _, it := range items {
		if it.Check == check && slices.Equal(it.Fix, want) {
			return it, true
		}
	}
	return reportItem{}, false
}

// postFix sends a fix as the BraDypUS screen does: {action, tb, col}, col
// empty for a table-level fix.
func (env *configEnv) postFix(t *testing.T, fix []string) map[string]any {
	t.Helper()
	col := ""
	if len(fix) > 2 {
		col = fix[2]
	}
	body, _ := json.Marshal(map[string]string{"action": fix[0], "tb": fix[1], "col": col})
	return env.super(t, 200, "POST", "/config/validation/fix", string(body))
}

// fieldCfg is a field's configuration as GET /config/table/{tb} shows it.
func (env *configEnv) fieldCfg(t *testing.T, tb, name string) map[string]any {
	t.Helper()
	f, _ := env.super(t, 200, "GET", "/config/table/"+tb, "")["table"].(map[string]any)["fields"].(map[string]any)[name].(map[string]any)
	return f
}

func TestConfigValidation(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newConfigEnv(t, e)
		db := env.app.DB
		q := db.Qualify
		if p := problems(env.report(t)); len(p) != 0 {
			t.Fatalf("a catalog made through the API has no problems, got %+v", p)
		}
		// A field and a table to break, made through the API.
		env.super(t, 200, "POST", "/config/table/sites/field", `{"name":"notes"}`)
		env.super(t, 200, "POST", "/config/table/sites/field", `{"name":"kind","type":"select","get_values_from_tb":"sites:name"}`)
		env.super(t, 200, "POST", "/config/table/sites/field", `{"name":"material","type":"select","vocabulary_set":"materials"}`)
		env.super(t, 200, "POST", "/config/table/sites/field", `{"name":"title","search_index":true}`)
		env.super(t, 200, "POST", "/config/tables", `{"name":"people"}`)
		env.super(t, 200, "POST", "/config/table/people/field", `{"name":"pname"}`)
		env.super(t, 200, "POST", "/config/table/people/field", `{"name":"badge","db_type":"int","unique":true}`)
		env.super(t, 200, "POST", "/config/table/people/indexes", `{"name":"ix_pname","columns":["pname"]}`)
		var codeIndex string
		if err := db.QueryRow(t.Context(), `SELECT 'ix_' || CAST(t.id AS TEXT) || '_f' || CAST(f.id AS TEXT) FROM `+db.Sys("fields")+` f JOIN `+
			db.Sys("tables")+` t ON t.id = f.table_id WHERE t.name = 'sites' AND f.name = 'code'`).Scan(&codeIndex); err != nil {
			t.Fatal(err)
		}
		real := "REAL"
		if e == store.Postgres {
			real = "double precision"
		}

		cases := []struct {
			name   string
			break_ []string // raw SQL that makes the problem
			status string
			check  string
			fix    []string
			code   string
			pgOnly bool               // SQLite refuses the drift itself
			before func(t *testing.T) // with the problem there, before its fix
			after  func(t *testing.T) // what the fix left, seen through the API
		}{
			// PostgreSQL drops a column with its search index; SQLite refuses
			// to (the index's triggers use it). Until the column is back,
			// other configuration changes still work: the search indexes
			// every change syncs skip a column that is not there.
			{name: "search-indexed column missing", pgOnly: true, break_: []string{`ALTER TABLE ` + q("sites") + ` DROP COLUMN "title"`},
				status: "danger", check: "column_missing", fix: []string{"create", "sites", "title"}, code: "ok_adding_column",
				before: func(t *testing.T) {
					env.super(t, 200, "POST", "/config/table/finds/field", `{"name":"meanwhile"}`)
				},
				after: func(t *testing.T) {
					if v := env.super(t, 200, "GET", "/config/table/sites/validation", ""); strings.Contains(fmt.Sprint(v["differences"]), "search_index") {
						t.Errorf("search index not rebuilt: %v", v)
					}
				}},
			{name: "configured column missing", break_: []string{`ALTER TABLE ` + q("sites") + ` DROP COLUMN "notes"`},
				status: "danger", check: "column_missing", fix: []string{"create", "sites", "notes"}, code: "ok_adding_column",
				after: func(t *testing.T) {
					env.sql(t, `UPDATE `+q("sites")+` SET notes = 'back' WHERE id = 1`)
				}},
			{name: "orphan column adopted", break_: []string{`ALTER TABLE ` + q("finds") + ` ADD COLUMN "depth" ` + real},
				status: "danger", check: "column_extra", fix: []string{"adopt", "finds", "depth"}, code: "ok_cfg_data_updated",
				after: func(t *testing.T) {
					f := env.fieldCfg(t, "finds", "depth")
					if f == nil || f["db_type"] != "float" {
						t.Errorf("adopted field: %v", f)
					}
				}},
			{name: "orphan column dropped", break_: []string{`ALTER TABLE ` + q("finds") + ` ADD COLUMN "junk" TEXT`,
				`CREATE INDEX "ix_junk" ON ` + q("finds") + ` ("junk")`},
				status: "info", check: "column_extra", fix: []string{"delete", "finds", "junk"}, code: "ok_deleting_column"},
			{name: "configured table missing", break_: []string{`DROP TABLE ` + q("people")},
				status: "danger", check: "table_missing", fix: []string{"create", "people"}, code: "ok_creating_table",
				after: func(t *testing.T) {
					env.super(t, 200, "POST", "/record/people", `{"core":{"pname":"Ann","badge":7}}`)
					if v := env.super(t, 200, "GET", "/config/table/people/validation", ""); v["consistent"] != true {
						t.Errorf("recreated table: %v", v)
					}
				}},
			{name: "lookup to a missing table", break_: []string{`UPDATE ` + db.Sys("fields") + ` SET id_from_tb = 'ghost' WHERE name = 'site'`},
				status: "danger", check: "id_from_tb_broken", fix: []string{"unlink", "finds", "site"}, code: "ok_cfg_data_updated",
				after: func(t *testing.T) {
					f := env.fieldCfg(t, "finds", "site")
					if f["id_from_tb"] != nil && f["id_from_tb"] != "" {
						t.Errorf("id_from_tb left: %v", f)
					}
				}},
			{name: "values from a missing field", break_: []string{`UPDATE ` + db.Sys("fields") + ` SET get_values_from_tb = 'sites:nothing' WHERE name = 'kind'`},
				status: "danger", check: "get_values_from_tb_broken", fix: []string{"unlink", "sites", "kind"}, code: "ok_cfg_data_updated"},
			{name: "vocabulary without values",
				status: "warning", check: "vocabulary_set_broken", fix: []string{"unlink", "sites", "material"}, code: "ok_cfg_data_updated"},
			{name: "relation to a missing column", break_: []string{`UPDATE ` + db.Sys("relations") + ` SET to_col = 'nothing' WHERE from_col = 'site_ref'`},
				status: "danger", check: "relation_broken", fix: []string{"unlink", "finds", "site_ref"}, code: "ok_cfg_data_updated",
				after: func(t *testing.T) {
					if rels := env.super(t, 200, "GET", "/config/relations", "")["data"]; strings.Contains(fmt.Sprint(rels), "site_ref") {
						t.Errorf("relation left: %v", rels)
					}
				}},
			{name: "plugin table without its parent", break_: []string{`UPDATE ` + db.Sys("tables") + ` SET plugin_of = 'ghost' WHERE name = 'finds_radiocarbon'`},
				status: "danger", check: "plugin_of_broken", fix: []string{"unlink", "finds_radiocarbon"}, code: "ok_cfg_data_updated",
				after: func(t *testing.T) {
					if _, ok := fixOf(env.report(t), "plugin_detached"); !ok {
						t.Error("the detached plugin table is not reported")
					}
					env.super(t, 200, "PUT", "/config/table/finds_radiocarbon", `{"plugin_of":"finds"}`)
				}},
			{name: "id_field naming no field", break_: []string{`UPDATE ` + db.Sys("tables") + ` SET id_field = 'ghost' WHERE name = 'sites'`},
				status: "warning", check: "id_field_broken", fix: []string{"unlink", "sites"}, code: "ok_cfg_data_updated"},
			{name: "field index missing", break_: []string{`DROP INDEX ` + q(codeIndex)},
				status: "warning", check: "indexes", fix: []string{"reindex", "sites"}, code: "ok_cfg_data_updated"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if c.pgOnly && e != store.Postgres {
					t.Skip("PostgreSQL only")
				}
				for _, s := range c.break_ {
					env.sql(t, s)
				}
				items := env.report(t)
				it, ok := fixOf(items, c.check, c.fix...)
				if !ok || it.Status != c.status {
					t.Fatalf("no %s line with fix %v (status %s) in %+v", c.check, c.fix, c.status, problems(items))
				}
				if c.before != nil {
					c.before(t)
				}
				if out := env.postFix(t, c.fix); out["code"] != c.code {
					t.Fatalf("fix %v: %v", c.fix, out)
				}
				if _, ok := fixOf(env.report(t), c.check, c.fix...); ok {
					t.Errorf("%s still reported after its fix", c.check)
				}
				if c.after != nil {
					c.after(t)
				}
				// The same fix again finds nothing to do.
				body, _ := json.Marshal(map[string]string{"action": c.fix[0], "tb": c.fix[1], "col": strings.Join(c.fix[2:], "")})
				if status, out := env.do(t, env.superTok, "POST", "/config/validation/fix", string(body)); status != 409 || out["code"] != "nothing_to_fix" {
					t.Errorf("fix %v again: %d %v", c.fix, status, out)
				}
			})
		}
		if p := problems(env.report(t)); len(p) != 0 {
			t.Errorf("problems left after every fix: %+v", p)
		}
	})
}

func TestConfigValidationRefusals(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newConfigEnv(t, e)
		q := env.app.DB.Qualify
		// Orphans a fix cannot take: a type no field stores, a name outside
		// the field rule (reported without a fix).
		env.sql(t, `ALTER TABLE `+q("sites")+` ADD COLUMN "odd" VARCHAR(10)`)
		env.sql(t, `ALTER TABLE `+q("sites")+` ADD COLUMN "Bad Name" TEXT`)
		// A table outside the configuration is reported, never fixed.
		env.sql(t, `CREATE TABLE `+q("stray")+` (id INTEGER)`)
		items := env.report(t)
		if it, ok := fixOf(items, "table_extra"); !ok || it.Status != "warning" || !strings.Contains(it.Text, "stray") {
			t.Errorf("stray table: %+v", problems(items))
		}
		for _, it := range items {
			if strings.Contains(it.Text, "sites.Bad Name") && it.Fix != nil {
				t.Errorf("a column outside the name rule offered a fix: %+v", it)
			}
		}
		if _, ok := fixOf(items, "column_extra", "delete", "sites", "odd"); !ok {
			t.Errorf("orphan odd not reported: %+v", problems(items))
		}
		fix := "/config/validation/fix"
		env.refusals(t, []testenv.Scenario{
			refusal("POST", fix, `{}`, 400, "parameter_missing", `"parameter":"action"`),
			refusal("POST", fix, `{"action":"explode","tb":"sites"}`, 400, "invalid_action"),
			refusal("POST", fix, `{"action":"create"}`, 400, "parameter_missing", `"parameter":"tb"`),
			refusal("POST", fix, `{"action":"delete","tb":"sites"}`, 400, "parameter_missing", `"parameter":"col"`),
			refusal("POST", fix, `{"action":"create","tb":"nowhere"}`, 404, "table_not_found"),
			refusal("POST", fix, `{"action":"create","tb":"sites"}`, 409, "nothing_to_fix"),
			refusal("POST", fix, `{"action":"create","tb":"sites","col":"name"}`, 409, "nothing_to_fix"),
			refusal("POST", fix, `{"action":"create","tb":"sites","col":"nothing"}`, 404, "field_not_found"),
			refusal("POST", fix, `{"action":"delete","tb":"sites","col":"id"}`, 409, "nothing_to_fix"),
			refusal("POST", fix, `{"action":"delete","tb":"sites","col":"name"}`, 409, "nothing_to_fix"),
			refusal("POST", fix, `{"action":"delete","tb":"sites","col":"nothing"}`, 409, "nothing_to_fix"),
			refusal("POST", fix, `{"action":"adopt","tb":"sites","col":"odd"}`, 409, "col_type_not_found"),
			refusal("POST", fix, `{"action":"adopt","tb":"sites","col":"Bad Name"}`, 400, "invalid_field_name"),
			refusal("POST", fix, `{"action":"delete","tb":"sites","col":"Bad Name"}`, 400, "invalid_field_name"),
			refusal("POST", fix, `{"action":"unlink","tb":"sites","col":"name"}`, 409, "nothing_to_fix"),
			refusal("POST", fix, `{"action":"unlink","tb":"sites"}`, 409, "nothing_to_fix"),
			refusal("POST", fix, `{"action":"unlink","tb":"nowhere","col":"x"}`, 404, "table_not_found"),
			refusal("POST", fix, `{"action":"reindex","tb":"sites"}`, 409, "nothing_to_fix"),
			refusal("POST", fix, `{"action":["create"]}`, 400, "invalid_json"),
		})
		// BraDypUS's fix reads the query string too.
		if out := env.super(t, 200, "POST", fix+"?action=delete&tb=sites&col=odd", ""); out["code"] != "ok_deleting_column" {
			t.Errorf("fix by query string: %v", out)
		}
	})
}
