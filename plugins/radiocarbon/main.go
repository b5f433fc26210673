// Command radiocarbon is Strata's radiocarbon dating plugin (issue 5,
// SPEC.md §2.8). Activated on a table it creates the child table
// <tb>_radiocarbon, several dates per record: lab_code, bp, bp_error,
// material, d13c, curve (intcal20 when empty), notes, and the calibrated
// ranges cal_1s_from/to and cal_2s_from/to (cal BP, from ≤ to), which the
// plugin computes on every save (save.go) — values a client sends for them
// are ignored. GET /radiocarbon/calibrate calibrates one age for plotting
// (route.go).
//
// Calibration curves: IntCal20, SHCal20 and Marine20 ship inside the binary
// (calib.Builtin). Once, when the plugin is configured, the .14c files of
// the directory calib.ResolveDir picks (STRATA_CURVES_DIR, else
// <STRATA_DATA_DIR>/curves when it holds any) are laid over them: a file
// named like a built-in curve replaces it, any other adds a curve. A broken
// file or a wrong STRATA_CURVES_DIR is logged as a warning; a curve whose
// file is broken answers a field error rather than silently using the
// built-in one. The method lives in plugins/radiocarbon/calib.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/strata-archaeo/strata/plugins/radiocarbon/calib"
	"github.com/strata-archaeo/strata/pluginsdk"
)

func main() { pluginsdk.Serve(newPlugin(os.Getenv)) }

const (
	feature  = "radiocarbon"
	suffix   = "radiocarbon"
	colLab   = "lab_code"
	colBP    = "bp"
	colErr   = "bp_error"
	colMat   = "material"
	colD13C  = "d13c"
	colCurve = "curve"
	colNotes = "notes"
	cal1From = "cal_1s_from"
	cal1To   = "cal_1s_to"
	cal2From = "cal_2s_from"
	cal2To   = "cal_2s_to"
)

// computed are the columns only the plugin writes.
var computed = []string{cal1From, cal1To, cal2From, cal2To}

// logger writes JSON lines to stderr as it is before pluginsdk.Serve hands
// stdio to go-plugin: the server reads them and logs them at their level.
var logger = hclog.New(&hclog.LoggerOptions{Name: "radiocarbon", Output: os.Stderr, JSONFormat: true})

// plugin holds the Host and the curves. The curves are loaded once and
// only read afterwards, so calibrations run concurrently without a lock.
type plugin struct {
	getenv func(string) string // os.Getenv; tests pass their own

	mu   sync.RWMutex
	host pluginsdk.Host

	once    sync.Once
	curves  calib.Curves // the built-in curves and those of dir
	dir     string       // the directory laid over the built-in curves; "" for none
	loadErr error        // what could not be read (logged); nil when all is well
}

func newPlugin(getenv func(string) string) *plugin { return &plugin{getenv: getenv} }

// The help of the calibrated columns, in English and Italian.
const (
	calibratedHelp   = "cal BP (years before AD 1950), computed on save"
	calibratedHelpIt = "cal BP (anni prima del 1950 d.C.), calcolato al salvataggio"
)

// messages are the strings the radiocarbon section shows beside its
// labels: units and the names of the ranges.
var messages = map[string]pluginsdk.Labels{
	"unit.bp":     {"en": "BP", "it": "BP"},
	"unit.cal_bp": {"en": "cal BP", "it": "cal BP"},
	"era.bce":     {"en": "BCE", "it": "a.C."},
	"era.ce":      {"en": "CE", "it": "d.C."},
	"range.1s":    {"en": "1σ (68.3%)", "it": "1σ (68,3%)"},
	"range.2s":    {"en": "2σ (95.4%)", "it": "2σ (95,4%)"},
	"curve":       {"en": "Calibration curve", "it": "Curva di calibrazione"},
}

func (p *plugin) Manifest() pluginsdk.Manifest {
	number := func(name, label string, dbType pluginsdk.DBType, help string) pluginsdk.Column {
		return pluginsdk.Column{Name: name, Label: label, Type: "text", DBType: dbType, Help: help}
	}
	calibrated := func(name, label string) pluginsdk.Column {
		return pluginsdk.Column{Name: name, Label: label, Type: "text", DBType: "int", Readonly: true,
			Help: calibratedHelp}
	}
	return pluginsdk.Manifest{
		Name:        "radiocarbon",
		Version:     "1.0.0",
		Description: "Radiocarbon dates per record, calibrated on save against IntCal20, SHCal20 or Marine20 (1σ and 2σ ranges in cal BP)",
		Messages:    messages,
		Features: []pluginsdk.Feature{{
			Name:   feature,
			Label:  "Radiocarbon dates",
			Labels: pluginsdk.Labels{"it": "Datazioni al radiocarbonio"},
			ColumnLabels: map[string]pluginsdk.Labels{
				colLab: {"it": "Codice di laboratorio"}, colBP: {"it": "Età (BP)"}, colErr: {"it": "Errore (±)"},
				colMat: {"it": "Materiale"}, colD13C: {"it": "δ13C (‰)"}, colCurve: {"it": "Curva"},
				cal1From: {"it": "1σ da (cal BP)"}, cal1To: {"it": "1σ a (cal BP)"},
				cal2From: {"it": "2σ da (cal BP)"}, cal2To: {"it": "2σ a (cal BP)"}, colNotes: {"it": "Note"},
			},
			ColumnHelp: map[string]pluginsdk.Labels{
				colLab:   {"it": "il codice del campione del laboratorio, es. OxA-12345"},
				colBP:    {"it": "età radiocarbonica convenzionale, anni BP"},
				colErr:   {"it": "errore di laboratorio a 1σ, in anni; maggiore di 0"},
				colCurve: {"it": "intcal20 (predefinita), shcal20 o marine20"},
				cal1From: {"it": calibratedHelpIt}, cal1To: {"it": calibratedHelpIt},
				cal2From: {"it": calibratedHelpIt}, cal2To: {"it": calibratedHelpIt},
			},
			Child: &pluginsdk.ChildTable{Suffix: suffix, Label: "Radiocarbon dates", Labels: pluginsdk.Labels{"it": "Datazioni al radiocarbonio"}, Columns: []pluginsdk.Column{
				{Name: colLab, Label: "Lab code", Type: "text", DBType: "text", Help: "the laboratory's sample code, e.g. OxA-12345"},
				number(colBP, "Age (BP)", "int", "conventional radiocarbon age, years BP"),
				number(colErr, "Error (±)", "int", "1σ laboratory error, years; greater than 0"),
				{Name: colMat, Label: "Material", Type: "text", DBType: "text"},
				number(colD13C, "δ13C (‰)", "float", ""),
				{Name: colCurve, Label: "Curve", Type: "text", DBType: "text", Help: "intcal20 (default), shcal20 or marine20"},
				calibrated(cal1From, "1σ from (cal BP)"),
				calibrated(cal1To, "1σ to (cal BP)"),
				calibrated(cal2From, "2σ from (cal BP)"),
				calibrated(cal2To, "2σ to (cal BP)"),
				{Name: colNotes, Label: "Notes", Type: "long_text", DBType: "text"},
			}},
			Computed:   computed,
			BeforeSave: true,
			// Without the plugin the calibrated ranges would go stale:
			// saves of radiocarbon rows wait for it.
			Required: true,
		}},
		Routes: []pluginsdk.Route{
			{Method: "GET", Path: "/radiocarbon/calibrate", Access: pluginsdk.AccessRead, Handler: http.HandlerFunc(p.calibrateRoute)},
			{Method: "GET", Path: "/radiocarbon/curves", Access: pluginsdk.AccessRead, Handler: http.HandlerFunc(p.curvesRoute)},
		},
	}
}

// Configure keeps the Host and, the first time, loads the curves and says
// through the server's log where from (or why there are none).
func (p *plugin) Configure(ctx context.Context, host pluginsdk.Host, _ json.RawMessage) error {
	p.mu.Lock()
	p.host = host
	p.mu.Unlock()
	first := false
	p.once.Do(func() { p.load(); first = true })
	if first {
		p.logCurves(ctx, host)
	}
	return nil
}

// load reads the curves. A wrong directory or a broken file is not fatal:
// the built-in curves are served, and a curve whose file is broken answers
// field errors.
func (p *plugin) load() {
	dir, err := calib.ResolveDir(p.getenv("STRATA_CURVES_DIR"), p.getenv("STRATA_DATA_DIR"))
	p.dir = dir
	p.curves, p.loadErr = calib.Load(dir)
	if err != nil {
		p.loadErr = errors.Join(err, p.loadErr)
	}
}

func (p *plugin) logCurves(ctx context.Context, host pluginsdk.Host) {
	level, msg := pluginsdk.LogInfo, "calibration curves loaded"
	var fromDir []string
	for _, n := range p.curves.Names() {
		if p.curves[n].Source != calib.BuiltinSource {
			fromDir = append(fromDir, n)
		}
	}
	fields := map[string]string{"dir": p.dir, "curves": strings.Join(p.curves.Names(), ","), "from_dir": strings.Join(fromDir, ",")}
	if p.loadErr != nil {
		level, msg = pluginsdk.LogWarn, "calibration curves: "+p.loadErr.Error()
	}
	if err := host.Log(ctx, level, msg, fields); err != nil {
		// The server also reads stderr: say it there, at the same level.
		args := []any{"dir", p.dir, "curves", fields["curves"], "host_log_error", err.Error()}
		if level == pluginsdk.LogInfo {
			logger.Info(msg, args...)
		} else {
			logger.Warn(msg, args...)
		}
	}
}

// calibrate calibrates with the loaded curves. Errors wrap the calib
// errors, so calib.FieldOf names the column at fault; a curve that is not
// loaded says why.
func (p *plugin) calibrate(curve string, bp, bpError float64) (*calib.Result, error) {
	p.once.Do(p.load) // Configure normally did it
	if len(p.curves) == 0 {
		return nil, fmt.Errorf("%w: %v", calib.ErrCurveNotLoaded, p.loadErr)
	}
	r, err := p.curves.Calibrate(curve, bp, bpError)
	if errors.Is(err, calib.ErrCurveNotLoaded) && p.loadErr != nil {
		err = fmt.Errorf("%w (%v)", err, p.loadErr)
	}
	return r, err
}

// curveNames are the curves a row may name: the built-in ones (default
// first; one whose override file is broken still counts, and answers
// curve_not_loaded) and those a curves directory added, sorted.
func (p *plugin) curveNames() []string {
	p.once.Do(p.load)
	names := slices.Clone(calib.CurveNames)
	for _, n := range p.curves.Names() {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// citation is what to cite with a result of the named curve.
func (p *plugin) citation(curve string) string {
	if c := p.curves[curve]; c != nil {
		return c.Citation
	}
	return ""
}

// ruleOf is the field error rule of a calibration error.
func ruleOf(err error) string {
	switch {
	case errors.Is(err, calib.ErrOutOfRange):
		return "out_of_range"
	case errors.Is(err, calib.ErrInvalidError):
		return "range"
	case errors.Is(err, calib.ErrUnknownCurve):
		return "unknown_curve"
	case errors.Is(err, calib.ErrCurveNotLoaded):
		return "curve_not_loaded"
	}
	return "calibration"
}

func (p *plugin) hostOf() (pluginsdk.Host, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.host == nil {
		return nil, pluginsdk.ErrNoHost
	}
	return p.host, nil
}
