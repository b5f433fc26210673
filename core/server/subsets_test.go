package server_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// readerID returns the user id of the fixture's reader.
func (f *digFixture) userID(t *testing.T, email string) int64 {
	t.Helper()
	var id int64
	if err := f.app.DB.QueryRow(t.Context(), `SELECT id FROM `+f.app.DB.Sys("users")+` WHERE email = ?`, email).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func (f *digFixture) ids(t *testing.T, who, url string) []int64 {
	t.Helper()
	code, m := f.do(t, who, "GET", url, "")
	if code != 200 {
		t.Fatalf("%s: %d %v", url, code, m)
	}
	var out []int64
	for _, r := range m["data"].([]any) {
		out = append(out, int64(r.(map[string]any)["id"].(float64)))
	}
	return out
}

func TestListFilters(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		pompeii := f.create(t, f.writer, "sites", `{"name":"Pompeii"}`)
		herc := f.create(t, f.writer, "sites", `{"name":"Herculaneum"}`)
		u1 := f.create(t, f.writer, "units", fmt.Sprintf(`{"code":"US 1","site":%d}`, pompeii))
		u2 := f.create(t, f.writer, "units", fmt.Sprintf(`{"code":"US 2","site":%d}`, herc))
		a := f.create(t, f.writer, "finds", fmt.Sprintf(`{"label":"ÄMPH","unit":%d,"weight":10}`, u1))
		b := f.create(t, f.writer, "finds", fmt.Sprintf(`{"label":"bowl","unit":%d,"weight":50}`, u2))
		c := f.create(t, f.writer, "finds", `{"label":"50%","weight":null}`)
		cases := []struct {
			name string
			url  string
			want []int64
		}{
			{"bracket _eq", "/dig/api/records/finds?filter[unit][_eq]=" + fmt.Sprint(u1), []int64{a}},
			{"unicode case folding", "/dig/api/records/finds?filter[label][_icontains]=ämph", []int64{a}},
			{"percent matches itself", "/dig/api/records/finds?filter[label][_icontains]=" + url.QueryEscape("%"), []int64{c}},
			{"negative operator matches NULL", "/dig/api/records/finds?filter[weight][_neq]=10", []int64{b, c}},
			{"lookup nested", "/dig/api/records/finds?filter[unit][code][_eq]=" + url.QueryEscape("US 2"), []int64{b}},
			{"two hops", "/dig/api/records/finds?filter[unit][site][name][_eq]=Pompeii", []int64{a}},
			{"filter as JSON string", "/dig/api/records/finds?filter=" + url.QueryEscape(`{"_or":[{"weight":{"_gt":40}},{"label":{"_eq":"ÄMPH"}}]}`), []int64{a, b}},
			{"quick search", "/dig/api/records/finds?search=BOWL", []int64{b}},
			{"search AND filter", "/dig/api/records/finds?search=o&filter[weight][_lt]=100", []int64{b}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if got := f.ids(t, f.reader, c.url); fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Fatalf("ids %v, want %v", got, c.want)
				}
			})
		}
		code, m := f.do(t, f.reader, "POST", "/dig/api/records/finds?filter[weight][_eq]=999", `{"filter":{"weight":{"_between":[5,20]}}}`)
		if code != 200 || m["total"] != 1.0 {
			t.Fatalf("POST body filter wins: %d %v", code, m)
		}
		for _, s := range []testenv.Scenario{
			{Name: "unknown field", URL: "/dig/api/records/finds?filter[colour][_eq]=red", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`}},
			{Name: "unknown operator", URL: "/dig/api/records/finds?filter[label][_like]=x", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_filter"`}},
			{Name: "third hop", URL: "/dig/api/records/finds?filter[unit][site][name][x][_eq]=1", ExpectedStatus: 400},
			{Name: "malformed JSON filter", URL: "/dig/api/records/finds?filter=" + url.QueryEscape(`{"label":`), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_filter"`}},
			{Name: "value of the wrong type", URL: "/dig/api/records/finds?filter[weight][_gt]=heavy", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_filter"`}},
		} {
			s.Headers = testenv.Bearer(f.reader)
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
	})
}

// TestRowSubsets: an override with a subset hides rows from list, read,
// update, delete and nested filters, in both forms of subset.
func TestRowSubsets(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		pompeii := f.create(t, f.super, "sites", `{"name":"Pompeii"}`)
		paestum := f.create(t, f.super, "sites", `{"name":"Paestum"}`)
		herc := f.create(t, f.super, "sites", `{"name":"Herculaneum"}`)
		hercUnit := f.create(t, f.super, "units", fmt.Sprintf(`{"code":"US H","site":%d}`, herc))
		reader := f.userID(t, "reader@example.org")
		priv := fmt.Sprintf("/dig/api/user/%d/privileges", reader)

		for _, s := range []testenv.Scenario{
			{Name: "unknown field in subset", Body: `{"table_name":"sites","privilege":20,"subset":{"colour":{"_eq":"x"}}}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_subset"`}},
			{Name: "subset SQL with a subquery", Body: `{"table_name":"sites","privilege":20,"subset":"id IN (SELECT id FROM sys_users)"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_subset"`}},
			{Name: "subset SQL with a statement break", Body: `{"table_name":"sites","privilege":20,"subset":"name = 'x'; DROP TABLE sites"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_subset"`}},
			{Name: "subset on an unknown table", Body: `{"table_name":"nowhere","privilege":20,"subset":{"name":{"_eq":"x"}}}`, ExpectedStatus: 404},
			{Name: "filter-object subset", Body: `{"table_name":"sites","privilege":20,"subset":{"name":{"_starts_with":"P"}}}`, ExpectedStatus: 200, ExpectedContent: []string{`"code":"privilege_saved"`}},
		} {
			s.Method, s.URL, s.Headers = "POST", priv, testenv.Bearer(f.super)
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
		site := func(id int64) string { return fmt.Sprintf("/dig/api/record/sites/%d", id) }
		if got := f.ids(t, f.reader, "/dig/api/records/sites"); fmt.Sprint(got) != fmt.Sprint([]int64{pompeii, paestum}) {
			t.Fatalf("list under subset: %v", got)
		}
		if code, m := f.do(t, f.reader, "GET", "/dig/api/records/sites?ids_only=1", ""); m["total"] != 2.0 {
			t.Fatalf("ids_only under subset: %d %v", code, m)
		}
		if code, _ := f.do(t, f.reader, "GET", site(herc), ""); code != 404 {
			t.Fatalf("read of a hidden row: %d", code)
		}
		if code, _ := f.do(t, f.reader, "POST", "/dig/api/record/sites", fmt.Sprintf(`{"id":%d,"core":{"name":"Ercolano"}}`, herc)); code != 404 {
			t.Fatalf("update of a hidden row: %d", code)
		}
		if code, m := f.do(t, f.reader, "DELETE", site(herc), ""); code != 404 {
			t.Fatalf("delete of a hidden row: %d %v", code, m)
		}
		// The override raised the reader to writer on sites: visible rows change.
		if code, m := f.do(t, f.reader, "POST", "/dig/api/record/sites", fmt.Sprintf(`{"id":%d,"core":{"name":"Poseidonia"}}`, paestum)); code != 200 {
			t.Fatalf("update of a visible row: %d %v", code, m)
		}
		// Nested filters from another table cannot probe the hidden rows.
		if got := f.ids(t, f.reader, "/dig/api/records/units?filter[site][name][_eq]=Herculaneum"); len(got) != 0 {
			t.Fatalf("a nested filter reached a hidden row: %v (unit %d)", got, hercUnit)
		}
		// The SQL form: only a super_admin may set it.
		admin := testenv.NewUser(t, f.app, "Ada", "ada@example.org", 10)
		adminTok := testenv.Login(t, f.inst.Server, "dig", admin.Email, testenv.Password)
		body := `{"table_name":"sites","privilege":30,"subset":"name = 'Pompeii' OR name LIKE 'Her%'"}`
		if code, m := f.do(t, adminTok, "POST", priv, body); code != 403 {
			t.Fatalf("admin set an SQL subset: %d %v", code, m)
		}
		if code, m := f.do(t, f.super, "POST", priv, body); code != 200 {
			t.Fatalf("super_admin SQL subset: %d %v", code, m)
		}
		if got := f.ids(t, f.reader, "/dig/api/records/sites"); fmt.Sprint(got) != fmt.Sprint([]int64{pompeii, herc}) {
			t.Fatalf("list under the SQL subset: %v", got)
		}
		if code, _ := f.do(t, f.reader, "POST", "/dig/api/record/sites", fmt.Sprintf(`{"id":%d,"core":{"name":"x"}}`, pompeii)); code != 403 {
			t.Fatalf("the override lowered to reader, yet the update passed: %d", code)
		}
	})
}
