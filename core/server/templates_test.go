package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestPrintTemplates: kept per table and name by admins, validated
// (unknown_field, invalid_width), listed, renamed, deleted, and a record
// rendered through one as escaped, printable HTML with its lookups,
// Markdown and plugin rows.
func TestPrintTemplates(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		site := f.create(t, f.writer, "sites", `{"name":"Pompei <b>&"}`)
		unit := f.create(t, f.writer, "units", fmt.Sprintf(`{"code":"US 1","site":%d}`, site))
		code, m := f.do(t, f.writer, "POST", api+"/record/finds", fmt.Sprintf(`{"core":{"label":"F1","unit":%d,"notes":"**bold** <script>x()</script>"},"plugins":{"finds_samples":[{"lab":"Lab <i>A</i>","bp":"120"}]}}`, unit))
		if code != 200 {
			t.Fatalf("record: %d %v", code, m)
		}
		find := int64(m["id"].(float64))
		tpl := `{"sections":[{"label":"Main","content":[{"field":"label","width":"1/2"},"unit",{"field":"notes"}]},` +
			`{"type":"plugin","plugin":"finds_samples","label":"Samples","content":["lab","bp"]},` +
			`{"type":"accordion","label":"More","content":[{"label":"Weights","fields":[{"field":"weight","width":"1/3"}]}]}]}`
		code, m = f.do(t, f.super, "POST", api+"/template/finds/scheda", tpl)
		if code != 200 || m["code"] != "template_saved" {
			t.Fatalf("save: %d %v", code, m)
		}
		for _, tc := range []struct {
			name, who, path, body string
			status                int
			code                  string
		}{
			{"unknown field", f.super, "/template/finds/bad", `{"sections":[{"content":["nope"]}]}`, 400, "unknown_field"},
			{"bad width", f.super, "/template/finds/bad", `{"sections":[{"content":[{"field":"label","width":"2/5"}]}]}`, 400, "invalid_width"},
			// A width is a string of Widths; a number is not "no width".
			{"width a number", f.super, "/template/finds/bad", `{"sections":[{"content":[{"field":"label","width":-1}]}]}`, 400, "invalid_width"},
			{"width a fraction", f.super, "/template/finds/bad", `{"sections":[{"content":[{"field":"label","width":0.5}]}]}`, 400, "invalid_width"},
			{"width a boolean in a panel", f.super, "/template/finds/bad", `{"sections":[{"type":"accordion","content":[{"label":"P","fields":[{"field":"weight","width":true}]}]}]}`, 400, "invalid_width"},
			{"width a number in a plugin section", f.super, "/template/finds/bad", `{"sections":[{"type":"plugin","plugin":"finds_samples","content":[{"field":"lab","width":2}]}]}`, 400, "invalid_width"},
			{"not a plugin of the table", f.super, "/template/finds/bad", `{"sections":[{"type":"plugin","plugin":"units","content":["code"]}]}`, 400, "unknown_field"},
			{"bad name", f.super, "/template/finds/bad%20name", `{"sections":[]}`, 400, "invalid_template_name"},
			{"no sections", f.super, "/template/finds/x", `{}`, 400, "parameter_missing"},
			{"writer", f.writer, "/template/finds/x", `{"sections":[]}`, 403, "not_enough_privilege"},
			{"unknown table", f.super, "/template/nope/x", `{"sections":[]}`, 404, "table_not_found"},
		} {
			if code, m := f.do(t, tc.who, "POST", api+tc.path, tc.body); code != tc.status || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		if _, m := f.do(t, f.reader, "GET", api+"/templates", ""); fmt.Sprint(m["tables"]) != "[finds]" {
			t.Fatalf("tables: %v", m)
		}
		if _, m := f.do(t, f.reader, "GET", api+"/record/finds/templates", ""); fmt.Sprint(m["templates"]) != "[scheda]" {
			t.Fatalf("record templates: %v", m)
		}
		if code, m := f.do(t, f.reader, "GET", api+"/template/finds/scheda", ""); code != 200 || len(m["template"].([]any)) != 3 {
			t.Fatalf("get: %d %v", code, m)
		}
		rec := f.send(t, f.reader, "GET", fmt.Sprintf("%s/template/finds/scheda/render/%d", api, find), nil, nil)
		html := rec.Body.String()
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			t.Fatalf("render: %d %s", rec.Code, html)
		}
		for _, want := range []string{"<h2>Main</h2>", "F1", `<div class="l">Unit</div>`, "<strong>bold</strong>", "Lab &lt;i&gt;A&lt;/i&gt;", "120", "w-1-2", "w-1-3", "@page"} {
			if !strings.Contains(html, want) {
				t.Fatalf("render lacks %q:\n%s", want, html)
			}
		}
		if strings.Contains(html, "<script>") || strings.Contains(html, "<i>A</i>") {
			t.Fatalf("render not escaped:\n%s", html)
		}
		if code, m := f.do(t, f.super, "POST", api+"/template/finds/scheda/rename", `{"new_name":"scheda2"}`); code != 200 || m["code"] != "template_renamed" {
			t.Fatalf("rename: %d %v", code, m)
		}
		if code, m := f.do(t, f.reader, "GET", api+"/template/finds/scheda", ""); code != 404 || m["code"] != "template_not_found" {
			t.Fatalf("old name: %d %v", code, m)
		}
		if code, m := f.do(t, f.super, "DELETE", api+"/template/finds/scheda2", ""); code != 200 || m["code"] != "template_deleted" {
			t.Fatalf("delete: %d %v", code, m)
		}
		if _, m := f.do(t, f.reader, "GET", api+"/templates/finds", ""); fmt.Sprint(m["templates"]) != "[]" {
			t.Fatalf("after delete: %v", m)
		}
	})
}
