package server_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// hdo sends a request as who with extra headers and returns the recorder
// (status, headers, body) and the decoded body.
func (f *digFixture) hdo(t *testing.T, who, method, url, body string, hdr map[string]string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	var r *strings.Reader
	if body == "" {
		r = strings.NewReader("")
	} else {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, url, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if who != "" {
		req.Header.Set("Authorization", who)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	f.inst.Server.ServeHTTP(rec, req)
	return rec, testenv.CheckEnvelope(t, rec)
}

// must is do that fails the test unless the status is want.
func (f *digFixture) must(t *testing.T, want int, who, method, url, body string) map[string]any {
	t.Helper()
	code, m := f.do(t, who, method, url, body)
	if code != want {
		t.Fatalf("%s %s: %d, want %d: %v", method, url, code, want, m)
	}
	return m
}

// secretFixture adds to the dig a table "secret" (labelled by its code,
// pointing back at finds) that finds reach through the lookup "sref", and
// gives the writer an override that puts secret out of reach (40) and one
// that keeps only the sites whose name starts with P.
type secretFixture struct {
	*digFixture
	secret, other      int64 // secret rows
	pompeii, herc      int64 // sites
	unitP, unitH, find int64
}

func newSecret(t *testing.T, e store.Engine) *secretFixture {
	t.Helper()
	return newSecretDeps(t, e, server.Deps{})
}

// newSecretDeps is newSecret on an instance built from deps (a clock).
func newSecretDeps(t *testing.T, e store.Engine, deps server.Deps) *secretFixture {
	t.Helper()
	f := &secretFixture{digFixture: newDigDeps(t, e, deps)}
	ctx, now := t.Context(), time.Now().UTC()
	if _, err := schema.CreateTable(ctx, f.app.DB, schema.TableDef{Name: "secret", Label: "Secret"}, now); err != nil {
		t.Fatal(err)
	}
	for _, def := range []struct {
		tb  string
		def schema.FieldDef
	}{
		{"secret", schema.FieldDef{Name: "code", Label: "Code"}},
		{"secret", schema.FieldDef{Name: "find", Label: "Find", Type: "select", IDFromTb: "finds"}},
		{"finds", schema.FieldDef{Name: "sref", Label: "Secret ref", Type: "select", IDFromTb: "secret"}},
		{"finds", schema.FieldDef{Name: "site", Label: "Site", Type: "select", IDFromTb: "sites"}},
	} {
		if _, err := schema.AddField(ctx, f.app.DB, def.tb, def.def, now); err != nil {
			t.Fatal(err)
		}
	}
	f.must(t, 200, f.super, "PUT", "/dig/api/config/table/secret", `{"id_field":"code"}`)
	f.must(t, 200, f.super, "PUT", "/dig/api/config/table/sites", `{"id_field":"name"}`)
	f.pompeii = f.create(t, f.super, "sites", `{"name":"Pompeii"}`)
	f.herc = f.create(t, f.super, "sites", `{"name":"Herculaneum"}`)
	f.unitP = f.create(t, f.super, "units", fmt.Sprintf(`{"code":"US P","site":%d}`, f.pompeii))
	f.unitH = f.create(t, f.super, "units", fmt.Sprintf(`{"code":"US H","site":%d}`, f.herc))
	f.secret = f.create(t, f.super, "secret", `{"code":"TOPSECRET-42"}`)
	f.other = f.create(t, f.super, "secret", `{"code":"TOPSECRET-43"}`)
	f.find = f.create(t, f.super, "finds", fmt.Sprintf(`{"label":"amph","sref":%d,"site":%d}`, f.secret, f.herc))
	f.create(t, f.super, "secret", fmt.Sprintf(`{"code":"TOPSECRET-44","find":%d}`, f.find))
	f.must(t, 200, f.super, "PUT", "/dig/api/config/table/finds", `{"backlinks":["secret:secret:find"]}`)
	for _, tb := range []string{"secret", "sites"} {
		f.must(t, 200, f.super, "POST", "/dig/api/manual-link",
			fmt.Sprintf(`{"tb_one":"finds","id_one":%d,"tb_two":%q,"id_two":%d}`, f.find, tb, map[string]int64{"secret": f.other, "sites": f.herc}[tb]))
	}
	writer := f.userID(t, "writer@example.org")
	priv := fmt.Sprintf("/dig/api/user/%d/privileges", writer)
	f.must(t, 200, f.super, "POST", priv, `{"table_name":"secret","privilege":40}`)
	f.must(t, 200, f.super, "POST", priv, `{"table_name":"sites","privilege":20,"subset":{"name":{"_starts_with":"P"}}}`)
	return f
}

// TestLookupLabelsFollowPrivilege: another table's values reach a caller
// only as that table's privilege and row subset allow: lookup labels,
// links, backlinks and manual links withhold them, lookup options and link
// candidates apply them, and a save cannot probe which ids exist.
func TestLookupLabelsFollowPrivilege(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSecret(t, e)
		findURL := fmt.Sprintf("/dig/api/record/finds/%d", f.find)

		// The super admin sees every label.
		m := f.must(t, 200, f.super, "GET", findURL, "")
		core := m["core"].(map[string]any)
		if core["sref"].(map[string]any)["val_label"] != "TOPSECRET-42" || core["site"].(map[string]any)["val_label"] != "Herculaneum" {
			t.Fatalf("super admin's labels: %v %v", core["sref"], core["site"])
		}

		// The writer keeps the ids, not the labels.
		m = f.must(t, 200, f.writer, "GET", findURL, "")
		body, _ := json.Marshal(m)
		if strings.Contains(string(body), "TOPSECRET") || strings.Contains(string(body), "Herculaneum") {
			t.Errorf("the writer's record shows hidden values: %s", body)
		}
		core = m["core"].(map[string]any)
		for _, fld := range []string{"sref", "site"} {
			e := core[fld].(map[string]any)
			if e["val"] == nil || e["val_label"] != nil {
				t.Errorf("%s: %v, want the id and a null label", fld, e)
			}
		}
		if _, ok := m["links"].(map[string]any)["secret"]; ok {
			t.Errorf("links count rows of an unreadable table: %v", m["links"])
		}
		if _, ok := m["backlinks"].(map[string]any)["secret"]; ok {
			t.Errorf("backlinks list rows of an unreadable table: %v", m["backlinks"])
		}
		for _, l := range m["manualLinks"].(map[string]any) {
			l := l.(map[string]any)
			if l["ref_id"] == nil || l["ref_label"] != nil {
				t.Errorf("manual link to a hidden record: %v", l)
			}
		}
		// A unit of a hidden site: the site's label is withheld too.
		m = f.must(t, 200, f.writer, "GET", fmt.Sprintf("/dig/api/record/units/%d", f.unitH), "")
		if s := m["core"].(map[string]any)["site"].(map[string]any); s["val_label"] != nil || s["val"] == nil {
			t.Errorf("unit of a hidden site: %v", s)
		}
		m = f.must(t, 200, f.writer, "GET", fmt.Sprintf("/dig/api/record/units/%d", f.unitP), "")
		if s := m["core"].(map[string]any)["site"].(map[string]any); s["val_label"] != "Pompeii" {
			t.Errorf("unit of a visible site: %v", s)
		}

		// Choosing: options and candidates are the caller's rows only.
		for _, s := range []testenv.Scenario{
			{Name: "options of an unreadable table", URL: "/dig/api/record/finds/field-options?fld=sref", ExpectedStatus: 403,
				NotExpectedContent: []string{"TOPSECRET"}},
			{Name: "options within the subset", URL: "/dig/api/record/finds/field-options?fld=site", ExpectedStatus: 200,
				ExpectedContent: []string{`"Pompeii"`}, NotExpectedContent: []string{"Herculaneum"}},
			{Name: "candidates of an unreadable table", URL: "/dig/api/record/secret/link-candidates", ExpectedStatus: 403,
				NotExpectedContent: []string{"TOPSECRET"}},
			{Name: "candidates within the subset", URL: "/dig/api/record/sites/link-candidates", ExpectedStatus: 200,
				ExpectedContent: []string{`"Pompeii"`}, NotExpectedContent: []string{"Herculaneum"}},
			{Name: "values within the subset", URL: "/dig/api/search/sites/values?fld=name", ExpectedStatus: 200,
				ExpectedContent: []string{`"Pompeii"`}, NotExpectedContent: []string{"Herculaneum"}},
		} {
			s.Headers = testenv.Bearer(f.writer)
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}

		// Saving an id the caller cannot see answers as an id that does
		// not exist: no oracle.
		refusal := func(core string) string {
			t.Helper()
			m := f.must(t, 400, f.writer, "POST", "/dig/api/record/finds", `{"core":{"label":"x",`+core+`}}`)
			if m["code"] != "validation_failed" {
				t.Fatalf("%s: %v", core, m)
			}
			b, _ := json.Marshal(m["errors"])
			return string(b)
		}
		hidden, missing := refusal(fmt.Sprintf(`"sref":%d`, f.other)), refusal(`"sref":99999`)
		hiddenRow, missingRow := refusal(fmt.Sprintf(`"site":%d`, f.herc)), refusal(`"site":99999`)
		if hidden != missing || hiddenRow != missingRow {
			t.Errorf("a hidden id and a missing one answer differently:\n%s\n%s\n%s\n%s", hidden, missing, hiddenRow, missingRow)
		}
		if !strings.Contains(hidden, `"rule":"lookup"`) || strings.Contains(hidden, "secret") || strings.Contains(hidden, "sites") {
			t.Errorf("lookup refusal: %s", hidden)
		}
		// A visible id is accepted, and an update may keep the hidden id
		// the record already holds (it reveals nothing).
		f.must(t, 200, f.writer, "POST", "/dig/api/record/finds", fmt.Sprintf(`{"core":{"label":"y","site":%d}}`, f.pompeii))
		f.must(t, 200, f.writer, "POST", findURL, fmt.Sprintf(`{"core":{"label":"amph2","sref":%d,"site":%d}}`, f.secret, f.herc))
		f.must(t, 400, f.writer, "POST", findURL, fmt.Sprintf(`{"core":{"sref":%d}}`, f.other))

		// A version of a row outside the subset is not shown.
		f.must(t, 200, f.super, "POST", fmt.Sprintf("/dig/api/record/sites/%d", f.herc), `{"core":{"name":"Ercolano"}}`)
		vs := f.must(t, 200, f.super, "GET", fmt.Sprintf("/dig/api/record/sites/%d/versions", f.herc), "")["versions"].([]any)
		vid := int64(vs[0].(map[string]any)["id"].(float64))
		f.must(t, 404, f.writer, "GET", fmt.Sprintf("/dig/api/version/%d", vid), "")
		f.must(t, 404, f.writer, "GET", fmt.Sprintf("/dig/api/record/sites/%d/versions", f.herc), "")
	})
}

// TestQueryStringRefusals: a page whose offset does not fit is refused
// (no 500 on PostgreSQL, no first page on SQLite), and so is a query string
// Go's parser would silently cut (a raw ";"), on every route.
func TestQueryStringRefusals(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		f.create(t, f.writer, "finds", `{"label":"a","weight":2}`)
		f.create(t, f.writer, "finds", `{"label":"b","weight":1}`)
		for _, s := range []testenv.Scenario{
			{Name: "page overflows", URL: "/dig/api/records/finds?page=9223372036854775807", ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_parameter"`, `"parameter":"page"`}},
			{Name: "page below 1", URL: "/dig/api/records/finds?page=-1", ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_parameter"`, `"parameter":"page"`}},
			{Name: "the last page that fits is empty", URL: "/dig/api/records/finds?page=2147483647&per_page=200", ExpectedStatus: 200,
				ExpectedContent: []string{`"data":[]`, `"total":2`}},
			{Name: "page overflows in the body", Method: "POST", URL: "/dig/api/records/finds", Body: `{"page":9223372036854775807}`, ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_parameter"`}},
			{Name: "page overflows in an export", URL: "/dig/api/records/finds/export?format=json&page=9223372036854775807", ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_parameter"`}},
			{Name: "a far page is empty", URL: "/dig/api/records/finds?page=1000000&per_page=200", ExpectedStatus: 200,
				ExpectedContent: []string{`"data":[]`, `"total":2`}},
			{Name: "raw semicolon", URL: "/dig/api/records/finds?sort_field=weight;DROP%20TABLE%20finds", ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_query"`}},
			{Name: "raw semicolon between parameters", URL: "/dig/api/records/finds?sort_field=weight;sort_dir=desc", ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_query"`}},
			{Name: "raw semicolon on another route", URL: "/dig/api/tables?x=1;y=2", ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_query"`}},
			{Name: "raw semicolon on an unknown route", URL: "/dig/api/nowhere?x=1;y=2", ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_query"`}},
			{Name: "bad escape", URL: "/dig/api/records/finds?sort_field=%zz", ExpectedStatus: 400,
				ExpectedContent: []string{`"code":"invalid_query"`}},
			{Name: "encoded semicolon is a value", URL: "/dig/api/records/finds?search=a%3Bb", ExpectedStatus: 200,
				ExpectedContent: []string{`"total":0`}},
		} {
			s.Headers = testenv.Bearer(f.reader)
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
	})
}

// TestVersionsAndIDsArePaged: a record's versions come a page at a time
// (the list's sizes) with their total; ids_only lists are capped at
// 10,000 ids a page and page the same way.
func TestVersionsAndIDsArePaged(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		id := f.create(t, f.writer, "finds", `{"label":"a","weight":0}`)
		for i := 1; i <= 32; i++ {
			f.must(t, 200, f.writer, "POST", fmt.Sprintf("/dig/api/record/finds/%d", id), fmt.Sprintf(`{"core":{"weight":%d}}`, i))
		}
		versions := func(query string) ([]any, float64) {
			t.Helper()
			m := f.must(t, 200, f.reader, "GET", fmt.Sprintf("/dig/api/record/finds/%d/versions%s", id, query), "")
			return m["versions"].([]any), m["total"].(float64)
		}
		all, total := versions("")
		if len(all) != 30 || total != 32 {
			t.Fatalf("default page: %d versions, total %v", len(all), total)
		}
		two, _ := versions("?page=2&per_page=2")
		if len(two) != 2 || two[0].(map[string]any)["id"] != all[2].(map[string]any)["id"] {
			t.Errorf("page 2 of 2: %v, want from %v", two, all[2])
		}
		if last, total := versions("?page=3&per_page=15"); len(last) != 2 || total != 32 {
			t.Errorf("last page: %d versions, total %v", len(last), total)
		}
		if big, _ := versions("?per_page=100000"); len(big) != 32 {
			t.Errorf("per_page beyond the cap clamps: %d", len(big))
		}
		if past, total := versions("?page=9"); len(past) != 0 || total != 32 {
			t.Errorf("past the last page: %d, total %v", len(past), total)
		}
		f.must(t, 400, f.reader, "GET", fmt.Sprintf("/dig/api/record/finds/%d/versions?page=9223372036854775807", id), "")
		f.must(t, 400, f.reader, "GET", fmt.Sprintf("/dig/api/record/finds/%d/versions?per_page=x", id), "")

		// 10,001 more records: ids_only gives 10,000 a page.
		if _, err := f.app.DB.Exec(t.Context(), `INSERT INTO `+f.app.DB.Qualify("finds")+` ("label") `+
			`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10001) SELECT 'x' FROM n`); err != nil {
			t.Fatal(err)
		}
		ids := func(query string) ([]any, float64) {
			t.Helper()
			m := f.must(t, 200, f.reader, "GET", "/dig/api/records/finds?ids_only=1"+query, "")
			return m["ids"].([]any), m["total"].(float64)
		}
		if got, total := ids(""); len(got) != 10000 || total != 10002 || got[0] != float64(id) {
			t.Errorf("first page of ids: %d ids, total %v", len(got), total)
		}
		if got, total := ids("&page=2"); len(got) != 2 || total != 10002 {
			t.Errorf("second page of ids: %d ids, total %v", len(got), total)
		}
		if got, _ := ids("&per_page=20000"); len(got) != 10000 {
			t.Errorf("per_page beyond the cap clamps: %d", len(got))
		}
		if got, total := ids("&page=3&per_page=2&sort_field=id"); len(got) != 2 || total != 10002 || got[0] != float64(id+4) {
			t.Errorf("page 3 of 2: %v, total %v", got, total)
		}
		if got, total := ids("&page=6000"); len(got) != 0 || total != 10002 {
			t.Errorf("past the last page: %d, total %v", len(got), total)
		}
	})
}

// TestIfMatchGuardsUpdates: a record's ETag (its version) changes with
// every change; an update carrying a stale one is refused with 412 and
// writes nothing, a current one (or none, or *) goes through.
func TestIfMatchGuardsUpdates(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		rec, m := f.hdo(t, f.writer, "POST", "/dig/api/record/finds", `{"core":{"label":"a","weight":1}}`, nil)
		if rec.Code != 200 || rec.Header().Get("ETag") == "" {
			t.Fatalf("create: %d %v, ETag %q", rec.Code, m, rec.Header().Get("ETag"))
		}
		id := int64(m["id"].(float64))
		url := fmt.Sprintf("/dig/api/record/finds/%d", id)
		read := func() string {
			t.Helper()
			rec, m := f.hdo(t, f.reader, "GET", url, "", nil)
			tag := rec.Header().Get("ETag")
			if rec.Code != 200 || tag == "" {
				t.Fatalf("read: %d, ETag %q", rec.Code, tag)
			}
			if v := m["metadata"].(map[string]any)["version"]; fmt.Sprintf(`"%v"`, v) != tag {
				t.Fatalf("metadata.version %v, ETag %s", v, tag)
			}
			return tag
		}
		v0 := read()
		// Alice and Bob read v0; Alice saves first.
		rec, m = f.hdo(t, f.writer, "POST", url, `{"core":{"weight":2}}`, map[string]string{"If-Match": v0})
		v1 := rec.Header().Get("ETag")
		if rec.Code != 200 || v1 == "" || v1 == v0 || v1 != read() {
			t.Fatalf("save with the current ETag: %d %v, ETag %q after %q", rec.Code, m, v1, v0)
		}
		for _, s := range []struct {
			name, method, url, body, ifMatch string
			want                             int
		}{
			{"stale ETag", "POST", url, `{"core":{"weight":3}}`, v0, 412},
			{"stale ETag, id in the body", "POST", "/dig/api/record/finds", fmt.Sprintf(`{"id":%d,"core":{"weight":3}}`, id), v0, 412},
			{"stale weak ETag", "POST", url, `{"core":{"weight":3}}`, "W/" + v0, 412},
			{"malformed If-Match", "POST", url, `{"core":{"weight":3}}`, `"abc"`, 400},
		} {
			t.Run(s.name, func(t *testing.T) {
				rec, m := f.hdo(t, f.writer, s.method, s.url, s.body, map[string]string{"If-Match": s.ifMatch})
				if rec.Code != s.want {
					t.Fatalf("%d %v, want %d", rec.Code, m, s.want)
				}
				if s.want == 412 && (m["code"] != "precondition_failed" || rec.Header().Get("ETag") != v1) {
					t.Fatalf("412 answer: %v, ETag %q", m, rec.Header().Get("ETag"))
				}
			})
		}
		if w := f.must(t, 200, f.reader, "GET", url, "")["core"].(map[string]any)["weight"].(map[string]any)["val"]; w != 2.0 {
			t.Fatalf("a refused save wrote: weight %v", w)
		}
		// A list holding the current tag, *, or no header: the save goes on.
		rec, _ = f.hdo(t, f.writer, "POST", url, `{"core":{"weight":4}}`, map[string]string{"If-Match": v0 + ", " + v1})
		v2 := rec.Header().Get("ETag")
		if rec.Code != 200 || v2 == v1 {
			t.Fatalf("If-Match list with the current tag: %d, ETag %q", rec.Code, v2)
		}
		if rec, _ = f.hdo(t, f.writer, "POST", url, `{"core":{"weight":5}}`, map[string]string{"If-Match": "*"}); rec.Code != 200 {
			t.Fatalf("If-Match *: %d", rec.Code)
		}
		f.must(t, 200, f.writer, "POST", url, `{"core":{"weight":6}}`)
		// Deleting the plugin rows changes the version as well.
		v3 := read()
		f.must(t, 200, f.writer, "DELETE", url+"/plugins", "")
		if v4 := read(); v4 == v3 {
			t.Fatalf("version unchanged by a plugin-row delete: %s", v4)
		}
	})
}
