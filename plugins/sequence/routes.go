package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"sync"

	"github.com/strata-archaeo/strata/plugins/sequence/model"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// hostFailed answers a failed Host call, logging what the client does
// not see.
func hostFailed(w http.ResponseWriter, err error) {
	var be *buildError
	if errors.As(err, &be) {
		body := map[string]any{"status": "error", "code": be.code, "message": be.msg}
		if be.path != nil {
			body["path"] = be.path
		}
		pluginsdk.WriteJSON(w, be.status, body)
		return
	}
	if err := pluginsdk.WriteHostError(w, err); err != nil {
		fmt.Fprintf(os.Stderr, "sequence: host call: %v\n", err)
	}
}

func fail(w http.ResponseWriter, status int, code, msg string) {
	pluginsdk.WriteError(w, status, code, msg)
}

// readBody decodes a JSON object body; false when it answered 400.
func readBody(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	data, err := io.ReadAll(r.Body)
	if err == nil {
		var m map[string]any
		if m, err = pluginsdk.DecodeObject(data); err == nil {
			return m, true
		}
	}
	fail(w, http.StatusBadRequest, "invalid_json", "the body is not a JSON object")
	return nil, false
}

// call is what every model route starts from: the host, the caller and
// the table.
type call struct {
	h     pluginsdk.Host
	actor pluginsdk.Actor
	tb    string
}

func (p *plugin) start(w http.ResponseWriter, r *http.Request) (call, bool) {
	h, err := p.hostOf()
	if err != nil {
		hostFailed(w, err)
		return call{}, false
	}
	return call{h: h, actor: pluginsdk.ActorFrom(r), tb: pluginsdk.Param(r, "tb")}, true
}

// table checks that tb is a table of the application and returns it.
func (c call) table(ctx context.Context, w http.ResponseWriter) (*pluginsdk.CatalogTable, bool) {
	cat, err := c.h.Catalog(ctx, c.actor.App)
	if err != nil {
		hostFailed(w, err)
		return nil, false
	}
	for i := range cat.Tables {
		if cat.Tables[i].Name == c.tb {
			return &cat.Tables[i], true
		}
	}
	fail(w, http.StatusNotFound, "table_not_found", "no table "+c.tb)
	return nil, false
}

// model reads the route's model; false when it answered.
func (c call) model(r *http.Request, w http.ResponseWriter) (stored, bool) {
	id, err := strconv.ParseInt(pluginsdk.Param(r, "id"), 10, 64)
	if err != nil || id <= 0 {
		fail(w, http.StatusBadRequest, "invalid_parameter", "the model id is a positive integer")
		return stored{}, false
	}
	s, found, err := findModel(r.Context(), c.h, c.actor.App, c.tb, id)
	if err != nil {
		hostFailed(w, err)
		return stored{}, false
	}
	if !found {
		fail(w, http.StatusNotFound, "sequence_model_not_found", "no model with this id on this table")
		return stored{}, false
	}
	return s, true
}

// GET /sequence/:tb/models
func (p *plugin) listModels(w http.ResponseWriter, r *http.Request) {
	c, ok := p.start(w, r)
	if !ok {
		return
	}
	if _, ok := c.table(r.Context(), w); !ok {
		return
	}
	list, err := modelsOf(r.Context(), c.h, c.actor.App, c.tb)
	if err != nil {
		hostFailed(w, err)
		return
	}
	out := make([]map[string]any, len(list))
	for i, s := range list {
		out[i] = s.wire()
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{"status": "success", "models": out})
}

// check validates a model's definition against the table as the caller
// sees it: the grouping field exists, the chronology feature is on, and
// the filter and the matrix are readable (a Stratigraphy call answers a
// bad filter or a table without relations).
func (c call) check(ctx context.Context, w http.ResponseWriter, t *pluginsdk.CatalogTable, s stored) bool {
	switch s.Def.Phases.By {
	case byField:
		if !slices.ContainsFunc(t.Fields, func(f pluginsdk.CatalogField) bool { return f.Name == s.Def.Phases.Field }) {
			fail(w, http.StatusBadRequest, "field_missing", fmt.Sprintf("table %s has no field %q", c.tb, s.Def.Phases.Field))
			return false
		}
	case byChronology:
		if !t.Features["chronology"] {
			fail(w, http.StatusBadRequest, "chronology_not_active", "phases by chronology need the chronology feature on table "+c.tb)
			return false
		}
	}
	if _, err := c.h.Stratigraphy(ctx, pluginsdk.StratigraphyInput{App: c.actor.App, Table: c.tb, Filter: s.Def.Filter, Actor: &c.actor}); err != nil {
		hostFailed(w, err)
		return false
	}
	return true
}

// POST /sequence/:tb/models
func (p *plugin) createModel(w http.ResponseWriter, r *http.Request) {
	c, ok := p.start(w, r)
	if !ok {
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	t, ok := c.table(r.Context(), w)
	if !ok {
		return
	}
	s := newStored(c.tb)
	if bad := apply(&s, body); bad != nil {
		fail(w, http.StatusBadRequest, bad.code, bad.msg)
		return
	}
	if !c.check(r.Context(), w, t, s) {
		return
	}
	existing, err := modelsOf(r.Context(), c.h, c.actor.App, c.tb)
	if err != nil {
		hostFailed(w, err)
		return
	}
	if len(existing) >= maxModels {
		fail(w, http.StatusConflict, "too_many_models", fmt.Sprintf("table %s has %d models, the most it keeps", c.tb, maxModels))
		return
	}
	s.CreatedAt = now()
	s.UpdatedAt = s.CreatedAt
	row, err := s.row()
	if err != nil {
		hostFailed(w, err)
		return
	}
	got, err := c.h.WriteSystemRows(r.Context(), pluginsdk.SystemWriteInput{App: c.actor.App, Table: tableModels, Upsert: []map[string]any{row}})
	if err != nil {
		hostFailed(w, err)
		return
	}
	s.ID = got[0]
	pluginsdk.WriteJSON(w, http.StatusCreated, map[string]any{"status": "success", "model": s.wire()})
}

// GET /sequence/:tb/models/:id
func (p *plugin) getModel(w http.ResponseWriter, r *http.Request) {
	c, ok := p.start(w, r)
	if !ok {
		return
	}
	s, ok := c.model(r, w)
	if !ok {
		return
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{"status": "success", "model": s.wire()})
}

// PUT /sequence/:tb/models/:id — the keys sent replace the stored ones.
func (p *plugin) updateModel(w http.ResponseWriter, r *http.Request) {
	c, ok := p.start(w, r)
	if !ok {
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	s, ok := c.model(r, w)
	if !ok {
		return
	}
	t, ok := c.table(r.Context(), w)
	if !ok {
		return
	}
	if bad := apply(&s, body); bad != nil {
		fail(w, http.StatusBadRequest, bad.code, bad.msg)
		return
	}
	if !c.check(r.Context(), w, t, s) {
		return
	}
	s.UpdatedAt = now()
	row, err := s.row()
	if err != nil {
		hostFailed(w, err)
		return
	}
	delete(row, "last_run") // a run ending meanwhile keeps its summary
	delete(row, "created_at")
	row["id"] = s.ID
	if _, err := c.h.WriteSystemRows(r.Context(), pluginsdk.SystemWriteInput{App: c.actor.App, Table: tableModels, Upsert: []map[string]any{row}}); err != nil {
		hostFailed(w, err)
		return
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{"status": "success", "model": s.wire()})
}

// DELETE /sequence/:tb/models/:id — the model, its runs and its OxCal
// comparison.
func (p *plugin) deleteModel(w http.ResponseWriter, r *http.Request) {
	c, ok := p.start(w, r)
	if !ok {
		return
	}
	s, ok := c.model(r, w)
	if !ok {
		return
	}
	runs, err := runsOf(r.Context(), c.h, c.actor.App, s.ID)
	if err != nil {
		hostFailed(w, err)
		return
	}
	ox, err := oxcalOf(r.Context(), c.h, c.actor.App, s.ID)
	if err != nil {
		hostFailed(w, err)
		return
	}
	// Runs and comparisons first: should the model's delete then fail, it
	// is still listed and is deleted again.
	for _, del := range []struct {
		table string
		ids   []int64
	}{{tableRuns, ids(runs)}, {tableOxCal, ids(ox)}, {tableModels, []int64{s.ID}}} {
		if len(del.ids) == 0 {
			continue
		}
		if _, err := c.h.WriteSystemRows(r.Context(), pluginsdk.SystemWriteInput{App: c.actor.App, Table: del.table, DeleteIDs: del.ids}); err != nil {
			hostFailed(w, err)
			return
		}
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{"status": "success", "code": "sequence_model_deleted", "id": s.ID})
}

// GET /sequence/:tb/models/:id/preview
func (p *plugin) preview(w http.ResponseWriter, r *http.Request) {
	c, ok := p.start(w, r)
	if !ok {
		return
	}
	s, ok := c.model(r, w)
	if !ok {
		return
	}
	b, err := p.build(r.Context(), c.h, c.actor, s)
	if err != nil {
		hostFailed(w, err)
		return
	}
	// Orders name the dates by their id, a number as in dates.
	orders := make([]map[string]int64, len(b.Model.Orders))
	for i, o := range b.Model.Orders {
		older, _ := strconv.ParseInt(o.Older, 10, 64)
		younger, _ := strconv.ParseInt(o.Younger, 10, 64)
		orders[i] = map[string]int64{"older": older, "younger": younger}
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{"status": "success", "dates": b.Dates, "phases": b.Phases,
		"orders": orders, "warnings": b.Warnings})
}

// modelError answers a model the science package refuses.
func modelError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, model.ErrCycle):
		fail(w, http.StatusConflict, "sequence_cycle", err.Error())
	case errors.Is(err, model.ErrCalibration):
		fail(w, http.StatusUnprocessableEntity, "sequence_calibration", err.Error())
	case errors.Is(err, model.ErrInvalidModel):
		fail(w, http.StatusBadRequest, "invalid_model", err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		fail(w, http.StatusServiceUnavailable, "sequence_interrupted", "the run was cancelled or ran out of time; nothing was stored")
	default:
		hostFailed(w, err)
	}
}

// POST /sequence/:tb/models/:id/run — a job: builds the model as the
// caller, runs it with the model's seed and iterations, stores the result
// and answers it.
func (p *plugin) run(w http.ResponseWriter, r *http.Request) {
	c, ok := p.start(w, r)
	if !ok {
		return
	}
	s, ok := c.model(r, w)
	if !ok {
		return
	}
	b, err := p.build(r.Context(), c.h, c.actor, s)
	if err != nil {
		hostFailed(w, err)
		return
	}
	if len(b.Dates) == 0 {
		fail(w, http.StatusBadRequest, "sequence_no_dates", "the table has no radiocarbon dates the model could use")
		return
	}
	curves, err := p.curvesOf()
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "curve_not_loaded", err.Error())
		return
	}
	prep, err := model.Prepare(b.Model, curves)
	if err != nil {
		modelError(w, err)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	opt := model.Options{Seed: s.Def.Seed, Iterations: s.Def.Iterations}
	if job := pluginsdk.JobID(r); job != "" {
		// Progress is for the user's eyes: reported at most every 1 % and
		// never holding a chain up for long; a cancelled job stops the run.
		var mu sync.Mutex
		last := -1
		opt.Progress = func(done, total int) {
			pct := done * 100 / max(total, 1)
			mu.Lock()
			if pct == last {
				mu.Unlock()
				return
			}
			last = pct
			mu.Unlock()
			cancelled, err := c.h.JobProgress(ctx, job, int64(done), int64(total))
			if err != nil {
				fmt.Fprintf(os.Stderr, "sequence: job progress: %v\n", err)
			}
			if cancelled {
				cancel()
			}
		}
	}
	res, err := prep.Run(ctx, opt)
	if err != nil {
		modelError(w, err)
		return
	}
	p.store(w, r, c, s, b, res)
}

// store keeps a run's result (dropping the oldest runs beyond keepRuns)
// and answers it.
func (p *plugin) store(w http.ResponseWriter, r *http.Request, c call, s stored, b *built, res *model.Result) {
	resJSON, err := json.Marshal(res)
	if err != nil {
		hostFailed(w, err)
		return
	}
	if len(resJSON) > maxResultBytes {
		fail(w, http.StatusUnprocessableEntity, "sequence_result_too_large",
			fmt.Sprintf("the result is %d bytes, more than the %d a model keeps: narrow the model", len(resJSON), maxResultBytes))
		return
	}
	datesJSON, err := json.Marshal(b.Dates)
	if err != nil {
		hostFailed(w, err)
		return
	}
	converged := 0
	if res.Converged {
		converged = 1
	}
	// A context of its own: a run that finished is stored even when the
	// client has gone.
	ctx := context.WithoutCancel(r.Context())
	run := lastRun{FinishedAt: now(), AModel: res.AModel, AOverall: res.AOverall, Converged: res.Converged, Seed: res.Seed}
	got, err := c.h.WriteSystemRows(ctx, pluginsdk.SystemWriteInput{App: c.actor.App, Table: tableRuns, Upsert: []map[string]any{{
		"model_id": s.ID, "seed": int64(res.Seed), "finished_at": run.FinishedAt, "result": string(resJSON), "dates": string(datesJSON),
		"a_model": res.AModel, "a_overall": res.AOverall, "converged": converged}}})
	if err != nil {
		hostFailed(w, err)
		return
	}
	run.ID = got[0]
	lr, _ := json.Marshal(run)
	if _, err := c.h.WriteSystemRows(ctx, pluginsdk.SystemWriteInput{App: c.actor.App, Table: tableModels,
		Upsert: []map[string]any{{"id": s.ID, "last_run": string(lr)}}}); err != nil {
		hostFailed(w, err)
		return
	}
	if rows, err := runsOf(ctx, c.h, c.actor.App, s.ID); err == nil && len(rows) > keepRuns {
		old := ids(rows)
		slices.Sort(old)
		if _, err := c.h.WriteSystemRows(ctx, pluginsdk.SystemWriteInput{App: c.actor.App, Table: tableRuns, DeleteIDs: old[:len(old)-keepRuns]}); err != nil {
			fmt.Fprintf(os.Stderr, "sequence: dropping old runs: %v\n", err)
		}
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{"status": "success", "run": runWire(run), "dates": b.Dates,
		"result": json.RawMessage(resJSON)})
}

func runWire(r lastRun) map[string]any {
	return map[string]any{"id": r.ID, "finished_at": r.FinishedAt, "a_model": r.AModel, "a_overall": r.AOverall,
		"converged": r.Converged, "seed": r.Seed}
}

// latestRun reads the model's latest run; false when it answered (404
// sequence_not_run before any run).
func (c call) latestRun(ctx context.Context, w http.ResponseWriter, s stored) (runRow, bool) {
	if s.Last != nil {
		rows, err := c.h.ReadSystemRows(ctx, pluginsdk.SystemReadInput{App: c.actor.App, Table: tableRuns,
			Filter: map[string]any{"id": map[string]any{"_eq": s.Last.ID}}, Limit: 1})
		if err != nil {
			hostFailed(w, err)
			return runRow{}, false
		}
		if len(rows) == 1 {
			run, err := runOf(rows[0])
			if err != nil {
				hostFailed(w, err)
				return runRow{}, false
			}
			return run, true
		}
	}
	fail(w, http.StatusNotFound, "sequence_not_run", "the model has not been run")
	return runRow{}, false
}

// hidden are the stored dates whose records the caller cannot see now
// (its row subset, its filter of the model): the names of their
// estimates. A result was computed as its runner; a reader who sees
// fewer records gets it without the estimates of the others.
func (c call) hidden(ctx context.Context, s stored, dates []previewDate) (map[string]bool, error) {
	strat, err := c.h.Stratigraphy(ctx, pluginsdk.StratigraphyInput{App: c.actor.App, Table: c.tb, Filter: s.Def.Filter, Actor: &c.actor})
	if err != nil {
		return nil, err
	}
	seen := make(map[int64]bool, len(strat.Units))
	for _, u := range strat.Units {
		seen[u.ID] = true
	}
	out := map[string]bool{}
	for _, d := range dates {
		if !seen[d.RecordID] {
			out[strconv.FormatInt(d.ID, 10)] = true
			out["name:"+d.Name] = true
		}
	}
	return out, nil
}

// GET /sequence/:tb/models/:id/result
func (p *plugin) result(w http.ResponseWriter, r *http.Request) {
	c, ok := p.start(w, r)
	if !ok {
		return
	}
	s, ok := c.model(r, w)
	if !ok {
		return
	}
	run, ok := c.latestRun(r.Context(), w, s)
	if !ok {
		return
	}
	hide, err := c.hidden(r.Context(), s, run.Dates)
	if err != nil {
		hostFailed(w, err)
		return
	}
	var res model.Result
	if err := json.Unmarshal(run.Result, &res); err != nil {
		hostFailed(w, fmt.Errorf("run %d: stored result: %w", run.ID, err))
		return
	}
	res.Dates = slices.DeleteFunc(res.Dates, func(e model.Estimate) bool { return hide[e.ID] })
	dates := slices.DeleteFunc(slices.Clone(run.Dates), func(d previewDate) bool { return hide[strconv.FormatInt(d.ID, 10)] })
	if res.Dates == nil {
		res.Dates = []model.Estimate{}
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{"status": "success", "dates": dates, "result": res,
		"run": runWire(lastRun{ID: run.ID, FinishedAt: run.FinishedAt, AModel: run.AModel, AOverall: run.AOverall,
			Converged: run.Converged, Seed: run.Seed})})
}

// unsafeName: characters left out of a download's file name.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._ -]+`)

func (p *plugin) export(w http.ResponseWriter, r *http.Request, ext, contentType string, write func(model.Model) string) {
	c, ok := p.start(w, r)
	if !ok {
		return
	}
	s, ok := c.model(r, w)
	if !ok {
		return
	}
	b, err := p.build(r.Context(), c.h, c.actor, s)
	if err != nil {
		hostFailed(w, err)
		return
	}
	if len(b.Dates) == 0 {
		fail(w, http.StatusBadRequest, "sequence_no_dates", "the table has no radiocarbon dates the model could use")
		return
	}
	name := unsafeName.ReplaceAllString(s.Name, "_")
	if name == "" {
		name = "model"
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.%s"`, name, ext))
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, write(b.Model))
}

// GET /sequence/:tb/models/:id/export/oxcal
func (p *plugin) exportOxCal(w http.ResponseWriter, r *http.Request) {
	p.export(w, r, "oxcal", "text/plain; charset=utf-8", model.ExportOxCal)
}

// GET /sequence/:tb/models/:id/export/chronomodel
func (p *plugin) exportChronoModel(w http.ResponseWriter, r *http.Request) {
	p.export(w, r, "csv", "text/csv; charset=utf-8", model.ExportChronoModel)
}

// POST /sequence/:tb/models/:id/oxcal — OxCal's results file (the .js
// it writes beside a run) set beside the model's latest result, stored in
// place of any earlier one.
func (p *plugin) importOxCal(w http.ResponseWriter, r *http.Request) {
	c, ok := p.start(w, r)
	if !ok {
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxOxCalBytes+1))
	if err != nil {
		fail(w, http.StatusBadRequest, "invalid_oxcal", "the body could not be read")
		return
	}
	if len(data) > maxOxCalBytes {
		fail(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("an OxCal results file is at most %d bytes", maxOxCalBytes))
		return
	}
	s, ok := c.model(r, w)
	if !ok {
		return
	}
	ox, err := model.ParseOxCalJS(bytes.NewReader(data))
	if err == nil && len(ox.Items) == 0 {
		err = errors.New("it has no results (ocd[…] entries)")
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "invalid_oxcal", "not an OxCal results file: "+err.Error())
		return
	}
	run, ok := c.latestRun(r.Context(), w, s)
	if !ok {
		return
	}
	var res model.Result
	if err := json.Unmarshal(run.Result, &res); err != nil {
		hostFailed(w, fmt.Errorf("run %d: stored result: %w", run.ID, err))
		return
	}
	cmpJSON, err := json.Marshal(model.Compare(&res, ox))
	if err != nil {
		hostFailed(w, err)
		return
	}
	old, err := oxcalOf(r.Context(), c.h, c.actor.App, s.ID)
	if err != nil {
		hostFailed(w, err)
		return
	}
	datesJSON, err := json.Marshal(run.Dates)
	if err != nil {
		hostFailed(w, err)
		return
	}
	if _, err := c.h.WriteSystemRows(r.Context(), pluginsdk.SystemWriteInput{App: c.actor.App, Table: tableOxCal,
		Upsert:    []map[string]any{{"model_id": s.ID, "comparison": string(cmpJSON), "dates": string(datesJSON), "imported_at": now()}},
		DeleteIDs: ids(old)}); err != nil {
		hostFailed(w, err)
		return
	}
	p.answerOxCal(w, r, c, s, run.Dates, cmpJSON)
}

// answerOxCal answers a comparison without the dates the caller cannot
// see.
func (p *plugin) answerOxCal(w http.ResponseWriter, r *http.Request, c call, s stored, dates []previewDate, cmpJSON []byte) {
	var list []model.Comparison
	if err := json.Unmarshal(cmpJSON, &list); err != nil {
		hostFailed(w, fmt.Errorf("model %d: stored comparison: %w", s.ID, err))
		return
	}
	hide, err := c.hidden(r.Context(), s, dates)
	if err != nil {
		hostFailed(w, err)
		return
	}
	list = slices.DeleteFunc(list, func(x model.Comparison) bool { return x.Kind == "date" && hide["name:"+x.Name] })
	if list == nil {
		list = []model.Comparison{}
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{"status": "success", "comparison": list})
}

// GET /sequence/:tb/models/:id/oxcal
func (p *plugin) getOxCal(w http.ResponseWriter, r *http.Request) {
	c, ok := p.start(w, r)
	if !ok {
		return
	}
	s, ok := c.model(r, w)
	if !ok {
		return
	}
	rows, err := oxcalOf(r.Context(), c.h, c.actor.App, s.ID)
	if err != nil {
		hostFailed(w, err)
		return
	}
	if len(rows) == 0 {
		fail(w, http.StatusNotFound, "sequence_no_oxcal", "no OxCal results were imported for this model")
		return
	}
	latest := rows[0]
	for _, row := range rows {
		if num(row["id"]) > num(latest["id"]) {
			latest = row
		}
	}
	// The dates of the run the comparison was made with, for the reader's
	// view.
	var dates []previewDate
	if err := json.Unmarshal([]byte(str(latest["dates"])), &dates); err != nil {
		hostFailed(w, fmt.Errorf("model %d: stored comparison dates: %w", s.ID, err))
		return
	}
	p.answerOxCal(w, r, c, s, dates, []byte(str(latest["comparison"])))
}
