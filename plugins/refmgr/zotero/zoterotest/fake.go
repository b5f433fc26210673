// Package zoterotest is a local stand-in for the Zotero Web API v3, for
// tests: it answers /{users|groups}/{id}/items (format=json, q=, itemKey=)
// and /items/{key}?format=bib&style= in Zotero's formats, with the
// Last-Modified-Version and Total-Results headers, 404 for missing items
// and libraries, 403 for a private library asked without its key, 400 for
// an unknown style, and on demand 429 with Retry-After (for one item's request, or the next
// request), a Backoff header,
// or 503 while down. It records the requests it gets.
package zoterotest

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Fake is a running fake API; URL is its base (the API's root).
type Fake struct {
	URL string

	mu        sync.Mutex
	libs      map[string]*library // "groups/336647" → library
	requests  []*http.Request
	limited   map[string]int // item key → Retry-After seconds, for its next request
	backoff   int
	limitNext int
	down      bool
	perBatch  []int // keys asked per itemKey= request
	bibStyles []string
}

type library struct {
	typ, id, name string
	apiKey        string // "": public
	version       int64
	items         map[string]*item
}

type item struct {
	key, title, date, itemType string
	creators                   []creator
	version                    int64
}

type creator struct{ first, last string }

// New starts a fake, closed when the test ends.
func New(t testing.TB) *Fake {
	f := &Fake{libs: map[string]*library{}, limited: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// AddLibrary declares a library: typ "user" or "group", its id, and the
// API key it needs ("" for a public one).
func (f *Fake) AddLibrary(typ, id, name, apiKey string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.libs[typ+"s/"+id] = &library{typ: typ, id: id, name: name, apiKey: apiKey, items: map[string]*item{}}
}

// PutItem adds or changes a book in a library: its version becomes the
// library's next version, as in Zotero. author is "First Last".
func (f *Fake) PutItem(typ, id, key, author, date, title string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.libs[typ+"s/"+id]
	l.version++
	first, last, _ := strings.Cut(author, " ")
	if last == "" {
		first, last = "", first
	}
	l.items[key] = &item{key: key, title: title, date: date, itemType: "book",
		creators: []creator{{first: first, last: last}}, version: l.version}
	return l.version
}

// DeleteItem removes an item (the library's version moves on).
func (f *Fake) DeleteItem(typ, id, key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.libs[typ+"s/"+id]
	l.version++
	delete(l.items, key)
}

// RateLimit makes the next request for the item key alone (its JSON or
// citation) answer 429 with Retry-After: seconds.
func (f *Fake) RateLimit(key string, seconds int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limited[key] = seconds
}

// RateLimitNext makes the next request, whatever it is, answer 429 with
// Retry-After: seconds.
func (f *Fake) RateLimitNext(seconds int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limitNext = seconds
}

// SetBackoff adds "Backoff: seconds" to every answer (0: none).
func (f *Fake) SetBackoff(seconds int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.backoff = seconds
}

// SetDown makes the fake answer 503 without Retry-After (true), or serve.
func (f *Fake) SetDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

// Batches are the number of keys of each itemKey= request so far.
func (f *Fake) Batches() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.perBatch)
}

// Requests are the requests so far (method, URL and headers).
func (f *Fake) Requests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// BibStyles are the styles of the format=bib requests so far.
func (f *Fake) BibStyles() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.bibStyles)
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Clone(r.Context()))
	if f.backoff > 0 {
		w.Header().Set("Backoff", strconv.Itoa(f.backoff))
	}
	if f.down {
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		return
	}
	if f.limitNext > 0 {
		tooMany(w, f.limitNext)
		f.limitNext = 0
		return
	}
	if r.Header.Get("Zotero-API-Version") != "3" {
		http.Error(w, "API version 3 expected", http.StatusBadRequest)
		return
	}
	// /{users|groups}/{id}/items[/{key}]
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) < 3 || parts[2] != "items" || len(parts) > 4 {
		http.NotFound(w, r)
		return
	}
	l := f.libs[parts[0]+"/"+parts[1]]
	if l == nil {
		http.Error(w, "Not found", http.StatusNotFound)
		return
	}
	if l.apiKey != "" && apiKey(r) != l.apiKey {
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	q := r.URL.Query()
	if len(parts) == 4 {
		f.single(w, l, parts[3], q.Get("format"), q.Get("style"))
		return
	}
	var out []*item
	switch {
	case q.Get("itemKey") != "":
		keys := strings.Split(q.Get("itemKey"), ",")
		f.perBatch = append(f.perBatch, len(keys))
		if len(keys) > 50 {
			http.Error(w, "Cannot specify more than 50 item keys", http.StatusBadRequest)
			return
		}
		for _, k := range keys {
			if it := l.items[k]; it != nil {
				out = append(out, it)
			}
		}
	default:
		needle := strings.ToLower(q.Get("q"))
		for _, it := range l.items {
			if needle == "" || strings.Contains(strings.ToLower(it.title+" "+it.creatorSummary()+" "+it.date), needle) {
				out = append(out, it)
			}
		}
	}
	slices.SortFunc(out, func(a, b *item) int { return strings.Compare(a.key, b.key) })
	total := len(out)
	if n, err := strconv.Atoi(q.Get("limit")); err == nil && n > 0 && n < len(out) {
		out = out[:n]
	}
	docs := make([]map[string]any, len(out))
	for i, it := range out {
		docs[i] = it.json(l)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Last-Modified-Version", strconv.FormatInt(l.version, 10))
	w.Header().Set("Total-Results", strconv.Itoa(total))
	json.NewEncoder(w).Encode(docs)
}

func apiKey(r *http.Request) string {
	if k := r.Header.Get("Zotero-API-Key"); k != "" {
		return k
	}
	if k, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return k
	}
	return r.URL.Query().Get("key")
}

func tooMany(w http.ResponseWriter, retryAfter int) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
}

// single answers /items/{key}: JSON, or the bibliography entry.
func (f *Fake) single(w http.ResponseWriter, l *library, key, format, style string) {
	if s, ok := f.limited[key]; ok {
		delete(f.limited, key)
		tooMany(w, s)
		return
	}
	it := l.items[key]
	if it == nil {
		http.Error(w, "Item not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Last-Modified-Version", strconv.FormatInt(it.version, 10))
	switch format {
	case "", "json":
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(it.json(l))
	case "bib":
		if style == "" {
			style = "chicago-note-bibliography" // Zotero's default for bib
		}
		entry, ok := it.bib(style)
		if !ok {
			http.Error(w, "Invalid style", http.StatusBadRequest)
			return
		}
		f.bibStyles = append(f.bibStyles, style)
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		fmt.Fprintf(w, "<div class=\"csl-bib-body\" style=\"line-height: 2; margin-left: 2em; text-indent:-2em;\">\n  <div class=\"csl-entry\">%s</div>\n</div>", entry)
	default:
		http.Error(w, "Invalid 'format' value '"+format+"'", http.StatusBadRequest)
	}
}

func (it *item) creatorSummary() string {
	if len(it.creators) == 0 {
		return ""
	}
	return it.creators[0].last
}

// json is the item as the API's format=json gives it.
func (it *item) json(l *library) map[string]any {
	creators := make([]map[string]any, len(it.creators))
	for i, c := range it.creators {
		creators[i] = map[string]any{"creatorType": "author", "firstName": c.first, "lastName": c.last}
	}
	base := "https://api.zotero.org/" + l.typ + "s/" + l.id
	return map[string]any{
		"key": it.key, "version": it.version,
		"library": map[string]any{"type": l.typ, "id": json.Number(l.id), "name": l.name,
			"links": map[string]any{"alternate": map[string]any{"href": "https://www.zotero.org/" + l.typ + "s/" + l.id, "type": "text/html"}}},
		"links": map[string]any{
			"self":      map[string]any{"href": base + "/items/" + it.key, "type": "application/json"},
			"alternate": map[string]any{"href": "https://www.zotero.org/" + l.typ + "s/" + l.id + "/items/" + it.key, "type": "text/html"}},
		"meta": map[string]any{"creatorSummary": it.creatorSummary(), "parsedDate": it.date, "numChildren": 0},
		"data": map[string]any{"key": it.key, "version": it.version, "itemType": it.itemType, "title": it.title,
			"creators": creators, "date": it.date, "tags": []any{}, "collections": []any{}, "relations": map[string]any{},
			"dateAdded": "2024-01-01T00:00:00Z", "dateModified": "2024-01-01T00:00:00Z"},
	}
}

// bib renders the entry in the two styles the fake knows, as Zotero's
// CSL processor would (close enough to tell them apart).
func (it *item) bib(style string) (string, bool) {
	c := creator{}
	if len(it.creators) > 0 {
		c = it.creators[0]
	}
	title := html.EscapeString(it.title)
	switch style {
	case "chicago-author-date", "chicago-note-bibliography":
		return fmt.Sprintf("%s, %s. %s. <i>%s</i>.", html.EscapeString(c.last), html.EscapeString(c.first), html.EscapeString(it.date), title), true
	case "apa":
		initial := ""
		if c.first != "" {
			initial = c.first[:1] + "."
		}
		return fmt.Sprintf("%s, %s (%s). <i>%s</i>.", html.EscapeString(c.last), initial, html.EscapeString(it.date), title), true
	}
	return "", false
}
