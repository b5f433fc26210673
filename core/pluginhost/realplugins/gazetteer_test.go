package realplugins_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

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

// TestRealPluginGazetteerPlaces: the gazetteer feature on a table, through
// the server with the real binary and the fake provider: a place saved in
// any usual spelling is stored as its URI, a wrong one refused with
// nothing written, and POST /gazetteer/geodata puts the place's point in
// the record's geodata (GET /geoface shows it), with the caller's rights
// and the table's geodata flag enforced by the server.
func TestRealPluginGazetteerPlaces(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		fake := pleiadestest.New(t)
		f := newFixture(t, e, func(o *pluginhost.Options) {
			link(t, filepath.Join(binDir, "gazetteer"), filepath.Join(o.Dir, "gazetteer"))
			o.Env = append(o.Env, "GAZETTEER_PLEIADES_URL="+fake.URL)
		})
		const roma = "https://pleiades.stoa.org/places/423025"
		f.json("PUT", "/config/table/sites", `{"geodata":true}`, f.super, 200)
		f.json("POST", "/config/table/sites/gazetteer", "", f.super, 200)

		m := f.json("POST", "/record/sites", `{"core":{"name":"Forum","gazetteer_place":" 423025 "}}`, f.writer, 200)
		id := fmt.Sprint(m["id"])
		rec := f.json("GET", "/record/sites/"+id, "", f.reader, 200)
		if got := rec["core"].(map[string]any)["gazetteer_place"].(map[string]any)["val"]; got != roma {
			t.Fatalf("stored place: %v", got)
		}
		// The full record offers the place's point.
		sec, _ := rec["gazetteer_place"].(map[string]any)
		if sec["title"] != "Roma" || sec["id"] != "423025" || fmt.Sprint(sec["point"]) != "map[coordinates:[12.486137 41.891775] type:Point]" {
			t.Fatalf("section: %v", rec["gazetteer_place"])
		}
		if code, c, m := f.code("POST", "/record/sites", `{"core":{"name":"Nowhere","gazetteer_place":"Roma"}}`, f.writer); code != 400 || c != "validation_failed" {
			t.Fatalf("a name for a place: %d %v", code, m)
		}
		if code, c, m := f.code("POST", "/record/sites", `{"core":{"name":"Nowhere","gazetteer_place":"424242"}}`, f.writer); code != 400 || c != "validation_failed" {
			t.Fatalf("an unknown place: %d %v", code, m)
		}
		if n := f.json("GET", "/records/sites", "", f.reader, 200)["total"]; fmt.Sprint(n) != "1" {
			t.Fatalf("refused saves wrote records: total %v", n)
		}

		// The place's point into the record's geodata.
		if code, _, m := f.code("POST", "/gazetteer/geodata", `{"tb":"sites","id":`+id+`}`, f.reader); code != 403 {
			t.Fatalf("reader: %d %v", code, m)
		}
		m = f.json("POST", "/gazetteer/geodata", `{"tb":"sites","id":"`+id+`"}`, f.writer, 200)
		if m["code"] != "ok_insert_geodata" || m["geo_id"] == nil {
			t.Fatalf("to geodata: %v", m)
		}
		geo := f.json("GET", "/geoface?tb=sites", "", f.reader, 200)
		feats := geo["geojson"].(map[string]any)["features"].([]any)
		if len(feats) != 1 {
			t.Fatalf("geodata: %v", geo)
		}
		g := feats[0].(map[string]any)["geometry"].(map[string]any)
		if c := g["coordinates"].([]any); g["type"] != "Point" || c[0] != 12.486137 || c[1] != 41.891775 {
			t.Fatalf("the point: %v", g)
		}
		// The server's own checks reach the caller with their codes.
		f.json("POST", "/record/finds", `{"core":{"code":"F1"}}`, f.writer, 200)
		if code, c, m := f.code("POST", "/gazetteer/geodata", `{"tb":"finds","id":1,"place":"423025"}`, f.writer); code != 400 || c != "geodata_not_enabled" {
			t.Fatalf("a table without geodata: %d %v", code, m)
		}
		if code, c, m := f.code("POST", "/gazetteer/geodata", `{"tb":"sites","id":999,"place":"423025"}`, f.writer); code != 404 || c != "record_not_found" {
			t.Fatalf("no such record: %d %v", code, m)
		}
		// Provider down: the cached place still serves, a new one is 502
		// gazetteer_unavailable; nothing written for it.
		fake.SetDown(true)
		f.json("POST", "/gazetteer/geodata", `{"tb":"sites","id":`+id+`}`, f.writer, 200)
		if code, c, m := f.code("POST", "/gazetteer/geodata", `{"tb":"sites","id":`+id+`,"place":"579885"}`, f.writer); code != 502 || c != "gazetteer_unavailable" {
			t.Fatalf("uncached place while down: %d %v", code, m)
		}
		if n := len(f.json("GET", "/geoface?tb=sites", "", f.reader, 200)["geojson"].(map[string]any)["features"].([]any)); n != 2 {
			t.Fatalf("%d features, want 2", n)
		}
	})
}

// TestRealPluginGazetteerStale: with the provider down, answers whose TTL
// has run out (cache_ttl_seconds from <plugin dir>/gazetteer.json) are
// still served, marked stale, for a place and a search; what was never
// cached is 502 gazetteer_unavailable; once the provider is back the
// answers are fresh again.
func TestRealPluginGazetteerStale(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		fake := pleiadestest.New(t)
		f := newFixture(t, e, func(o *pluginhost.Options) {
			link(t, filepath.Join(binDir, "gazetteer"), filepath.Join(o.Dir, "gazetteer"))
			if err := os.WriteFile(filepath.Join(o.Dir, "gazetteer.json"), []byte(`{"cache_ttl_seconds":1}`), 0o600); err != nil {
				t.Fatal(err)
			}
			o.Env = append(o.Env, "GAZETTEER_PLEIADES_URL="+fake.URL)
		})
		if m := f.json("GET", "/gazetteer/place/579885", "", f.writer, 200); m["cached"] != false {
			t.Fatalf("first read: %v", m)
		}
		f.json("GET", "/gazetteer/search?q=roma", "", f.writer, 200)
		time.Sleep(1100 * time.Millisecond) // past the TTL
		fake.SetDown(true)
		n := fake.Requests()
		for _, url := range []string{"/gazetteer/place/579885", "/gazetteer/search?q=Roma"} {
			if m := f.json("GET", url, "", f.writer, 200); m["cached"] != true || m["stale"] != true {
				t.Fatalf("%s, expired, provider down: %v", url, m)
			}
		}
		if fake.Requests() == n {
			t.Fatal("expired answers were served without asking the provider")
		}
		if code, c, m := f.code("GET", "/gazetteer/search?q=athenae", "", f.writer); code != 502 || c != "gazetteer_unavailable" {
			t.Fatalf("never cached, provider down: %d %v", code, m)
		}
		fake.SetDown(false)
		if m := f.json("GET", "/gazetteer/place/579885", "", f.writer, 200); m["cached"] != false || m["stale"] != false ||
			m["place"].(map[string]any)["title"] != "Athenae" {
			t.Fatalf("provider back: %v", m)
		}
	})
}
