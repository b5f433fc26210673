package server_test

import (
	"fmt"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestPluginRowSavedOnItsOwn: POST /record/<plugin_tb> {core:{id_link, ...}}
// (BraDypUS's clients) adds or changes one plugin row as a save of its
// parent record: the parent's privileges, validation and version.
func TestPluginRowSavedOnItsOwn(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		parent := f.create(t, f.writer, "finds", `{"label":"p1"}`)
		other := f.create(t, f.writer, "finds", `{"label":"p2"}`)
		const url = "/dig/api/record/finds_samples"

		code, m := f.do(t, f.writer, "POST", url, fmt.Sprintf(`{"core":{"id_link":"%d","lab":"L","bp":"120"},"plugins":{}}`, parent))
		if code != 200 || m["code"] != "success_created" {
			t.Fatalf("create: %d %v", code, m)
		}
		row := int64(m["id"].(float64))
		code, m = f.do(t, f.writer, "POST", fmt.Sprintf("%s/%d", url, row), `{"core":{"bp":130}}`)
		if code != 200 || m["code"] != "success_saved" || m["id"] != float64(row) {
			t.Fatalf("update: %d %v", code, m)
		}
		_, rec := f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/finds/%d", parent), "")
		data := rec["plugins"].(map[string]any)["finds_samples"].(map[string]any)["data"].([]any)
		if len(data) != 1 || data[0].(map[string]any)["bp"].(map[string]any)["val"] != float64(130) || data[0].(map[string]any)["lab"].(map[string]any)["val"] != "L" {
			t.Fatalf("parent's rows: %v", data)
		}
		if _, v := f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/finds/%d/versions", parent), ""); v["total"] != float64(2) {
			t.Fatalf("parent versions after two row saves: %v", v["total"])
		}

		cases := []struct {
			name, who, path, body string
			status                int
			code                  string
		}{
			{"no id_link", f.writer, url, `{"core":{"lab":"x"}}`, 400, "invalid_parameter"},
			{"id_link not an id", f.writer, url, `{"core":{"id_link":"abc","lab":"x"}}`, 400, "invalid_parameter"},
			{"unknown parent", f.writer, url, `{"core":{"id_link":999999,"lab":"x"}}`, 404, "record_not_found"},
			{"reader", f.reader, url, fmt.Sprintf(`{"core":{"id_link":%d,"lab":"x"}}`, parent), 403, "not_enough_privilege"},
			{"invalid value", f.writer, url, fmt.Sprintf(`{"core":{"id_link":%d,"bp":"old"}}`, parent), 400, "validation_failed"},
			{"unknown field", f.writer, url, fmt.Sprintf(`{"core":{"id_link":%d,"nope":1}}`, parent), 400, "invalid_field"},
			{"moved to another parent", f.writer, fmt.Sprintf("%s/%d", url, row), fmt.Sprintf(`{"core":{"id_link":%d,"lab":"y"}}`, other), 400, "invalid_parameter"},
			{"unknown row", f.writer, url + "/999999", `{"core":{"lab":"y"}}`, 404, "record_not_found"},
		}
		for _, tc := range cases {
			code, m := f.do(t, tc.who, "POST", tc.path, tc.body)
			if code != tc.status || m["code"] != tc.code {
				t.Fatalf("%s: %d %v, want %d %s", tc.name, code, m, tc.status, tc.code)
			}
		}
		// Nothing of the refused saves was written.
		_, rec = f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/finds/%d", parent), "")
		if n := len(rec["plugins"].(map[string]any)["finds_samples"].(map[string]any)["data"].([]any)); n != 1 {
			t.Fatalf("rows after refusals: %d", n)
		}
	})
}
