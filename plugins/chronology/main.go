// Command chronology is Strata's fuzzy-dating plugin (issue 5, SPEC.md
// §2.8 and §4.6, CONTRACT.md §8). Activated on a table (as "chronology" or
// its alias "fuzzy-date") it adds chrono_from, chrono_to (signed years,
// negative BCE, no year 0), chrono_label, chrono_certainty (1 certain,
// 2 probable, 3 uncertain) and chrono_period. It
//
//   - checks and completes saves (save.go): a label sent alone fills
//     from/to, certainty words become levels, from ≤ to;
//   - serves GET /chrono/parse and GET /chrono/timeline (routes.go) and
//     GET /chrono/related/:tb/:id (related.go);
//   - resolves the filter operator _chrono_overlap (filter.go).
//
// The domain rules live in plugins/chronology/chrono; this package wires
// them to the server through pluginsdk.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/strata-archaeo/strata/pluginsdk"
)

func main() { pluginsdk.Serve(newPlugin()) }

// logger writes JSON lines to stderr as it is before pluginsdk.Serve hands
// stdio to go-plugin: the server reads them and logs them at their level.
var logger = hclog.New(&hclog.LoggerOptions{Name: "chronology", Output: os.Stderr, JSONFormat: true})

func logf(format string, a ...any) { logger.Warn(fmt.Sprintf(format, a...)) }

// Feature and column names (SPEC.md §2.8).
const (
	pluginName   = "chronology"
	feature      = "chronology"
	colFrom      = "chrono_from"
	colTo        = "chrono_to"
	colLabel     = "chrono_label"
	colCertainty = "chrono_certainty"
	colPeriod    = "chrono_period"
	opOverlap    = "_chrono_overlap"
)

// plugin keeps only the Host, set by Configure; every call may run
// concurrently, so it sits behind a lock.
type plugin struct {
	mu   sync.RWMutex
	host pluginsdk.Host
}

func newPlugin() *plugin { return &plugin{} }

func (p *plugin) Manifest() pluginsdk.Manifest {
	year := func(name, label, help string) pluginsdk.Column {
		return pluginsdk.Column{Name: name, Label: label, Type: "text", DBType: "int", Help: help}
	}
	return pluginsdk.Manifest{
		Name:        pluginName,
		Version:     "1.0.0",
		Description: "Fuzzy dating: year bounds from labels such as c4l BCE or c1 CE/c2 CE, a timeline, related-record density and an overlap filter",
		Features: []pluginsdk.Feature{{
			Name:    feature,
			Aliases: []string{"fuzzy-date"},
			Label:   "Chronology",
			Labels:  pluginsdk.Labels{"it": "Cronologia"},
			ColumnLabels: map[string]pluginsdk.Labels{
				colFrom: {"it": "Da (anno)"}, colTo: {"it": "A (anno)"}, colLabel: {"it": "Datazione"},
				colCertainty: {"it": "Affidabilità"}, colPeriod: {"it": "Periodo"},
			},
			ColumnHelp: map[string]pluginsdk.Labels{
				colFrom:      {"it": "anno con segno, negativo a.C., senza anno 0; vuoto per un ante quem"},
				colTo:        {"it": "anno con segno, negativo a.C., senza anno 0; vuoto per un post quem"},
				colLabel:     {"it": "es. c4l BCE, c1 CE/c2 CE, -250/100, ?/c3 CE (ante quem), c2 BCE/? (post quem); riempie Da e A quando non sono dati"},
				colCertainty: {"it": "1 certa, 2 probabile, 3 incerta"},
			},
			Columns: []pluginsdk.Column{
				year(colFrom, "From (year)", "signed year, negative BCE, no year 0; empty for an ante quem"),
				year(colTo, "To (year)", "signed year, negative BCE, no year 0; empty for a post quem"),
				{Name: colLabel, Label: "Dating", Type: "text", DBType: "text",
					Help: "e.g. c4l BCE, c1 CE/c2 CE, -250/100, ?/c3 CE (ante quem), c2 BCE/? (post quem); fills From and To when they are not given"},
				{Name: colCertainty, Label: "Certainty", Type: "text", DBType: "int", Help: "1 certain, 2 probable, 3 uncertain"},
				{Name: colPeriod, Label: "Period", Type: "text", DBType: "text"},
			},
			BeforeSave: true,
			// A label saved without the plugin would leave from/to empty
			// and the order of the bounds unchecked.
			Required:   true,
			SchemaFlag: "has_chronology",
		}},
		Routes: []pluginsdk.Route{
			{Method: "GET", Path: "/chrono/parse", Access: pluginsdk.AccessRead, Handler: http.HandlerFunc(parseRoute)},
			{Method: "GET", Path: "/chrono/timeline", Access: pluginsdk.AccessRead, Handler: http.HandlerFunc(p.timelineRoute)},
			{Method: "GET", Path: "/chrono/related/:tb/:id", Access: pluginsdk.AccessRead, Handler: http.HandlerFunc(p.relatedRoute),
				// A density path walks up to 8 tables, each possibly in
				// several pages: more than the default 30 s may be needed
				// on a large site.
				Timeout: 2 * time.Minute},
		},
		Operators: []pluginsdk.Operator{{Name: opOverlap, Fields: []string{colFrom}, Feature: feature}},
	}
}

// Configure keeps the Host; the plugin has no settings.
func (p *plugin) Configure(_ context.Context, host pluginsdk.Host, _ json.RawMessage) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.host = host
	return nil
}

// hostOf returns the Host, or ErrNoHost before Configure.
func (p *plugin) hostOf() (pluginsdk.Host, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.host == nil {
		return nil, pluginsdk.ErrNoHost
	}
	return p.host, nil
}
