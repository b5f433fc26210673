// Package zotero is a client of the Zotero Web API v3, the part a
// reference manager needs: full-text search of a library, items by key in
// batches of at most 50 (the API's own cap), an item's citation in a CSL
// style (format=bib), the library version, and the API's rate limits
// (Backoff, Retry-After, 429) honoured across every client of the process.
// It imports only the standard library.
package zotero

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultURL is the Zotero Web API.
const DefaultURL = "https://api.zotero.org"

// DefaultStyle is the CSL style used when a library names none.
const DefaultStyle = "chicago-author-date"

// MaxBatch is the most item keys one request may carry (itemKey=).
const MaxBatch = 50

// maxBody bounds what is read of one answer (a page of 100 items with
// their data is far below it).
const maxBody = 8 << 20

var (
	// ErrNotFound: the library or item does not exist (404), or the
	// library is private and no key was given (403).
	ErrNotFound = errors.New("zotero: not found")
	// ErrForbidden: the API key does not give access (403 with a key).
	ErrForbidden = errors.New("zotero: access denied")
)

// RateLimitError is a request not made, or refused, because Zotero asked
// to wait: a 429 or 503 with Retry-After, or an earlier Backoff that has
// not yet run out and is longer than the caller can wait.
type RateLimitError struct{ RetryAfter time.Duration }

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("zotero: rate limited, retry after %s", e.RetryAfter.Round(time.Second))
}

// Throttle holds the time before which no request may be sent, shared by
// every client of the process: Zotero's limits are per key and address,
// not per library.
type Throttle struct {
	mu        sync.Mutex
	notBefore time.Time
	// MaxWait is the longest a request waits for a Backoff to run out
	// before giving up with a RateLimitError (default 5 s).
	MaxWait time.Duration
	now     func() time.Time
}

func (t *Throttle) clock() time.Time {
	if t.now != nil {
		return t.now()
	}
	return time.Now()
}

// hold keeps requests back for d from now (never shortening a longer hold).
func (t *Throttle) hold(d time.Duration) {
	if d <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if until := t.clock().Add(d); until.After(t.notBefore) {
		t.notBefore = until
	}
}

// wait sleeps until requests may go, or fails when that is beyond
// MaxWait or the context's deadline.
func (t *Throttle) wait(ctx context.Context) error {
	t.mu.Lock()
	d := t.notBefore.Sub(t.clock())
	max := t.MaxWait
	t.mu.Unlock()
	if max <= 0 {
		max = 5 * time.Second
	}
	if d <= 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); d > max || (ok && time.Until(dl) < d) {
		return &RateLimitError{RetryAfter: d}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Library names a Zotero library: "user" or "group", its numeric id, and
// the API key when the library is private (empty: public access).
type Library struct {
	Type   string
	ID     string
	APIKey string
}

// Client talks to one Zotero API base URL.
type Client struct {
	Base     string // e.g. DefaultURL, no trailing slash
	HTTP     *http.Client
	Throttle *Throttle // nil: no shared throttle (each call stands alone)
}

// Item is a Zotero item as the API gives it (format=json), with the parts
// a citation cache needs.
type Item struct {
	Key     string   `json:"key"`
	Version int64    `json:"version"`
	Data    ItemData `json:"data"`
}

// ItemData is the item's own fields (the ones used here).
type ItemData struct {
	Title    string    `json:"title"`
	Date     string    `json:"date"`
	ItemType string    `json:"itemType"`
	Creators []Creator `json:"creators"`
}

// Creator is an author, editor … either split (lastName, firstName) or as
// one name (institutions).
type Creator struct {
	CreatorType string `json:"creatorType"`
	FirstName   string `json:"firstName"`
	LastName    string `json:"lastName"`
	Name        string `json:"name"`
}

var (
	libIDPattern = regexp.MustCompile(`^[0-9]{1,20}$`)
	// Item keys are 8 characters of Zotero's alphabet; accept any short
	// run of letters and digits so a future key shape still works.
	keyPattern   = regexp.MustCompile(`^[A-Za-z0-9]{1,32}$`)
	stylePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
)

// ValidLibrary reports whether type and id can name a Zotero library.
func ValidLibrary(typ, id string) bool {
	return (typ == "user" || typ == "group") && libIDPattern.MatchString(id)
}

// ValidKey reports whether key can be an item key.
func ValidKey(key string) bool { return keyPattern.MatchString(key) }

// ValidStyle reports whether s can be a CSL style id (e.g. apa,
// chicago-author-date, modern-language-association).
func ValidStyle(s string) bool { return stylePattern.MatchString(s) }

func (c *Client) prefix(lib Library) string {
	return c.Base + "/" + lib.Type + "s/" + url.PathEscape(lib.ID)
}

// get sends one GET and returns the body of a 2xx answer.
func (c *Client) get(ctx context.Context, lib Library, u string) ([]byte, error) {
	if c.Throttle != nil {
		if err := c.Throttle.wait(ctx); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Zotero-API-Version", "3")
	if lib.APIKey != "" {
		req.Header.Set("Zotero-API-Key", lib.APIKey)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("zotero: %w", err)
	}
	defer resp.Body.Close()
	// Backoff comes on any answer: later requests wait that long.
	if c.Throttle != nil {
		c.Throttle.hold(seconds(resp.Header.Get("Backoff")))
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != ""):
		d := seconds(resp.Header.Get("Retry-After"))
		if d <= 0 {
			d = 5 * time.Second
		}
		if c.Throttle != nil {
			c.Throttle.hold(d)
		}
		return nil, &RateLimitError{RetryAfter: d}
	case resp.StatusCode == http.StatusNotFound:
		return nil, ErrNotFound
	case resp.StatusCode == http.StatusForbidden && lib.APIKey == "":
		return nil, ErrNotFound
	case resp.StatusCode == http.StatusForbidden:
		return nil, ErrForbidden
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, fmt.Errorf("zotero: HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("zotero: %w", err)
	}
	return body, nil
}

// seconds reads a header of whole seconds (0 when absent or not a number;
// Zotero sends seconds, never an HTTP date).
func seconds(v string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// Search runs a quick search (title, creator, year) of the library and
// returns at most limit items (1–100).
func (c *Client) Search(ctx context.Context, lib Library, q string, limit int) ([]Item, error) {
	limit = min(max(limit, 1), 100)
	v := url.Values{"q": {q}, "limit": {strconv.Itoa(limit)}, "format": {"json"}}
	body, err := c.get(ctx, lib, c.prefix(lib)+"/items?"+v.Encode())
	if err != nil {
		return nil, err
	}
	var items []Item
	if err := json.Unmarshal(body, &items); err != nil {
		return nil, fmt.Errorf("zotero: search answer is not a list of items: %w", err)
	}
	return items, nil
}

// Items returns the items of keys that exist, by key, fetching at most
// MaxBatch keys a request. A key absent from the answer does not exist
// (any more) in the library.
func (c *Client) Items(ctx context.Context, lib Library, keys []string) (map[string]Item, error) {
	out := make(map[string]Item, len(keys))
	for start := 0; start < len(keys); start += MaxBatch {
		batch := keys[start:min(start+MaxBatch, len(keys))]
		got, err := c.Batch(ctx, lib, batch)
		if err != nil {
			return out, err
		}
		for k, it := range got {
			out[k] = it
		}
	}
	return out, nil
}

// Batch fetches one request's worth of keys (at most MaxBatch).
func (c *Client) Batch(ctx context.Context, lib Library, keys []string) (map[string]Item, error) {
	if len(keys) > MaxBatch {
		return nil, fmt.Errorf("zotero: %d keys in one request, at most %d", len(keys), MaxBatch)
	}
	out := make(map[string]Item, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	v := url.Values{"itemKey": {strings.Join(keys, ",")}, "format": {"json"}, "limit": {strconv.Itoa(MaxBatch)}}
	body, err := c.get(ctx, lib, c.prefix(lib)+"/items?"+v.Encode())
	if errors.Is(err, ErrNotFound) {
		// Zotero answers 404 for a single missing key on some paths:
		// no item of the batch exists.
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	var items []Item
	if err := json.Unmarshal(body, &items); err != nil {
		return nil, fmt.Errorf("zotero: items answer is not a list of items: %w", err)
	}
	for _, it := range items {
		if it.Key != "" {
			out[it.Key] = it
		}
	}
	return out, nil
}

// Citation returns the item's bibliography entry in style as the HTML
// Zotero renders (format=bib: a csl-bib-body div).
func (c *Client) Citation(ctx context.Context, lib Library, key, style string) (string, error) {
	if style == "" {
		style = DefaultStyle
	}
	v := url.Values{"format": {"bib"}, "style": {style}}
	body, err := c.get(ctx, lib, c.prefix(lib)+"/items/"+url.PathEscape(key)+"?"+v.Encode())
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(body)), nil
}

var yearPattern = regexp.MustCompile(`\b(\d{4})\b`)

// AuthorYear is a best-effort short citation: the first creator's last
// name (or single name) and the first four-digit year of the date, as
// much of that as the item has, else its title.
func AuthorYear(it Item) string {
	year := ""
	if m := yearPattern.FindStringSubmatch(it.Data.Date); m != nil {
		year = m[1]
	}
	name := ""
	for _, c := range it.Data.Creators {
		if name = strings.TrimSpace(c.LastName); name == "" {
			name = strings.TrimSpace(c.Name)
		}
		if name != "" {
			break
		}
	}
	switch {
	case name != "" && year != "":
		return name + " " + year
	case name != "":
		return name
	case year != "":
		return year
	case it.Data.Title != "":
		return it.Data.Title
	}
	return "Unknown"
}

// PublicURL is the item's page on zotero.org for a group library (whose
// items may be public); "" for a user library, whose items are not.
func PublicURL(lib Library, key string) string {
	if lib.Type != "group" {
		return ""
	}
	return "https://www.zotero.org/groups/" + url.PathEscape(lib.ID) + "/items/" + url.PathEscape(key)
}
