package realplugins_test

import (
	"path/filepath"
	"testing"

	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
	"github.com/strata-archaeo/strata/plugins/gazetteer/pleiades/pleiadestest"
)

// TestRealPluginGazetteer: the gazetteer binary, given the fake provider's
// URL through GAZETTEER_PLEIADES_URL as the server passes it on, answers
// /dig/api/gazetteer/* through the server: edit privilege, normalised
// place, search, cache, provider down (502, then stale answers).
func TestRealPluginGazetteer(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		fake := pleiadestest.New(t)
		f := newFixture(t, e, func(o *pluginhost.Options) {
			link(t, filepath.Join(binDir, "gazetteer"), filepath.Join(o.Dir, "gazetteer"))
			o.Env = append(o.Env, "GAZETTEER_PLEIADES_URL="+fake.URL)
		})
		if s := f.mgr.State("gazetteer"); s != pluginhost.StateRunning {
			t.Fatalf("gazetteer: %s", s)
		}
		if code, _, m := f.code("GET", "/gazetteer/place/423025", "", f.reader); code != 403 {
			t.Fatalf("reader: %d %v", code, m)
		}
		if code, _, _ := f.code("GET", "/gazetteer/place/423025", "", ""); code != 401 {
			t.Fatalf("anonymous: %d", code)
		}
		fake.SetDown(true)
		if code, c, m := f.code("GET", "/gazetteer/place/423025", "", f.writer); code != 502 || c != "gazetteer_unavailable" {
			t.Fatalf("down, nothing cached: %d %v", code, m)
		}
		fake.SetDown(false)
		m := f.json("GET", "/gazetteer/place/423025", "", f.writer, 200)
		place := m["place"].(map[string]any)
		if place["title"] != "Roma" || place["uri"] != "https://pleiades.stoa.org/places/423025" || m["cached"] != false {
			t.Fatalf("place: %v", m)
		}
		pt := place["point"].(map[string]any)["coordinates"].([]any)
		if pt[0].(float64) != 12.486137 || pt[1].(float64) != 41.891775 || len(place["bbox"].([]any)) != 4 || len(place["time_periods"].([]any)) != 3 {
			t.Fatalf("place geometry and periods: %v", place)
		}
		m = f.json("GET", "/gazetteer/search?q=roma", "", f.super, 200)
		if ps := m["places"].([]any); len(ps) != 3 || ps[1].(map[string]any)["title"] != "Athenae" {
			t.Fatalf("search: %v", m)
		}
		if code, c, _ := f.code("GET", "/gazetteer/place/424242", "", f.writer); code != 404 || c != "place_not_found" {
			t.Fatalf("unknown place: %d %s", code, c)
		}
		if code, c, _ := f.code("GET", "/gazetteer/search", "", f.writer); code != 400 || c != "missing_parameter" {
			t.Fatalf("no q: %d %s", code, c)
		}
		fake.SetDown(true)
		n := fake.Requests()
		m = f.json("GET", "/gazetteer/place/423025", "", f.writer, 200)
		if m["cached"] != true || fake.Requests() != n {
			t.Fatalf("cached while down: %v", m)
		}
		if code, c, _ := f.code("GET", "/gazetteer/search?q=athenae", "", f.writer); code != 502 || c != "gazetteer_unavailable" {
			t.Fatalf("new search while down: %d %s", code, c)
		}
	})
}
