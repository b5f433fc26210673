package server_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestRecordsBraDypUSForms: the list, export and save forms BraDypUS's
// client and scripts send (DataView's qt/q, q_<field>, _null=false, flat
// save bodies, the manual-link answer it reads).
func TestRecordsBraDypUSForms(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		bowl := f.create(t, f.super, "finds", `{"label":"bowl","inv":"INV-1"}`)
		cup := f.create(t, f.super, "finds", `{"label":"cup"}`)
		// A flat body is the core.
		code, m := f.do(t, f.writer, "POST", "/dig/api/record/finds", `{"label":"jar","weight":"12"}`)
		if code != 200 || m["code"] != "success_created" {
			t.Fatalf("flat body: %d %v", code, m)
		}
		jar := int64(m["id"].(float64))

		q := func(v url.Values) string { return "/dig/api/records/finds?" + v.Encode() }
		for _, c := range []struct {
			name  string
			query url.Values
			want  []int64
		}{
			{"q_<field> contains", url.Values{"q_label": {"OW"}}, []int64{bowl}},
			{"q_<field> none", url.Values{"q_label": {"nothing"}}, nil},
			{"qt=filter with JSON in q", url.Values{"qt": {"filter"}, "q": {`{"label":{"_eq":"cup"}}`}}, []int64{cup}},
			{"qt=fast with text in q", url.Values{"qt": {"fast"}, "q": {"ja"}}, []int64{jar}},
			{"_null=false is _nnull", url.Values{"filter[inv][_null]": {"false"}}, []int64{bowl}},
			{"_nnull=0 is _null", url.Values{"filter[inv][_nnull]": {"0"}}, []int64{cup, jar}},
		} {
			got := f.ids(t, f.reader, q(c.query))
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("%s: ids %v, want %v", c.name, got, c.want)
			}
		}
		// The export takes the same forms; CSV is headed by field names.
		body := f.export(t, f.reader, "finds", "format=csv&columns=label&qt=filter&q="+url.QueryEscape(`{"label":{"_eq":"cup"}}`)).Body.String()
		if body != "\uFEFFid,label\r\n"+fmt.Sprint(cup)+",cup\r\n" {
			t.Errorf("export with qt/q: %q", body)
		}
		if _, m = f.do(t, f.reader, "GET", "/dig/api/search/finds/config", ""); fmt.Sprint(m["connectors"]) != "[AND OR]" {
			t.Errorf("search config connectors: %v", m["connectors"])
		}

		// The manual-link answer carries what the client shows.
		code, m = f.do(t, f.writer, "POST", "/dig/api/manual-link", fmt.Sprintf(`{"tb_one":"finds","id_one":"%d","tb_two":"finds","id_two":%d,"label":"cites"}`, bowl, cup))
		link, _ := m["link"].(map[string]any)
		if code != 200 || link["key"] != link["id"] || link["tb_id"] != "finds" || link["ref_id"] != float64(cup) || link["label"] != "cites" {
			t.Fatalf("manual link: %d %v", code, m)
		}
		code, m = f.do(t, f.writer, "DELETE", fmt.Sprintf("/dig/api/manual-link/%v", link["key"]), "")
		if code != 200 || m["code"] != "ok_userlink_erased" {
			t.Errorf("delete link: %d %v", code, m)
		}

		for _, c := range []struct {
			name, method, url, body string
			status                  int
			code                    string
		}{
			{"link without the second record", "POST", "/dig/api/manual-link", fmt.Sprintf(`{"tb_one":"finds","id_one":%d}`, bowl), 400, "parameter_missing"},
			{"deleted link", "DELETE", fmt.Sprintf("/dig/api/manual-link/%v", link["key"]), "", 404, "not_found"},
			{"q_ on an unknown field", "GET", q(url.Values{"q_nowhere": {"x"}}), "", 400, "invalid_field"},
			{"qt=filter with bad JSON", "GET", q(url.Values{"qt": {"filter"}, "q": {"{"}}), "", 400, "invalid_filter"},
			{"_null=maybe", "GET", q(url.Values{"filter[inv][_null]": {"maybe"}}), "", 400, "invalid_filter"},
			{"check-unique on an unknown field", "GET", "/dig/api/record/finds/check-unique?field=nowhere&value=x", "", 404, "field_not_found"},
		} {
			code, m := f.do(t, f.writer, c.method, c.url, c.body)
			if code != c.status || m["code"] != c.code || strings.Contains(fmt.Sprint(m), "map[string]") {
				t.Errorf("%s: %d %v, want %d %s", c.name, code, m, c.status, c.code)
			}
		}
	})
}

// TestLinkOutSchemes: a link_out field takes relative URLs and http,
// https and mailto links (or the schemes its link_schemes lists), never
// javascript: however it is spelled.
func TestLinkOutSchemes(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		for _, body := range []string{
			`{"name":"site_url","type":"link_out"}`,
			`{"name":"archive","type":"link_out","link_schemes":["ftp","HTTPS"]}`,
		} {
			if code, m := f.do(t, f.super, "POST", "/dig/api/config/table/finds/field", body); code != 200 {
				t.Fatalf("field %s: %d %v", body, code, m)
			}
		}
		for _, c := range []struct {
			field, value string
			ok           bool
		}{
			{"site_url", "https://example.org/a?b#c", true},
			{"site_url", "HTTP://example.org", true},
			{"site_url", "mailto:someone@example.org", true},
			{"site_url", "/relative/path", true},
			{"site_url", "notes/page.html", true},
			{"site_url", "javascript:alert(1)", false},
			{"site_url", " JavaScript:alert(1)", false},
			{"site_url", "java\tscript:alert(1)", false},
			{"site_url", "data:text/html,<script>alert(1)</script>", false},
			{"site_url", "ftp://example.org/file", false},
			{"archive", "ftp://example.org/file", true},
			{"archive", "https://example.org", true},
			{"archive", "http://example.org", false},
		} {
			body := fmt.Sprintf(`{"core":{"label":"x","%s":%q}}`, c.field, c.value)
			code, m := f.do(t, f.writer, "POST", "/dig/api/record/finds", body)
			if c.ok != (code == 200) || (!c.ok && !strings.Contains(fmt.Sprint(m), "rule:link")) {
				t.Errorf("%s = %q: %d %v", c.field, c.value, code, m)
			}
		}
		for _, body := range []string{
			`{"name":"bad","type":"link_out","link_schemes":["javascript"]}`,
			`{"name":"bad","type":"text","link_schemes":["https"]}`,
		} {
			if code, m := f.do(t, f.super, "POST", "/dig/api/config/table/finds/field", body); code != 400 || m["code"] != "invalid_field_parameter" {
				t.Errorf("field %s: %d %v", body, code, m)
			}
		}
	})
}

// TestListPagesAndTotals: a deep page (its ids chosen first) holds the
// same rows, in the same order, as the ids list; totals are counted apart
// and follow every write at once (the cached count is dropped); total=false
// answers null.
func TestListPagesAndTotals(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		var rows []string
		for i := range 420 {
			w := fmt.Sprint(i % 7) // ties
			if i%11 == 0 {
				w = "null" // NULLs among them
			}
			rows = append(rows, fmt.Sprintf(`{"method":"POST","url":"/record/finds","body":{"core":{"label":"f%d","weight":%s}}}`, i%50, w))
		}
		if code, m := f.do(t, f.super, "POST", "/dig/api/batch", `{"requests":[`+strings.Join(rows, ",")+`]}`); code != 200 {
			t.Fatalf("seed: %d %v", code, m)
		}
		for _, sort := range []string{"sort_field=weight&sort_dir=desc", "sort_field=weight", "sort_field=label&sort_dir=desc", ""} {
			_, all := f.do(t, f.reader, "GET", "/dig/api/records/finds?ids_only=1&"+sort, "")
			ids := all["ids"].([]any)
			if len(ids) != 420 || all["total"] != float64(420) {
				t.Fatalf("%s: ids %d, total %v", sort, len(ids), all["total"])
			}
			for _, page := range []int{1, 2, 11, 14, 15} { // offsets 0, 30, 300 (deep), 390, 420 (past the end)
				_, m := f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/records/finds?per_page=30&page=%d&%s", page, sort), "")
				data := m["data"].([]any)
				want := ids[min((page-1)*30, len(ids)):min(page*30, len(ids))]
				if len(data) != len(want) || m["total"] != float64(420) {
					t.Fatalf("%s page %d: %d rows, total %v; want %d rows", sort, page, len(data), m["total"], len(want))
				}
				for i, r := range data {
					if r.(map[string]any)["id"] != want[i] {
						t.Fatalf("%s page %d row %d: id %v, want %v", sort, page, i, r.(map[string]any)["id"], want[i])
					}
				}
			}
		}
		// NULLs come after the values ascending and before them descending,
		// on both engines.
		_, nulls := f.do(t, f.reader, "GET", "/dig/api/records/finds?ids_only=1&filter[weight][_null]=1", "")
		nullIDs := map[any]bool{}
		for _, id := range nulls["ids"].([]any) {
			nullIDs[id] = true
		}
		for dir, atEnd := range map[string]bool{"asc": true, "desc": false} {
			_, all := f.do(t, f.reader, "GET", "/dig/api/records/finds?ids_only=1&sort_field=weight&sort_dir="+dir, "")
			ids := all["ids"].([]any)
			n := len(nullIDs)
			part := ids[:n]
			if atEnd {
				part = ids[len(ids)-n:]
			}
			for _, id := range part {
				if !nullIDs[id] {
					t.Fatalf("sort %s: the %d NULL weights are not all at the %v", dir, n, map[bool]string{true: "end", false: "start"}[atEnd])
				}
			}
		}
		// The count follows writes at once, and total=false skips it.
		total := func() any {
			_, m := f.do(t, f.reader, "GET", "/dig/api/records/finds?filter[label][_eq]=f3&page=2&per_page=2", "")
			return m["total"]
		}
		before := total()
		f.create(t, f.writer, "finds", `{"label":"f3"}`)
		if after := total(); after != before.(float64)+1 {
			t.Errorf("total %v after a create, was %v", after, before)
		}
		if _, m := f.do(t, f.reader, "GET", "/dig/api/records/finds?total=false", ""); m["total"] != nil || len(m["data"].([]any)) != 30 {
			t.Errorf("total=false: total %v, %d rows", m["total"], len(m["data"].([]any)))
		}
		if _, m := f.do(t, f.reader, "GET", "/dig/api/records/finds?ids_only=1&total=0", ""); m["total"] != nil {
			t.Errorf("ids_only with total=0: %v", m["total"])
		}
	})
}
