package doitest

import (
	"encoding/json"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// DataCite is a fake DataCite REST API (the /dois endpoints).
type DataCite struct {
	// URL is the base URL to give doi.NewDataCite.
	URL string

	prefix, user, pass string
	faults             faults
	mu                 sync.Mutex
	dois               map[string]*DOI // by lower-case DOI
}

// DOI is one record held by the fake DataCite.
type DOI struct {
	DOI string
	// State is "draft", "registered" or "findable".
	State string
	// Attributes as last written (without event).
	Attributes map[string]any
	// Publishes counts successful "publish" events (at most 1).
	Publishes int
	// Writes counts the PUT/POST requests that changed this record.
	Writes int
}

// NewDataCite starts a fake DataCite API that accepts repository user with
// password pass and lets it mint under prefix.
func NewDataCite(t testing.TB, prefix, user, pass string) *DataCite {
	s := &DataCite{prefix: prefix, user: user, pass: pass, dois: map[string]*DOI{}}
	srv := httptest.NewServer(http.HandlerFunc(s.route))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// FailNext arms a fault for the next request of step: "create" (a PUT or
// POST that creates a DOI), "update" (a PUT to an existing DOI without
// event), "publish" (a PUT or POST with event "publish"), "get".
func (s *DataCite) FailNext(step string, mode Mode) { s.faults.arm(step, mode) }

// Pending reports how many armed faults have not fired.
func (s *DataCite) Pending() int { return s.faults.pending() }

// DOIs returns copies of every DOI held, sorted by DOI.
func (s *DataCite) DOIs() []DOI {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []DOI
	for _, d := range s.dois {
		c := *d
		c.Attributes = maps.Clone(d.Attributes)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b DOI) int { return strings.Compare(a.DOI, b.DOI) })
	return out
}

func jsonAPIError(w http.ResponseWriter, status int, titles ...string) {
	var errs []any
	for _, t := range titles {
		errs = append(errs, map[string]any{"status": http.StatusText(status), "title": t})
	}
	w.Header().Set("Content-Type", "application/vnd.api+json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"errors": errs})
}

func (s *DataCite) authed(r *http.Request) (present, ok bool) {
	u, p, has := r.BasicAuth()
	if !has {
		return r.Header.Get("Authorization") != "", false
	}
	return true, u == s.user && p == s.pass
}

func (s *DataCite) route(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/dois")
	if !ok {
		jsonAPIError(w, http.StatusNotFound, "The resource you are looking for doesn't exist.")
		return
	}
	id := strings.TrimPrefix(rest, "/")
	present, authOK := s.authed(r)
	if present && !authOK {
		jsonAPIError(w, http.StatusUnauthorized, "Bad credentials.")
		return
	}
	switch {
	case r.Method == http.MethodGet && id != "":
		s.faults.serve("get", w, r, func(w http.ResponseWriter, r *http.Request) { s.get(w, id, authOK) })
	case (r.Method == http.MethodPut && id != "") || (r.Method == http.MethodPost && id == ""):
		if !authOK {
			jsonAPIError(w, http.StatusUnauthorized, "Bad credentials.")
			return
		}
		s.write(w, r, id)
	default:
		w.Header().Set("Allow", "GET, POST, PUT")
		jsonAPIError(w, http.StatusMethodNotAllowed, "Method not allowed")
	}
}

func (s *DataCite) get(w http.ResponseWriter, id string, authed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dois[strings.ToLower(id)]
	if d == nil || (!authed && d.State != "findable") {
		jsonAPIError(w, http.StatusNotFound, "The resource you are looking for doesn't exist.")
		return
	}
	s.answer(w, http.StatusOK, d)
}

func (s *DataCite) answer(w http.ResponseWriter, status int, d *DOI) {
	attrs := maps.Clone(d.Attributes)
	attrs["doi"] = d.DOI
	attrs["state"] = d.State
	attrs["prefix"], attrs["suffix"], _ = strings.Cut(d.DOI, "/")
	w.Header().Set("Content-Type", "application/vnd.api+json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{
		"id": d.DOI, "type": "dois", "attributes": attrs,
		"relationships": map[string]any{"client": map[string]any{"data": map[string]any{"id": strings.ToLower(s.user), "type": "clients"}}},
	}})
}

// knownAttributes are the DOI attributes DataCite accepts; others are
// refused so a misspelt property shows up in tests.
var knownAttributes = map[string]bool{
	"doi": true, "prefix": true, "suffix": true, "url": true, "types": true, "creators": true, "titles": true,
	"publisher": true, "publicationYear": true, "subjects": true, "contributors": true, "dates": true,
	"language": true, "identifiers": true, "alternateIdentifiers": true, "relatedIdentifiers": true,
	"relatedItems": true, "sizes": true, "formats": true, "version": true, "rightsList": true,
	"descriptions": true, "geoLocations": true, "fundingReferences": true, "schemaVersion": true,
	"event": true, "xml": true,
}

func (s *DataCite) write(w http.ResponseWriter, r *http.Request, id string) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/vnd.api+json" && mt != "application/json" {
		jsonAPIError(w, http.StatusUnsupportedMediaType, "The content type is not recognized.")
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		jsonAPIError(w, http.StatusBadRequest, "cannot read body")
		return
	}
	var doc struct {
		Data *struct {
			Type       string         `json:"type"`
			Attributes map[string]any `json:"attributes"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.Data == nil {
		jsonAPIError(w, http.StatusBadRequest, "You need to provide a payload following the JSONAPI spec")
		return
	}
	if doc.Data.Type != "dois" {
		jsonAPIError(w, http.StatusUnprocessableEntity, "type must be dois")
		return
	}
	attrs := doc.Data.Attributes
	for k := range attrs {
		if !knownAttributes[k] {
			jsonAPIError(w, http.StatusUnprocessableEntity, "Unpermitted attribute "+k)
			return
		}
	}
	if id == "" {
		id, _ = attrs["doi"].(string)
	}
	if a, _ := attrs["doi"].(string); a != "" && !strings.EqualFold(a, id) {
		jsonAPIError(w, http.StatusUnprocessableEntity, "doi attribute does not match the path")
		return
	}
	pre, suf, _ := strings.Cut(id, "/")
	if suf == "" {
		jsonAPIError(w, http.StatusUnprocessableEntity, "Doi is invalid")
		return
	}
	if pre != s.prefix {
		jsonAPIError(w, http.StatusForbidden, "You are not authorized to access this resource.")
		return
	}
	event, _ := attrs["event"].(string)
	s.mu.Lock()
	exists := s.dois[strings.ToLower(id)] != nil
	s.mu.Unlock()
	step := "update"
	switch {
	case event == "publish":
		step = "publish"
	case !exists:
		step = "create"
	}
	if r.Method == http.MethodPost && exists {
		jsonAPIError(w, http.StatusUnprocessableEntity, "This DOI has already been taken")
		return
	}
	s.faults.serve(step, w, r, func(w http.ResponseWriter, r *http.Request) { s.commit(w, id, attrs, event) })
}

func (s *DataCite) commit(w http.ResponseWriter, id string, attrs map[string]any, event string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dois[strings.ToLower(id)]
	created := d == nil
	if created {
		d = &DOI{DOI: strings.ToLower(id), State: "draft", Attributes: map[string]any{}}
	}
	next := maps.Clone(d.Attributes)
	for k, v := range attrs {
		if k != "event" && k != "doi" {
			next[k] = v
		}
	}
	if msgs := checkAttributes(next); len(msgs) > 0 {
		jsonAPIError(w, http.StatusUnprocessableEntity, msgs...)
		return
	}
	state := d.State
	switch event {
	case "":
	case "publish":
		if d.State == "findable" {
			jsonAPIError(w, http.StatusUnprocessableEntity, "DOI is already findable")
			return
		}
		if msgs := required(next); len(msgs) > 0 {
			jsonAPIError(w, http.StatusUnprocessableEntity, msgs...)
			return
		}
		state = "findable"
	case "register", "hide":
		if msgs := required(next); len(msgs) > 0 {
			jsonAPIError(w, http.StatusUnprocessableEntity, msgs...)
			return
		}
		state = "registered"
	default:
		jsonAPIError(w, http.StatusUnprocessableEntity, "Unknown event "+event)
		return
	}
	if event == "publish" {
		d.Publishes++
	}
	d.Attributes, d.State = next, state
	d.Writes++
	s.dois[d.DOI] = d
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	s.answer(w, status, d)
}

// checkAttributes checks the shape of list attributes.
func checkAttributes(a map[string]any) []string {
	var msgs []string
	shape := map[string][]string{
		"creators":           {"name"},
		"titles":             {"title"},
		"relatedIdentifiers": {"relatedIdentifier", "relatedIdentifierType", "relationType"},
		"descriptions":       {"description", "descriptionType"},
		"dates":              {"date", "dateType"},
	}
	for key, need := range shape {
		v, ok := a[key]
		if !ok {
			continue
		}
		list, ok := v.([]any)
		if !ok {
			msgs = append(msgs, key+" must be an array")
			continue
		}
		for _, it := range list {
			o, ok := it.(map[string]any)
			if !ok {
				msgs = append(msgs, key+" entries must be objects")
				break
			}
			for _, n := range need {
				if s, _ := o[n].(string); s == "" {
					msgs = append(msgs, key+": "+n+" is required")
				}
			}
		}
	}
	if t, ok := a["types"]; ok {
		if o, _ := t.(map[string]any); o == nil {
			msgs = append(msgs, "types must be an object")
		}
	}
	slices.Sort(msgs)
	return msgs
}

// required lists what DataCite needs before a DOI can be registered.
func required(a map[string]any) []string {
	var msgs []string
	if u, _ := a["url"].(string); !strings.HasPrefix(u, "http") {
		msgs = append(msgs, "url: can't be blank")
	}
	for _, k := range []string{"creators", "titles"} {
		if l, _ := a[k].([]any); len(l) == 0 {
			msgs = append(msgs, k+": can't be blank")
		}
	}
	if p, _ := a["publisher"].(string); p == "" {
		if o, _ := a["publisher"].(map[string]any); o == nil || o["name"] == "" {
			msgs = append(msgs, "publisher: can't be blank")
		}
	}
	switch y := a["publicationYear"].(type) {
	case float64:
		if y < 1000 || y > 9999 {
			msgs = append(msgs, "publicationYear: is invalid")
		}
	case string:
		if len(y) != 4 {
			msgs = append(msgs, "publicationYear: is invalid")
		}
	default:
		msgs = append(msgs, "publicationYear: can't be blank")
	}
	if t, _ := a["types"].(map[string]any); t == nil || t["resourceTypeGeneral"] == "" || t["resourceTypeGeneral"] == nil {
		msgs = append(msgs, "types: resourceTypeGeneral can't be blank")
	}
	return msgs
}
