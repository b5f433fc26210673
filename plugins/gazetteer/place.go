package main

// Places on records (SPEC §4.6, issue 18): the gazetteer feature adds a
// column holding a place's URI, checked and made canonical when a record
// is saved, and POST /gazetteer/geodata offers a place's point to the
// geodata of a record.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/plugins/gazetteer/pleiades"
	"github.com/strata-archaeo/strata/pluginsdk"
)

const (
	// featureName is activated per table: POST /config/table/{tb}/gazetteer.
	featureName = "gazetteer"
	// colPlace holds the place's URI, a link_out field.
	colPlace = "gazetteer_place"
	// hookLookup bounds the provider lookup of a save, well inside the
	// server's hook deadline (2 s): a slow provider must not fail saves.
	hookLookup = 1200 * time.Millisecond
)

func placeFeature() pluginsdk.Feature {
	return pluginsdk.Feature{
		Name: featureName, Label: "Gazetteer place", Labels: pluginsdk.Labels{"it": "Luogo del gazetteer"},
		ColumnLabels: map[string]pluginsdk.Labels{colPlace: {"it": "Luogo (gazetteer)"}},
		ColumnHelp: map[string]pluginsdk.Labels{colPlace: {
			"it": "un luogo di Pleiades: il suo id (423025) o URI (https://pleiades.stoa.org/places/423025)"}},
		Columns: []pluginsdk.Column{{Name: colPlace, Label: "Place (gazetteer)", Type: "link_out", DBType: "text",
			Help: "a Pleiades place: its id (423025) or URI (https://pleiades.stoa.org/places/423025)"}},
		// Required: while the plugin is down a save of this column is
		// refused rather than storing what was typed unchecked.
		BeforeSave: true, Required: true, SchemaFlag: "has_gazetteer",
	}
}

// lookup is a place from the cache when fresh, else from the provider,
// else (the provider failing) from the cache however old: the place, and
// whether it came from the cache and is past its TTL.
func (p *plugin) lookup(ctx context.Context, id string) (pl *pleiades.Place, cached, stale bool, err error) {
	client, ttl, _ := p.current()
	key := client.Base + " place " + id
	if v, fresh, ok := p.cache.get(key, ttl); ok && fresh {
		return v.(*pleiades.Place), true, false, nil
	}
	pl, err = client.Place(ctx, id)
	switch {
	case err == nil:
		p.cache.put(key, pl)
		return pl, false, false, nil
	case errors.Is(err, pleiades.ErrNotFound):
		return nil, false, false, err
	}
	fmt.Fprintf(os.Stderr, "gazetteer: place %s: %v\n", id, err)
	if v, _, ok := p.cache.get(key, ttl); ok {
		return v.(*pleiades.Place), true, true, nil
	}
	return nil, false, false, err
}

// parseRef reads a place reference, accepting URIs of the configured
// provider's host too (a mirror, the fake of the tests).
func (p *plugin) parseRef(s string) (string, bool) {
	client, _, _ := p.current()
	host := ""
	if u, err := url.Parse(client.Base); err == nil {
		host = u.Hostname()
	}
	return pleiades.ParseRef(s, host)
}

// BeforeSave makes the place column canonical: a bare id or any spelling
// of the URI becomes the place's URI. A place the provider says does not
// exist is refused; when the provider cannot be asked in time (and the
// place is not cached) the reference is kept, as its canonical URI: field
// work is not held up by a gazetteer being down.
func (p *plugin) BeforeSave(ctx context.Context, call pluginsdk.SaveCall) ([]pluginsdk.RowResult, error) {
	out := make([]pluginsdk.RowResult, len(call.Rows))
	// One budget for the whole save, however many rows it has.
	lctx, cancel := context.WithTimeout(ctx, hookLookup)
	defer cancel()
	for i, row := range call.Rows {
		vals := row.Values
		out[i].Values = vals
		raw, sent := vals[colPlace]
		if !sent || raw == nil {
			continue
		}
		var s string
		switch x := raw.(type) {
		case string:
			s = strings.TrimSpace(x)
		case json.Number: // an id sent as a number
			s = x.String()
		default:
			out[i].Errors = append(out[i].Errors, badPlace("a place is its id or URI, as text"))
			continue
		}
		if s == "" {
			vals[colPlace] = nil
			continue
		}
		id, ok := p.parseRef(s)
		if !ok {
			out[i].Errors = append(out[i].Errors, badPlace("not a Pleiades place: give its id (423025) or URI (https://pleiades.stoa.org/places/423025)"))
			continue
		}
		pl, _, _, err := p.lookup(lctx, id)
		switch {
		case err == nil:
			vals[colPlace] = pl.URI
		case errors.Is(err, pleiades.ErrNotFound):
			out[i].Errors = append(out[i].Errors, pluginsdk.FieldError{Field: colPlace, Rule: "not_found",
				Message: "no place " + id + " in the gazetteer"})
		default:
			vals[colPlace] = pleiades.PlaceURI(id)
		}
	}
	return out, nil
}

func badPlace(msg string) pluginsdk.FieldError {
	return pluginsdk.FieldError{Field: colPlace, Rule: "format", Message: msg}
}

// geodataBody is POST /gazetteer/geodata's: the record, and the place
// when it is not the one stored on the record.
type geodataBody struct {
	Tb    string `json:"tb"`
	ID    any    `json:"id"`
	Place any    `json:"place"`
}

// POST /gazetteer/geodata {tb, id, place?} — {code: ok_insert_geodata,
// geo_id, place}: the place's representative point added to the geodata
// of record id of tb, as the caller (who must be able to edit it, on a
// table that keeps geodata). Without place, the record's gazetteer_place.
func (p *plugin) geodataRoute(w http.ResponseWriter, r *http.Request) {
	actor := pluginsdk.ActorFrom(r)
	var b geodataBody
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(&b); err != nil {
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_json", "the body is a JSON object {tb, id, place}")
		return
	}
	tb := strings.TrimSpace(b.Tb)
	id, ok := recordID(b.ID)
	if tb == "" || !ok {
		pluginsdk.WriteError(w, http.StatusBadRequest, "parameter_missing", "tb and id (a record id) are required")
		return
	}
	ref := ""
	if b.Place != nil {
		ref = strings.TrimSpace(fmt.Sprint(b.Place))
	}
	if ref == "" {
		stored, done := p.storedPlace(w, r, actor, tb, id)
		if done {
			return
		}
		ref = stored
	}
	placeID, ok := p.parseRef(ref)
	if !ok {
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_place_id", "not a Pleiades place: give its id (423025) or URI")
		return
	}
	pl, _, _, err := p.lookup(r.Context(), placeID)
	switch {
	case errors.Is(err, pleiades.ErrNotFound):
		pluginsdk.WriteError(w, http.StatusNotFound, "place_not_found", "no place "+placeID+" in the gazetteer")
		return
	case err != nil:
		providerDown(w)
		return
	case pl.Point == nil:
		pluginsdk.WriteError(w, http.StatusUnprocessableEntity, "place_without_point", "the gazetteer gives no point for place "+placeID)
		return
	}
	fid, err := p.hostOf().AddGeodata(r.Context(), pluginsdk.GeodataInput{App: actor.App, Table: tb, RecordID: id, Geometry: pl.Point, Actor: &actor})
	if err != nil {
		hostFailed(w, err)
		return
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{"status": "success", "code": "ok_insert_geodata", "geo_id": fid,
		"place": map[string]any{"id": pl.ID, "title": pl.Title, "uri": pl.URI, "point": pl.Point}})
}

// storedPlace reads the place stored on the record, as the caller sees
// it; done when it has answered the request (an error, or no place).
func (p *plugin) storedPlace(w http.ResponseWriter, r *http.Request, actor pluginsdk.Actor, tb string, id int64) (string, bool) {
	cat, err := p.hostOf().Catalog(r.Context(), actor.App)
	if err != nil {
		hostFailed(w, err)
		return "", true
	}
	active := false
	for _, t := range cat.Tables {
		if t.Name == tb {
			active = t.Features[featureName]
		}
	}
	if !active {
		pluginsdk.WriteError(w, http.StatusBadRequest, "place_missing",
			"the gazetteer feature is not active on "+tb+": send the place ({tb, id, place})")
		return "", true
	}
	rows, _, err := p.hostOf().QueryRecords(r.Context(), pluginsdk.QueryRecordsInput{App: actor.App, Table: tb,
		Filter: map[string]any{"id": map[string]any{"_eq": id}}, Columns: []string{"id", colPlace}, Limit: 1, Actor: &actor})
	if err != nil {
		hostFailed(w, err)
		return "", true
	}
	if len(rows) == 0 {
		pluginsdk.WriteError(w, http.StatusNotFound, "record_not_found", fmt.Sprintf("no record %d in %s", id, tb))
		return "", true
	}
	s, _ := rows[0][colPlace].(string)
	if strings.TrimSpace(s) == "" {
		pluginsdk.WriteError(w, http.StatusBadRequest, "place_missing", "the record has no gazetteer place: send the place ({tb, id, place})")
		return "", true
	}
	return s, false
}

// recordID reads a record id liberally: 12 or "12".
func recordID(v any) (int64, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
	default:
		return 0, false
	}
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil || n <= 0 || fmt.Sprint(n) != s {
		return 0, false
	}
	return n, true
}

// hostFailed answers a failed Host call with the server's own code
// (geodata_not_enabled, record_not_found, …), logging the unexpected.
func hostFailed(w http.ResponseWriter, err error) {
	if unexpected := pluginsdk.WriteHostError(w, err); unexpected != nil {
		fmt.Fprintf(os.Stderr, "gazetteer: host: %v\n", unexpected)
	}
}

// sectionPlace is the record section that shows a record's place.
const sectionPlace = "gazetteer_place"

// sectionLookup bounds the provider lookups of one section call, inside
// the server's deadline for sections (5 s).
const sectionLookup = 2 * time.Second

// EnrichRecords fills the gazetteer_place section of full records: the
// place stored on each record, {uri, id, title, point, stale}, title and
// point from the cache or the provider when it answers in time (else
// null), so that a client can offer the point to the record's geodata
// (POST /gazetteer/geodata). A record without a place gets null.
func (p *plugin) EnrichRecords(ctx context.Context, call pluginsdk.EnrichCall) (map[int64]any, error) {
	ids := make([]any, len(call.IDs))
	for i, id := range call.IDs {
		ids[i] = id
	}
	rows, _, err := p.hostOf().QueryRecords(ctx, pluginsdk.QueryRecordsInput{App: call.Actor.App, Table: call.Table,
		Filter: map[string]any{"id": map[string]any{"_in": ids}}, Columns: []string{"id", colPlace}, Limit: len(ids), Actor: &call.Actor})
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, sectionLookup)
	defer cancel()
	out := make(map[int64]any, len(rows))
	for _, r := range rows {
		id, ok := recordID(r["id"])
		if !ok {
			continue
		}
		uri, _ := r[colPlace].(string)
		if strings.TrimSpace(uri) == "" {
			out[id] = nil
			continue
		}
		sec := map[string]any{"uri": uri, "id": nil, "title": nil, "point": nil, "stale": false}
		if pid, ok := p.parseRef(uri); ok {
			sec["id"] = pid
			if pl, _, stale, err := p.lookup(lctx, pid); err == nil {
				sec["title"], sec["point"], sec["stale"] = pl.Title, pl.Point, stale
			}
		}
		out[id] = sec
	}
	return out, nil
}

// hostOf is the Host that Configure gave.
func (p *plugin) hostOf() pluginsdk.Host {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.host
}
