package pluginhost_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// plugins/example, built from source and run through the server: the
// Munsell column with its hook, its route and its filter operator.
func TestExamplePluginEndToEnd(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		dir := t.TempDir()
		install(t, exampleBinary(t), filepath.Join(dir, "munsell"))
		f := newFixture(t, e, dir, nil)
		if in, err := f.mgr.Describe("munsell"); err != nil || in.State != "running" {
			t.Fatalf("example plugin: %+v %v\n%s", in, err, f.logs)
		}
		if status, code := f.code("POST", "/digs/api/config/table/finds/munsell", "", f.super); status != 200 || code != "munsell_activated" {
			t.Fatalf("activate: %d %s", status, code)
		}
		var ids []string
		for _, c := range []string{"10yr5/3", "2.5Y 6/4", "n 5/", "10YR 3/2"} {
			body := f.json("POST", "/digs/api/record/finds", fmt.Sprintf(`{"core":{"code":%q,"munsell_colour":%q}}`, c, c), f.writer, 200)
			ids = append(ids, fmt.Sprint(body["id"]))
		}
		rec := f.json("GET", "/digs/api/record/finds/"+ids[0], "", f.reader, 200)
		if core(rec, "munsell_colour") != "10YR 5/3" || rec["schema"].(map[string]any)["has_munsell"] != true {
			t.Errorf("normalised: %v, schema %v", core(rec, "munsell_colour"), rec["schema"])
		}
		bad := f.do("POST", "/digs/api/record/finds", `{"core":{"code":"x","munsell_colour":"purple"}}`, f.writer)
		if bad.Code != 400 || !strings.Contains(bad.Body.String(), `"field":"munsell_colour"`) {
			t.Errorf("invalid colour: %d %s", bad.Code, bad.Body)
		}
		parsed := f.json("GET", "/digs/api/munsell/parse?q=10yr+5/3", "", f.reader, 200)
		if parsed["notation"] != "10YR 5/3" || parsed["hue_family"] != "YR" {
			t.Errorf("parse route: %v", parsed)
		}
		if status, _ := f.code("GET", "/digs/api/munsell/parse", "", ""); status != 401 {
			t.Errorf("parse route without a credential: %d", status)
		}
		list := f.json("POST", "/digs/api/records/finds", `{"filter":{"munsell_colour":{"_munsell_hue":"10YR"}},"sort_field":"code"}`, f.reader, 200)
		var got []string
		for _, r := range list["data"].([]any) {
			got = append(got, r.(map[string]any)["munsell_colour"].(string))
		}
		if fmt.Sprint(got) != "[10YR 3/2 10YR 5/3]" {
			t.Errorf("_munsell_hue: %v", got)
		}
	})
}
