package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestSearchReplace: preview writes nothing; apply changes exactly the
// matching records (case-sensitive, literal: % and _ are characters),
// with a version each, only those the caller's row subset shows; bad
// input refused.
func TestSearchReplace(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		ids := map[string]int64{}
		for _, name := range []string{"Villa VH", "vh lower", "Casa VH VH", "100% VH_x", "Other"} {
			ids[name] = f.create(t, f.writer, "sites", fmt.Sprintf(`{"name":%q}`, name))
		}
		name := func(id int64) any {
			_, m := f.do(t, f.reader, "GET", fmt.Sprintf("%s/record/sites/%d", api, id), "")
			return m["core"].(map[string]any)["name"].(map[string]any)["val"]
		}
		_, m := f.do(t, f.super, "GET", api+"/search-replace/tables", "")
		if fmt.Sprint(m["tables"]) == "[]" {
			t.Fatalf("tables: %v", m)
		}
		if _, m := f.do(t, f.super, "GET", api+"/search-replace/nope/fields", ""); fmt.Sprint(m["fields"]) != "[]" {
			t.Fatalf("fields of no table: %v", m)
		}
		code, m := f.do(t, f.super, "POST", api+"/search-replace", `{"tb":"sites","fld":"name","search":"VH","replace":"VX","preview":"1"}`)
		if code != 200 || m["code"] != "ok_search_replace_preview" || m["count"] != float64(3) || len(m["samples"].([]any)) != 3 {
			t.Fatalf("preview: %d %v", code, m)
		}
		if name(ids["Villa VH"]) != "Villa VH" {
			t.Fatal("the preview wrote")
		}
		code, m = f.do(t, f.super, "POST", api+"/search-replace", `{"tb":"sites","fld":"name","search":"VH","replace":"VX"}`)
		if code != 200 || m["code"] != "ok_search_replace" || m["affected"] != float64(3) {
			t.Fatalf("apply: %d %v", code, m)
		}
		for n, want := range map[string]string{"Villa VH": "Villa VX", "vh lower": "vh lower", "Casa VH VH": "Casa VX VX", "100% VH_x": "100% VX_x", "Other": "Other"} {
			if got := name(ids[n]); got != want {
				t.Fatalf("%s: %v, want %s", n, got, want)
			}
		}
		_, v := f.do(t, f.reader, "GET", fmt.Sprintf("%s/record/sites/%d/versions", api, ids["Villa VH"]), "")
		if v["total"] != float64(1) {
			t.Fatalf("versions: %v", v)
		}
		// % is a character, not a wildcard.
		if _, m := f.do(t, f.super, "POST", api+"/search-replace", `{"tb":"sites","fld":"name","search":"0%","replace":"0 percent","dry_run":true}`); m["count"] != float64(1) {
			t.Fatalf("literal %%: %v", m)
		}
		bad := []struct {
			name, who, body string
			status          int
			code            string
		}{
			{"no search", f.super, `{"tb":"sites","fld":"name"}`, 400, "parameter_missing"},
			{"empty search", f.super, `{"tb":"sites","fld":"name","search":""}`, 400, "parameter_missing"},
			{"unknown table", f.super, `{"tb":"no_such_table","fld":"name","search":"x"}`, 403, "not_enough_privilege"},
			{"an injection for a field", f.super, `{"tb":"sites","fld":"injected_col; DROP TABLE units;--","search":"x"}`, 403, "not_enough_privilege"},
			{"a lookup field", f.super, `{"tb":"units","fld":"site","search":"1"}`, 403, "not_enough_privilege"},
			{"writer", f.writer, `{"tb":"sites","fld":"name","search":"x"}`, 403, "not_enough_privilege"},
			{"preview not a boolean", f.super, `{"tb":"sites","fld":"name","search":"x","preview":"maybe"}`, 400, "invalid_parameter"},
		}
		for _, tc := range bad {
			code, m := f.do(t, tc.who, "POST", api+"/search-replace", tc.body)
			if code != tc.status || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
	})
}

// TestSearchReplaceValidates: an apply is checked by the save's own
// validation. A replacement that breaks a field's pattern or length, or
// collides with a unique value, answers 400 validation_failed with the
// save's rule and each failing record's id, and writes nothing at all —
// not even the records whose new value would have been valid.
func TestSearchReplaceValidates(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		value := func(tb string, id int64, fld string) any {
			m := f.must(t, 200, f.super, "GET", fmt.Sprintf("%s/record/%s/%d", api, tb, id), "")
			return m["core"].(map[string]any)[fld].(map[string]any)["val"]
		}
		// finds.label is at most 5 characters, finds.inv matches INV-\d+,
		// sites.name is unique (newDig).
		short := f.create(t, f.super, "finds", `{"label":"q","inv":"INV-1"}`)
		long := f.create(t, f.super, "finds", `{"label":"qqq","inv":"INV-22"}`)
		alpha := f.create(t, f.super, "sites", `{"name":"Alpha"}`)
		alphb := f.create(t, f.super, "sites", `{"name":"Alphb"}`)
		for _, tc := range []struct {
			name, body, rule string
			failing          int64 // a record the answer names
			unchanged        map[int64][2]string
		}{
			{"pattern", `{"tb":"finds","fld":"inv","search":"INV-2","replace":"X-2"}`, "pattern", long,
				map[int64][2]string{long: {"finds.inv", "INV-22"}}},
			{"length, all or nothing", `{"tb":"finds","fld":"label","search":"q","replace":"qqq"}`, "max_length", long,
				map[int64][2]string{short: {"finds.label", "q"}, long: {"finds.label", "qqq"}}},
			{"unique collision", `{"tb":"sites","fld":"name","search":"Alphb","replace":"Alpha"}`, "no_dupl", alphb,
				map[int64][2]string{alpha: {"sites.name", "Alpha"}, alphb: {"sites.name", "Alphb"}}},
		} {
			code, m := f.do(t, f.super, "POST", api+"/search-replace", tc.body)
			if code != 400 || m["code"] != "validation_failed" {
				t.Fatalf("%s: %d %v, want 400 validation_failed", tc.name, code, m)
			}
			errsList, _ := m["errors"].([]any)
			named := false
			for _, x := range errsList {
				fe := x.(map[string]any)
				if fe["rule"] == tc.rule && fe["id"] == float64(tc.failing) {
					named = true
				}
			}
			if !named {
				t.Errorf("%s: no %s error for record %d: %v", tc.name, tc.rule, tc.failing, m)
			}
			for id, want := range tc.unchanged {
				tb, fld, _ := strings.Cut(want[0], ".")
				if got := value(tb, id, fld); got != want[1] {
					t.Errorf("%s: %s of %d is %v, want %s (a partial write)", tc.name, want[0], id, got, want[1])
				}
			}
			// The preview still shows what the apply would do.
			preview := strings.Replace(tc.body, "}", `,"preview":true}`, 1)
			if code, m := f.do(t, f.super, "POST", api+"/search-replace", preview); code != 200 || m["count"] == float64(0) {
				t.Errorf("%s preview: %d %v", tc.name, code, m)
			}
		}
	})
}
