package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// searchDig is the dig fixture with select fields of every source, a few
// records whose text holds LIKE metacharacters, and two restricted
// callers: pending (global level 40) and noFinds (a reader whose override
// on finds is 40).
type searchDig struct {
	*digFixture
	site             map[string]int64 // id by name
	unit             map[string]int64 // id by code
	pending, noFinds string
}

// Site names: LIKE metacharacters, case and non-ASCII case.
var searchSiteNames = []string{"Pompeii", "50% off", "5000 BC", "a_b", "axb", `c\d`, "c/d", "Évora"}

func newSearchDig(t *testing.T, e store.Engine) *searchDig {
	t.Helper()
	f := &searchDig{digFixture: newDig(t, e), site: map[string]int64{}, unit: map[string]int64{}}
	ctx, now, db := context.Background(), time.Now().UTC(), f.app.DB
	for _, def := range []schema.FieldDef{
		{Name: "material", Label: "Material", Type: "select", VocabularySet: "materials"},
		{Name: "place", Label: "Place", Type: "combo_select", GetValuesFromTb: "sites:name"},
	} {
		if _, err := schema.AddField(ctx, db, "finds", def, now); err != nil {
			t.Fatal(err)
		}
	}
	for tb, idf := range map[string]string{"sites": "name", "units": "code"} {
		if _, err := schema.PutTable(ctx, db, tb, schema.TableConfig{IDField: schema.Patch[string]{Set: true, Value: idf}}, now); err != nil {
			t.Fatal(err)
		}
	}
	for i, m := range []string{"pottery", "Bone", "metal"} {
		if _, err := db.Exec(ctx, `INSERT INTO `+db.Sys("vocabularies")+` (voc, value, sort) VALUES (?, ?, ?)`, "materials", m, i); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range searchSiteNames {
		b, _ := json.Marshal(map[string]string{"name": n})
		f.site[n] = f.create(t, f.writer, "sites", string(b))
	}
	for _, u := range []struct{ code, site string }{{"US 2", "Pompeii"}, {"US 1", "Pompeii"}, {"US 10", "a_b"}} {
		f.unit[u.code] = f.create(t, f.writer, "units", fmt.Sprintf(`{"code":%q,"site":%d}`, u.code, f.site[u.site]))
	}
	for _, core := range []string{
		fmt.Sprintf(`{"label":"amph","weight":12.5,"complete":true,"unit":%d,"place":"Pompeii","material":"Bone"}`, f.unit["US 1"]),
		`{"label":"50%","weight":2,"complete":false,"place":"50% off"}`,
		`{"label":"a_b","weight":10}`,
		`{"label":"coin","weight":10,"notes":"x"}`,
	} {
		f.create(t, f.writer, "finds", core)
	}
	// Plugin rows, with a repeated value.
	code, m := f.do(t, f.writer, "POST", "/dig/api/record/finds", `{"core":{"label":"pot"},"plugins":{"finds_samples":[
		{"fields":{"lab":"OxA","bp":3200}},{"fields":{"lab":"Beta","bp":2900}},{"fields":{"lab":"OxA","bp":3100}}]}}`)
	if code != 200 {
		t.Fatalf("create with samples: %d %v", code, m)
	}

	pend := testenv.NewUser(t, f.app, "Pat", "pending@example.org", auth.Reader)
	f.pending = testenv.Login(t, f.inst.Server, "dig", pend.Email, testenv.Password)
	setPrivilege(t, f.app, pend.ID, auth.Pending) // after login: the token stays, the level is re-read
	nf := testenv.NewUser(t, f.app, "Nora", "nofinds@example.org", auth.Reader)
	if err := auth.SaveTablePrivilege(ctx, db, &auth.TablePrivilege{UserID: nf.ID, TableName: "finds", Privilege: auth.Pending}, now); err != nil {
		t.Fatal(err)
	}
	f.noFinds = testenv.Login(t, f.inst.Server, "dig", nf.Email, testenv.Password)
	return f
}

// get sends a GET as who and fails the test unless it answers want.
func (f *searchDig) get(t *testing.T, who, path string, want int) map[string]any {
	t.Helper()
	code, m := f.do(t, who, "GET", path, "")
	if code != want {
		t.Fatalf("GET %s: %d, want %d: %v", path, code, want, m)
	}
	return m
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestSearchConfig(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSearchDig(t, e)
		m := f.get(t, f.reader, "/dig/api/search/finds/config", 200)
		byValue := map[string]map[string]any{}
		var order []string
		for _, x := range m["fields"].([]any) {
			fd := x.(map[string]any)
			byValue[fd["value"].(string)] = fd
			order = append(order, fd["value"].(string))
		}
		want := []string{"finds:label", "finds:weight", "finds:found_on", "finds:complete", "finds:notes", "finds:inv",
			"finds:unit", "finds:checked", "finds:material", "finds:place", "finds_samples:lab", "finds_samples:bp"}
		if !slices.Equal(order, want) {
			t.Fatalf("fields %v, want %v", order, want)
		}
		if got := jsonOf(byValue["finds:label"]); got != `{"label":"Label","type":"text","value":"finds:label"}` {
			t.Errorf("plain field: %s", got)
		}
		if got := jsonOf(byValue["finds:unit"]); got != `{"label":"Unit","ref_field":"code","ref_tb":"units","type":"select","value":"finds:unit"}` {
			t.Errorf("lookup field: %s", got)
		}
		if got := jsonOf(byValue["finds_samples:bp"]); got != `{"label":"BP","type":"text","value":"finds_samples:bp"}` {
			t.Errorf("plugin field: %s", got)
		}
		ops := []string{}
		for _, o := range m["operators"].([]any) {
			ops = append(ops, o.(string))
		}
		slices.Sort(ops)
		wantOps := strings.Fields("_eq _neq _contains _icontains _ncontains _starts_with _nstarts_with _ends_with _nends_with _gt _lt _gte _lte _empty _nempty _null _nnull _in _nin _between")
		slices.Sort(wantOps)
		if !slices.Equal(ops, wantOps) {
			t.Errorf("operators %v, want %v", ops, wantOps)
		}
		// A lookup to a table without id_field names id.
		if _, err := schema.PutTable(context.Background(), f.app.DB, "units", schema.TableConfig{IDField: schema.Patch[string]{Set: true}}, time.Now()); err != nil {
			t.Fatal(err)
		}
		m = f.get(t, f.readerKey, "/dig/api/search/finds/config", 200)
		for _, x := range m["fields"].([]any) {
			if fd := x.(map[string]any); fd["value"] == "finds:unit" && fd["ref_field"] != "id" {
				t.Errorf("lookup to a table without id_field: %v", fd)
			}
		}
		for _, s := range []testenv.Scenario{
			{Name: "unknown table", URL: "/dig/api/search/nowhere/config", Headers: testenv.Bearer(f.reader), ExpectedStatus: 404, ExpectedContent: []string{`"code":"table_not_found"`}},
			{Name: "no credential", URL: "/dig/api/search/finds/config", ExpectedStatus: 401},
			{Name: "pending", URL: "/dig/api/search/finds/config", Headers: testenv.Bearer(f.pending), ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}},
			{Name: "override 40 on the table", URL: "/dig/api/search/finds/config", Headers: testenv.Bearer(f.noFinds), ExpectedStatus: 403},
			{Name: "override elsewhere", URL: "/dig/api/search/sites/config", Headers: testenv.Bearer(f.noFinds), ExpectedStatus: 200},
		} {
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
	})
}

func TestSearchValues(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSearchDig(t, e)
		for _, c := range []struct {
			name, query, want string
		}{
			// Byte order: digits, upper case, lower case, then non-ASCII.
			{"all, sorted", "fld=name", `["50% off","5000 BC","Pompeii","a_b","axb","c/d","c\\d","Évora"]`},
			{"table:field form", "fld=sites:name", `["50% off","5000 BC","Pompeii","a_b","axb","c/d","c\\d","Évora"]`},
			{"q ignores case", "fld=name&q=POMP", `["Pompeii"]`},
			{"q folds non-ASCII", "fld=name&q=" + url.QueryEscape("éVO"), `["Évora"]`},
			{"q contains", "fld=name&q=x", `["axb"]`},
			{"% matches itself", "fld=name&q=" + url.QueryEscape("%"), `["50% off"]`},
			{"_ matches itself", "fld=name&q=_", `["a_b"]`},
			{`\ matches itself`, "fld=name&q=" + url.QueryEscape(`\`), `["c\\d"]`},
			{"limit", "fld=name&limit=2", `["50% off","5000 BC"]`},
			{"limit over the cap clamps", "fld=name&limit=100000&q=o", `["50% off","Pompeii","Évora"]`},
			{"no match", "fld=name&q=zzz", `[]`},
		} {
			t.Run(c.name, func(t *testing.T) {
				m := f.get(t, f.reader, "/dig/api/search/sites/values?"+c.query, 200)
				if got := jsonOf(m["values"]); got != c.want {
					t.Errorf("%s: %s, want %s", c.query, got, c.want)
				}
			})
		}
		for _, c := range []struct {
			name, query, want string
		}{
			{"numbers sort as numbers", "fld=weight", `[2,10,12.5]`},
			{"numbers match as text", "fld=weight&q=.5", `[12.5]`},
			{"booleans", "fld=complete", `[false,true]`},
			{"booleans match their JSON text", "fld=complete&q=TRU", `[true]`},
			{"lookup ids", "fld=unit", fmt.Sprintf(`[%d]`, f.unit["US 1"])},
			{"plugin field, distinct", "fld=finds_samples:lab", `["Beta","OxA"]`},
			{"plugin number", "fld=finds_samples:bp&q=1", `[3100]`},
			{"own table prefix", "fld=finds:label&q=" + url.QueryEscape("%"), `["50%"]`},
		} {
			t.Run(c.name, func(t *testing.T) {
				m := f.get(t, f.readerKey, "/dig/api/search/finds/values?"+c.query, 200)
				if got := jsonOf(m["values"]); got != c.want {
					t.Errorf("%s: %s, want %s", c.query, got, c.want)
				}
			})
		}
		for _, s := range []testenv.Scenario{
			{Name: "fld missing", URL: "/dig/api/search/finds/values", ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`, `"parameter":"fld"`}},
			{Name: "unknown field", URL: "/dig/api/search/finds/values?fld=colour", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`}},
			{Name: "another table's field", URL: "/dig/api/search/finds/values?fld=units:code", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`}},
			{Name: "unknown plugin field", URL: "/dig/api/search/finds/values?fld=finds_samples:colour", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`}},
			{Name: "system column", URL: "/dig/api/search/finds/values?fld=creator", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`}},
			{Name: "bad limit", URL: "/dig/api/search/finds/values?fld=label&limit=0", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_parameter"`, `"parameter":"limit"`}},
			{Name: "unknown table", URL: "/dig/api/search/nowhere/values?fld=label", ExpectedStatus: 404, ExpectedContent: []string{`"code":"table_not_found"`}},
		} {
			s.Headers = testenv.Bearer(f.reader)
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
		for who, want := range map[string]int{f.pending: 403, f.noFinds: 403, f.self: 200, "": 401} {
			if code, m := f.do(t, who, "GET", "/dig/api/search/finds/values?fld=label", ""); code != want {
				t.Errorf("values as %.20s: %d, want %d: %v", who, code, want, m)
			}
		}
	})
}

func TestFieldOptions(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSearchDig(t, e)
		opts := func(path string) (string, string) {
			t.Helper()
			m := f.get(t, f.reader, path, 200)
			return m["source"].(string), jsonOf(m["options"])
		}
		us := func(code string) string { return fmt.Sprintf(`{"label":%q,"value":%d}`, code, f.unit[code]) }
		for _, c := range []struct {
			name, path, source, want string
		}{
			{"lookup: records of the table by label", "/dig/api/record/finds/field-options?fld=unit", "id_from_tb",
				"[" + us("US 1") + "," + us("US 10") + "," + us("US 2") + "]"},
			{"lookup with q", "/dig/api/record/finds/field-options?fld=unit&q=" + url.QueryEscape("us 1"), "id_from_tb",
				"[" + us("US 1") + "," + us("US 10") + "]"},
			{"lookup with limit", "/dig/api/record/finds/field-options?fld=unit&limit=1", "id_from_tb", "[" + us("US 1") + "]"},
			{"lookup, LIKE metacharacter", "/dig/api/record/units/field-options?fld=site&q=_", "id_from_tb",
				fmt.Sprintf(`[{"label":"a_b","value":%d}]`, f.site["a_b"])},
			{"db: distinct values of table:field", "/dig/api/record/finds/field-options?fld=place&q=o", "db",
				`[{"label":"50% off","value":"50% off"},{"label":"Pompeii","value":"Pompeii"},{"label":"Évora","value":"Évora"}]`},
			{"vocabulary: items in order", "/dig/api/record/finds/field-options?fld=material", "vocabulary",
				`[{"label":"pottery","value":"pottery"},{"label":"Bone","value":"Bone"},{"label":"metal","value":"metal"}]`},
			{"vocabulary with q", "/dig/api/record/finds/field-options?fld=material&q=BO", "vocabulary", `[{"label":"Bone","value":"Bone"}]`},
			{"table:field form", "/dig/api/record/finds/field-options?fld=finds:material&q=zz", "vocabulary", `[]`},
		} {
			t.Run(c.name, func(t *testing.T) {
				source, got := opts(c.path)
				if source != c.source || got != c.want {
					t.Errorf("%s: source %s options %s, want %s %s", c.path, source, got, c.source, c.want)
				}
			})
		}
		for _, s := range []testenv.Scenario{
			{Name: "not a select field", URL: "/dig/api/record/finds/field-options?fld=label", Headers: testenv.Bearer(f.reader), ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_field"`, `"detail":`}},
			{Name: "unknown field", URL: "/dig/api/record/finds/field-options?fld=colour", Headers: testenv.Bearer(f.reader), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`}},
			{Name: "fld missing", URL: "/dig/api/record/finds/field-options", Headers: testenv.Bearer(f.reader), ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`}},
			{Name: "unknown table", URL: "/dig/api/record/nowhere/field-options?fld=unit", Headers: testenv.Bearer(f.reader), ExpectedStatus: 404, ExpectedContent: []string{`"code":"table_not_found"`}},
			{Name: "pending", URL: "/dig/api/record/finds/field-options?fld=unit", Headers: testenv.Bearer(f.pending), ExpectedStatus: 403},
			// The source table is read as the caller: no labels of a table it may not read.
			{Name: "source table not readable", URL: "/dig/api/record/finds/field-options?fld=place", Headers: testenv.Bearer(f.noFinds), ExpectedStatus: 403},
		} {
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
		// noFinds reads units and sites: the lookup of units works; a
		// reader lowered to 40 on sites may not list them through units.
		f.get(t, f.noFinds, "/dig/api/record/units/field-options?fld=site", 200)
		u := testenv.NewUser(t, f.app, "Sid", "nosites@example.org", auth.Reader)
		if err := auth.SaveTablePrivilege(context.Background(), f.app.DB, &auth.TablePrivilege{UserID: u.ID, TableName: "sites", Privilege: auth.Pending}, time.Now()); err != nil {
			t.Fatal(err)
		}
		noSites := testenv.Login(t, f.inst.Server, "dig", u.Email, testenv.Password)
		if m := f.get(t, noSites, "/dig/api/record/units/field-options?fld=site", 403); m["table"] != "sites" {
			t.Errorf("refusal names the source table: %v", m)
		}
	})
}

func TestCheckUnique(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSearchDig(t, e)
		pompeii := f.site["Pompeii"]
		for _, c := range []struct {
			name, query string
			unique      bool
		}{
			{"taken", "field=name&value=Pompeii", false},
			{"taken by the record itself", fmt.Sprintf("field=name&value=Pompeii&id=%d", pompeii), true},
			{"taken, another id excluded", fmt.Sprintf("field=name&value=Pompeii&id=%d", f.site["a_b"]), false},
			{"exact comparison", "field=name&value=pompeii", true},
			{"no LIKE: % is a character", "field=name&value=" + url.QueryEscape("50%"), true},
			{"free", "field=name&value=Troy", true},
			{"blank is never a duplicate", "field=name&value=", true},
			{"empty id: a new record", "field=name&value=Pompeii&id=", false},
		} {
			t.Run(c.name, func(t *testing.T) {
				m := f.get(t, f.reader, "/dig/api/record/sites/check-unique?"+c.query, 200)
				if m["unique"] != c.unique {
					t.Errorf("%s: unique %v, want %v", c.query, m["unique"], c.unique)
				}
			})
		}
		for _, c := range []struct {
			query  string
			unique bool
		}{
			{"field=weight&value=12.50", false}, // compared as a number
			{"field=weight&value=12.6", true},
			{"field=complete&value=1", false}, // as a boolean
			{"field=unit&value=" + fmt.Sprint(f.unit["US 1"]), false},
			{"field=label&value=" + url.QueryEscape("a_b"), false},
			{"field=label&value=axb", true},
		} {
			if m := f.get(t, f.readerKey, "/dig/api/record/finds/check-unique?"+c.query, 200); m["unique"] != c.unique {
				t.Errorf("finds %s: unique %v, want %v", c.query, m["unique"], c.unique)
			}
		}
		for _, s := range []testenv.Scenario{
			{Name: "field missing", URL: "/dig/api/record/sites/check-unique?value=x", ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`, `"parameter":"field"`}},
			{Name: "value missing", URL: "/dig/api/record/sites/check-unique?field=name", ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`, `"parameter":"value"`}},
			{Name: "unknown field", URL: "/dig/api/record/sites/check-unique?field=colour&value=x", ExpectedStatus: 404, ExpectedContent: []string{`"code":"field_not_found"`}},
			{Name: "value of the wrong type", URL: "/dig/api/record/finds/check-unique?field=weight&value=heavy", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_parameter"`, `"parameter":"value"`}},
			{Name: "bad id", URL: "/dig/api/record/sites/check-unique?field=name&value=x&id=abc", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_id"`}},
			{Name: "unknown table", URL: "/dig/api/record/nowhere/check-unique?field=name&value=x", ExpectedStatus: 404, ExpectedContent: []string{`"code":"table_not_found"`}},
		} {
			s.Headers = testenv.Bearer(f.reader)
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
		f.get(t, f.pending, "/dig/api/record/sites/check-unique?field=name&value=x", 403)
		f.get(t, f.noFinds, "/dig/api/record/finds/check-unique?field=label&value=x", 403)
	})
}

func TestLinkCandidates(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSearchDig(t, e)
		site := func(names ...string) string {
			var parts []string
			for _, n := range names {
				parts = append(parts, jsonOf(map[string]any{"id": f.site[n], "label": n}))
			}
			return "[" + strings.Join(parts, ",") + "]"
		}
		for _, c := range []struct{ name, query, want string }{
			{"every record, by label", "", site("50% off", "5000 BC", "Pompeii", "a_b", "axb", "c/d", `c\d`, "Évora")},
			{"contains, ignoring case", "q=" + url.QueryEscape("O"), site("50% off", "Pompeii", "Évora")},
			{"% matches itself", "q=" + url.QueryEscape("%"), site("50% off")},
			{"_ matches itself", "q=_", site("a_b")},
			{`\ matches itself`, "q=" + url.QueryEscape(`\`), site(`c\d`)},
			{"limit", "limit=1", site("50% off")},
		} {
			t.Run(c.name, func(t *testing.T) {
				m := f.get(t, f.reader, "/dig/api/record/sites/link-candidates?"+c.query, 200)
				if got := jsonOf(m["data"]); got != c.want {
					t.Errorf("%s: %s, want %s", c.query, got, c.want)
				}
			})
		}
		// Without id_field the label is the id, matched as text.
		m := f.get(t, f.reader, "/dig/api/record/finds_samples/link-candidates?q=", 200)
		if data := m["data"].([]any); len(data) != 3 || data[0].(map[string]any)["label"] != fmt.Sprint(data[0].(map[string]any)["id"]) {
			t.Errorf("labels by id: %v", data)
		}
		// At most 50, whatever the limit asks.
		ctx, db := context.Background(), f.app.DB
		for i := 0; i < 60; i++ {
			if _, err := db.Exec(ctx, `INSERT INTO `+db.Qualify("units")+` (code) VALUES (?)`, fmt.Sprintf("bulk %02d", i)); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range []string{"q=bulk", "q=bulk&limit=500"} {
			if m := f.get(t, f.reader, "/dig/api/record/units/link-candidates?"+q, 200); len(m["data"].([]any)) != 50 {
				t.Errorf("%s: %d candidates, want the cap of 50", q, len(m["data"].([]any)))
			}
		}
		for _, s := range []testenv.Scenario{
			{Name: "unknown table", URL: "/dig/api/record/nowhere/link-candidates?q=a", Headers: testenv.Bearer(f.reader), ExpectedStatus: 404, ExpectedContent: []string{`"code":"table_not_found"`}},
			{Name: "bad limit", URL: "/dig/api/record/sites/link-candidates?limit=-3", Headers: testenv.Bearer(f.reader), ExpectedStatus: 400, ExpectedContent: []string{`"parameter":"limit"`}},
			{Name: "pending", URL: "/dig/api/record/sites/link-candidates?q=a", Headers: testenv.Bearer(f.pending), ExpectedStatus: 403},
			{Name: "override 40", URL: "/dig/api/record/finds/link-candidates?q=a", Headers: testenv.Bearer(f.noFinds), ExpectedStatus: 403},
		} {
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
	})
}

func TestTablesList(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSearchDig(t, e)
		if _, err := schema.PutTable(context.Background(), f.app.DB, "units", schema.TableConfig{RS: schema.RSOn(true)}, time.Now()); err != nil {
			t.Fatal(err)
		}
		all := `[{"chronology":false,"label":"Sites","name":"sites","rs":false},` +
			`{"chronology":false,"label":"Stratigraphic units","name":"units","rs":true},` +
			`{"chronology":false,"label":"Finds","name":"finds","rs":false}]`
		for _, c := range []struct {
			name, who, want string
		}{
			{"super_admin: every table but plugin tables", f.super, all},
			{"reader", f.reader, all},
			{"reader key", f.readerKey, all},
			{"override 40 hides its table", f.noFinds, `[{"chronology":false,"label":"Sites","name":"sites","rs":false},` +
				`{"chronology":false,"label":"Stratigraphic units","name":"units","rs":true}]`},
		} {
			t.Run(c.name, func(t *testing.T) {
				if got := jsonOf(f.get(t, c.who, "/dig/api/tables", 200)["tables"]); got != c.want {
					t.Errorf("tables %s, want %s", got, c.want)
				}
			})
		}
		// Overrides decide per table: a reader lowered to 40 on two tables
		// sees the third only.
		u := testenv.NewUser(t, f.app, "Ola", "override@example.org", auth.Reader)
		for _, tb := range []string{"sites", "units"} {
			if err := auth.SaveTablePrivilege(context.Background(), f.app.DB, &auth.TablePrivilege{UserID: u.ID, TableName: tb, Privilege: auth.Pending}, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		only := testenv.Login(t, f.inst.Server, "dig", u.Email, testenv.Password)
		if got := jsonOf(f.get(t, only, "/dig/api/tables", 200)["tables"]); got != `[{"chronology":false,"label":"Finds","name":"finds","rs":false}]` {
			t.Errorf("one table left: %s", got)
		}
		f.get(t, f.pending, "/dig/api/tables", 403)
		f.get(t, "", "/dig/api/tables", 401)
	})
}

// TestSearchRoutesBeforeRecordID: the static segments of the helpers are
// not taken for a record id by /record/{tb}/{id}.
func TestSearchRoutesBeforeRecordID(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSearchDig(t, e)
		for path, key := range map[string]string{
			"/dig/api/record/finds/field-options?fld=unit":            "options",
			"/dig/api/record/finds/check-unique?field=label&value=zz": "unique",
			"/dig/api/record/finds/link-candidates":                   "data",
		} {
			if m := f.get(t, f.reader, path, 200); m[key] == nil || m["core"] != nil {
				t.Errorf("%s was not answered by its helper: %v", path, m)
			}
		}
		// Without parameters the helper still answers, with its own error.
		if m := f.get(t, f.reader, "/dig/api/record/finds/field-options", 400); m["code"] != "parameter_missing" {
			t.Errorf("field-options without fld: %v", m)
		}
		// The record read is untouched.
		if m := f.get(t, f.reader, "/dig/api/record/finds/987654", 404); m["code"] != "record_not_found" {
			t.Errorf("record read: %v", m)
		}
	})
}
