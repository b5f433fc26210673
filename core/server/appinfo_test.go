package server_test

import (
	"fmt"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestAppInfo: GET /info/app has the app's public settings (also at the
// top level, as BraDypUS's client reads them), the version, the engine,
// the plugins and counts as far as the caller may see: a reader with a
// row subset counts its rows only.
func TestAppInfo(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		site := f.create(t, f.writer, "sites", `{"name":"Pompei"}`)
		unit := f.create(t, f.writer, "units", fmt.Sprintf(`{"code":"US 1","site":%d}`, site))
		for _, l := range []string{"a", "a", "b"} {
			f.create(t, f.writer, "finds", fmt.Sprintf(`{"label":%q,"unit":%d}`, l, unit))
		}
		f.uploadOK(t, f.writer, "finds", 1, "p.png", pngPixel)

		info := func(who string) map[string]any {
			code, m := f.do(t, who, "GET", api+"/info/app", "")
			if code != 200 || m["status"] != "success" {
				t.Fatalf("info: %d %v", code, m)
			}
			return m
		}
		m := info(f.super)
		if m["engine"] != string(e) || m["version"] == "" || m["name"] == nil || m["app"].(map[string]any)["name"] != m["name"] {
			t.Fatalf("info: %v", m)
		}
		if _, ok := m["plugins"].([]any); !ok {
			t.Fatalf("plugins: %v", m["plugins"])
		}
		c := m["counts"].(map[string]any)
		recs := c["records"].(map[string]any)
		if recs["finds"] != float64(3) || recs["units"] != float64(1) || recs["sites"] != float64(1) || c["records_total"] != float64(5) || c["files"] != float64(1) || c["users"].(float64) < 3 {
			t.Fatalf("counts: %v", c)
		}
		if _, ok := recs["finds_samples"]; ok {
			t.Fatalf("a plugin table counted: %v", recs)
		}
		tables := c["tables"]

		reader := f.userID(t, "reader@example.org")
		if code, m := f.do(t, f.super, "POST", fmt.Sprintf("%s/user/%d/privileges", api, reader), `{"table_name":"finds","privilege":30,"subset":{"label":{"_eq":"a"}}}`); code != 200 {
			t.Fatalf("subset: %d %v", code, m)
		}
		c = info(f.reader)["counts"].(map[string]any)
		if c["records"].(map[string]any)["finds"] != float64(2) || c["records_total"] != float64(4) || c["tables"] != tables {
			t.Fatalf("reader's counts: %v", c)
		}
		if code, _ := f.do(t, "", "GET", api+"/info/app", ""); code != 401 {
			t.Fatalf("signed out: %d", code)
		}
	})
}
