// Command refmgr is Strata's reference-library plugin (issue 18, SPEC.md
// §2.6, §3.5, §4.7; CONTRACT.md §9 and §10): libraries of a reference
// manager (Zotero Web API v3 first) registered per application, a search
// proxy, citation links between records and library items with a cached
// HTML citation and author–year, the `bibliography` section of full
// records, and a sync that refreshes the cache and marks vanished items
// detached. It serves BraDypUS's /zotero/* routes as /refmgr/* with
// refmgr_* keys, and as /zotero/* with BraDypUS's zotero_* keys for its
// clients (bdus.go).
//
// Libraries and links live in the plugin's system tables
// (sys_refmgr_libs, sys_refmgr_links). A library's API key is sealed by
// the server (Host.Seal, the instance key) before it is stored and opened
// only to call the provider: it is never stored in clear nor answered.
//
// The provider's base URL is the instance setting zotero_url
// (<plugin dir>/refmgr.json), else REFMGR_ZOTERO_URL, else the Zotero API.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/strata-archaeo/strata/plugins/refmgr/zotero"
	"github.com/strata-archaeo/strata/pluginsdk"
)

func main() { pluginsdk.Serve(newPlugin(os.Getenv)) }

const (
	// providerTimeout bounds one request to the provider.
	providerTimeout = 15 * time.Second
	// citationBudget bounds the citation fetch of one added link: the
	// link is saved without a cached citation when the provider is slow
	// (the next sync fills it in).
	citationBudget = 20 * time.Second
	// searchFetches bounds the concurrent citation reads of one search.
	searchFetches = 4
	// sealPurpose is what a library's API key is sealed for.
	sealPurpose = "library_api_key"
)

// settings are the plugin's instance settings.
type settings struct {
	ZoteroURL string `json:"zotero_url"`
}

type plugin struct {
	getenv   func(string) string
	throttle *zotero.Throttle // shared by every library: Zotero limits per address
	mu       sync.RWMutex
	host     pluginsdk.Host
	client   *zotero.Client
}

func newPlugin(getenv func(string) string) *plugin {
	p := &plugin{getenv: getenv, throttle: &zotero.Throttle{}}
	if err := p.apply(settings{}); err != nil {
		panic(err) // the defaults are valid
	}
	return p
}

// Column helpers for the manifest.
func textCol(name string) pluginsdk.Column {
	return pluginsdk.Column{Name: name, Label: name, Type: "text", DBType: "text"}
}
func intCol(name string) pluginsdk.Column {
	return pluginsdk.Column{Name: name, Label: name, Type: "text", DBType: "int"}
}

func (p *plugin) Manifest() pluginsdk.Manifest {
	route := func(method, path, access string, h http.HandlerFunc, timeout time.Duration) pluginsdk.Route {
		return pluginsdk.Route{Method: method, Path: path, Access: access, Handler: h, Timeout: timeout}
	}
	routes := []pluginsdk.Route{
		route("GET", "/refmgr/libs", pluginsdk.AccessAdmin, p.listLibs, 0),
		route("POST", "/refmgr/lib", pluginsdk.AccessAdmin, p.addLib, 0),
		route("DELETE", "/refmgr/lib/:id", pluginsdk.AccessAdmin, p.deleteLib, 0),
		route("GET", "/refmgr/search", pluginsdk.AccessEdit, p.search, time.Minute),
		route("GET", "/refmgr/links/:tb/:id", pluginsdk.AccessRead, p.listLinks, 0),
		route("POST", "/refmgr/link", pluginsdk.AccessEdit, p.addLink, time.Minute),
		route("PATCH", "/refmgr/link/:id", pluginsdk.AccessEdit, p.editLink, 0),
		route("DELETE", "/refmgr/link/:id", pluginsdk.AccessEdit, p.deleteLink, 0),
		route("POST", "/refmgr/sync/:tb/:id", pluginsdk.AccessEdit, p.syncRecord, 2*time.Minute),
		{Method: "POST", Path: "/refmgr/sync", Access: pluginsdk.AccessAdmin, Handler: http.HandlerFunc(p.syncAll),
			Timeout: 10 * time.Minute, Job: true},
	}
	return pluginsdk.Manifest{
		Name:           "refmgr",
		Version:        "1.0.0",
		Description:    "Reference libraries (Zotero): search, citation links on records with cached citations, bibliography, sync",
		SettingsSchema: json.RawMessage(`{"type":"object","properties":{"zotero_url":{"type":"string","format":"uri"}}}`),
		// No feature: the server keeps has_refmgr itself (a table's refmgr
		// setting), so the bibliography is a section of every table. It is
		// made of the record's links alone: the server answers {} for a
		// record without any, found through the links' index in the read's
		// own round trip, and calls EnrichRecords only for the others.
		Sections: []pluginsdk.Section{{Name: "bibliography", Label: "Bibliography", Rows: &pluginsdk.SectionRows{
			Table: tableLinks, TableColumn: "tb", IDColumn: "record_id", Empty: map[string]any{}}}},
		SectionLabels: map[string]pluginsdk.Labels{"bibliography": {"it": "Bibliografia"}},
		Messages: map[string]pluginsdk.Labels{
			"pages":    {"en": "Pages", "it": "Pagine"},
			"detached": {"en": "no longer in the library", "it": "non più nella biblioteca"},
		},
		SystemTables: []pluginsdk.SystemTable{
			{Name: tableLibs, Columns: []pluginsdk.Column{textCol("type"), textCol("refmgr_id"), textCol("name"),
				textCol("api_key"), textCol("citation_style"), textCol("created_at")}},
			{Name: tableLinks, Columns: []pluginsdk.Column{textCol("tb"), intCol("record_id"), intCol("lib_id"),
				textCol("refmgr_key"), textCol("pages"), textCol("notes"), intCol("sort"), textCol("author_year"),
				textCol("full_citation"), intCol("refmgr_version"), textCol("synced_at"), intCol("detached"),
				textCol("created_at")},
				Indexes: [][]string{{"tb", "record_id"}, {"lib_id"}}},
		},
		// BraDypUS's clients call the same routes as /zotero/* with
		// zotero_* keys (bdus.go).
		Routes: append(routes, zoteroRoutes(routes)...),
	}
}

// Configure keeps the Host and reads the settings; a bad one keeps the
// plugin from loading, with the reason in the server's log.
func (p *plugin) Configure(_ context.Context, host pluginsdk.Host, raw json.RawMessage) error {
	var s settings
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("refmgr settings: %w", err)
		}
	}
	if err := p.apply(s); err != nil {
		return err
	}
	p.mu.Lock()
	p.host = host
	p.mu.Unlock()
	return nil
}

func (p *plugin) apply(s settings) error {
	base := s.ZoteroURL
	if base == "" {
		base = p.getenv("REFMGR_ZOTERO_URL")
	}
	if base == "" {
		base = zotero.DefaultURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("refmgr: zotero_url %q is not an http(s) URL", base)
	}
	// http.DefaultTransport honours HTTPS_PROXY/NO_PROXY (CONTRACT §10).
	c := &zotero.Client{Base: strings.TrimRight(base, "/"), HTTP: &http.Client{Timeout: providerTimeout}, Throttle: p.throttle}
	p.mu.Lock()
	p.client = c
	p.mu.Unlock()
	return nil
}

func (p *plugin) current() (pluginsdk.Host, *zotero.Client) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.host, p.client
}
