package realplugins_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestRealPluginOsteologyObject: osteo_data is accepted as a JSON object
// (what a client naturally sends) or as text holding one, on create and
// on update, and a refusal names what was sent in words, never a Go type.
func TestRealPluginOsteologyObject(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, nil)
		f.activate("finds", "osteology", "osteology")
		obj := `{"individuals":[{"id":"T1","bones":{"cranium":{"present":true}}}]}`
		text := fmt.Sprintf("%q", obj)
		stored := func(id int64) string {
			s, _ := val(f.record("finds", id), "osteo_data").(string)
			return s
		}
		for _, form := range []struct{ name, doc string }{{"object", obj}, {"text", text}} {
			id := f.create("finds", `{"core":{"code":"B1","osteo_data":`+form.doc+`}}`)
			if s := stored(id); !strings.Contains(s, `"cranium":{"present":true}`) {
				t.Errorf("%s on create stored as %q", form.name, s)
			}
			for _, up := range []struct{ name, doc, want string }{
				{"object", `{"individuals":[{"id":"T1","bones":{"femur_left":{"present":true}}}]}`, `"femur_left":{"present":true}`},
				{"text", `"{\"individuals\":[{\"id\":\"T1\",\"bones\":{\"ulna_left\":{\"present\":true}}}]}"`, `"ulna_left":{"present":true}`},
			} {
				m := f.json("POST", "/record/finds", fmt.Sprintf(`{"id":%d,"core":{"osteo_data":%s}}`, id, up.doc), f.writer, 200)
				if m["code"] != "success_saved" {
					t.Errorf("update with %s: %v", up.name, m)
				}
				if s := stored(id); !strings.Contains(s, up.want) {
					t.Errorf("%s after update with %s: stored %q", form.name, up.name, s)
				}
			}
		}
		// Refusals: the plugin's own error, in words; the server's type
		// check does not contradict it by asking for text.
		for _, c := range []struct{ name, doc, rule, says string }{
			{"a list", `[1,2]`, "invalid_type", "not a list"},
			{"a number", `5`, "invalid_type", "not a number"},
			{"a boolean", `true`, "invalid_type", "not a boolean"},
			{"an object of the wrong shape", `{"individuals":{"a":1}}`, "invalid_type", "individuals must be"},
			{"text holding a list", `"[1,2]"`, "invalid_type", "must be an object"},
			{"an object with an unknown element", `{"individuals":[{"id":"T1","bones":{"femur_lft":{"present":true}}}]}`, "unknown_element", "femur_lft"},
			{"a number for an individual", `{"individuals":[5]}`, "invalid_type", "a number"},
		} {
			rec := f.do("POST", "/record/finds", `{"core":{"code":"X","osteo_data":`+c.doc+`}}`, f.writer)
			body := rec.Body.String()
			if rec.Code != 400 || !strings.Contains(body, `"validation_failed"`) {
				t.Errorf("%s: %d %s", c.name, rec.Code, body)
			}
			var answer map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &answer)
			if e := fieldError(answer, "osteo_data", c.rule); e == nil || !strings.Contains(fmt.Sprint(e["message"]), c.says) {
				t.Errorf("%s: want a %s error saying %q: %s", c.name, c.rule, c.says, body)
			}
			if strings.Contains(body, "text is expected") || strings.Contains(body, "as text") {
				t.Errorf("%s: the answer asks for text, though an object is accepted: %s", c.name, body)
			}
			for _, goName := range []string{"interface", "map[", "[]any", "float64", "json.Number", "string}"} {
				if strings.Contains(body, goName) {
					t.Errorf("%s: the answer names a Go type (%s): %s", c.name, goName, body)
				}
			}
		}
	})
}

// TestRealPluginChronologyOverlapCommaList: _chrono_overlap takes its two
// bounds in the forms _in takes a list: a JSON array, or a comma-separated
// string (filter[chrono_from][_chrono_overlap]=1,50), in a query string or
// a JSON body; an empty side is open.
func TestRealPluginChronologyOverlapCommaList(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newChronoFixture(t, e)
		const op = "filter[chrono_from][_chrono_overlap]"
		get := func(v string) string {
			return "/records/finds?per_page=100&" + url.Values{op: {v}}.Encode()
		}
		for _, c := range []struct {
			name, method, url, body string
			want                    string
		}{
			{"brackets, comma list", "GET", get("-350,-320"), "", "[A C D]"},
			{"brackets, comma list with spaces", "GET", get(" -350 , -320 "), "", "[A C D]"},
			{"brackets, 1,50", "GET", get("1,50"), "", "[B D G I]"},
			{"brackets, tokens", "GET", get("c4 BCE,c4 BCE"), "", "[A C D F]"},
			{"brackets, open from", "GET", get(",-390"), "", "[C D F H]"},
			{"brackets, open to", "GET", get("150,"), "", "[B D G]"},
			{"JSON body, comma list", "POST", "/records/finds", `{"filter":{"chrono_from":{"_chrono_overlap":"-350,-320"}},"per_page":100}`, "[A C D]"},
			{"_in alike, for comparison", "GET", "/records/finds?per_page=100&" + url.Values{"filter[code][_in]": {"A,C,D"}}.Encode(), "", "[A C D]"},
		} {
			if got := fmt.Sprint(f.list(t, c.method, c.url, c.body)); got != c.want {
				t.Errorf("%s: %s, want %s", c.name, got, c.want)
			}
		}
		for _, c := range []struct{ name, value string }{
			{"one value", "-350"},
			{"three values", "1,2,3"},
			{"no bound", ","},
			{"not a year", "soon,later"},
		} {
			if status, code, body := f.code("GET", get(c.value), "", f.reader); status != 400 || code != "invalid_filter" {
				t.Errorf("%s: %d %s %v", c.name, status, code, body)
			}
		}
	})
}
