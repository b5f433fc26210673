// Command osteology is Strata's osteology inventory plugin (issue 5, SPEC.md
// §2.8, CONTRACT.md §8). Activated on a table it adds osteo_data, a text
// column holding a JSON document of the individuals in a record and their
// skeletal elements:
//
//	{"individuals":[{"id","label","notes","bones":{"femur_right":{"present":true,"conservation":"complete"}}}]}
//
// Every save is validated and normalised (element ids and values in their
// canonical form); GET /osteology/schema serves the element catalogue and
// GET /osteology/summary/:tb/:id counts a record's elements per individual
// and region. The rules live in plugins/osteology/bones.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/strata-archaeo/strata/plugins/osteology/bones"
	"github.com/strata-archaeo/strata/pluginsdk"
)

func main() { pluginsdk.Serve(newPlugin()) }

const (
	feature = "osteology"
	column  = "osteo_data"
)

// logger writes JSON lines to stderr as it is before pluginsdk.Serve hands
// stdio to go-plugin: the server reads them and logs them at their level.
var logger = hclog.New(&hclog.LoggerOptions{Name: "osteology", Output: os.Stderr, JSONFormat: true})

// plugin keeps only the Host, set by Configure, behind a lock: calls run
// concurrently.
type plugin struct {
	mu   sync.RWMutex
	host pluginsdk.Host
}

func newPlugin() *plugin { return &plugin{} }

func (p *plugin) Manifest() pluginsdk.Manifest {
	return pluginsdk.Manifest{
		Name:        "osteology",
		Version:     "1.0.0",
		Description: "Osteology inventory: individuals and their skeletal elements (presence, conservation, certainty) as checked JSON, with a catalogue and per-region summaries",
		Features: []pluginsdk.Feature{{
			Name:         feature,
			Label:        "Osteology",
			Labels:       pluginsdk.Labels{"it": "Osteologia"},
			ColumnLabels: map[string]pluginsdk.Labels{column: {"it": "Inventario osteologico"}},
			ColumnHelp: map[string]pluginsdk.Labels{column: {
				"it": `JSON: {"individuals":[{"id","label","notes","bones":{"<elemento>":{"present":true,...}}}]}; GET /osteology/schema elenca gli elementi`}},
			Columns: []pluginsdk.Column{{Name: column, Label: "Osteology inventory", Type: "long_text", DBType: "text",
				Help: `JSON: {"individuals":[{"id","label","notes","bones":{"<element>":{"present":true,...}}}]}; GET /osteology/schema lists the elements`}},
			BeforeSave: true,
			// Unchecked JSON must never be stored: while the plugin is
			// down, saves of osteo_data are refused.
			Required:   true,
			SchemaFlag: "has_osteology",
		}},
		Routes: []pluginsdk.Route{
			{Method: "GET", Path: "/osteology/schema", Access: pluginsdk.AccessRead, Handler: http.HandlerFunc(schemaRoute)},
			{Method: "GET", Path: "/osteology/summary/:tb/:id", Access: pluginsdk.AccessRead, Handler: http.HandlerFunc(p.summaryRoute)},
		},
	}
}

// Configure keeps the Host; the plugin has no settings.
func (p *plugin) Configure(_ context.Context, host pluginsdk.Host, _ json.RawMessage) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.host = host
	return nil
}

func (p *plugin) hostOf() (pluginsdk.Host, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.host == nil {
		return nil, pluginsdk.ErrNoHost
	}
	return p.host, nil
}

// BeforeSave validates osteo_data and stores it normalised (an empty
// document as null). Each problem becomes a field error whose Path points
// into the document ("individuals[0].bones.femur_lft") and whose Rule is
// the bones error code (unknown_element, invalid_value, required, …).
// The document is JSON text; a client sending the object itself is
// accepted too.
func (p *plugin) BeforeSave(_ context.Context, call pluginsdk.SaveCall) ([]pluginsdk.RowResult, error) {
	out := make([]pluginsdk.RowResult, len(call.Rows))
	for i, row := range call.Rows {
		out[i].Values = row.Values
		raw, sent := row.Values[column]
		if !sent || raw == nil {
			continue
		}
		var doc []byte
		switch x := raw.(type) {
		case string:
			doc = []byte(x)
		case map[string]any:
			doc, _ = json.Marshal(x) // decoded JSON: always encodes
		default:
			out[i].Errors = []pluginsdk.FieldError{{Field: column, Rule: bones.CodeInvalidType,
				Message: `osteo_data is an object {"individuals":[...]} (or text holding one), not ` + describe(raw)}}
			continue
		}
		norm, errs := bones.Validate(doc)
		if len(errs) > 0 {
			for _, e := range errs {
				out[i].Errors = append(out[i].Errors, pluginsdk.FieldError{Field: column, Rule: e.Code, Message: e.Message, Path: e.Path})
			}
			continue
		}
		if norm == nil {
			row.Values[column] = nil
		} else {
			row.Values[column] = string(norm)
		}
	}
	return out, nil
}

// describe names what a client sent, in the API's words ("a list" for an
// array, as the server says).
func describe(v any) string {
	if _, ok := v.([]any); ok {
		return "a list"
	}
	return bones.Describe(v)
}

// schemaRoute serves GET /osteology/schema: regions, elements (id, base,
// region, side, labels en/it), conservation and certainty values.
func schemaRoute(w http.ResponseWriter, _ *http.Request) {
	pluginsdk.WriteJSON(w, http.StatusOK, struct {
		Status string `json:"status"`
		bones.Schema
	}{"success", bones.GetSchema()})
}

// summaryRoute serves GET /osteology/summary/:tb/:id: per individual and
// region, how many elements are recorded and present and the conservation
// of those present. The record is read as the caller sees it: one they may
// not see is not found.
func (p *plugin) summaryRoute(w http.ResponseWriter, r *http.Request) {
	tb := pluginsdk.Param(r, "tb")
	id, err := strconv.ParseInt(pluginsdk.Param(r, "id"), 10, 64)
	if err != nil || id <= 0 {
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_parameter", "the record id is a positive integer")
		return
	}
	host, err := p.hostOf()
	if err != nil {
		writeHostError(w, err)
		return
	}
	actor := pluginsdk.ActorFrom(r)
	cat, err := host.Catalog(r.Context(), actor.App)
	if err != nil {
		writeHostError(w, err)
		return
	}
	t, ok := cat.Table(tb)
	switch {
	case !ok:
		pluginsdk.WriteError(w, http.StatusNotFound, "table_not_found", fmt.Sprintf("no table %q", tb))
		return
	case !t.Features[feature]:
		pluginsdk.WriteError(w, http.StatusNotFound, "feature_not_active", fmt.Sprintf("osteology is not active on %q", tb))
		return
	}
	rows, _, err := host.QueryRecords(r.Context(), pluginsdk.QueryRecordsInput{
		App: actor.App, Table: tb, Filter: map[string]any{"id": map[string]any{"_eq": id}},
		Columns: []string{column}, Limit: 1, Actor: &actor,
	})
	if err != nil {
		writeHostError(w, err)
		return
	}
	if len(rows) == 0 {
		pluginsdk.WriteError(w, http.StatusNotFound, "record_not_found", fmt.Sprintf("no record %d in %s", id, tb))
		return
	}
	var doc []byte
	switch x := rows[0][column].(type) {
	case string:
		doc = []byte(x)
	case map[string]any:
		doc, _ = json.Marshal(x)
	}
	individuals, errs := bones.Summary(doc)
	if len(errs) > 0 {
		// Saved before validation existed, or written around the plugin.
		pluginsdk.WriteJSON(w, http.StatusConflict, map[string]any{"status": "error", "code": "invalid_osteo_data",
			"message": "the record's osteo_data is not a valid inventory; save it again to correct it", "errors": errs})
		return
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{
		"status": "success", "tb": tb, "id": id, "individuals": individuals, "regions": bones.Regions(),
	})
}

// writeHostError answers a failed Host call (pluginsdk.WriteHostError)
// and logs what was the server's fault.
func writeHostError(w http.ResponseWriter, err error) {
	if unexpected := pluginsdk.WriteHostError(w, err); unexpected != nil {
		logger.Warn("host call failed", "error", unexpected.Error())
	}
}
