package server_test

import (
	"fmt"
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
