package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/plugins/gazetteer/pleiades"
	"github.com/strata-archaeo/strata/plugins/gazetteer/pleiades/pleiadestest"
	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

func noEnv(string) string { return "" }

// TestConformance runs against the fake: the placeholder calls must not
// reach the public site.
func TestConformance(t *testing.T) {
	fake := pleiadestest.New(t)
	plugintest.Conformance(t, newPlugin(func(k string) string {
		if k == "GAZETTEER_PLEIADES_URL" {
			return fake.URL
		}
		return ""
	}))
}

// clock is a settable time for the cache.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// setup runs the plugin against a fake Pleiades given by settings, with a
// clock the test moves.
func setup(t *testing.T, extra string) (*plugintest.Harness, *pleiadestest.Fake, *clock) {
	fake := pleiadestest.New(t)
	p := newPlugin(noEnv)
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p.cache.now = clk.now
	h := plugintest.New(t, p, plugintest.WithSettings(json.RawMessage(fmt.Sprintf(`{"pleiades_url":%q%s}`, fake.URL, extra))))
	return h, fake, clk
}

type reply struct {
	Status  string            `json:"status"`
	Code    string            `json:"code"`
	Place   *pleiades.Place   `json:"place"`
	Places  []*pleiades.Place `json:"places"`
	Cached  bool              `json:"cached"`
	Stale   bool              `json:"stale"`
	Message string            `json:"message"`
}

func call(t *testing.T, h *plugintest.Harness, target string, actor pluginsdk.Actor) (int, reply) {
	t.Helper()
	resp, err := h.CallRoute("GET", target, nil, actor)
	if err != nil {
		t.Fatal(err)
	}
	var a reply
	if err := resp.JSON(&a); err != nil {
		t.Fatalf("%s: %v: %s", target, err, resp.Body)
	}
	return resp.Status, a
}

func TestPlace(t *testing.T) {
	h, fake, _ := setup(t, "")
	code, a := call(t, h, "/gazetteer/place/423025", plugintest.Writer)
	if code != 200 || a.Cached {
		t.Fatalf("place: %d %+v", code, a)
	}
	p := a.Place
	got, _ := json.Marshal(p)
	want := `{"provider":"pleiades","id":"423025","title":"Roma","description":"The capital of the Roman Republic and Empire.",` +
		`"uri":"https://pleiades.stoa.org/places/423025","point":{"type":"Point","coordinates":[12.486137,41.891775]},` +
		`"bbox":[12.4533,41.8572,12.5387,41.9278],"time_periods":[` +
		`{"key":"archaic","uri":"https://pleiades.stoa.org/vocabularies/time-periods/archaic"},` +
		`{"key":"late-antique","uri":"https://pleiades.stoa.org/vocabularies/time-periods/late-antique"},` +
		`{"key":"roman","uri":"https://pleiades.stoa.org/vocabularies/time-periods/roman"}],` +
		`"years":{"from":-750,"to":2100},"place_types":["settlement"]}`
	if string(got) != want {
		t.Fatalf("normalised place:\n got %s\nwant %s", got, want)
	}
	n := fake.Requests()
	if code, a := call(t, h, "/gazetteer/place/423025", plugintest.Writer); code != 200 || !a.Cached || a.Place.Title != "Roma" || fake.Requests() != n {
		t.Fatalf("second read not from the cache: %d %+v (%d requests, was %d)", code, a, fake.Requests(), n)
	}
	for _, tc := range []struct {
		target string
		actor  pluginsdk.Actor
		status int
		code   string
	}{
		{"/gazetteer/place/424242", plugintest.Writer, 404, "place_not_found"},
		{"/gazetteer/place/roma", plugintest.Writer, 400, "invalid_place_id"},
		{"/gazetteer/place/12a", plugintest.Writer, 400, "invalid_place_id"},
		{"/gazetteer/place/423025", plugintest.Reader, 403, ""},
		{"/gazetteer/place/423025", plugintest.Anonymous, 401, ""},
	} {
		resp, err := h.CallRoute("GET", tc.target, nil, tc.actor)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != tc.status || !strings.Contains(string(resp.Body), tc.code) {
			t.Errorf("%s as %d: %d %s", tc.target, tc.actor.Privilege, resp.Status, resp.Body)
		}
	}
}

// TestProviderDown: with nothing cached the client gets 502
// gazetteer_unavailable; a fresh cached answer is served without asking;
// an expired one is served, marked stale, while the provider is down and
// refreshed once it is back.
func TestProviderDown(t *testing.T) {
	h, fake, clk := setup(t, `,"cache_ttl_seconds":60`)
	fake.SetDown(true)
	for _, target := range []string{"/gazetteer/place/423025", "/gazetteer/search?q=roma"} {
		if code, a := call(t, h, target, plugintest.Writer); code != 502 || a.Code != "gazetteer_unavailable" {
			t.Fatalf("%s down, nothing cached: %d %+v", target, code, a)
		}
	}
	fake.SetDown(false)
	call(t, h, "/gazetteer/place/423025", plugintest.Writer)
	call(t, h, "/gazetteer/search?q=roma", plugintest.Writer)
	fake.SetDown(true)
	clk.add(30 * time.Second)
	if code, a := call(t, h, "/gazetteer/place/423025", plugintest.Writer); code != 200 || !a.Cached || a.Stale {
		t.Fatalf("fresh cached: %d %+v", code, a)
	}
	clk.add(time.Minute)
	if code, a := call(t, h, "/gazetteer/place/423025", plugintest.Writer); code != 200 || !a.Stale || a.Place.Title != "Roma" {
		t.Fatalf("expired while down: %d %+v", code, a)
	}
	if code, a := call(t, h, "/gazetteer/search?q=Roma", plugintest.Writer); code != 200 || !a.Stale || len(a.Places) != 3 {
		t.Fatalf("expired search while down: %d %+v", code, a)
	}
	if code, a := call(t, h, "/gazetteer/place/999999", plugintest.Writer); code != 502 || a.Code != "gazetteer_unavailable" {
		t.Fatalf("another place while down: %d %+v", code, a)
	}
	fake.SetDown(false)
	if code, a := call(t, h, "/gazetteer/place/423025", plugintest.Writer); code != 200 || a.Cached || a.Stale {
		t.Fatalf("back up: %d %+v", code, a)
	}
}

func TestSearch(t *testing.T) {
	h, fake, _ := setup(t, `,"max_results":3`)
	code, a := call(t, h, "/gazetteer/search?q="+url.QueryEscape("  Roma "), plugintest.Writer)
	if code != 200 || len(a.Places) != 3 {
		t.Fatalf("search: %d %+v", code, a)
	}
	// Two full places, one the provider could not give in full (its
	// JSON is missing), and the news item left out.
	if a.Places[0].Title != "Roma" || a.Places[0].Point == nil || a.Places[1].ID != "579885" || a.Places[1].BBox == nil {
		t.Fatalf("places: %+v %+v", a.Places[0], a.Places[1])
	}
	if p := a.Places[2]; p.ID != "999999" || p.Title != "Roma Vecchia" || p.Point != nil || p.URI != "https://pleiades.stoa.org/places/999999" {
		t.Fatalf("partial place: %+v", p)
	}
	n := fake.Requests()
	if _, a := call(t, h, "/gazetteer/search?q=roma", plugintest.Writer); !a.Cached || fake.Requests() != n {
		t.Fatalf("same query (case and spaces aside) not cached: %+v", a)
	}
	// The places read by the search are cached for /place too.
	if _, a := call(t, h, "/gazetteer/place/579885", plugintest.Writer); !a.Cached {
		t.Fatalf("place read by a search not cached: %+v", a)
	}
	if code, a := call(t, h, "/gazetteer/search?q=nothing", plugintest.Writer); code != 200 || a.Places == nil || len(a.Places) != 0 {
		t.Fatalf("no hits: %d %+v", code, a)
	}
	for _, target := range []string{"/gazetteer/search", "/gazetteer/search?q=+", "/gazetteer/search?q=" + strings.Repeat("a", 201)} {
		if code, a := call(t, h, target, plugintest.Writer); code != 400 {
			t.Fatalf("%s: %d %+v", target, code, a)
		}
	}
	if code, _ := call(t, h, "/gazetteer/search?q=roma", plugintest.Reader); code != 403 {
		t.Fatalf("reader: %d", code)
	}

	h2, _, _ := setup(t, `,"max_results":1`)
	if _, a := call(t, h2, "/gazetteer/search?q=roma", plugintest.Writer); len(a.Places) != 1 {
		t.Fatalf("max_results 1: %+v", a)
	}
}

// TestSettings: the setting wins over GAZETTEER_PLEIADES_URL, which wins
// over the public site; bad settings are refused.
func TestSettings(t *testing.T) {
	env := func(k string) string {
		if k == "GAZETTEER_PLEIADES_URL" {
			return "http://from-env.example/"
		}
		return ""
	}
	p := newPlugin(env)
	if c, _, _ := p.current(); c.Base != "http://from-env.example" {
		t.Fatalf("env: %s", c.Base)
	}
	if c, _, _ := newPlugin(noEnv).current(); c.Base != pleiades.DefaultURL {
		t.Fatalf("default: %s", c.Base)
	}
	if err := p.apply(settings{PleiadesURL: "https://mirror.example", CacheTTLSeconds: 5, MaxResults: 7}); err != nil {
		t.Fatal(err)
	}
	if c, ttl, max := p.current(); c.Base != "https://mirror.example" || ttl != 5*time.Second || max != 7 {
		t.Fatalf("settings: %s %s %d", c.Base, ttl, max)
	}
	for _, bad := range []settings{{PleiadesURL: "ftp://x"}, {PleiadesURL: "not a url"}, {CacheTTLSeconds: -1}, {MaxResults: 51}} {
		if err := p.apply(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestCacheBound(t *testing.T) {
	clk := &clock{t: time.Unix(0, 0)}
	c := newCache(clk.now)
	for i := 0; i < maxEntries+10; i++ {
		clk.add(time.Second)
		c.put(fmt.Sprint(i), i)
	}
	if len(c.m) != maxEntries {
		t.Fatalf("%d entries", len(c.m))
	}
	if _, _, ok := c.get("0", time.Hour); ok {
		t.Fatal("the oldest entry was kept")
	}
	if _, _, ok := c.get(fmt.Sprint(maxEntries+9), time.Hour); !ok {
		t.Fatal("the newest entry was dropped")
	}
}
