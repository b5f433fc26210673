// Package pleiades reads the Pleiades gazetteer of ancient places
// (https://pleiades.stoa.org) and turns its answers into the gazetteer
// plugin's normalised places. It imports only the standard library.
//
// Two documents of Pleiades are read:
//   - a place, GET {base}/places/{id}/json: a GeoJSON-like object with
//     id, title, description, uri, reprPoint [lon, lat], bbox
//     [minx, miny, maxx, maxy], placeTypes, and locations and names whose
//     attestations name time periods (timePeriod, timePeriodURI) and whose
//     start/end are years;
//   - a search, GET {base}/search_rss?SearchableText={q}&portal_type=Place:
//     an RSS 1.0 feed whose items link to places.
package pleiades

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// DefaultURL is the public Pleiades site.
const DefaultURL = "https://pleiades.stoa.org"

// maxBody caps what is read of one answer (the largest places are a few
// hundred KiB).
const maxBody = 8 << 20

// Errors: the place does not exist, or the provider failed (down, an
// unexpected status, an answer that is not its format).
var (
	ErrNotFound = errors.New("pleiades: no such place")
	ErrProvider = errors.New("pleiades: provider unavailable")
)

// Point is a GeoJSON point, [lon, lat] in EPSG:4326.
type Point struct {
	Type        string     `json:"type"`
	Coordinates [2]float64 `json:"coordinates"`
}

// Period is a time period a place is attested in.
type Period struct {
	Key string `json:"key"`
	URI string `json:"uri,omitempty"`
}

// Years is the span of a place's dated locations (signed years, negative
// BCE); either bound may be missing.
type Years struct {
	From *int `json:"from"`
	To   *int `json:"to"`
}

// Place is the normalised answer.
type Place struct {
	Provider    string    `json:"provider"`
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	URI         string    `json:"uri"`
	Point       *Point    `json:"point"`
	BBox        []float64 `json:"bbox"`
	TimePeriods []Period  `json:"time_periods"`
	Years       *Years    `json:"years"`
	PlaceTypes  []string  `json:"place_types"`
}

// Client reads one Pleiades site.
type Client struct {
	Base string // e.g. DefaultURL, without a trailing slash
	HTTP *http.Client
}

var idPattern = regexp.MustCompile(`^[0-9]{1,12}$`)

// ValidID reports whether id is a Pleiades place id (digits).
func ValidID(id string) bool { return idPattern.MatchString(id) }

// Place fetches and normalises one place.
func (c *Client) Place(ctx context.Context, id string) (*Place, error) {
	if !ValidID(id) {
		return nil, ErrNotFound
	}
	body, err := c.get(ctx, "/places/"+id+"/json")
	if err != nil {
		return nil, err
	}
	p, err := ParsePlace(body)
	if err != nil {
		return nil, fmt.Errorf("%w: place %s: %v", ErrProvider, id, err)
	}
	if p.ID == "" {
		p.ID = id
	}
	if p.URI == "" {
		p.URI = c.Base + "/places/" + id
	}
	return p, nil
}

// Hit is one search result before its place is read.
type Hit struct {
	ID, Title, Description, URI string
}

// Search runs a full-text search for places.
func (c *Client) Search(ctx context.Context, q string) ([]Hit, error) {
	v := url.Values{"SearchableText": {q}, "portal_type": {"Place"}}
	body, err := c.get(ctx, "/search_rss?"+v.Encode())
	if err != nil {
		return nil, err
	}
	hits, err := ParseSearch(body)
	if err != nil {
		return nil, fmt.Errorf("%w: search: %v", ErrProvider, err)
	}
	return hits, nil
}

func (c *Client) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Base+path, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProvider, err)
	}
	req.Header.Set("User-Agent", "Strata gazetteer plugin")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProvider, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, ErrNotFound
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%w: %s answered %s", ErrProvider, path, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProvider, err)
	}
	return b, nil
}

// placeDoc is the part of Pleiades' place JSON the plugin reads.
type placeDoc struct {
	ID          json.RawMessage `json:"id"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	URI         string          `json:"uri"`
	ReprPoint   []float64       `json:"reprPoint"`
	BBox        []float64       `json:"bbox"`
	PlaceTypes  []string        `json:"placeTypes"`
	Locations   []attested      `json:"locations"`
	Names       []attested      `json:"names"`
}

type attested struct {
	Start        *float64 `json:"start"`
	End          *float64 `json:"end"`
	Attestations []struct {
		TimePeriod    string `json:"timePeriod"`
		TimePeriodURI string `json:"timePeriodURI"`
	} `json:"attestations"`
}

// ParsePlace normalises a place document.
func ParsePlace(b []byte) (*Place, error) {
	var d placeDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, err
	}
	p := &Place{Provider: "pleiades", ID: rawID(d.ID), Title: d.Title, Description: d.Description, URI: d.URI,
		TimePeriods: []Period{}, PlaceTypes: d.PlaceTypes}
	if p.PlaceTypes == nil {
		p.PlaceTypes = []string{}
	}
	if len(d.ReprPoint) >= 2 && lonLat(d.ReprPoint[0], d.ReprPoint[1]) {
		p.Point = &Point{Type: "Point", Coordinates: [2]float64{d.ReprPoint[0], d.ReprPoint[1]}}
	}
	if len(d.BBox) == 4 && lonLat(d.BBox[0], d.BBox[1]) && lonLat(d.BBox[2], d.BBox[3]) {
		p.BBox = d.BBox
	}
	seen := map[string]bool{}
	var from, to *int
	for _, group := range [][]attested{d.Locations, d.Names} {
		for _, a := range group {
			for _, at := range a.Attestations {
				if at.TimePeriod != "" && !seen[at.TimePeriod] {
					seen[at.TimePeriod] = true
					p.TimePeriods = append(p.TimePeriods, Period{Key: at.TimePeriod, URI: at.TimePeriodURI})
				}
			}
			if a.Start != nil && (from == nil || int(*a.Start) < *from) {
				v := int(*a.Start)
				from = &v
			}
			if a.End != nil && (to == nil || int(*a.End) > *to) {
				v := int(*a.End)
				to = &v
			}
		}
	}
	sort.Slice(p.TimePeriods, func(i, j int) bool { return p.TimePeriods[i].Key < p.TimePeriods[j].Key })
	if from != nil || to != nil {
		p.Years = &Years{From: from, To: to}
	}
	return p, nil
}

func lonLat(lon, lat float64) bool { return lon >= -180 && lon <= 180 && lat >= -90 && lat <= 90 }

// rawID reads an id Pleiades writes as a string or a number.
func rawID(r json.RawMessage) string {
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(r, &n) == nil {
		return n.String()
	}
	return ""
}

// rssDoc is an RSS 1.0 feed (rdf:RDF with item siblings of the channel).
type rssDoc struct {
	Items []struct {
		About       string `xml:"about,attr"`
		Title       string `xml:"title"`
		Link        string `xml:"link"`
		Description string `xml:"description"`
	} `xml:"item"`
}

var placeInURI = regexp.MustCompile(`/places/([0-9]{1,12})/?$`)

// ParseSearch reads the search feed; items that are not places are left
// out.
func ParseSearch(b []byte) ([]Hit, error) {
	var d rssDoc
	if err := xml.Unmarshal(b, &d); err != nil {
		return nil, err
	}
	out := []Hit{}
	for _, it := range d.Items {
		uri := strings.TrimSpace(it.Link)
		if uri == "" {
			uri = strings.TrimSpace(it.About)
		}
		m := placeInURI.FindStringSubmatch(uri)
		if m == nil {
			continue
		}
		out = append(out, Hit{ID: m[1], Title: strings.TrimSpace(it.Title), Description: strings.TrimSpace(it.Description), URI: strings.TrimSuffix(uri, "/")})
	}
	return out, nil
}

// PlaceURI is the canonical URI of place id, as Pleiades itself gives it.
func PlaceURI(id string) string { return DefaultURL + "/places/" + id }

// ParseRef reads a reference to a place as people write it: the bare id
// ("423025"), its URI ("https://pleiades.stoa.org/places/423025", with or
// without the scheme, "www.", a trailing slash or a document such as
// "/json"), or "pleiades:423025". A URI must name pleiades.stoa.org or one
// of hosts (a mirror the instance reads instead). It returns the id.
func ParseRef(s string, hosts ...string) (id string, ok bool) {
	s = strings.TrimSpace(s)
	if ValidID(s) {
		return s, true
	}
	if rest, found := cutPrefixFold(s, "pleiades:"); found && ValidID(strings.TrimSpace(rest)) {
		return strings.TrimSpace(rest), true
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return "", false
	}
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	known := host == "pleiades.stoa.org"
	for _, h := range hosts {
		if h != "" && strings.EqualFold(host, h) {
			known = true
		}
	}
	if !known {
		return "", false
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] != "places" || !ValidID(parts[1]) {
		return "", false
	}
	return parts[1], true
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
