package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/plugins/sequence/model"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// Bounds of what is stored.
const (
	// maxModels is the most models one table keeps.
	maxModels = 100
	// keepRuns is how many runs of a model are kept (the latest); older
	// ones are deleted when a run is stored.
	keepRuns = 3
	// maxResultBytes bounds a stored result (JSON): a run whose result is
	// larger is refused rather than stored.
	maxResultBytes = 16 << 20
	// maxOxCalBytes bounds an imported OxCal results file.
	maxOxCalBytes = 5 << 20
	// maxName bounds a model's name.
	maxName = 200
	// maxSeed keeps seeds exact in JSON numbers (2^53).
	maxSeed = 1 << 53
	// The iterations a model may ask for (sweeps per chain of the first
	// pass; model.Options.Iterations).
	minIterations, maxIterations, defaultIterations = 100, 1_000_000, 20000
)

// Phase groupings.
const (
	byNone       = "none"
	byChronology = "chronology"
	byField      = "field"
)

// phasesDef is how a model groups its dates into phases.
type phasesDef struct {
	By    string `json:"by"`
	Field string `json:"field,omitempty"`
}

// definition is a model as stored (the definition column) and answered.
type definition struct {
	Phases     phasesDef       `json:"phases"`
	Filter     map[string]any  `json:"filter,omitempty"`
	Boundaries string          `json:"boundaries"`
	Seed       uint64          `json:"seed"`
	Iterations int             `json:"iterations"`
	Range      *model.CalRange `json:"range,omitempty"`
}

// lastRun is the summary of a model's latest run, kept on the model's row
// so that listing models does not read results.
type lastRun struct {
	ID         int64   `json:"id"`
	FinishedAt string  `json:"finished_at"`
	AModel     float64 `json:"a_model"`
	AOverall   float64 `json:"a_overall"`
	Converged  bool    `json:"converged"`
	Seed       uint64  `json:"seed"`
}

// stored is one model row.
type stored struct {
	ID        int64
	Table     string
	Name      string
	Def       definition
	Last      *lastRun
	CreatedAt string
	UpdatedAt string
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) int64 {
	n, _ := pluginsdk.Int(v)
	return n
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }

func storedOf(r map[string]any) (stored, error) {
	s := stored{ID: num(r["id"]), Table: str(r["tb"]), Name: str(r["name"]), CreatedAt: str(r["created_at"]), UpdatedAt: str(r["updated_at"])}
	if err := json.Unmarshal([]byte(str(r["definition"])), &s.Def); err != nil {
		return s, fmt.Errorf("model %d: stored definition: %w", s.ID, err)
	}
	if lr := str(r["last_run"]); lr != "" {
		s.Last = &lastRun{}
		if err := json.Unmarshal([]byte(lr), s.Last); err != nil {
			return s, fmt.Errorf("model %d: stored last run: %w", s.ID, err)
		}
	}
	return s, nil
}

// wire is a model as answered.
func (s stored) wire() map[string]any {
	var last any
	if s.Last != nil {
		last = map[string]any{"id": s.Last.ID, "finished_at": s.Last.FinishedAt, "a_model": s.Last.AModel,
			"a_overall": s.Last.AOverall, "converged": s.Last.Converged}
	}
	var filter any
	if s.Def.Filter != nil {
		filter = s.Def.Filter
	}
	var rng any
	if s.Def.Range != nil {
		rng = s.Def.Range
	}
	return map[string]any{"id": s.ID, "tb": s.Table, "name": s.Name,
		"phases": map[string]any{"by": s.Def.Phases.By, "field": nullable(s.Def.Phases.Field)},
		"filter": filter, "boundaries": s.Def.Boundaries, "seed": s.Def.Seed, "iterations": s.Def.Iterations,
		"range": rng, "created_at": s.CreatedAt, "updated_at": s.UpdatedAt, "last_run": last}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// badModel is a client's mistake in a model's definition: its code and
// message.
type badModel struct{ code, msg string }

func (e *badModel) Error() string { return e.msg }

func invalidf(format string, args ...any) *badModel {
	return &badModel{code: "invalid_model", msg: fmt.Sprintf(format, args...)}
}

// modelKeys are the keys a model's body may have.
var modelKeys = []string{"name", "phases", "filter", "boundaries", "seed", "iterations", "range"}

// apply lays body over s (a new model: the zero stored with defaults set
// by the caller): every key sent replaces the stored value. It checks
// the values' form; whether a field exists is checked against the
// catalog by the caller.
func apply(s *stored, body map[string]any) *badModel {
	for k := range body {
		if !slices.Contains(modelKeys, k) {
			return invalidf("unknown key %q; a model has %s", k, strings.Join(modelKeys, ", "))
		}
	}
	if v, ok := body["name"]; ok {
		name, isText := v.(string)
		name = strings.TrimSpace(name)
		switch {
		case !isText || name == "":
			return invalidf("name is a non-empty text")
		case len(name) > maxName || strings.ContainsAny(name, "\r\n"):
			return invalidf("name is one line of at most %d bytes", maxName)
		}
		s.Name = name
	}
	if v, ok := body["phases"]; ok {
		ph, isObj := v.(map[string]any)
		if v == nil {
			ph, isObj = map[string]any{"by": byNone}, true
		}
		if !isObj {
			return invalidf(`phases is an object {"by": "none"|"chronology"|"field", "field"}`)
		}
		by, _ := ph["by"].(string)
		field, fieldText := ph["field"].(string)
		if ph["field"] == nil {
			field, fieldText = "", true
		}
		for k := range ph {
			if k != "by" && k != "field" {
				return invalidf("phases: unknown key %q", k)
			}
		}
		switch {
		case by != byNone && by != byChronology && by != byField:
			return invalidf(`phases.by is "none", "chronology" or "field"`)
		case !fieldText:
			return invalidf("phases.field is a field name")
		case by == byField && strings.TrimSpace(field) == "":
			return invalidf(`phases.field is required when phases.by is "field"`)
		case by != byField && field != "":
			return invalidf(`phases.field is only for phases.by "field"`)
		}
		s.Def.Phases = phasesDef{By: by, Field: strings.TrimSpace(field)}
	}
	if v, ok := body["filter"]; ok {
		switch f := v.(type) {
		case nil:
			s.Def.Filter = nil
		case map[string]any:
			if len(f) == 0 {
				s.Def.Filter = nil
			} else {
				s.Def.Filter = f
			}
		default:
			return invalidf("filter is a filter object or null")
		}
	}
	if v, ok := body["boundaries"]; ok {
		b, _ := v.(string)
		if v == nil {
			b = string(model.Contiguous)
		}
		if b != string(model.Contiguous) && b != string(model.Sequential) {
			return invalidf(`boundaries is "contiguous" or "sequential"`)
		}
		s.Def.Boundaries = b
	}
	if v, ok := body["seed"]; ok {
		n, isInt := pluginsdk.Int(v)
		if !isInt || n < 0 || n > maxSeed {
			return invalidf("seed is an integer from 0 to %d", int64(maxSeed))
		}
		s.Def.Seed = uint64(n)
	}
	if v, ok := body["iterations"]; ok {
		n, isInt := pluginsdk.Int(v)
		if !isInt || n < minIterations || n > maxIterations {
			return invalidf("iterations is an integer from %d to %d", minIterations, maxIterations)
		}
		s.Def.Iterations = int(n)
	}
	if v, ok := body["range"]; ok {
		if v == nil {
			s.Def.Range = nil
		} else {
			r, isObj := v.(map[string]any)
			young, ok1 := pluginsdk.Int(r["young"])
			old, ok2 := pluginsdk.Int(r["old"])
			if !isObj || !ok1 || !ok2 || young < 0 || young >= old || old-young >= model.MaxGridYears {
				return invalidf("range is {young, old} in cal BP, 0 ≤ young < old, at most %d years", model.MaxGridYears)
			}
			s.Def.Range = &model.CalRange{Young: int(young), Old: int(old)}
		}
	}
	if s.Name == "" {
		return invalidf("name is required")
	}
	return nil
}

// newStored is a model with the defaults: no phases, contiguous
// boundaries, a random seed, the default iterations.
func newStored(tb string) stored {
	return stored{Table: tb, Def: definition{Phases: phasesDef{By: byNone}, Boundaries: string(model.Contiguous),
		Seed: rand.Uint64N(maxSeed), Iterations: defaultIterations}}
}

// row is s as written (without its id, which the caller adds for an
// update).
func (s stored) row() (map[string]any, error) {
	def, err := json.Marshal(s.Def)
	if err != nil {
		return nil, err
	}
	r := map[string]any{"tb": s.Table, "name": s.Name, "definition": string(def), "created_at": s.CreatedAt, "updated_at": s.UpdatedAt}
	if s.Last != nil {
		lr, err := json.Marshal(s.Last)
		if err != nil {
			return nil, err
		}
		r["last_run"] = string(lr)
	}
	return r, nil
}

// readRows reads every row of a system table matching filter, a page at
// a time; at most limit rows (0: no limit), the caller's bound.
func readRows(ctx context.Context, h pluginsdk.Host, app, table string, filter map[string]any, limit int) ([]map[string]any, error) {
	const pageSize = 1000
	var out []map[string]any
	var after int64
	for {
		f := map[string]any{"id": map[string]any{"_gt": after}}
		for k, v := range filter {
			f[k] = v
		}
		rows, err := h.ReadSystemRows(ctx, pluginsdk.SystemReadInput{App: app, Table: table, Filter: f, Limit: pageSize})
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
		if len(rows) < pageSize || (limit > 0 && len(out) >= limit) {
			return out, nil
		}
		after = num(rows[len(rows)-1]["id"])
	}
}

// modelsOf reads the models of a table, by id.
func modelsOf(ctx context.Context, h pluginsdk.Host, app, tb string) ([]stored, error) {
	rows, err := readRows(ctx, h, app, tableModels, map[string]any{"tb": map[string]any{"_eq": tb}}, 0)
	if err != nil {
		return nil, err
	}
	out := make([]stored, 0, len(rows))
	for _, r := range rows {
		s, err := storedOf(r)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b stored) int { return int(a.ID - b.ID) })
	return out, nil
}

// findModel reads model id of table tb (found false when there is none,
// or it belongs to another table).
func findModel(ctx context.Context, h pluginsdk.Host, app, tb string, id int64) (stored, bool, error) {
	rows, err := h.ReadSystemRows(ctx, pluginsdk.SystemReadInput{App: app, Table: tableModels,
		Filter: map[string]any{"id": map[string]any{"_eq": id}, "tb": map[string]any{"_eq": tb}}, Limit: 1})
	if err != nil || len(rows) == 0 {
		return stored{}, false, err
	}
	s, err := storedOf(rows[0])
	return s, err == nil, err
}

// runRow is a stored run.
type runRow struct {
	ID         int64
	Seed       uint64
	FinishedAt string
	Result     json.RawMessage
	Dates      []previewDate
	AModel     float64
	AOverall   float64
	Converged  bool
}

func runOf(r map[string]any) (runRow, error) {
	out := runRow{ID: num(r["id"]), Seed: uint64(num(r["seed"])), FinishedAt: str(r["finished_at"]),
		Result: json.RawMessage(str(r["result"])), Converged: num(r["converged"]) == 1}
	out.AModel, _ = pluginsdk.Float(r["a_model"])
	out.AOverall, _ = pluginsdk.Float(r["a_overall"])
	if err := json.Unmarshal([]byte(str(r["dates"])), &out.Dates); err != nil {
		return out, fmt.Errorf("run %d: stored dates: %w", out.ID, err)
	}
	return out, nil
}

// runsOf reads the runs of a model, by id (at most keepRuns and a few
// more, when runs ended together).
func runsOf(ctx context.Context, h pluginsdk.Host, app string, modelID int64) ([]map[string]any, error) {
	return readRows(ctx, h, app, tableRuns, map[string]any{"model_id": map[string]any{"_eq": modelID}}, 0)
}

// oxcalOf reads the OxCal comparison rows of a model.
func oxcalOf(ctx context.Context, h pluginsdk.Host, app string, modelID int64) ([]map[string]any, error) {
	return readRows(ctx, h, app, tableOxCal, map[string]any{"model_id": map[string]any{"_eq": modelID}}, 0)
}

func ids(rows []map[string]any) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = num(r["id"])
	}
	return out
}
