package filter_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/filter"
)

// forms parses one filter given as a query string and as JSON in every way
// the API accepts it, and returns the canonical strings.
func forms(t *testing.T, query, js string) map[string]string {
	t.Helper()
	out := map[string]string{}
	str := func(n filter.Node) string {
		if n == nil {
			return "<nil>"
		}
		return n.String()
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	n, err := filter.ParseQuery(q)
	if err != nil {
		t.Fatalf("ParseQuery(%s): %v", query, err)
	}
	out["brackets"] = str(n)

	n, err = filter.ParseJSON([]byte(js))
	if err != nil {
		t.Fatalf("ParseJSON(%s): %v", js, err)
	}
	out["json"] = str(n)

	n, err = filter.ParseQuery(url.Values{"filter": {js}, "page": {"2"}})
	if err != nil {
		t.Fatalf("ParseQuery(filter=%s): %v", js, err)
	}
	out["filter="] = str(n)

	var m map[string]any // plain encoding/json: numbers as float64
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	n, err = filter.FromMap(m)
	if err != nil {
		t.Fatalf("FromMap(%s): %v", js, err)
	}
	out["map"] = str(n)
	return out
}

func TestInputFormsGiveOneAST(t *testing.T) {
	cases := []struct{ query, json, want string }{
		{`filter[label][_eq]=x`, `{"label":{"_eq":"x"}}`, `label._eq("x")`},
		{`filter[id][_eq]=5`, `{"id":{"_eq":5}}`, `id._eq("5")`},
		{`filter[label][_icontains]=a&filter[count][_gt]=3&page=2&sort_field=x`, `{"count":{"_gt":3},"label":{"_icontains":"a"}}`,
			`and(count._gt("3"),label._icontains("a"))`},
		{`filter[id][_in]=1,2,3`, `{"id":{"_in":[1,2,3]}}`, `id._in["1","2","3"]`},
		{`filter[id][_in]=1,2,3`, `{"id":{"_in":"1,2,3"}}`, `id._in["1","2","3"]`},
		{`filter[id][_in][]=1&filter[id][_in][]=2`, `{"id":{"_in":[1,2]}}`, `id._in["1","2"]`},
		{`filter[id][_nin]=1&filter[id][_nin]=2`, `{"id":{"_nin":["1","2"]}}`, `id._nin["1","2"]`},
		{`filter[id][_in]=`, `{"id":{"_in":[]}}`, `id._in[]`},
		{`filter[label][_null]`, `{"label":{"_null":true}}`, `label._null()`},
		{`filter[label][_nnull]=true`, `{"label":{"_nnull":null}}`, `label._nnull()`},
		{`filter[id][_null]=false`, `{"id":{"_null":false}}`, `id._nnull()`},
		{`filter[label][_nempty]=0`, `{"label":{"_nempty":"false"}}`, `label._empty()`},
		{`filter[label][_empty]=1`, `{"label":{"_empty":"true"}}`, `label._empty()`},
		{`filter[count][_between]=1,5`, `{"count":{"_between":[1,5]}}`, `count._between("1","5")`},
		{`filter[complete][_eq]=true`, `{"complete":{"_eq":true}}`, `complete._eq("true")`},
		{`filter[weight][_gte]=2.5`, `{"weight":{"_gte":2.5}}`, `weight._gte("2.5")`},
		{`filter[label][_nnull]=true&filter[label][_neq]=x`, `{"label":{"_neq":"x","_nnull":true}}`,
			`and(label._neq("x"),label._nnull())`},
		{`filter[_or][0][label][_icontains]=amph&filter[_or][1][site][name][_eq]=Pompeii`,
			`{"_or":[{"label":{"_icontains":"amph"}},{"site":{"name":{"_eq":"Pompeii"}}}]}`,
			`or(label._icontains("amph"),site{name._eq("Pompeii")})`},
		{`filter[site][_or][0][name][_eq]=A&filter[site][_or][1][name][_eq]=B`,
			`{"site":{"_or":[{"name":{"_eq":"A"}},{"name":{"_eq":"B"}}]}}`,
			`site{or(name._eq("A"),name._eq("B"))}`},
		// Indexes order the array numerically and may have gaps.
		{`filter[_and][10][b][_eq]=2&filter[_and][5][a][_eq]=1`, `{"_and":[{"a":{"_eq":1}},{"b":{"_eq":2}}]}`,
			`and(a._eq("1"),b._eq("2"))`},
		{`filter[finds_biblio][finds][site][name][_starts_with]=Po`, `{"finds_biblio":{"finds":{"site":{"name":{"_starts_with":"Po"}}}}}`,
			`finds_biblio{finds{site{name._starts_with("Po")}}}`},
		// A plugin operator keeps its operand, normalised.
		{`filter[chrono_from][_chrono_overlap][0]=-350&filter[chrono_from][_chrono_overlap][1]=-320`,
			`{"chrono_from":{"_chrono_overlap":[-350,-320]}}`, `chrono_from._chrono_overlap(["-350","-320"])`},
		{`filter[chrono_from][_chrono_overlap][from]=-350&filter[chrono_from][_chrono_overlap][to]=-320`,
			`{"chrono_from":{"_chrono_overlap":{"from":-350,"to":-320}}}`, `chrono_from._chrono_overlap({"from":"-350","to":"-320"})`},
		// Text keeps %, _, \ and non-ASCII as sent.
		{`filter[label][_contains]=` + url.QueryEscape(`100% a_b \ Ä,ẞ`), `{"label":{"_contains":"100% a_b \\ Ä,ẞ"}}`, `label._contains("100% a_b \\ Ä,ẞ")`},
		// Empty groups and objects give no condition.
		{`page=1`, `{}`, `<nil>`},
		{`filter[_or][0][label][_eq]=x`, `{"_or":[{"label":{"_eq":"x"}}],"_and":[]}`, `or(label._eq("x"))`},
	}
	for _, c := range cases {
		got := forms(t, c.query, c.json)
		for form, s := range got {
			if s != c.want {
				t.Errorf("%s form of %s / %s = %s, want %s", form, c.query, c.json, s, c.want)
			}
		}
	}
}

func TestEveryOperatorParses(t *testing.T) {
	values := map[string][2]string{ // operator: query value, JSON value
		"_in": {"a,b", `["a","b"]`}, "_nin": {"a,b", `["a","b"]`}, "_between": {"a,b", `["a","b"]`},
		"_null": {"true", "true"}, "_nnull": {"true", "true"}, "_empty": {"true", "true"}, "_nempty": {"true", "true"},
	}
	for _, op := range filter.BuiltinOperators() {
		v, ok := values[op]
		if !ok {
			v = [2]string{"a", `"a"`}
		}
		got := forms(t, "filter[label]["+op+"]="+v[0], `{"label":{"`+op+`":`+v[1]+`}}`)
		want := got["json"]
		if !strings.HasPrefix(want, "label."+op) {
			t.Errorf("%s parsed as %s", op, want)
		}
		for form, s := range got {
			if s != want {
				t.Errorf("%s: %s form %s, json form %s", op, form, s, want)
			}
		}
	}
	if n := len(filter.BuiltinOperators()); n != 20 {
		t.Errorf("%d built-in operators, want 20", n)
	}
}

func TestBothFormsAreANDed(t *testing.T) {
	n, err := filter.ParseQuery(url.Values{"filter[a][_eq]": {"1"}, "filter": {`{"b":{"_eq":2}}`}})
	if err != nil || n.String() != `and(a._eq("1"),b._eq("2"))` {
		t.Fatalf("got %v, %v", n, err)
	}
	// A stringified object is read too.
	n, err = filter.ParseJSON([]byte(`"{\"b\":{\"_eq\":2}}"`))
	if err != nil || n.String() != `b._eq("2")` {
		t.Fatalf("stringified: %v, %v", n, err)
	}
	for _, empty := range []string{"", " ", "null", `""`} {
		if n, err := filter.ParseJSON([]byte(empty)); n != nil || err != nil {
			t.Errorf("ParseJSON(%q) = %v, %v; want no filter", empty, n, err)
		}
	}
}

func nested(levels int, inner string) string {
	s := inner
	for i := 0; i < levels; i++ {
		s = `{"_and":[` + s + `]}`
	}
	return s
}

func manyFields(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"f%d":{"_eq":1}`, i)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func list(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprint(i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func code(err error) string {
	if err == nil {
		return "ok"
	}
	return errs.CodeOf(err)
}

func detail(err error) string {
	if e, ok := errs.As(err); ok {
		d, _ := e.Extra["detail"].(string)
		return d
	}
	return ""
}

func TestParseErrors(t *testing.T) {
	big := strings.Repeat("x", filter.MaxText)
	cases := []struct {
		json, code, detail string
	}{
		{`[1]`, "invalid_filter", "JSON object"},
		{`42`, "invalid_filter", "JSON object"},
		{`{"label":`, "invalid_filter", "not valid JSON"},
		{`{"label":{"_eq":1}} {}`, "invalid_filter", "after the JSON value"},
		{`{"label":{"_eq":"a\u0000b"}}`, "invalid_filter", "NUL"},
		{`{"label":{"_eq":"\ud800"}}`, "invalid_filter", "surrogate"},
		{`{"label":"x"}`, "invalid_filter", "operator object"},
		{`{"label":{"_bogus!":1}}`, "invalid_filter", "unknown operator"},
		{`{"_xor":[]}`, "invalid_filter", "not a field"},
		{`{"Label":{"_eq":1}}`, "invalid_field", "cannot name a field"},
		{`{"a b":{"_eq":1}}`, "invalid_field", ""},
		{`{"label":{"_eq":1,"name":{"_eq":1}}}`, "invalid_filter", "mixes"},
		{`{"label":{}}`, "invalid_filter", "empty condition"},
		{`{"site":{"_or":[]}}`, "invalid_filter", "empty nested"},
		{`{"label":{"_eq":null}}`, "invalid_filter", "use _null"},
		{`{"label":{"_eq":[1]}}`, "invalid_filter", "one value"},
		{`{"label":{"_eq":{"a":1}}}`, "invalid_filter", "one value"},
		{`{"label":{"_empty":"yes"}}`, "invalid_filter", "true, false or no value"},
		{`{"label":{"_between":[1]}}`, "invalid_filter", "exactly two"},
		{`{"label":{"_between":"1,2,3"}}`, "invalid_filter", "exactly two"},
		{`{"label":{"_in":[[1]]}}`, "invalid_filter", "not a single value"},
		{`{"label":{"_in":[null]}}`, "invalid_filter", "not a single value"},
		{`{"label":{"_in":{"a":1}}}`, "invalid_filter", "array or a comma-separated"},
		{`{"label":{"_in":true}}`, "ok", ""}, // "true" is a one-element list
		{`{"_or":{"a":{"_eq":1}}}`, "invalid_filter", "array of condition"},
		{`{"_or":[1]}`, "invalid_filter", "not a condition object"},
		{`{"label":{"_eq":"a\u0000b"}}`, "invalid_filter", "NUL"},
		{`{"label":{"_eq":"` + big + `"}}`, "ok", ""},
		{`{"label":{"_eq":"` + big + `x"}}`, "invalid_filter", "longer than"},
		{`{"label":{"_in":["` + big + `x"]}}`, "invalid_filter", "longer than"},
		{`{"id":{"_in":` + list(filter.MaxList) + `}}`, "ok", ""},
		{`{"id":{"_in":` + list(filter.MaxList+1) + `}}`, "invalid_filter", "more than 1000 values"},
		{nested(filter.MaxDepth-1, `{"a":{"_eq":1}}`), "ok", ""},
		{nested(filter.MaxDepth, `{"a":{"_eq":1}}`), "invalid_filter", "deeper than"},
		{nested(500, `{}`), "invalid_filter", "deeper than"},
		{manyFields(filter.MaxNodes), "ok", ""},
		{manyFields(filter.MaxNodes + 1), "invalid_filter", "more than 200"},
		{`{"label":{"_eq":"` + strings.Repeat("x", filter.MaxInput) + `"}}`, "invalid_filter", "larger than"},
	}
	for _, c := range cases {
		_, err := filter.ParseJSON([]byte(c.json))
		if code(err) != c.code || !strings.Contains(detail(err), c.detail) {
			t.Errorf("ParseJSON(%.80s) = %v (detail %q), want %s with %q", c.json, err, detail(err), c.code, c.detail)
		}
	}
}

func TestParseQueryErrors(t *testing.T) {
	cases := []struct{ query, code string }{
		{`filter[label]=x`, "invalid_filter"},
		{`filter[label][_eq]=x&filter[label]=y`, "invalid_filter"},
		{`filter[label][_eq]=x&filter[label][_eq][a]=y`, "invalid_filter"},
		{`filter[a]b=1`, "invalid_filter"},
		{`filter[a][[b]]=1`, "invalid_filter"},
		{`filter[][a][_eq]=1`, "invalid_filter"},
		{`filter[_or][][a][_eq]=1`, "invalid_filter"},
		{`filter[label][_eq]=a&filter[label][_eq]=b`, "invalid_filter"}, // two values for one
		{`filter[label][_eq]=%ff`, "invalid_filter"},                    // not UTF-8
		{`filter={"a":`, "invalid_filter"},
		{`filter[Label][_eq]=1`, "invalid_field"},
		{`filter[_or][x][a][_eq]=1`, "invalid_filter"},
		{`filter` + strings.Repeat("[a]", 100) + `=1`, "invalid_filter"},
		{`filter[a][_eq]=` + strings.Repeat("x", filter.MaxInput), "invalid_filter"},
	}
	for _, c := range cases {
		q, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := filter.ParseQuery(q); code(err) != c.code {
			t.Errorf("ParseQuery(%.80s) = %v, want %s", c.query, err, c.code)
		}
	}
}

func TestAll(t *testing.T) {
	a := filter.Cond{Field: "a", Op: "_null"}
	if filter.All() != nil || filter.All(nil, nil) != nil {
		t.Error("All of nothing must be nil")
	}
	if got := filter.All(nil, a); got.String() != a.String() {
		t.Errorf("All(nil, a) = %s", got)
	}
	if got := filter.All(a, a); got.String() != "and(a._null(),a._null())" {
		t.Errorf("All(a, a) = %s", got)
	}
}
