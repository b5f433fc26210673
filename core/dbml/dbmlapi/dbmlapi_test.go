package dbmlapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
	"github.com/strata-archaeo/strata/core/vocab"
)

type fixture struct {
	inst  *testenv.Instance
	super map[string]string // app → bearer of its super_admin
}

func newFixture(t *testing.T, e store.Engine, names ...string) (*fixture, map[string]*apps.App) {
	t.Helper()
	f := &fixture{inst: testenv.NewInstance(t, e), super: map[string]string{}}
	out := map[string]*apps.App{}
	for _, n := range names {
		out[n] = testenv.NewApp(t, f.inst.Apps, n)
		f.super[n] = testenv.Login(t, f.inst.Server, n, "admin@example.org", testenv.Password)
	}
	return f, out
}

func (f *fixture) post(t *testing.T, app, path string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	h := testenv.Bearer(f.super[app])
	h["Content-Type"] = "application/json"
	return testenv.Do(t, f.inst.Server, http.MethodPost, "/"+app+"/api"+path, string(b), h)
}

// export is GET /config/dbml as the file it downloads.
func (f *fixture) export(t *testing.T, app string) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/"+app+"/api/config/dbml", nil)
	req.Header.Set("Authorization", f.super[app])
	rec := httptest.NewRecorder()
	f.inst.Server.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("export: %d %s", rec.Code, rec.Body.String())
	}
	if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename=`+app+`.dbml` {
		t.Fatalf("Content-Disposition %q", cd)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("Content-Type %q", ct)
	}
	return rec.Body.String()
}

// buildRich gives app a schema using every part the export writes: each
// field type and storage, labels, every field setting, lookups and value
// lists, a plugin table, table settings, named and unnamed indexes,
// recorded relations (one from a lookup), vocabularies.
func buildRich(t *testing.T, a *apps.App) {
	t.Helper()
	ctx, now := context.Background(), time.Now().UTC()
	db := a.DB
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	table := func(def schema.TableDef) {
		_, err := schema.CreateTable(ctx, db, def, now)
		must(def.Name, err)
	}
	field := func(tb string, def schema.FieldDef) {
		_, err := schema.AddField(ctx, db, tb, def, now)
		must(tb+"."+def.Name, err)
	}
	for _, it := range [][2]string{{"materials", "pottery"}, {"materials", "glass"}, {"materials", "it's \"bone\""},
		{"periods and phases", "Roman"}, {"periods and phases", "Late Antique"}} {
		_, err := vocab.Add(ctx, db, it[0], it[1])
		must("vocabulary", err)
	}
	zero, hundred, five := 0.0, 100.5, 12
	table(schema.TableDef{Name: "sites", Label: "Sites"})
	field("sites", schema.FieldDef{Name: "name", Label: "Site name", Required: true, Unique: true, Help: "The name in the gazetteer"})
	field("sites", schema.FieldDef{Name: "region", Label: "Region", Type: "combo_select", GetValuesFromTb: "sites:name"})
	field("sites", schema.FieldDef{Name: "code", Label: "code"})
	table(schema.TableDef{Name: "units", Label: "Stratigraphic units"})
	field("units", schema.FieldDef{Name: "code", Label: "Code", Required: true, MaxLength: &five, Pattern: `^US\d+$`})
	field("units", schema.FieldDef{Name: "site", Label: "Site", Type: "select", IDFromTb: "sites"})
	field("units", schema.FieldDef{Name: "period", Label: "Period", Type: "multi_select", VocabularySet: "periods and phases"})
	field("units", schema.FieldDef{Name: "described", Label: "Description", Type: "md"})
	field("units", schema.FieldDef{Name: "long", Label: "Long text", Type: "long_text", Hide: true})
	field("units", schema.FieldDef{Name: "dug_on", Label: "Dug on", Type: "date", DateMin: "1990-01-01", DateMax: "2030-12-31"})
	field("units", schema.FieldDef{Name: "dated", Label: "Date as text", Type: "date", DBType: "text"})
	field("units", schema.FieldDef{Name: "site_code", Label: "Site code"})
	table(schema.TableDef{Name: "finds", Label: "Finds"})
	field("finds", schema.FieldDef{Name: "label", Label: "Label", Required: true, Unique: true, DefValue: "%today%"})
	field("finds", schema.FieldDef{Name: "weight", Label: "Weight (g)", DBType: "float", Min: &zero, Max: &hundred})
	field("finds", schema.FieldDef{Name: "count", Label: "Count", DBType: "int", Readonly: true})
	field("finds", schema.FieldDef{Name: "complete", Label: "Complete", Type: "boolean"})
	field("finds", schema.FieldDef{Name: "flag", Label: "Flag as int", Type: "boolean", DBType: "int"})
	field("finds", schema.FieldDef{Name: "quality", Label: "Quality", Type: "slider", Min: &zero, Max: &hundred})
	field("finds", schema.FieldDef{Name: "material", Label: "Material", Type: "select", VocabularySet: "materials", Widget: "colour"})
	field("finds", schema.FieldDef{Name: "unit", Label: "Unit", Type: "select", IDFromTb: "units"})
	field("finds", schema.FieldDef{Name: "web", Label: "Web page", Type: "link_out"})
	field("finds", schema.FieldDef{Name: "notes", Label: "Notes\nover two lines", Type: "text", Help: "bdus-like 'quotes' and \\ too"})
	table(schema.TableDef{Name: "finds_samples", Label: "Samples", PluginOf: "finds"})
	field("finds_samples", schema.FieldDef{Name: "lab", Label: "Lab"})
	field("finds_samples", schema.FieldDef{Name: "bp", Label: "BP", DBType: "int"})
	_, err := schema.PutTable(ctx, db, "finds", schema.TableConfig{Preview: schema.Set([]string{"label", "material"}),
		IDField: schema.Set("label"), Order: schema.Set(schema.OrderSetting{Field: ptr("weight")}), Geodata: schema.Set(true),
		RS: schema.Set(schema.RSSetting{On: true, Field: "label"})}, now)
	must("finds settings", err)
	_, err = schema.PutTable(ctx, db, "units", schema.TableConfig{RS: schema.RSOn(true), RefMgr: schema.Set(true)}, now)
	must("units settings", err)
	_, err = schema.CreateIndex(ctx, db, "finds", schema.IndexInput{Columns: []string{"weight", "count"}}, now)
	must("index", err)
	_, err = schema.CreateIndex(ctx, db, "units", schema.IndexInput{Columns: []string{"code"}, Unique: true, Name: "units_code_ux"}, now)
	must("named index", err)
	_, err = schema.AddRelation(ctx, db, schema.RelationInput{FromTb: "units", FromCol: "site_code", ToTb: "sites", ToCol: "name", OnDelete: "set null", OnUpdate: "cascade"}, now)
	must("relation", err)
	_, err = schema.AddRelation(ctx, db, schema.RelationInput{FromTb: "finds", FromCol: "unit", ToTb: "units", ToCol: "id", OnDelete: "cascade"}, now)
	must("relation of a lookup", err)
}

func ptr(s string) *string { return &s }

// TestRoundTrip: export, apply on an empty app, export again: the same
// text, on both engines.
func TestRoundTrip(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		f, a := newFixture(t, e, "src", "dst")
		buildRich(t, a["src"])
		first := f.export(t, "src")
		for _, want := range []string{
			`Enum "periods and phases" {`, `"it's \"bone\""`, "// bdus:vocabulary",
			"Table finds_samples {", "id_link integer [not null, ref: > finds.id]",
			"unit integer [ref: > units.id, note: 'bdus:label=Unit bdus:id_from_tb']",
			"weight float [note: 'bdus:label=Weight (g) bdus:min=0 bdus:max=100.5']",
			"flag integer [note: 'bdus:label=Flag as int bdus:type=boolean bdus:db_type=int']",
			"dated varchar [note: 'bdus:label=Date as text bdus:type=date bdus:db_type=text']",
			"bdus:min=1990-01-01 bdus:max=2030-12-31",
			"label varchar [not null, unique, default: '%today%', note: 'bdus:label=Label']",
			"bdus:label=Finds bdus:preview=label,material bdus:order=weight bdus:id_field=label bdus:rs=label bdus:geodata=1",
			"(weight, count)\n", "code [unique, name: 'units_code_ux']",
			"Ref: units.site_code > sites.name [delete: set null, update: cascade]",
			"Ref: finds.unit > units.id [delete: cascade, update: restrict]",
			"code varchar\n", // label equal to the name: no note
		} {
			if !strings.Contains(first, want) {
				t.Errorf("the export lacks %q\n%s", want, first)
			}
		}
		code, body := f.post(t, "dst", "/config/dbml/apply", map[string]string{"dbml": first})
		if code != http.StatusOK {
			t.Fatalf("apply: %d %v", code, body)
		}
		res := body["result"].(map[string]any)
		if got := res["created"].([]any); len(got) != 4 || len(res["skipped"].([]any)) != 0 || len(res["errors"].([]any)) != 0 {
			t.Fatalf("apply result: %v", res)
		}
		if w := res["warnings"].([]any); len(w) != 0 {
			t.Fatalf("warnings applying an export: %v", w)
		}
		if second := f.export(t, "dst"); second != first {
			t.Fatalf("the round trip changed the text\nfirst:\n%s\nsecond:\n%s", first, second)
		}
		// What the import made is real: a record of the plugin table and a
		// lookup to it, and the relation enforced where the engine can.
		code, body = f.post(t, "dst", "/record/sites", map[string]any{"core": map[string]any{"name": "Ostia"}})
		if code != http.StatusOK {
			t.Fatalf("save a site: %d %v", code, body)
		}
	})
}

type issueWant struct {
	code      string
	line, col int
	field     string
}

func issues(t *testing.T, v any) []issueWant {
	t.Helper()
	var out []issueWant
	for _, x := range v.([]any) {
		m := x.(map[string]any)
		fld, _ := m["field"].(string)
		out = append(out, issueWant{m["code"].(string), int(m["line"].(float64)), int(m["column"].(float64)), fld})
	}
	return out
}

// TestPreview: each blocking error and warning with its line and column,
// on both engines; nothing is written.
func TestPreview(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		f, a := newFixture(t, e, "dig")
		ctx, now := context.Background(), time.Now().UTC()
		if _, err := schema.CreateTable(ctx, a["dig"].DB, schema.TableDef{Name: "sites"}, now); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name     string
			dbml     string
			errors   []issueWant
			warnings []issueWant
		}{
			{"valid", "Table finds {\n  id integer [pk, increment]\n  creator integer\n  label varchar\n}", nil, nil},
			{"exists", "// existing\nTable sites {\n  id integer [pk]\n}", []issueWant{{"table_already_exists", 2, 1, ""}}, nil},
			{"pk not id", "Table t {\n  uid integer [pk, increment]\n}", []issueWant{{"pk_must_be_id", 2, 3, "uid"}}, nil},
			{"composite pk", "Table t {\n  id int\n  a int\n  indexes {\n    (id, a) [pk]\n  }\n}", []issueWant{{"pk_must_be_id", 5, 5, "id"}}, nil},
			{"no id, no creator", "\n  Table t {\n  name varchar\n}", nil, []issueWant{{"auto_add_id", 2, 3, "id"}, {"auto_add_creator", 2, 3, "creator"}}},
			{"plugin table needs no creator", "Table p {\n  id int [pk]\n  Note: 'bdus:is_plugin=sites'\n}", nil, nil},
			{"bad table name", "Table \"Bad Name\" { id int }", []issueWant{{"invalid_table_name", 1, 1, ""}}, nil},
			{"bad field name", "Table t {\n  id int\n  creator int\n  \"Bad\" int\n}", []issueWant{{"invalid_field_name", 4, 3, "Bad"}}, nil},
			// Reserved for the engines, on both: a pg_ table made on one would
			// restore on the other, a sqlite_ one would not be made on SQLite.
			{"reserved table prefix", "Table pg_finds {\n  id int\n  creator int\n}", []issueWant{{"invalid_table_name", 1, 1, ""}}, nil},
			{"reserved sqlite table prefix", "Table sqlite_finds {\n  id int\n  creator int\n}", []issueWant{{"invalid_table_name", 1, 1, ""}}, nil},
			{"reserved field prefix", "Table t {\n  id int\n  creator int\n  pg_note int\n}", []issueWant{{"invalid_field_name", 4, 3, "pg_note"}}, nil},
			{"unknown lookup", "Table t {\n  id int\n  creator int\n  s int [ref: > nowhere.id, note: 'bdus:id_from_tb']\n}",
				[]issueWant{{"invalid_field_parameter", 4, 3, "s"}}, nil},
			{"bad annotation", "Table t {\n  id int\n  creator int\n  s int [note: 'bdus:min=low']\n}",
				[]issueWant{{"invalid_field_parameter", 4, 3, "s"}}, nil},
			{"bad setting", "Table t {\n  id int\n  creator int\n  s int\n  Note: 'bdus:preview=nope'\n}",
				[]issueWant{{"invalid_table_config", 1, 1, "nope"}}, nil},
			{"parent missing", "Table p {\n  id int\n  Note: 'bdus:is_plugin=ghost'\n}", []issueWant{{"invalid_plugin_parent", 1, 1, ""}}, nil},
			{"unknown type and expression default", "Table t {\n  id int\n  creator int\n  g geometry [default: `now()`]\n}", nil,
				[]issueWant{{"unknown_type", 4, 3, "g"}, {"default_ignored", 4, 3, "g"}}},
			{"index left out", "Table t {\n  id int\n  creator int\n  a int\n  indexes {\n    `lower(a)`\n  }\n}", nil, []issueWant{{"index_ignored", 6, 5, ""}}},
			{"depends on a refused table", "Table a {\n  id int\n  creator int\n  x int [ref: > b.id, note: 'bdus:id_from_tb']\n}\nTable b {\n  uid int [pk]\n}",
				[]issueWant{{"invalid_field_parameter", 4, 3, "x"}}, nil},
		}
		for _, c := range cases {
			code, body := f.post(t, "dig", "/config/dbml/preview", map[string]string{"dbml": c.dbml})
			if code != http.StatusOK || body["status"] != "success" {
				t.Fatalf("%s: %d %v", c.name, code, body)
			}
			p := body["preview"].(map[string]any)
			tb := p["tables"].([]any)[0].(map[string]any)
			gotErr, gotWarn := issues(t, tb["errors"]), issues(t, tb["warnings"])
			if !equalIssues(gotErr, c.errors) || !equalIssues(gotWarn, c.warnings) {
				t.Errorf("%s:\n errors %v, want %v\n warnings %v, want %v", c.name, gotErr, c.errors, gotWarn, c.warnings)
			}
			if p["has_errors"] != (len(c.errors) > 0) {
				t.Errorf("%s: has_errors %v", c.name, p["has_errors"])
			}
		}
		// Nothing was written: the only table is still the one made above.
		cat, err := schema.Load(ctx, a["dig"].DB)
		if err != nil || len(cat.Tables) != 1 {
			t.Fatalf("preview wrote tables: %v %v", cat, err)
		}
	})
}

func equalIssues(got, want []issueWant) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// TestBadInput: empty texts, syntax errors and callers below super_admin.
func TestBadInput(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		f, a := newFixture(t, e, "dig")
		for _, path := range []string{"/config/dbml/preview", "/config/dbml/apply"} {
			for _, body := range []string{`{}`, `{"dbml":""}`, `{"dbml":"  \n "}`, `{"dbml":"// only a comment\n"}`, ``} {
				h := testenv.Bearer(f.super["dig"])
				code, got := testenv.Do(t, f.inst.Server, http.MethodPost, "/dig/api"+path, body, h)
				if code != http.StatusBadRequest || got["code"] != "dbml_empty" {
					t.Errorf("%s %q: %d %v", path, body, code, got)
				}
			}
			code, got := f.post(t, "dig", path, map[string]string{"dbml": "Table t {\n  id int [pk,\n}"})
			if code != http.StatusBadRequest || got["code"] != "dbml_syntax_error" || got["line"] != 3.0 || got["column"] != 1.0 {
				t.Errorf("%s syntax error: %d %v", path, code, got)
			}
			code, got = f.post(t, "dig", path, map[string]any{"dbml": map[string]int{"x": 1}})
			if code != http.StatusBadRequest || got["code"] != "invalid_json" {
				t.Errorf("%s not a string: %d %v", path, code, got)
			}
		}
		// A text body is read as the DBML itself.
		h := testenv.Bearer(f.super["dig"])
		h["Content-Type"] = "text/plain"
		code, got := testenv.Do(t, f.inst.Server, http.MethodPost, "/dig/api/config/dbml/preview", "Table t { name varchar }", h)
		if code != http.StatusOK || got["preview"].(map[string]any)["tables"].([]any)[0].(map[string]any)["name"] != "t" {
			t.Errorf("text body: %d %v", code, got)
		}
		testenv.NewUser(t, a["dig"], "admin2", "admin2@example.org", auth.Admin)
		admin := testenv.Login(t, f.inst.Server, "dig", "admin2@example.org", testenv.Password)
		for _, r := range []struct{ method, path string }{{"GET", "/config/dbml"}, {"POST", "/config/dbml/preview"}, {"POST", "/config/dbml/apply"}} {
			code, got := testenv.Do(t, f.inst.Server, r.method, "/dig/api"+r.path, `{"dbml":"Table t { a int }"}`, testenv.Bearer(admin))
			if code != http.StatusForbidden || got["code"] != "not_enough_privilege" {
				t.Errorf("admin %s %s: %d %v", r.method, r.path, code, got)
			}
		}
	})
}

// TestApply: tables with errors are skipped and listed, the others made
// with their fields; marked enums become vocabulary items, refs become
// relations; a table failing while it is made leaves nothing behind.
func TestApply(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		f, a := newFixture(t, e, "dig")
		ctx, now := context.Background(), time.Now().UTC()
		db := a["dig"].DB
		if _, err := schema.CreateTable(ctx, db, schema.TableDef{Name: "sites"}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.AddField(ctx, db, "sites", schema.FieldDef{Name: "name"}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.CreateIndex(ctx, db, "sites", schema.IndexInput{Columns: []string{"name"}, Name: "taken_ix"}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := vocab.Add(ctx, db, "status", "active"); err != nil {
			t.Fatal(err)
		}
		text := `Enum status {
  active
  "on hold"
  // bdus:vocabulary
}
Enum kinds { a
  b }
Enum unused { x }

Table finds {
  id integer [pk, increment]
  title varchar [not null, note: 'bdus:label=Title']
  state status
  kind kinds
  site integer [ref: > sites.id, note: 'bdus:id_from_tb']
  site_name varchar [ref: > sites.name]
  Note: 'bdus:label=Finds bdus:preview=id,title'
}
Table bad {
  uid integer [pk]
}
Table sites {
  id integer [pk]
}
Table clash {
  a varchar
  indexes {
    a [name: 'taken_ix']
  }
}
Ref: finds.title - sites.name [delete: cascade]
Ref: finds.kind <> sites.name`
		code, body := f.post(t, "dig", "/config/dbml/apply", map[string]string{"dbml": text})
		if code != http.StatusOK || body["code"] != "dbml_applied_with_skipped" {
			t.Fatalf("apply: %d %v", code, body)
		}
		res := body["result"].(map[string]any)
		if got, _ := json.Marshal([]any{res["created"], res["skipped"]}); string(got) != `[["finds"],["bad","sites","clash"]]` {
			t.Fatalf("created, skipped: %s", got)
		}
		var codes []string
		for _, x := range res["errors"].([]any) {
			codes = append(codes, x.(map[string]any)["code"].(string))
		}
		if strings.Join(codes, ",") != "pk_must_be_id,table_already_exists,index_already_exists" {
			t.Fatalf("errors %v", res["errors"])
		}
		cat, err := schema.Load(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := cat.Table("clash"); ok {
			t.Fatal("the table that failed was left behind")
		}
		finds, ok := cat.Table("finds")
		if !ok || finds.Label != "Finds" || len(finds.Fields) != 5 || strings.Join(finds.Preview, ",") != "title" {
			t.Fatalf("finds: %+v", finds)
		}
		title, _ := finds.Field("title")
		state, _ := finds.Field("state")
		site, _ := finds.Field("site")
		if title.Label != "Title" || !title.Required || state.Type != schema.TypeSelect || state.VocabularySet != "status" ||
			site.IDFromTb != "sites" || site.DBType != schema.DBInt {
			t.Fatalf("fields: %+v %+v %+v", title, state, site)
		}
		sets, err := vocab.List(ctx, db, "")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(sets)
		for _, want := range []string{`"name":"kinds"`, `"def":"a"`, `"def":"b"`, `"def":"on hold"`} {
			if !strings.Contains(string(got), want) {
				t.Errorf("vocabularies %s lack %s", got, want)
			}
		}
		if strings.Contains(string(got), "unused") || strings.Count(string(got), `"def":"active"`) != 1 {
			t.Errorf("vocabularies %s", got)
		}
		rels, err := schema.ListRelations(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		var rs []string
		for _, r := range rels {
			rs = append(rs, r.FromTb+"."+r.FromCol+">"+r.ToTb+"."+r.ToCol+" "+r.OnDelete)
		}
		if strings.Join(rs, ";") != "finds.site_name>sites.name RESTRICT;finds.title>sites.name CASCADE" {
			t.Fatalf("relations %v", rs)
		}
		var warnings []string
		for _, x := range res["warnings"].([]any) {
			warnings = append(warnings, x.(map[string]any)["code"].(string))
		}
		if strings.Join(warnings, ",") != "relation_ignored,auto_add_creator" {
			t.Fatalf("warnings %v", warnings)
		}
	})
}
