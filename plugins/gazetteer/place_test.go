package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/plugins/gazetteer/pleiades/pleiadestest"
	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

const romaURI = "https://pleiades.stoa.org/places/423025"

// setupHost runs the plugin against a fake Pleiades and a fake Host
// holding app demo's table sites (the gazetteer feature active) with
// record 1 on Roma, 2 without a place, and table finds (not active).
func setupHost(t *testing.T) (*plugintest.Harness, *pleiadestest.Fake, *plugintest.FakeHost) {
	fake := pleiadestest.New(t)
	host := plugintest.NewFakeHost()
	host.SetRecords("demo", "sites", map[string]any{"id": 1, colPlace: romaURI}, map[string]any{"id": 2, colPlace: nil})
	host.SetRecords("demo", "finds", map[string]any{"id": 7})
	host.SetCatalog("demo", pluginsdk.Catalog{Tables: []pluginsdk.CatalogTable{
		{Name: "sites", Features: map[string]bool{featureName: true}, Fields: []pluginsdk.CatalogField{{Name: colPlace, Type: "link_out", DBType: "text"}}},
		{Name: "finds"},
	}})
	h := plugintest.New(t, newPlugin(noEnv), plugintest.WithHost(host),
		plugintest.WithSettings(json.RawMessage(fmt.Sprintf(`{"pleiades_url":%q}`, fake.URL))))
	return h, fake, host
}

// TestBeforeSavePlace: the place column is made canonical from any usual
// spelling, refused when it is no place, cleared when empty, and kept (as
// its canonical URI) when the provider cannot be asked.
func TestBeforeSavePlace(t *testing.T) {
	h, fake, _ := setupHost(t)
	for _, tc := range []struct {
		sent  any
		want  any    // the value after the hook
		rule  string // the error's rule, when refused
		label string
	}{
		{"423025", romaURI, "", "bare id"},
		{json.Number("423025"), romaURI, "", "id as a number"},
		{" https://pleiades.stoa.org/places/423025/json ", romaURI, "", "URI of its JSON"},
		{"pleiades.stoa.org/places/579885", "https://pleiades.stoa.org/places/579885", "", "URI without scheme"},
		{fake.URL + "/places/423025", romaURI, "", "URI of the configured provider"},
		{"", nil, "", "empty clears"},
		{"Roma", nil, "format", "a name"},
		{"https://example.org/places/423025", nil, "format", "another site"},
		{true, nil, "format", "not text"},
		{"424242", nil, "not_found", "no such place"},
	} {
		res, err := h.BeforeSave(pluginsdk.SaveCall{Feature: featureName, Table: "sites", Actor: plugintest.Writer,
			Rows: []pluginsdk.Row{{Values: map[string]any{colPlace: tc.sent}}}})
		if err != nil {
			t.Fatalf("%s: %v", tc.label, err)
		}
		if len(res) != 1 {
			t.Fatalf("%s: %d results", tc.label, len(res))
		}
		if tc.rule != "" {
			if len(res[0].Errors) != 1 || res[0].Errors[0].Rule != tc.rule || res[0].Errors[0].Field != colPlace {
				t.Errorf("%s: %+v", tc.label, res[0])
			}
			continue
		}
		if len(res[0].Errors) != 0 || res[0].Values[colPlace] != tc.want {
			t.Errorf("%s: %+v, want %v", tc.label, res[0], tc.want)
		}
	}
	// A row that does not send the column is left alone.
	res, err := h.BeforeSave(pluginsdk.SaveCall{Feature: featureName, Table: "sites", Actor: plugintest.Writer,
		Rows: []pluginsdk.Row{{ID: 1, Values: map[string]any{}}}})
	if err != nil || (res != nil && (len(res[0].Errors) > 0 || len(res[0].Values) > 0)) {
		t.Fatalf("row without the column: %+v %v", res, err)
	}
	// The provider down: a cached place still checks; one never seen is
	// kept, canonical, rather than holding up the save.
	fake.SetDown(true)
	res, err = h.BeforeSave(pluginsdk.SaveCall{Feature: featureName, Table: "sites", Actor: plugintest.Writer,
		Rows: []pluginsdk.Row{{Values: map[string]any{colPlace: "423025"}}, {Values: map[string]any{colPlace: "pleiades:1234"}}}})
	if err != nil || len(res) != 2 || res[0].Values[colPlace] != romaURI || res[1].Values[colPlace] != "https://pleiades.stoa.org/places/1234" ||
		len(res[0].Errors)+len(res[1].Errors) != 0 {
		t.Fatalf("provider down: %+v %v", res, err)
	}
}

// TestGeodataRoute: POST /gazetteer/geodata adds the point of the
// record's place (or the one sent) to its geodata as the caller, and says
// why when it cannot.
func TestGeodataRoute(t *testing.T) {
	h, fake, host := setupHost(t)
	post := func(body string, actor pluginsdk.Actor) (int, map[string]any) {
		t.Helper()
		resp, err := h.CallRoute("POST", "/gazetteer/geodata", []byte(body), actor)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := resp.JSON(&m); err != nil {
			t.Fatal(err)
		}
		return resp.Status, m
	}
	status, m := post(`{"tb":"sites","id":"1"}`, plugintest.Writer)
	if status != 200 || m["code"] != "ok_insert_geodata" || m["geo_id"] != json.Number("1") || m["place"].(map[string]any)["uri"] != romaURI {
		t.Fatalf("from the record's place: %d %v", status, m)
	}
	g := host.Geodata()
	if len(g) != 1 || g[0].Table != "sites" || g[0].RecordID != 1 || g[0].Actor == nil || g[0].Actor.UserID != plugintest.Writer.UserID ||
		fmt.Sprint(g[0].Geometry) != "map[coordinates:[12.486137 41.891775] type:Point]" {
		t.Fatalf("geodata written: %+v", g)
	}
	// A place sent overrides; any table the host accepts.
	if status, m := post(`{"tb":"finds","id":7,"place":"https://pleiades.stoa.org/places/579885"}`, plugintest.Writer); status != 200 {
		t.Fatalf("place sent: %d %v", status, m)
	}
	if g := host.Geodata(); len(g) != 2 || g[1].Table != "finds" || g[1].RecordID != 7 {
		t.Fatalf("second feature: %+v", g)
	}
	for _, tc := range []struct {
		body   string
		actor  pluginsdk.Actor
		status int
		code   string
	}{
		{`{"tb":"sites","id":2}`, plugintest.Writer, 400, "place_missing"},
		{`{"tb":"finds","id":7}`, plugintest.Writer, 400, "place_missing"},
		{`{"tb":"sites","id":99}`, plugintest.Writer, 404, "record_not_found"},
		{`{"tb":"sites","id":"x"}`, plugintest.Writer, 400, "parameter_missing"},
		{`{"id":1}`, plugintest.Writer, 400, "parameter_missing"},
		{`[`, plugintest.Writer, 400, "invalid_json"},
		{`{"tb":"sites","id":1,"place":"Roma"}`, plugintest.Writer, 400, "invalid_place_id"},
		{`{"tb":"sites","id":1,"place":"424242"}`, plugintest.Writer, 404, "place_not_found"},
		{`{"tb":"finds","id":8,"place":"423025"}`, plugintest.Writer, 404, "record_not_found"}, // the host has no record 8
		{`{"tb":"sites","id":1}`, plugintest.Reader, 403, ""},
	} {
		status, m := post(tc.body, tc.actor)
		if status != tc.status || (tc.code != "" && m["code"] != tc.code) {
			t.Errorf("%s: %d %v", tc.body, status, m)
		}
	}
	if n := len(host.Geodata()); n != 2 {
		t.Fatalf("refused requests wrote geodata: %d features", n)
	}
	// Provider down: a cached place still serves, a new one is 502.
	fake.SetDown(true)
	if status, m := post(`{"tb":"sites","id":1}`, plugintest.Writer); status != 200 {
		t.Fatalf("cached place while down: %d %v", status, m)
	}
	if status, m := post(`{"tb":"sites","id":1,"place":"1234"}`, plugintest.Writer); status != 502 || m["code"] != "gazetteer_unavailable" ||
		!strings.Contains(fmt.Sprint(m["message"]), "Pleiades") {
		t.Fatalf("uncached place while down: %d %v", status, m)
	}
}

// TestPlaceSection: the full record's gazetteer_place section shows the
// record's place with its title and point (for the client to offer to the
// geodata), null without a place; with the provider down and nothing
// cached the URI and id remain, title and point null.
func TestPlaceSection(t *testing.T) {
	h, fake, host := setupHost(t)
	host.SetRecords("demo", "sites", map[string]any{"id": 1, colPlace: romaURI}, map[string]any{"id": 2, colPlace: nil},
		map[string]any{"id": 3, colPlace: "https://pleiades.stoa.org/places/579885"})
	got, err := h.Enrich(pluginsdk.EnrichCall{Section: sectionPlace, Table: "sites", IDs: []int64{1, 2}, Actor: plugintest.Reader})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `{"1":{"id":"423025","point":{"coordinates":[12.486137,41.891775],"type":"Point"},"stale":false,"title":"Roma","uri":"` + romaURI + `"},"2":null}`
	if string(b) != want {
		t.Fatalf("section:\n got %s\nwant %s", b, want)
	}
	if q := host.Queries(); len(q) == 0 || q[len(q)-1].Actor == nil || q[len(q)-1].Actor.UserID != plugintest.Reader.UserID {
		t.Fatalf("the records were not read as the caller: %+v", q)
	}
	fake.SetDown(true)
	got, err = h.Enrich(pluginsdk.EnrichCall{Section: sectionPlace, Table: "sites", IDs: []int64{3}, Actor: plugintest.Reader})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(got); string(b) != `{"3":{"id":"579885","point":null,"stale":false,"title":null,"uri":"https://pleiades.stoa.org/places/579885"}}` {
		t.Fatalf("provider down: %s", b)
	}
}
