// Command gazetteer is Strata's place gazetteer plugin (issue 18, SPEC.md
// §4.6, CONTRACT.md §9 and §10): it proxies a public gazetteer, Pleiades
// first, under /gazetteer/* (BraDypUS's /pleiades/*) for users who may edit
// records, with normalised answers (id, title, description, a
// representative GeoJSON point, bbox, time periods, URI), cached per
// instance so a busy excavation does not hammer the provider. Its feature
// "gazetteer" stores a place on a record (a gazetteer_place column holding
// the place's URI), and POST /gazetteer/geodata puts the place's point in
// the record's geodata (place.go).
//
// The provider's base URL is the instance setting pleiades_url
// (<plugin dir>/gazetteer.json), else GAZETTEER_PLEIADES_URL, else the
// public site; cache_ttl_seconds (default a day) and max_results (default
// 10, at most 50) tune it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/strata-archaeo/strata/plugins/gazetteer/pleiades"
	"github.com/strata-archaeo/strata/pluginsdk"
)

func main() { pluginsdk.Serve(newPlugin(os.Getenv)) }

// Defaults of the settings.
const (
	defaultTTL        = 24 * time.Hour
	defaultMaxResults = 10
	maxMaxResults     = 50
	// providerTimeout bounds one request to the provider, below the
	// route's deadline so a slow provider still leaves time to answer
	// from the cache.
	providerTimeout = 15 * time.Second
	// placeFetches bounds the concurrent place reads of one search.
	placeFetches = 4
)

// settings are the plugin's instance settings.
type settings struct {
	PleiadesURL     string `json:"pleiades_url"`
	CacheTTLSeconds int    `json:"cache_ttl_seconds"`
	MaxResults      int    `json:"max_results"`
}

type plugin struct {
	getenv func(string) string
	mu     sync.RWMutex
	client *pleiades.Client
	ttl    time.Duration
	max    int
	cache  *cache
	host   pluginsdk.Host
}

func newPlugin(getenv func(string) string) *plugin {
	p := &plugin{getenv: getenv, cache: newCache(time.Now)}
	if err := p.apply(settings{}); err != nil {
		panic(err) // the defaults are valid
	}
	return p
}

func (p *plugin) Manifest() pluginsdk.Manifest {
	return pluginsdk.Manifest{
		Name:           "gazetteer",
		Version:        "1.0.0",
		Description:    "Place gazetteer (Pleiades): search and place lookup with normalised, cached answers",
		SettingsSchema: json.RawMessage(`{"type":"object","properties":{"pleiades_url":{"type":"string","format":"uri"},"cache_ttl_seconds":{"type":"integer","minimum":0},"max_results":{"type":"integer","minimum":1,"maximum":50}}}`),
		Routes: []pluginsdk.Route{
			{Method: "GET", Path: "/gazetteer/search", Access: pluginsdk.AccessEdit, Handler: http.HandlerFunc(p.searchRoute), Timeout: time.Minute},
			{Method: "GET", Path: "/gazetteer/place/:id", Access: pluginsdk.AccessEdit, Handler: http.HandlerFunc(p.placeRoute)},
			{Method: "POST", Path: "/gazetteer/geodata", Access: pluginsdk.AccessEdit, Handler: http.HandlerFunc(p.geodataRoute), BodyLimit: 4096},
		},
		Features:      []pluginsdk.Feature{placeFeature()},
		Sections:      []pluginsdk.Section{{Name: sectionPlace, Feature: featureName, Label: "Gazetteer place"}},
		SectionLabels: map[string]pluginsdk.Labels{sectionPlace: {"it": "Luogo del gazetteer"}},
	}
}

// Configure reads the instance settings; a bad one keeps the plugin from
// loading, with the reason in the server's log.
func (p *plugin) Configure(_ context.Context, host pluginsdk.Host, raw json.RawMessage) error {
	p.mu.Lock()
	p.host = host
	p.mu.Unlock()
	var s settings
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("gazetteer settings: %w", err)
		}
	}
	return p.apply(s)
}

func (p *plugin) apply(s settings) error {
	base := s.PleiadesURL
	if base == "" {
		base = p.getenv("GAZETTEER_PLEIADES_URL")
	}
	if base == "" {
		base = pleiades.DefaultURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("gazetteer: pleiades_url %q is not an http(s) URL", base)
	}
	ttl := defaultTTL
	if s.CacheTTLSeconds < 0 {
		return errors.New("gazetteer: cache_ttl_seconds is negative")
	} else if s.CacheTTLSeconds > 0 {
		ttl = time.Duration(s.CacheTTLSeconds) * time.Second
	}
	max := defaultMaxResults
	if s.MaxResults < 0 || s.MaxResults > maxMaxResults {
		return fmt.Errorf("gazetteer: max_results is 1 to %d", maxMaxResults)
	} else if s.MaxResults > 0 {
		max = s.MaxResults
	}
	// http.DefaultTransport honours HTTPS_PROXY/NO_PROXY (CONTRACT §10).
	c := &pleiades.Client{Base: strings.TrimRight(base, "/"), HTTP: &http.Client{Timeout: providerTimeout}}
	p.mu.Lock()
	p.client, p.ttl, p.max = c, ttl, max
	p.mu.Unlock()
	return nil
}

func (p *plugin) current() (*pleiades.Client, time.Duration, int) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.client, p.ttl, p.max
}

// answer writes a fresh or cached value, or the error of the provider
// when there is no cached value to fall back on.
func answer(w http.ResponseWriter, key string, v any, cached, stale bool) {
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{"status": "success", key: v, "cached": cached, "stale": stale})
}

func providerDown(w http.ResponseWriter) {
	pluginsdk.WriteError(w, http.StatusBadGateway, "gazetteer_unavailable",
		"the gazetteer provider (Pleiades) did not answer; try again later")
}

// GET /gazetteer/place/:id — {place, cached, stale}.
func (p *plugin) placeRoute(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimSpace(pluginsdk.Param(r, "id"))
	if !pleiades.ValidID(id) {
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_place_id", "a Pleiades place id is digits, e.g. 423025")
		return
	}
	pl, cached, stale, err := p.lookup(r.Context(), id)
	switch {
	case err == nil:
		answer(w, "place", pl, cached, stale)
	case errors.Is(err, pleiades.ErrNotFound):
		pluginsdk.WriteError(w, http.StatusNotFound, "place_not_found", "no place "+id+" in the gazetteer")
	default:
		providerDown(w)
	}
}

// GET /gazetteer/search?q= — {q, places, total, cached, stale}: the first
// max_results places matching q, each normalised (a place the provider
// could not give in full keeps its id, title, description and URI).
func (p *plugin) searchRoute(w http.ResponseWriter, r *http.Request) {
	q := strings.Join(strings.Fields(r.URL.Query().Get("q")), " ")
	if q == "" {
		pluginsdk.WriteError(w, http.StatusBadRequest, "missing_parameter", "q is required, e.g. ?q=Roma")
		return
	}
	if len(q) > 200 {
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_parameter", "q is at most 200 characters")
		return
	}
	client, ttl, max := p.current()
	key := client.Base + " search " + strings.ToLower(q)
	if v, fresh, ok := p.cache.get(key, ttl); ok && fresh {
		answer(w, "places", v, true, false)
		return
	}
	hits, err := client.Search(r.Context(), q)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gazetteer: search %q: %v\n", q, err)
		if v, _, ok := p.cache.get(key, ttl); ok {
			answer(w, "places", v, true, true)
			return
		}
		providerDown(w)
		return
	}
	if len(hits) > max {
		hits = hits[:max]
	}
	places := p.places(r.Context(), client, ttl, hits)
	p.cache.put(key, places)
	answer(w, "places", places, false, false)
}

// places reads the hits' places (from the cache when it has them), a few
// at a time.
func (p *plugin) places(ctx context.Context, client *pleiades.Client, ttl time.Duration, hits []pleiades.Hit) []*pleiades.Place {
	out := make([]*pleiades.Place, len(hits))
	sem := make(chan struct{}, placeFetches)
	var wg sync.WaitGroup
	for i, h := range hits {
		key := client.Base + " place " + h.ID
		if v, fresh, ok := p.cache.get(key, ttl); ok && fresh {
			out[i] = v.(*pleiades.Place)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			pl, err := client.Place(ctx, h.ID)
			if err != nil {
				out[i] = &pleiades.Place{Provider: "pleiades", ID: h.ID, Title: h.Title, Description: h.Description, URI: h.URI,
					TimePeriods: []pleiades.Period{}, PlaceTypes: []string{}}
				return
			}
			p.cache.put(key, pl)
			out[i] = pl
		}()
	}
	wg.Wait()
	return out
}
