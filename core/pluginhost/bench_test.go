package pluginhost_test

import (
	"fmt"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// BenchmarkPluginOverhead measures what a plugin adds to a request, each
// pair on the same data shape: "plain" has code, label and year as user
// fields; "finds" gets label and year from the test plugin's labels
// feature (a required BeforeSave hook computing year, AfterSave, a record
// section, the _label_len operator resolving to {year:{_eq:n}}).
//
//	go test -run '^$' -bench PluginOverhead -benchtime 2s ./core/pluginhost/
func BenchmarkPluginOverhead(b *testing.B) {
	for _, e := range store.Engines {
		b.Run(string(e), func(b *testing.B) {
			testenv.RequireEngine(b, e)
			f := newFixture(b, e, pluginDir(b, "testplug"), nil)
			f.activate("finds", "labels")
			// The first record of each table is the one saved and read
			// (its id is the engine's: PostgreSQL's sequences need not start
			// at 1).
			var plain, find any
			for i := range 200 {
				label := []string{"a", "bb", "ccc"}[i%3]
				p := f.json("POST", "/digs/api/record/plain", fmt.Sprintf(`{"core":{"code":"P%d","label":%q,"year":%d}}`, i, label, len(label)), f.writer, 200)
				q := f.json("POST", "/digs/api/record/finds", fmt.Sprintf(`{"core":{"code":"F%d","label":%q}}`, i, label), f.writer, 200)
				if i == 0 {
					plain, find = p["id"], q["id"]
				}
			}
			plainURL, findURL := fmt.Sprintf("/digs/api/record/plain/%v", plain), fmt.Sprintf("/digs/api/record/finds/%v", find)
			for _, c := range []struct {
				name, method, url, body string
				status                  int
			}{
				// Updates of one record, so the tables keep their size for the lists.
				{"save/without_plugin", "POST", plainURL, `{"core":{"code":"x","label":"abc","year":3}}`, 200},
				{"save/with_plugin_hook", "POST", findURL, `{"core":{"code":"x","label":"abc"}}`, 200},
				{"read/without_plugin_section", "GET", plainURL, "", 200},
				{"read/with_plugin_section", "GET", findURL, "", 200},
				{"list/builtin_filter", "POST", "/digs/api/records/plain", `{"filter":{"year":{"_eq":3}}}`, 200},
				{"list/plugin_operator", "POST", "/digs/api/records/finds", `{"filter":{"label":{"_label_len":3}}}`, 200},
			} {
				b.Run(c.name, func(b *testing.B) {
					if rec := f.do(c.method, c.url, c.body, f.writer); rec.Code != c.status {
						b.Fatalf("%d %s", rec.Code, rec.Body)
					}
					for b.Loop() {
						if rec := f.do(c.method, c.url, c.body, f.writer); rec.Code != c.status {
							b.Fatalf("%d %s", rec.Code, rec.Body)
						}
					}
				})
			}
		})
	}
}
