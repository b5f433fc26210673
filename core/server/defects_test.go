package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestManualLinkKeyIsTheLinkID: the POST answer and the full record's
// manualLinks carry the link's integer id, the one DELETE takes.
func TestManualLinkKeyIsTheLinkID(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		site := f.create(t, f.super, "sites", `{"name":"Pompeii"}`)
		unit := f.create(t, f.super, "units", `{"code":"US 1"}`)
		code, m := f.do(t, f.writer, "POST", "/dig/api/manual-link",
			fmt.Sprintf(`{"tb_one":"sites","id_one":%d,"tb_two":"units","id_two":%d}`, site, unit))
		if code != 200 || m["code"] != "all_links_saved" {
			t.Fatalf("manual link: %d %v", code, m)
		}
		link, _ := m["link"].(map[string]any)
		id, ok := link["id"].(float64)
		if !ok || id <= 0 || link["key"] != id {
			t.Fatalf("link in the answer must carry the integer id as id and key: %v", m)
		}
		for _, at := range []string{fmt.Sprintf("sites/%d", site), fmt.Sprintf("units/%d", unit)} {
			_, rec := f.do(t, f.reader, "GET", "/dig/api/record/"+at, "")
			entry, _ := rec["manualLinks"].(map[string]any)[fmt.Sprint(id)].(map[string]any)
			if entry == nil || entry["key"] != id {
				t.Fatalf("%s: manualLinks entry key must be the link id %v: %v", at, id, rec["manualLinks"])
			}
		}
		if code, m := f.do(t, f.writer, "DELETE", fmt.Sprintf("/dig/api/manual-link/%d", int64(id)), ""); code != 200 {
			t.Fatalf("delete by the key: %d %v", code, m)
		}
		_, rec := f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/sites/%d", site), "")
		if len(rec["manualLinks"].(map[string]any)) != 0 {
			t.Fatalf("link left after delete: %v", rec["manualLinks"])
		}
	})
}

// TestRelationActionsInSQLSpelling: on_delete / on_update are accepted as
// clients write them (SQL, any case, space or underscore) and answered in
// the SQL spelling.
func TestRelationActionsInSQLSpelling(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newConfigEnv(t, e)
		env.super(t, 200, "POST", "/config/tables", `{"name":"people"}`)
		env.super(t, 200, "POST", "/config/table/people/field", `{"name":"site_code","db_type":"int"}`)
		created := env.super(t, 200, "POST", "/config/relations",
			`{"from_tb":"people","from_col":"site_code","to_tb":"sites","to_col":"id","on_delete":"SET NULL","on_update":"CASCADE"}`)
		r := created["relation"].(map[string]any)
		if r["on_delete"] != "SET NULL" || r["on_update"] != "CASCADE" {
			t.Fatalf("POST: %v", created)
		}
		path := fmt.Sprintf("/config/relations/%d", int64(r["id"].(float64)))
		for _, c := range []struct{ in, out string }{
			{"set_null", "SET NULL"}, {"Set Null", "SET NULL"}, {"no action", "NO ACTION"}, {"NO_ACTION", "NO ACTION"},
			{"restrict", "RESTRICT"}, {" Cascade ", "CASCADE"}, {"RESTRICT", "RESTRICT"},
		} {
			up := env.super(t, 200, "PUT", path, fmt.Sprintf(`{"on_delete":%q,"on_update":%q}`, c.in, c.in))
			if ur := up["relation"].(map[string]any); ur["on_delete"] != c.out || ur["on_update"] != c.out {
				t.Errorf("PUT %q: %v", c.in, up)
			}
		}
		list := env.super(t, 200, "GET", "/config/relations", "")
		for _, x := range list["relations"].([]any) {
			rel := x.(map[string]any)
			if rel["on_delete"] != "RESTRICT" && rel["on_delete"] != "CASCADE" {
				t.Errorf("GET: %v", rel)
			}
		}
		env.refusals(t, []testenv.Scenario{
			refusal("PUT", path, `{"on_delete":"SET DEFAULT"}`, 400, "invalid_on_delete", `"allowed":["RESTRICT","CASCADE","SET NULL","NO ACTION"]`),
			refusal("PUT", path, `{"on_update":"drop"}`, 400, "invalid_on_update", `"parameter":"on_update"`),
		})
	})
}

// TestTablesListChronology: GET /tables says chronology:true where the
// chronology feature is active, and reads the caller's per-table
// privileges in one query, not one per table.
func TestTablesListChronology(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		ctx, now := context.Background(), time.Now().UTC()
		spec := schema.FeatureSpec{Plugin: "chronology", Name: schema.ChronologyFeature}
		for _, tb := range []string{"finds", "units"} {
			if err := schema.ActivateFeature(ctx, f.app.DB, tb, spec, now); err != nil {
				t.Fatal(err)
			}
		}
		if err := schema.DeactivateFeature(ctx, f.app.DB, "units", schema.ChronologyFeature, now); err != nil {
			t.Fatal(err)
		}
		writer := f.userID(t, "writer@example.org")
		if err := auth.SaveTablePrivilege(ctx, f.app.DB, &auth.TablePrivilege{UserID: writer, TableName: "sites", Privilege: auth.Reader}, now); err != nil {
			t.Fatal(err)
		}
		var privQueries atomic.Int64
		if err := f.app.DB.Gorm.Callback().Query().After("gorm:query").Register("count_table_privileges", func(db *gorm.DB) {
			if strings.Contains(db.Statement.SQL.String(), "table_privileges") {
				privQueries.Add(1)
			}
		}); err != nil {
			t.Fatal(err)
		}
		want := `[{"chronology":false,"label":"Sites","name":"sites","rs":false},` +
			`{"chronology":false,"label":"Stratigraphic units","name":"units","rs":false},` +
			`{"chronology":true,"label":"Finds","name":"finds","rs":false}]`
		for _, who := range []string{f.super, f.writer, f.readerKey} {
			privQueries.Store(0)
			code, m := f.do(t, who, "GET", "/dig/api/tables", "")
			if code != 200 || jsonOf(m["tables"]) != want {
				t.Errorf("GET /tables: %d %s, want %s", code, jsonOf(m["tables"]), want)
			}
			if n := privQueries.Load(); n > 1 {
				t.Errorf("GET /tables read the table privileges with %d queries, want at most 1", n)
			}
		}
	})
}

// TestLoginNeedsEmailAndPassword: an empty password, a missing email or
// one that is not an email is 400 email_password_needed, and such requests
// count no failed attempt towards the lock.
func TestLoginNeedsEmailAndPassword(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstance(t, e)
		a := testenv.NewApp(t, inst.Apps, "dig")
		for _, s := range []testenv.Scenario{
			{Name: "empty password", Body: `{"email":"admin@example.org","password":""}`},
			{Name: "null password", Body: `{"email":"admin@example.org","password":null}`},
			{Name: "missing email", Body: `{"password":"nope-nope"}`},
			{Name: "empty email", Body: `{"email":"","password":"nope-nope"}`},
			{Name: "blank email", Body: `{"email":"  ","password":"nope-nope"}`},
			{Name: "no at sign", Body: `{"email":"admin.example.org","password":"nope-nope"}`},
			{Name: "nothing after the at", Body: `{"email":"admin@","password":"nope-nope"}`},
			{Name: "nothing before the at", Body: `{"email":"@example.org","password":"nope-nope"}`},
			{Name: "a name and an address", Body: `{"email":"Admin <admin@example.org>","password":"nope-nope"}`},
			{Name: "two ats", Body: `{"email":"a@b@example.org","password":"nope-nope"}`},
		} {
			s.Method, s.URL, s.ExpectedStatus = "POST", "/dig/api/auth/login", 400
			s.ExpectedContent = []string{`"code":"email_password_needed"`}
			t.Run(s.Name, func(t *testing.T) { s.Run(t, inst.Server) })
		}
		var n int
		if err := a.DB.QueryRow(t.Context(), `SELECT COUNT(*) FROM `+a.DB.Sys("login_attempts")+` WHERE failures > 0`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("malformed logins counted as failed attempts: %d %v", n, err)
		}
		// A real attempt with a wrong password still counts and still answers 401.
		testenv.Scenario{Method: "POST", URL: "/dig/api/auth/login", Body: `{"email":"admin@example.org","password":"nope-nope"}`,
			ExpectedStatus: 401, ExpectedContent: []string{`"code":"login_data_not_valid"`}}.Run(t, inst.Server)
		testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password)
	})
}

// TestDuplicateKeepsEveryType: a record with text, int, float, bool, date
// and lookup values is duplicated with the same values.
func TestDuplicateKeepsEveryType(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		if _, err := schema.AddField(context.Background(), f.app.DB, "finds", schema.FieldDef{Name: "pieces", Label: "Pieces", DBType: "int"}, time.Now()); err != nil {
			t.Fatal(err)
		}
		unit := f.create(t, f.super, "units", `{"code":"US 1"}`)
		for i, body := range []string{
			fmt.Sprintf(`{"label":"amph","pieces":12,"weight":12.5,"complete":true,"found_on":"2020-05-17","unit":%d,"notes":"*n*","inv":"INV-7"}`, unit),
			fmt.Sprintf(`{"label":"b","pieces":"3","weight":"0.25","complete":"0","found_on":"2021-01-02","unit":"%d"}`, unit),
			`{"label":"c","pieces":null,"weight":null,"complete":null,"found_on":null,"unit":null}`,
		} {
			id := f.create(t, f.writer, "finds", body)
			code, m := f.do(t, f.writer, "POST", fmt.Sprintf("/dig/api/record/finds/%d/duplicate", id), "")
			if code != 200 || m["code"] != "success_duplicated" {
				t.Fatalf("duplicate %s: %d %v", body, code, m)
			}
			copyID := int64(m["id"].(float64))
			if copyID == id {
				t.Fatalf("the copy has the original's id")
			}
			_, orig := f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/finds/%d", id), "")
			_, dup := f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/finds/%d", copyID), "")
			oc, dc := orig["core"].(map[string]any), dup["core"].(map[string]any)
			for _, fld := range []string{"label", "pieces", "weight", "complete", "found_on", "unit", "notes", "inv"} {
				if o, d := jsonOf(oc[fld]), jsonOf(dc[fld]); o != d {
					t.Errorf("%s: copy %s, original %s", fld, d, o)
				}
			}
			if i == 0 && (jsonOf(oc["pieces"].(map[string]any)["val"]) != "12" || oc["unit"].(map[string]any)["val"] != float64(unit)) {
				t.Errorf("stored values: %v %v", oc["pieces"], oc["unit"])
			}
		}
	})
}

// TestDuplicateWithValues: a unique field is left empty in a copy, so a
// copy of a record whose unique field is also required needs the new
// value in the body; overrides name fields of the table.
func TestDuplicateWithValues(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		site := f.create(t, f.writer, "sites", `{"name":"Original"}`) // name: required, unique
		url := fmt.Sprintf("/dig/api/record/sites/%d/duplicate", site)
		if code, m := f.do(t, f.writer, "POST", url, ""); code != 400 || m["code"] != "validation_failed" {
			t.Fatalf("without a new value: %d %v", code, m)
		}
		if code, m := f.do(t, f.writer, "POST", url, `{"core":{"nope":1}}`); code != 400 || m["code"] != "invalid_field" {
			t.Fatalf("unknown field: %d %v", code, m)
		}
		code, m := f.do(t, f.writer, "POST", url, `{"core":{"name":"Copy"}}`)
		if code != 200 || m["code"] != "success_duplicated" {
			t.Fatalf("with a new value: %d %v", code, m)
		}
		_, rec := f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/sites/%v", m["id"]), "")
		if v := rec["core"].(map[string]any)["name"].(map[string]any)["val"]; v != "Copy" {
			t.Fatalf("copy's name: %v", v)
		}
	})
}
