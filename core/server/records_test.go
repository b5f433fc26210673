package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// digFixture is an app with an excavation catalog and one user per level.
type digFixture struct {
	inst                        *testenv.Instance
	app                         *apps.App
	super, writer, self, reader string // bearer values
	self2                       string // a second self_writer
	readerKey, writerKey        string
}

func newDig(t testing.TB, e store.Engine) *digFixture {
	t.Helper()
	return newDigWith(t, e)
}

// newDigWith is newDig on an instance whose configuration opts adjust.
func newDigWith(t testing.TB, e store.Engine, opts ...func(*config.Config)) *digFixture {
	t.Helper()
	return newDigDeps(t, e, server.Deps{}, opts...)
}

// newDigDeps is newDigWith on an instance built from deps (a file store).
func newDigDeps(t testing.TB, e store.Engine, deps server.Deps, opts ...func(*config.Config)) *digFixture {
	t.Helper()
	inst := testenv.NewInstanceWith(t, e, deps, opts...)
	a := testenv.NewApp(t, inst.Apps, "dig")
	ctx, now := context.Background(), time.Now().UTC()
	mustTable := func(def schema.TableDef) {
		if _, err := schema.CreateTable(ctx, a.DB, def, now); err != nil {
			t.Fatal(err)
		}
	}
	mustField := func(tb string, def schema.FieldDef) {
		if _, err := schema.AddField(ctx, a.DB, tb, def, now); err != nil {
			t.Fatalf("%s.%s: %v", tb, def.Name, err)
		}
	}
	zero, hundred, five := 0.0, 100.0, 5
	mustTable(schema.TableDef{Name: "sites", Label: "Sites"})
	mustField("sites", schema.FieldDef{Name: "name", Label: "Name", Required: true, Unique: true})
	mustTable(schema.TableDef{Name: "units", Label: "Stratigraphic units"})
	mustField("units", schema.FieldDef{Name: "code", Label: "Code", Required: true})
	mustField("units", schema.FieldDef{Name: "site", Label: "Site", Type: "select", IDFromTb: "sites"})
	mustTable(schema.TableDef{Name: "finds", Label: "Finds"})
	mustField("finds", schema.FieldDef{Name: "label", Label: "Label", Required: true, MaxLength: &five})
	mustField("finds", schema.FieldDef{Name: "weight", Label: "Weight (g)", DBType: "float", Min: &zero, Max: &hundred})
	mustField("finds", schema.FieldDef{Name: "found_on", Label: "Found on", Type: "date", DefValue: "%today%"})
	mustField("finds", schema.FieldDef{Name: "complete", Label: "Complete", Type: "boolean"})
	mustField("finds", schema.FieldDef{Name: "notes", Label: "Notes", Type: "md"})
	mustField("finds", schema.FieldDef{Name: "inv", Label: "Inventory", Pattern: `INV-\d+`})
	mustField("finds", schema.FieldDef{Name: "unit", Label: "Unit", Type: "select", IDFromTb: "units"})
	mustField("finds", schema.FieldDef{Name: "checked", Label: "Checked", Type: "boolean", Readonly: true})
	mustTable(schema.TableDef{Name: "finds_samples", Label: "Samples", PluginOf: "finds"})
	mustField("finds_samples", schema.FieldDef{Name: "lab", Label: "Lab"})
	mustField("finds_samples", schema.FieldDef{Name: "bp", Label: "BP", DBType: "int"})

	f := &digFixture{inst: inst, app: a}
	f.super = testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password)
	for _, u := range []struct {
		dst   *string
		email string
		level int
	}{{&f.writer, "writer@example.org", auth.Writer}, {&f.self, "self@example.org", auth.SelfWriter},
		{&f.self2, "self2@example.org", auth.SelfWriter}, {&f.reader, "reader@example.org", auth.Reader}} {
		testenv.NewUser(t, a, u.email, u.email, u.level)
		*u.dst = testenv.Login(t, inst.Server, "dig", u.email, testenv.Password)
	}
	f.readerKey = testenv.NewAPIKey(t, a, auth.Reader)
	f.writerKey = testenv.NewAPIKey(t, a, auth.Writer)
	return f
}

// do sends a request as who and returns status and decoded body.
func (f *digFixture) do(t *testing.T, who, method, url, body string) (int, map[string]any) {
	t.Helper()
	var h map[string]string
	if who != "" {
		h = testenv.Bearer(who)
	}
	return testenv.Do(t, f.inst.Server, method, url, body, h)
}

// create makes a record and returns its id.
func (f *digFixture) create(t *testing.T, who, tb, core string) int64 {
	t.Helper()
	code, m := f.do(t, who, "POST", "/dig/api/record/"+tb, `{"core":`+core+`}`)
	if code != 200 {
		t.Fatalf("create %s %s: %d %v", tb, core, code, m)
	}
	return int64(m["id"].(float64))
}

func TestRecordSaveAndValidation(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		site := f.create(t, f.super, "sites", `{"name":"Pompeii"}`)
		unit := f.create(t, f.super, "units", fmt.Sprintf(`{"code":"US 1","site":%d}`, site))
		url := "/dig/api/record/finds"
		for _, s := range []testenv.Scenario{
			{Name: "required missing", Body: `{"core":{"weight":1}}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"validation_failed"`, `"field":"label"`, `"rule":"required"`}},
			{Name: "every failing field is listed", Body: `{"core":{"label":"toolong","weight":101,"inv":"X-1","found_on":"31/12/2020","unit":99999}}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"rule":"max_length"`, `"rule":"max"`, `"rule":"pattern"`, `"rule":"type"`, `"rule":"lookup"`}},
			{Name: "below min", Body: `{"core":{"label":"a","weight":-1}}`, ExpectedStatus: 400, ExpectedContent: []string{`"rule":"min"`}},
			{Name: "wrong type", Body: `{"core":{"label":"a","complete":"perhaps"}}`, ExpectedStatus: 400, ExpectedContent: []string{`"field":"complete"`, `"rule":"type"`}},
			{Name: "unknown key", Body: `{"core":{"label":"a","colour":"red"}}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`, `"field":"colour"`}},
			{Name: "unknown plugin table", Body: `{"core":{"label":"a"},"plugins":{"units":[{"fields":{"code":"x"}}]}}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`}},
			{Name: "unknown plugin field", Body: `{"core":{"label":"a"},"plugins":{"finds_samples":[{"fields":{"colour":"x"}}]}}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`}},
			{Name: "plugin row fails validation", Body: `{"core":{"label":"a"},"plugins":{"finds_samples":[{"fields":{"bp":"old"}}]}}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"table":"finds_samples"`, `"row":0`, `"field":"bp"`}},
			{Name: "malformed body", Body: `{"core":`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`}},
			{Name: "core of wrong shape", Body: `{"core":[1,2]}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`}},
			{Name: "unknown table", Body: `{"core":{}}`, ExpectedStatus: 404, ExpectedContent: []string{`"code":"table_not_found"`}},
			{Name: "reader may not create", Body: `{"core":{"label":"a"}}`, ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}},
		} {
			s.Method, s.URL, s.Headers = "POST", url, testenv.Bearer(f.writer)
			if s.Name == "unknown table" {
				s.URL = "/dig/api/record/nowhere"
			}
			if s.Name == "reader may not create" {
				s.Headers = testenv.Bearer(f.reader)
			}
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
		// Nothing of the refused saves was written.
		if code, m := f.do(t, f.super, "GET", "/dig/api/records/finds", ""); code != 200 || m["total"].(float64) != 0 {
			t.Fatalf("refused saves left rows: %v", m)
		}
		if code, m := f.do(t, f.super, "GET", "/dig/api/records/finds_samples", ""); code != 200 || m["total"].(float64) != 0 {
			t.Fatalf("refused saves left plugin rows: %v", m)
		}

		// A full create: ids as strings, echoed id/creator and readonly ignored, plugin rows.
		code, m := f.do(t, f.writer, "POST", url, fmt.Sprintf(`{"core":{"id":999,"creator":1,"label":"amph","weight":"12.5","complete":1,
			"notes":"**big** <script>alert(1)</script>","inv":"INV-7","unit":"%d","checked":true},
			"plugins":{"finds_samples":[{"_isNew":true,"fields":{"lab":"OxA","bp":"3200"}},{"fields":{"lab":"Beta","bp":2900}}]}}`, unit))
		if code != 200 || m["code"] != "success_created" {
			t.Fatalf("create: %d %v", code, m)
		}
		id := int64(m["id"].(float64))
		if id == 999 {
			t.Fatal("the body's id was used for an insert")
		}
		code, rec := f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/finds/%d", id), "")
		if code != 200 {
			t.Fatalf("read: %d %v", code, rec)
		}
		core := rec["core"].(map[string]any)
		val := func(k string) any { return core[k].(map[string]any)["val"] }
		if val("weight") != 12.5 || val("complete") != true || val("checked") != nil || val("found_on") != time.Now().UTC().Format("2006-01-02") {
			t.Errorf("stored values: weight %v complete %v checked %v found_on %v", val("weight"), val("complete"), val("checked"), val("found_on"))
		}
		if core["unit"].(map[string]any)["val_label"] != fmt.Sprint(unit) {
			t.Errorf("lookup label %v", core["unit"])
		}
		html := core["notes"].(map[string]any)["html"].(string)
		if !strings.Contains(html, "<strong>big</strong>") || strings.Contains(html, "<script") {
			t.Errorf("markdown html not rendered or not sanitised: %s", html)
		}
		samples := rec["plugins"].(map[string]any)["finds_samples"].(map[string]any)
		if samples["metadata"].(map[string]any)["tot"] != 2.0 {
			t.Errorf("plugin rows: %v", samples)
		}
		if rec["can_edit"] != false || rec["metadata"].(map[string]any)["tb_id"] != "finds" {
			t.Errorf("reader's flags: can_edit %v", rec["can_edit"])
		}
		for _, k := range []string{"links", "backlinks", "manualLinks", "geodata", "rs", "bibliography"} {
			if _, ok := rec[k].(map[string]any); !ok {
				t.Errorf("%s must be a JSON object, got %T", k, rec[k])
			}
		}
		if _, ok := rec["files"].([]any); !ok {
			t.Errorf("files must be an array")
		}
		if _, present := rec["tb_stripped"]; present {
			t.Error("tb_stripped must not be present")
		}

		// Partial update: only sent keys change; null clears; a version is stored.
		code, m = f.do(t, f.writer, "POST", url, fmt.Sprintf(`{"id":"%d","core":{"weight":null,"label":"amph2"}}`, id))
		if code != 200 || m["code"] != "success_saved" {
			t.Fatalf("update: %d %v", code, m)
		}
		_, rec = f.do(t, f.writer, "GET", fmt.Sprintf("/dig/api/record/finds/%d", id), "")
		core = rec["core"].(map[string]any)
		if val("weight") != nil || val("label") != "amph2" || val("inv") != "INV-7" {
			t.Errorf("after partial update: weight %v label %v inv %v", val("weight"), val("label"), val("inv"))
		}
		var versions int
		if err := f.app.DB.QueryRow(context.Background(), `SELECT COUNT(*) FROM `+f.app.DB.Sys("versions")+` WHERE tb = 'finds' AND record_id = ?`, id).Scan(&versions); err != nil || versions != 1 {
			t.Fatalf("versions after one update: %d %v", versions, err)
		}
		// A unique value taken → validation_failed; updating nothing else.
		f.create(t, f.super, "sites", `{"name":"Herculaneum"}`)
		code, m = f.do(t, f.super, "POST", "/dig/api/record/sites", fmt.Sprintf(`{"id":%d,"core":{"name":"Herculaneum"}}`, site))
		if code != 400 || !strings.Contains(fmt.Sprint(m), "no_dupl") {
			t.Fatalf("unique: %d %v", code, m)
		}
		code, _ = f.do(t, f.writer, "POST", url, `{"id":987654,"core":{"label":"x"}}`)
		if code != 404 {
			t.Fatalf("update of a missing id: %d", code)
		}
	})
}

func TestSelfWriterRules(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		mine1 := f.create(t, f.self, "sites", `{"name":"Mine 1"}`)
		mine2 := f.create(t, f.self, "sites", `{"name":"Mine 2"}`)
		theirs := f.create(t, f.self2, "sites", `{"name":"Theirs"}`)
		byWriter := f.create(t, f.writer, "sites", `{"name":"Writer's"}`)
		byKey := f.create(t, f.writerKey, "sites", `{"name":"By key"}`)

		// creator is the caller, or null for an API key.
		var creator *int64
		if err := f.app.DB.QueryRow(context.Background(), `SELECT creator FROM `+f.app.DB.Qualify("sites")+` WHERE id = ?`, byKey).Scan(&creator); err != nil || creator != nil {
			t.Fatalf("creator of a key's record = %v, %v", creator, err)
		}
		code, rec := f.do(t, f.self, "GET", fmt.Sprintf("/dig/api/record/sites/%d", theirs), "")
		if code != 200 || rec["can_edit"] != false || rec["can_add"] != true {
			t.Fatalf("self_writer on another's record: %d can_edit %v", code, rec["can_edit"])
		}
		if _, rec = f.do(t, f.self, "GET", fmt.Sprintf("/dig/api/record/sites/%d", mine1), ""); rec["can_edit"] != true || rec["can_delete"] != true {
			t.Fatalf("self_writer on own record: can_edit %v", rec["can_edit"])
		}
		if code, _ := f.do(t, f.self, "POST", "/dig/api/record/sites", fmt.Sprintf(`{"id":%d,"core":{"name":"Renamed"}}`, theirs)); code != 403 {
			t.Fatalf("self_writer updated another's record: %d", code)
		}
		if code, _ := f.do(t, f.self, "POST", "/dig/api/record/sites", fmt.Sprintf(`{"id":%d,"core":{"name":"Mine one"}}`, mine1)); code != 200 {
			t.Fatalf("self_writer could not update its own record: %d", code)
		}
		// Mixed bulk delete: only the caller's own go.
		code, m := f.do(t, f.self, "DELETE", fmt.Sprintf("/dig/api/record/sites/%d,%d,%d,%d,%d", mine1, theirs, mine2, byWriter, 99999), "")
		if code != 200 || m["status"] != "warning" || m["code"] != "partially_deleted_with_count" || m["deleted"] != 2.0 {
			t.Fatalf("mixed delete: %d %v", code, m)
		}
		if code, m = f.do(t, f.self, "DELETE", fmt.Sprintf("/dig/api/record/sites/%d", theirs), ""); code != 403 {
			t.Fatalf("self_writer deleted another's record: %d %v", code, m)
		}
		if code, m = f.do(t, f.writer, "DELETE", fmt.Sprintf("/dig/api/record/sites/%d,%d", theirs, byWriter), ""); code != 200 || m["code"] != "all_record_deleted" {
			t.Fatalf("writer delete: %d %v", code, m)
		}
		if code, m = f.do(t, f.writer, "DELETE", "/dig/api/record/sites/424242", ""); code != 404 || m["code"] != "no_record_deleted" {
			t.Fatalf("delete missing: %d %v", code, m)
		}
		for _, bad := range []string{"abc", "1,,2", "-1", "0"} {
			if code, _ := f.do(t, f.writer, "DELETE", "/dig/api/record/sites/"+bad, ""); code != 400 {
				t.Errorf("DELETE ids %q: %d", bad, code)
			}
		}
		// A key at 25 may create but change nothing (it has no identity).
		selfKey := testenv.NewAPIKey(t, f.app, auth.SelfWriter)
		keyRec := f.create(t, selfKey, "sites", `{"name":"Key 25"}`)
		if code, _ := f.do(t, selfKey, "POST", "/dig/api/record/sites", fmt.Sprintf(`{"id":%d,"core":{"name":"x"}}`, keyRec)); code != 403 {
			t.Fatalf("a self_writer key changed a record: %d", code)
		}
		// A reader key reads only.
		if code, _ := f.do(t, f.readerKey, "GET", "/dig/api/records/sites", ""); code != 200 {
			t.Fatalf("reader key list: %d", code)
		}
		if code, _ := f.do(t, f.readerKey, "DELETE", fmt.Sprintf("/dig/api/record/sites/%d", keyRec), ""); code != 403 {
			t.Fatalf("reader key deleted: %d", code)
		}
	})
}

func TestListPagingSortingColumns(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		names := []string{"delta", "Alpha", "charlie", "bravo"}
		for _, n := range names {
			f.create(t, f.writer, "sites", `{"name":"`+n+`"}`)
		}
		for i := 0; i < 205; i++ {
			f.create(t, f.writer, "units", fmt.Sprintf(`{"code":"US %03d"}`, i))
		}
		list := func(url string) map[string]any {
			code, m := f.do(t, f.reader, "GET", url, "")
			if code != 200 {
				t.Fatalf("%s: %d %v", url, code, m)
			}
			return m
		}
		m := list("/dig/api/records/units")
		if m["total"] != 205.0 || len(m["data"].([]any)) != 30 {
			t.Fatalf("default page: total %v, %d rows", m["total"], len(m["data"].([]any)))
		}
		if m["can_add"] != false {
			t.Error("reader can_add")
		}
		if m = list("/dig/api/records/units?per_page=1000"); len(m["data"].([]any)) != 200 {
			t.Fatalf("per_page clamps to 200, got %d", len(m["data"].([]any)))
		}
		if m = list("/dig/api/records/units?per_page=100&page=3"); len(m["data"].([]any)) != 5 || m["total"] != 205.0 {
			t.Fatalf("last page: %d rows total %v", len(m["data"].([]any)), m["total"])
		}
		if m = list("/dig/api/records/units?page=99"); len(m["data"].([]any)) != 0 || m["total"] != 205.0 {
			t.Fatalf("past the end: %v", m["total"])
		}
		m = list("/dig/api/records/sites?sort_field=name&sort_dir=desc&columns=name")
		var got []string
		for _, r := range m["data"].([]any) {
			got = append(got, r.(map[string]any)["name"].(string))
		}
		if strings.Join(got, ",") != "delta,charlie,bravo,Alpha" {
			t.Fatalf("sorted desc: %v", got)
		}
		fields, _ := json.Marshal(m["fields"])
		if string(fields) != `[{"label":"ID","name":"id"},{"label":"Name","name":"name"}]` {
			t.Fatalf("fields %s", fields)
		}
		if m = list("/dig/api/records/sites?ids_only=1"); len(m["ids"].([]any)) != 4 || m["total"] != 4.0 {
			t.Fatalf("ids_only: %v", m)
		}
		// POST: body wins over the query string.
		code, pm := f.do(t, f.reader, "POST", "/dig/api/records/units?per_page=5", `{"per_page":"7","page":2,"sort_field":""}`)
		if code != 200 || len(pm["data"].([]any)) != 7 {
			t.Fatalf("POST list: %d %v", code, pm["total"])
		}
		for _, s := range []testenv.Scenario{
			{Name: "unknown sort field", URL: "/dig/api/records/sites?sort_field=nope", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`}},
			{Name: "bad sort dir", URL: "/dig/api/records/sites?sort_dir=up", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_parameter"`}},
			{Name: "unknown column", URL: "/dig/api/records/sites?columns=name,nope", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`}},
			{Name: "bad page", URL: "/dig/api/records/sites?page=x", ExpectedStatus: 400, ExpectedContent: []string{`"parameter":"page"`}},
			{Name: "unknown table", URL: "/dig/api/records/nowhere", ExpectedStatus: 404, ExpectedContent: []string{`"code":"table_not_found"`}},
			{Name: "another app's table name on this app", URL: "/dig/api/records/sys_users", ExpectedStatus: 404},
		} {
			s.Headers = testenv.Bearer(f.reader)
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
	})
}

func TestDuplicateAndDeletePlugins(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		site := f.create(t, f.writer, "sites", `{"name":"Unique site"}`)
		// A required unique field cannot be copied: the duplicate is refused.
		if code, m := f.do(t, f.writer, "POST", fmt.Sprintf("/dig/api/record/sites/%d/duplicate", site), ""); code != 400 || !strings.Contains(fmt.Sprint(m), "required") {
			t.Fatalf("duplicate of a required unique field: %d %v", code, m)
		}
		code, m := f.do(t, f.writer, "POST", "/dig/api/record/finds", `{"core":{"label":"pot","weight":3},"plugins":{"finds_samples":[{"fields":{"lab":"A"}},{"fields":{"lab":"B"}}]}}`)
		if code != 200 {
			t.Fatal(m)
		}
		find := int64(m["id"].(float64))
		code, m = f.do(t, f.self, "POST", fmt.Sprintf("/dig/api/record/finds/%d/duplicate", find), "")
		if code != 200 || m["code"] != "success_duplicated" {
			t.Fatalf("duplicate: %d %v", code, m)
		}
		dup := int64(m["id"].(float64))
		_, rec := f.do(t, f.self, "GET", fmt.Sprintf("/dig/api/record/finds/%d", dup), "")
		if rec["can_edit"] != true || rec["core"].(map[string]any)["weight"].(map[string]any)["val"] != 3.0 {
			t.Fatalf("duplicate is the caller's copy: %v", rec["can_edit"])
		}
		if rec["plugins"].(map[string]any)["finds_samples"].(map[string]any)["metadata"].(map[string]any)["tot"] != 0.0 {
			t.Fatal("plugin rows were copied")
		}
		if code, m = f.do(t, f.self, "DELETE", fmt.Sprintf("/dig/api/record/finds/%d/plugins", find), ""); code != 403 {
			t.Fatalf("self_writer deleted plugin rows of another's record: %d %v", code, m)
		}
		if code, m = f.do(t, f.writer, "DELETE", fmt.Sprintf("/dig/api/record/finds/%d/plugins", find), ""); code != 200 || m["deleted"] != 2.0 {
			t.Fatalf("delete plugins: %d %v", code, m)
		}
	})
}

// TestAnotherAppsIDs: ids that exist only in another application are not
// found here, and that application's credentials do not work here.
func TestAnotherAppsIDs(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		other := testenv.NewApp(t, f.inst.Apps, "other")
		ctx, now := context.Background(), time.Now().UTC()
		if _, err := schema.CreateTable(ctx, other.DB, schema.TableDef{Name: "sites"}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.AddField(ctx, other.DB, "sites", schema.FieldDef{Name: "name"}, now); err != nil {
			t.Fatal(err)
		}
		otherTok := testenv.Login(t, f.inst.Server, "other", "admin@example.org", testenv.Password)
		var otherIDs []int64
		for i := 0; i < 5; i++ {
			code, m := f.do(t, otherTok, "POST", "/other/api/record/sites", `{"core":{"name":"secret"}}`)
			if code != 200 {
				t.Fatal(m)
			}
			otherIDs = append(otherIDs, int64(m["id"].(float64)))
		}
		mine := f.create(t, f.writer, "sites", `{"name":"mine"}`)
		last := otherIDs[len(otherIDs)-1]
		if last == mine {
			t.Fatal("fixture: the ids must differ")
		}
		for _, s := range []testenv.Scenario{
			{Name: "read", URL: fmt.Sprintf("/dig/api/record/sites/%d", last), Headers: testenv.Bearer(f.super), ExpectedStatus: 404},
			{Name: "update", Method: "POST", URL: "/dig/api/record/sites", Body: fmt.Sprintf(`{"id":%d,"core":{"name":"x"}}`, last), Headers: testenv.Bearer(f.super), ExpectedStatus: 404},
			{Name: "delete", Method: "DELETE", URL: fmt.Sprintf("/dig/api/record/sites/%d", last), Headers: testenv.Bearer(f.super), ExpectedStatus: 404},
			{Name: "list does not show them", URL: "/dig/api/records/sites", Headers: testenv.Bearer(f.super), ExpectedStatus: 200, NotExpectedContent: []string{"secret"}},
			{Name: "the other app's token", URL: fmt.Sprintf("/dig/api/record/sites/%d", mine), Headers: testenv.Bearer(otherTok), ExpectedStatus: 403, ExpectedContent: []string{`"code":"app_mismatch"`}},
		} {
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
		// Nothing changed in the other app.
		_, m := f.do(t, otherTok, "GET", "/other/api/records/sites", "")
		if m["total"] != 5.0 {
			t.Fatalf("other app rows: %v", m["total"])
		}
	})
}

// TestCheckPluginsBeforeDelete: which plugin tables hold rows of a record
// (BraDypUS's two-step delete dialog).
func TestCheckPluginsBeforeDelete(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		with := f.create(t, f.writer, "finds", `{"label":"a"}`)
		if code, m := f.do(t, f.writer, "POST", "/dig/api/record/finds", fmt.Sprintf(
			`{"id":%d,"core":{},"plugins":{"finds_samples":[{"fields":{"lab":"OxA"}},{"fields":{"lab":"Beta"}}]}}`, with)); code != 200 {
			t.Fatalf("plugin rows: %d %v", code, m)
		}
		without := f.create(t, f.writer, "finds", `{"label":"b"}`)
		url := "/dig/api/record/finds/check-plugins-before-delete"
		for _, s := range []testenv.Scenario{
			{Name: "rows counted", URL: fmt.Sprintf("%s?id=%d", url, with), Headers: testenv.Bearer(f.writer), ExpectedStatus: 200,
				ExpectedContent: []string{`"plugins":[{"tb":"finds_samples","label":"Samples","count":2}]`}},
			{Name: "none", URL: fmt.Sprintf("%s?id=%%20%d%%20", url, without), Headers: testenv.Bearer(f.writer), ExpectedStatus: 200,
				ExpectedContent: []string{`"plugins":[]`}},
			{Name: "id missing", URL: url, Headers: testenv.Bearer(f.writer), ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`}},
			{Name: "id empty", URL: url + "?id=", Headers: testenv.Bearer(f.writer), ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`}},
			{Name: "id not a number", URL: url + "?id=x", Headers: testenv.Bearer(f.writer), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_id"`}},
			{Name: "no such record", URL: url + "?id=999999", Headers: testenv.Bearer(f.writer), ExpectedStatus: 404, ExpectedContent: []string{`"code":"record_not_found"`}},
			{Name: "no such table", URL: "/dig/api/record/nowhere/check-plugins-before-delete?id=1", Headers: testenv.Bearer(f.super), ExpectedStatus: 404},
			{Name: "reader may not", URL: fmt.Sprintf("%s?id=%d", url, with), Headers: testenv.Bearer(f.reader), ExpectedStatus: 403},
			{Name: "still readable as a record", URL: fmt.Sprintf("/dig/api/record/finds/%d", with), Headers: testenv.Bearer(f.reader), ExpectedStatus: 200},
		} {
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
	})
}

// TestRecordTemplates: no templates yet, so every table answers an empty list.
func TestRecordTemplates(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		for _, s := range []testenv.Scenario{
			{Name: "empty list", URL: "/dig/api/record/finds/templates", Headers: testenv.Bearer(f.reader), ExpectedStatus: 200, ExpectedContent: []string{`"templates":[]`}},
			{Name: "api key", URL: "/dig/api/record/finds/templates", Headers: testenv.Bearer(f.readerKey), ExpectedStatus: 200, ExpectedContent: []string{`"templates":[]`}},
			{Name: "unknown table", URL: "/dig/api/record/nowhere/templates", Headers: testenv.Bearer(f.super), ExpectedStatus: 404},
			{Name: "signed in only", URL: "/dig/api/record/finds/templates", ExpectedStatus: 401},
		} {
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
	})
}
