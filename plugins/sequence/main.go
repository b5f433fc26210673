// Command sequence is Strata's Bayesian chronology plugin (issue 33,
// "Bayesian chronology from the matrix"): per table, saved models that
// turn the table's Harris matrix, an optional phase grouping (the
// chronology plugin's periods or a field) and the radiocarbon dates of its
// records into a Bayesian chronological model (package model), run it as
// a job, keep its result, export it for OxCal and ChronoModel and set
// OxCal's own results beside it.
//
// It is built with pluginsdk alone: the matrix comes from
// Host.Stratigraphy, the dates from Host.FeatureRows (feature
// "radiocarbon"), a grouping field from Host.QueryRecords, always as the
// caller, so a model is built from what the caller may see. The curves are
// the radiocarbon plugin's (plugins/radiocarbon/calib), loaded as that
// plugin loads them (STRATA_CURVES_DIR, else <STRATA_DATA_DIR>/curves,
// over the built-in ones).
//
// Storage: sys_sequence_models (a model's definition), sys_sequence_runs
// (each run's result, the last few per model) and sys_sequence_oxcal (the
// comparison with an imported OxCal results file). Routes: routes.go; the
// building of a model from the matrix: build.go.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/strata-archaeo/strata/plugins/radiocarbon/calib"
	"github.com/strata-archaeo/strata/pluginsdk"
)

func main() { pluginsdk.Serve(newPlugin(os.Getenv)) }

// plugin holds the Host and the curves (loaded once, then only read).
type plugin struct {
	getenv func(string) string

	mu   sync.RWMutex
	host pluginsdk.Host

	once    sync.Once
	curves  calib.Curves
	loadErr error
}

func newPlugin(getenv func(string) string) *plugin { return &plugin{getenv: getenv} }

// The system tables.
const (
	tableModels = "models"
	tableRuns   = "runs"
	tableOxCal  = "oxcal"
)

func col(name string, db pluginsdk.DBType) pluginsdk.Column {
	typ := pluginsdk.FieldType("text")
	if db == "text" {
		typ = "long_text"
	}
	return pluginsdk.Column{Name: name, Label: name, Type: typ, DBType: db}
}

func (p *plugin) Manifest() pluginsdk.Manifest {
	route := func(method, path, access string, h http.HandlerFunc) pluginsdk.Route {
		return pluginsdk.Route{Method: method, Path: path, Access: access, Handler: h}
	}
	const base = "/sequence/:tb/models"
	return pluginsdk.Manifest{
		Name:    "sequence",
		Version: "1.0.0",
		Description: "Bayesian chronology from the Harris matrix: radiocarbon dates, matrix order and phases " +
			"modelled by MCMC (OxCal-style agreement indices), exported to OxCal and ChronoModel",
		SystemTables: []pluginsdk.SystemTable{
			{Name: tableModels, Columns: []pluginsdk.Column{col("tb", "text"), col("name", "text"), col("definition", "text"),
				col("last_run", "text"), col("created_at", "text"), col("updated_at", "text")},
				Indexes: [][]string{{"tb"}}},
			{Name: tableRuns, Columns: []pluginsdk.Column{col("model_id", "int"), col("seed", "int"), col("finished_at", "text"),
				col("result", "text"), col("dates", "text"), col("a_model", "float"), col("a_overall", "float"),
				col("converged", "int")},
				Indexes: [][]string{{"model_id"}}},
			{Name: tableOxCal, Columns: []pluginsdk.Column{col("model_id", "int"), col("comparison", "text"), col("dates", "text"), col("imported_at", "text")},
				Indexes: [][]string{{"model_id"}}},
		},
		Routes: []pluginsdk.Route{
			route("GET", base, pluginsdk.AccessRead, p.listModels),
			route("POST", base, pluginsdk.AccessEdit, p.createModel),
			route("GET", base+"/:id", pluginsdk.AccessRead, p.getModel),
			route("PUT", base+"/:id", pluginsdk.AccessEdit, p.updateModel),
			route("DELETE", base+"/:id", pluginsdk.AccessEdit, p.deleteModel),
			{Method: "GET", Path: base + "/:id/preview", Access: pluginsdk.AccessRead, Handler: http.HandlerFunc(p.preview), Timeout: time.Minute},
			{Method: "POST", Path: base + "/:id/run", Access: pluginsdk.AccessEdit, Handler: http.HandlerFunc(p.run),
				Timeout: 10 * time.Minute, Job: true},
			{Method: "GET", Path: base + "/:id/result", Access: pluginsdk.AccessRead, Handler: http.HandlerFunc(p.result), Timeout: time.Minute},
			{Method: "GET", Path: base + "/:id/export/oxcal", Access: pluginsdk.AccessRead, Handler: http.HandlerFunc(p.exportOxCal), Timeout: time.Minute},
			{Method: "GET", Path: base + "/:id/export/chronomodel", Access: pluginsdk.AccessRead, Handler: http.HandlerFunc(p.exportChronoModel), Timeout: time.Minute},
			{Method: "POST", Path: base + "/:id/oxcal", Access: pluginsdk.AccessEdit, Handler: http.HandlerFunc(p.importOxCal),
				Timeout: time.Minute, BodyLimit: maxOxCalBytes},
			route("GET", base+"/:id/oxcal", pluginsdk.AccessRead, p.getOxCal),
		},
	}
}

// Configure keeps the Host; the curves are loaded on first use.
func (p *plugin) Configure(_ context.Context, host pluginsdk.Host, _ json.RawMessage) error {
	p.mu.Lock()
	p.host = host
	p.mu.Unlock()
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

// curvesOf loads the curves once, as the radiocarbon plugin does (a broken
// directory still leaves the built-in curves).
func (p *plugin) curvesOf() (calib.Curves, error) {
	p.once.Do(func() {
		dir, err := calib.ResolveDir(p.getenv("STRATA_CURVES_DIR"), p.getenv("STRATA_DATA_DIR"))
		p.curves, p.loadErr = calib.Load(dir)
		if err != nil {
			p.loadErr = errors.Join(err, p.loadErr)
		}
		if p.loadErr != nil {
			fmt.Fprintf(os.Stderr, "sequence: calibration curves: %v\n", p.loadErr)
		}
	})
	if len(p.curves) == 0 {
		return nil, fmt.Errorf("no calibration curve loaded: %v", p.loadErr)
	}
	return p.curves, nil
}
