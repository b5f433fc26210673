// Command dendro is a Strata plugin for dendrochronology, written as an
// outside institution would: its own module, importing only pluginsdk.
// Activated on a table ("samples") it adds the ring columns first_ring,
// last_ring, sapwood and bark_edge, checks them on every save, and computes
// the felling range felling_from–felling_to from the row as it will be
// stored (Row.Record: partial updates are completed by the server, under
// the save's own version check, so the computed range always matches the
// stored rings). It serves the filter operator _felled_between (by field or
// by the plugin's name: filter[dendro][_felled_between]=[1480,1500]), a
// summary route and a recomputation job for a changed sapwood model.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/strata-archaeo/strata/pluginsdk"
)

func main() { pluginsdk.Serve(&dendro{model: DefaultModel}) }

// dendro keeps the Host and the sapwood model set at Configure; every
// call may run concurrently, so both sit behind a mutex.
type dendro struct {
	mu    sync.RWMutex
	host  pluginsdk.Host
	model Model
}

const (
	colFirst    = "first_ring"
	colLast     = "last_ring"
	colSapwood  = "sapwood"
	colBark     = "bark_edge"
	colFrom     = "felling_from"
	colTo       = "felling_to"
	featureName = "dendro"
)

func (d *dendro) Manifest() pluginsdk.Manifest {
	return pluginsdk.Manifest{
		Name:        "dendro",
		Version:     "1.0.0",
		Description: "Dendrochronology: ring dates checked, felling dates computed from the sapwood model",
		Features: []pluginsdk.Feature{{
			Name:   featureName,
			Label:  "Tree-ring dating",
			Labels: pluginsdk.Labels{"it": "Datazione dendrocronologica"},
			ColumnLabels: map[string]pluginsdk.Labels{
				colFirst: {"it": "Primo anello (anno)"}, colLast: {"it": "Ultimo anello (anno)"},
				colSapwood: {"it": "Anelli di alburno"}, colBark: {"it": "Corteccia presente"},
				colFrom: {"it": "Abbattuto dal"}, colTo: {"it": "Abbattuto entro il"},
			},
			ColumnHelp: map[string]pluginsdk.Labels{
				colSapwood: {"it": "vuoto quando il limite durame/alburno non è visibile"},
				colTo:      {"it": "vuoto: abbattuto dopo 'Abbattuto dal' (alburno non visibile)"},
			},
			Columns: []pluginsdk.Column{
				pluginsdk.IntField(colFirst, "First ring (year)"),
				pluginsdk.IntField(colLast, "Last ring (year)"),
				pluginsdk.IntField(colSapwood, "Sapwood rings").
					WithHelp("empty when the heartwood/sapwood boundary is not seen"),
				pluginsdk.BoolField(colBark, "Bark edge"),
				// Computed: clients cannot write them, BeforeSave does.
				pluginsdk.IntField(colFrom, "Felled from").AsReadonly(),
				pluginsdk.IntField(colTo, "Felled by").AsReadonly().
					WithHelp("empty: felled after 'Felled from' (no sapwood seen)"),
			},
			Computed:   []string{colFrom, colTo},
			BeforeSave: true,
			SchemaFlag: "has_dendro",
		}},
		Operators: []pluginsdk.Operator{{Name: "_felled_between", Fields: []string{colFrom}, Feature: featureName}},
		Routes: []pluginsdk.Route{
			{Method: "GET", Path: "/dendro/summary/:tb", Access: pluginsdk.AccessRead,
				Handler: http.HandlerFunc(d.summary)},
			{Method: "POST", Path: "/dendro/recompute/:tb", Access: pluginsdk.AccessAdmin, Job: true,
				Handler: http.HandlerFunc(d.recompute)},
		},
		SettingsSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"sapwood_min":{"type":"integer","minimum":0},"sapwood_max":{"type":"integer","minimum":0}}}`),
	}
}

// Configure keeps the Host and reads the sapwood model.
func (d *dendro) Configure(_ context.Context, host pluginsdk.Host, settings json.RawMessage) error {
	m := DefaultModel
	if len(settings) > 0 && string(settings) != "null" {
		if err := json.Unmarshal(settings, &m); err != nil {
			return fmt.Errorf("dendro settings: %w", err)
		}
		if m.Min > m.Max {
			return fmt.Errorf("dendro settings: sapwood_min %d is above sapwood_max %d", m.Min, m.Max)
		}
	}
	d.mu.Lock()
	d.host, d.model = host, m
	d.mu.Unlock()
	return nil
}

func (d *dendro) state() (pluginsdk.Host, Model) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.host, d.model
}

// sampleOf reads a row's ring values; ok is false (with problems) when a
// value has the wrong type.
func sampleOf(row map[string]any) (Sample, []Problem) {
	var s Sample
	var bad []Problem
	for col, dst := range map[string]**int64{colFirst: &s.FirstRing, colLast: &s.LastRing, colSapwood: &s.Sapwood} {
		v := row[col]
		if v == nil {
			continue
		}
		n, ok := pluginsdk.Int(v)
		if !ok {
			bad = append(bad, Problem{col, "type", fmt.Sprintf("%s is a whole number of years or rings", col)})
			continue
		}
		*dst = &n
	}
	switch v := row[colBark].(type) {
	case nil:
	case bool:
		s.BarkEdge = v
	default:
		bad = append(bad, Problem{colBark, "type", "bark_edge is true or false"})
	}
	sort.Slice(bad, func(i, j int) bool { return bad[i].Field < bad[j].Field })
	return s, bad
}

// BeforeSave checks each row as it will be stored and computes its felling
// range. Record is the stored row overlaid with what this save sends: the
// hook never reads the stored row back itself.
func (d *dendro) BeforeSave(_ context.Context, call pluginsdk.SaveCall) ([]pluginsdk.RowResult, error) {
	_, model := d.state()
	out := make([]pluginsdk.RowResult, len(call.Rows))
	for i, row := range call.Rows {
		merged := row.Record
		if merged == nil { // a server older than the locked row: only what was sent
			merged = row.Values
		}
		values := row.Values
		if values == nil {
			values = map[string]any{}
		}
		if row.ID == 0 {
			if _, sent := merged[colBark]; !sent || merged[colBark] == nil {
				values[colBark] = false // a default: no bark edge unless said
			}
		}
		s, problems := sampleOf(merged)
		if len(problems) == 0 {
			problems = s.Check()
		}
		for _, p := range problems {
			out[i].Errors = append(out[i].Errors, pluginsdk.FieldError{Field: p.Field, Rule: p.Rule, Message: p.Message})
		}
		if len(out[i].Errors) > 0 {
			continue
		}
		f := s.Felling(model)
		values[colFrom], values[colTo] = yearOrNil(f.From), yearOrNil(f.To)
		out[i].Values = values
	}
	return out, nil
}

// parseYears reads an operand of two years: a JSON array [1480, 1500], or
// the same as text ("[1480,1500]" or "1480,1500"), as a query-string
// filter (filter[dendro][_felled_between]=1480,1500) sends it.
func parseYears(raw json.RawMessage) ([2]int64, bool) {
	var years []int64
	if json.Unmarshal(raw, &years) == nil {
		if len(years) != 2 {
			return [2]int64{}, false
		}
		return [2]int64{years[0], years[1]}, true
	}
	var text string
	if json.Unmarshal(raw, &text) != nil {
		return [2]int64{}, false
	}
	text = strings.TrimSpace(text)
	if strings.HasPrefix(text, "[") {
		if json.Unmarshal([]byte(text), &years) != nil || len(years) != 2 {
			return [2]int64{}, false
		}
		return [2]int64{years[0], years[1]}, true
	}
	from, to, found := strings.Cut(text, ",")
	a, errA := strconv.ParseInt(strings.TrimSpace(from), 10, 64)
	b, errB := strconv.ParseInt(strings.TrimSpace(to), 10, 64)
	return [2]int64{a, b}, found && errA == nil && errB == nil
}

func yearOrNil(y *int64) any {
	if y == nil {
		return nil
	}
	return *y
}

// ResolveFilter turns {"felling_from": {"_felled_between": [1480, 1500]}}
// (or the same under "dendro") into the overlap of each sample's felling
// range with those years; an open range ("after 1490") overlaps every
// later year.
func (d *dendro) ResolveFilter(_ context.Context, call pluginsdk.FilterCall) (pluginsdk.FilterResult, error) {
	years, ok := parseYears(call.Value)
	if !ok {
		return pluginsdk.FilterResult{}, pluginsdk.Errorf("invalid_filter", "%s takes two years, e.g. [1480, 1500]", call.Operator)
	}
	a, b := years[0], years[1]
	if a > b {
		return pluginsdk.FilterResult{}, pluginsdk.Errorf("invalid_filter", "%s: %d is after %d", call.Operator, a, b)
	}
	return pluginsdk.FilterResult{Filter: map[string]any{"_and": []any{
		map[string]any{colFrom: map[string]any{"_lte": b}},
		map[string]any{"_or": []any{
			map[string]any{colTo: map[string]any{"_gte": a}},
			map[string]any{colTo: map[string]any{"_null": true}},
		}},
	}}}, nil
}
