// Package pleiadestest is a local stand-in for the Pleiades site, for
// tests: it answers places/{id}/json and search_rss with documents in
// Pleiades' real formats (testdata), 404 for other places, and 503 while
// it is set down. It counts the requests it gets.
package pleiadestest

import (
	"embed"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

//go:embed testdata
var docs embed.FS

// Fake is a running fake provider; URL is its base.
type Fake struct {
	URL      string
	down     atomic.Bool
	requests atomic.Int64
}

// New starts a fake, closed when the test ends. Places: 423025 (Roma) and
// 579885 (Athenae); 999999 is listed by the search but has no place.
// Any search with a q answers the same three places and one news item;
// q "nothing" answers none.
func New(t testing.TB) *Fake {
	f := &Fake{}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// SetDown makes the fake answer 503 to everything (true) or serve again.
func (f *Fake) SetDown(down bool) { f.down.Store(down) }

// Requests is how many requests the fake has had.
func (f *Fake) Requests() int64 { return f.requests.Load() }

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	if f.down.Load() {
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		return
	}
	switch {
	case r.URL.Path == "/search_rss":
		if r.URL.Query().Get("portal_type") != "Place" || r.URL.Query().Get("SearchableText") == "" {
			http.Error(w, "bad search", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/rss+xml; charset=utf-8")
		if r.URL.Query().Get("SearchableText") == "nothing" {
			w.Write([]byte(`<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"><channel rdf:about="x"><title>Pleiades</title></channel></rdf:RDF>`))
			return
		}
		b, _ := docs.ReadFile("testdata/search-roma.xml")
		w.Write(b)
	case strings.HasPrefix(r.URL.Path, "/places/") && strings.HasSuffix(r.URL.Path, "/json"):
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/places/"), "/json")
		b, err := docs.ReadFile("testdata/place-" + id + ".json")
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	default:
		http.NotFound(w, r)
	}
}
