package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/plugins/sequence/model"
	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

func TestConformance(t *testing.T) {
	plugintest.Conformance(t, newPlugin(func(string) string { return "" }))
}

func year(y int64) *int64 { return &y }

// The fixture's matrix, top to bottom: US1 covers US2, US2 covers US3
// (undated), US3 covers US4, US5 is the same as US4, US4 cuts US6, and
// the redundant US2 covers US6. Periods: Roman (US1, US2), Iron (US3–5),
// Bronze (US6); the field "phase" names them otherwise, so that their
// alphabetical order is not the matrix's.
var (
	fixtureUnits = []pluginsdk.StratUnit{
		{ID: 1, Label: "US1", ChronoFrom: year(-100), ChronoTo: year(100), ChronoLabel: "Roman"},
		{ID: 2, Label: "US2", ChronoFrom: year(-100), ChronoTo: year(100), ChronoLabel: "Roman"},
		{ID: 3, Label: "US3", ChronoFrom: year(-600), ChronoTo: year(-101), ChronoLabel: "Iron"},
		{ID: 4, Label: "US4", ChronoFrom: year(-600), ChronoTo: year(-101), ChronoLabel: "Iron"},
		{ID: 5, Label: "US5", ChronoFrom: year(-600), ChronoTo: year(-101), ChronoLabel: "Iron"},
		{ID: 6, Label: "US6", ChronoFrom: year(-1200), ChronoTo: year(-601), ChronoLabel: "Bronze"},
	}
	fixtureRelations = []pluginsdk.StratRelation{
		{ID: 1, First: 1, Second: 2, Relation: 5}, // covers
		{ID: 2, First: 2, Second: 3, Relation: 5},
		{ID: 3, First: 4, Second: 3, Relation: 1}, // is covered by
		{ID: 4, First: 5, Second: 4, Relation: 9}, // is the same as
		{ID: 5, First: 4, Second: 6, Relation: 6}, // cuts
		{ID: 6, First: 2, Second: 6, Relation: 5},
	}
	fixturePhase = map[int64]string{1: "Alpha", 2: "Alpha", 3: "Mid", 4: "Mid", 5: "Mid", 6: "Zeta"}
)

type env struct {
	t    *testing.T
	h    *plugintest.Harness
	host *plugintest.FakeHost
}

func newEnv(t *testing.T) *env {
	t.Helper()
	host := plugintest.NewFakeHost()
	host.SetCatalog("demo", pluginsdk.Catalog{Tables: []pluginsdk.CatalogTable{
		{Name: "us", Label: "US", Features: map[string]bool{"chronology": true, "radiocarbon": true},
			Fields: []pluginsdk.CatalogField{{Name: "code"}, {Name: "phase"}}},
		{Name: "finds", Label: "Finds", Fields: []pluginsdk.CatalogField{{Name: "code"}}},
	}})
	var recs []map[string]any
	for _, u := range fixtureUnits {
		recs = append(recs, map[string]any{"id": u.ID, "code": u.Label, "phase": fixturePhase[u.ID]})
	}
	host.SetRecords("demo", "us", recs...)
	host.SetStratigraphy("demo", "us", pluginsdk.Stratigraphy{HasChronology: true, Units: fixtureUnits, Relations: fixtureRelations})
	host.SetStratigraphy("demo", "finds", pluginsdk.Stratigraphy{})
	host.SetFeatureRows("demo", "us", "radiocarbon",
		map[string]any{"id": 11, "id_link": 1, "lab_code": "OxA-1"}, // no age: left out
		map[string]any{"id": 12, "id_link": 2, "lab_code": "OxA-2", "bp": 2050, "bp_error": 30},
		map[string]any{"id": 14, "id_link": 4, "lab_code": "OxA-4", "bp": 2450, "bp_error": 30, "curve": "IntCal20"},
		map[string]any{"id": 15, "id_link": 5, "lab_code": "OxA-5", "bp": 2400, "bp_error": 30},
		map[string]any{"id": 16, "id_link": 6, "lab_code": "OxA-6", "bp": 2900, "bp_error": 30},
	)
	h := plugintest.New(t, newPlugin(func(string) string { return "" }), plugintest.WithHost(host))
	return &env{t: t, h: h, host: host}
}

func (e *env) do(method, target, body string, actor pluginsdk.Actor) plugintest.Response {
	e.t.Helper()
	resp, err := e.h.Do(plugintest.Request{Method: method, Target: target, Body: []byte(body), Actor: actor,
		Header: http.Header{pluginsdk.JobHeader: {"job-1"}}})
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, target, err)
	}
	return resp
}

// call sends a request and decodes the JSON answer, failing on another
// status than want.
func (e *env) call(method, target, body string, actor pluginsdk.Actor, want int) map[string]any {
	e.t.Helper()
	resp := e.do(method, target, body, actor)
	var m map[string]any
	if err := json.Unmarshal(resp.Body, &m); err != nil {
		e.t.Fatalf("%s %s: not JSON: %s", method, target, resp.Body)
	}
	if resp.Status != want {
		e.t.Fatalf("%s %s %s: %d, want %d: %v", method, target, body, resp.Status, want, m)
	}
	return m
}

func (e *env) create(body string) int64 {
	e.t.Helper()
	m := e.call("POST", "/sequence/us/models", body, plugintest.Writer, 201)
	return int64(m["model"].(map[string]any)["id"].(float64))
}

// preview is a preview's answer decoded.
type previewAnswer struct {
	Dates    []previewDate                    `json:"dates"`
	Phases   []string                         `json:"phases"`
	Orders   []struct{ Older, Younger int64 } `json:"orders"`
	Warnings []string                         `json:"warnings"`
}

func (e *env) preview(id int64, actor pluginsdk.Actor) previewAnswer {
	e.t.Helper()
	resp := e.do("GET", fmt.Sprintf("/sequence/us/models/%d/preview", id), "", actor)
	if resp.Status != 200 {
		e.t.Fatalf("preview: %d %s", resp.Status, resp.Body)
	}
	var p previewAnswer
	if err := json.Unmarshal(resp.Body, &p); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func orderText(os []struct{ Older, Younger int64 }) string {
	var s []string
	for _, o := range os {
		s = append(s, fmt.Sprintf("%d>%d", o.Older, o.Younger))
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}

// The model built from the matrix: orders between dates through the
// undated US3, none within the "same as" class of US4 and US5, the
// redundant US6 → US2 left out, and none the phases imply.
func TestPreview(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, body     string
		phases, orders string
		datePhase      string // date id:phase, in date order
	}{
		{"no phases", `{"name":"plain"}`, "", "14>12 15>12 16>14 16>15", "12: 14: 15: 16:"},
		{"by chronology", `{"name":"chrono","phases":{"by":"chronology"}}`, "Bronze Iron Roman", "",
			"12:Roman 14:Iron 15:Iron 16:Bronze"},
		{"by a field, ordered by the matrix", `{"name":"field","phases":{"by":"field","field":"phase"}}`, "Zeta Mid Alpha", "",
			"12:Alpha 14:Mid 15:Mid 16:Zeta"},
		{"narrowed by a filter", `{"name":"top","filter":{"id":{"_in":[1,2,3,4,6]}}}`, "", "14>12 16>14", "12: 14: 16:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := e.preview(e.create(c.body), plugintest.Writer)
			if got := strings.Join(p.Phases, " "); got != c.phases {
				t.Errorf("phases %q, want %q", got, c.phases)
			}
			if got := orderText(p.Orders); got != c.orders {
				t.Errorf("orders %q, want %q", got, c.orders)
			}
			var dp []string
			for _, d := range p.Dates {
				ph := ""
				if d.Phase != nil {
					ph = *d.Phase
				}
				dp = append(dp, fmt.Sprintf("%d:%s", d.ID, ph))
			}
			if got := strings.Join(dp, " "); got != c.datePhase {
				t.Errorf("dates %q, want %q", got, c.datePhase)
			}
			if !slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "OxA-1 has no age") }) {
				t.Errorf("warnings %q lack the date without an age", p.Warnings)
			}
			if d := p.Dates[1]; d.RecordID != 4 || d.UnitLabel != "US4" || d.LabCode != "OxA-4" || d.Curve != "intcal20" || d.BP != 2450 || d.Error != 30 {
				t.Errorf("date %+v", d)
			}
		})
	}
}

// A cycle of the matrix is refused with its path; phases the matrix
// orders both ways are refused too.
func TestPreviewRefused(t *testing.T) {
	cases := []struct {
		name    string
		rels    []pluginsdk.StratRelation
		units   []pluginsdk.StratUnit // nil: fixtureUnits
		phase   map[int64]string
		body    string
		code    string
		contain string
	}{
		{"a cycle through an undated unit", append(slices.Clone(fixtureRelations), pluginsdk.StratRelation{ID: 9, First: 6, Second: 1, Relation: 5}), nil,
			fixturePhase, `{"name":"x"}`, "sequence_cycle", "→"},
		{"above its own same-as", append(slices.Clone(fixtureRelations), pluginsdk.StratRelation{ID: 9, First: 5, Second: 4, Relation: 5}), nil,
			fixturePhase, `{"name":"x"}`, "sequence_cycle", "US5"},
		{"phases both below and above each other", fixtureRelations, nil,
			map[int64]string{1: "Zeta", 2: "Alpha", 3: "Mid", 4: "Mid", 5: "Mid", 6: "Zeta"},
			`{"name":"x","phases":{"by":"field","field":"phase"}}`, "sequence_phase_order", `phases "Alpha" and "Zeta": US2 (Alpha) lies below US1 (Zeta), and US6 (Zeta) below US2 (Alpha)`},
		{"a later period below an earlier one", fixtureRelations,
			append(slices.Clone(fixtureUnits[:5]), pluginsdk.StratUnit{ID: 6, Label: "US6", ChronoFrom: year(500), ChronoTo: year(600), ChronoLabel: "Late"}),
			fixturePhase, `{"name":"x","phases":{"by":"chronology"}}`, "sequence_phase_order",
			`the matrix puts US6 (Late) below US3 (Iron), though "Late" is the later period`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			units := c.units
			if units == nil {
				units = fixtureUnits
			}
			e.host.SetStratigraphy("demo", "us", pluginsdk.Stratigraphy{HasChronology: true, Units: units, Relations: c.rels})
			var recs []map[string]any
			for _, u := range fixtureUnits {
				recs = append(recs, map[string]any{"id": u.ID, "code": u.Label, "phase": c.phase[u.ID]})
			}
			e.host.SetRecords("demo", "us", recs...)
			id := e.create(c.body)
			for _, path := range []string{"preview", "export/oxcal"} {
				m := e.call("GET", fmt.Sprintf("/sequence/us/models/%d/%s", id, path), "", plugintest.Reader, 409)
				if m["code"] != c.code || !strings.Contains(fmt.Sprint(m["message"]), c.contain) {
					t.Errorf("%s: %v", path, m)
				}
				if c.code == "sequence_cycle" {
					p, _ := m["path"].([]any)
					if len(p) < 3 || p[0] != p[len(p)-1] {
						t.Errorf("%s: path %v", path, m["path"])
					}
				}
			}
			m := e.call("POST", fmt.Sprintf("/sequence/us/models/%d/run", id), "", plugintest.Writer, 409)
			if m["code"] != c.code {
				t.Errorf("run: %v", m)
			}
		})
	}
}

func TestModelValidation(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, tb, body string
		status         int
		code           string
	}{
		{"no name", "us", `{}`, 400, "invalid_model"},
		{"an empty name", "us", `{"name":"  "}`, 400, "invalid_model"},
		{"an unknown key", "us", `{"name":"a","colour":"red"}`, 400, "invalid_model"},
		{"an unknown grouping", "us", `{"name":"a","phases":{"by":"period"}}`, 400, "invalid_model"},
		{"a field grouping without field", "us", `{"name":"a","phases":{"by":"field"}}`, 400, "invalid_model"},
		{"a field that is not there", "us", `{"name":"a","phases":{"by":"field","field":"period"}}`, 400, "field_missing"},
		{"chronology not active", "finds", `{"name":"a","phases":{"by":"chronology"}}`, 400, "chronology_not_active"},
		{"bad boundaries", "us", `{"name":"a","boundaries":"overlapping"}`, 400, "invalid_model"},
		{"too few iterations", "us", `{"name":"a","iterations":5}`, 400, "invalid_model"},
		{"a negative seed", "us", `{"name":"a","seed":-1}`, 400, "invalid_model"},
		{"a filter that is not an object", "us", `{"name":"a","filter":[1]}`, 400, "invalid_model"},
		{"a bad filter", "us", `{"name":"a","filter":{"id":{"_nope":1}}}`, 400, "invalid_filter"},
		{"a reversed range", "us", `{"name":"a","range":{"young":3000,"old":2000}}`, 400, "invalid_model"},
		{"not JSON", "us", `{"name":`, 400, "invalid_json"},
		{"no such table", "nope", `{"name":"a"}`, 404, "table_not_found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := e.call("POST", "/sequence/"+c.tb+"/models", c.body, plugintest.Writer, c.status)
			if m["code"] != c.code {
				t.Errorf("%v", m)
			}
		})
	}
	if n := len(e.host.SystemRows("demo", tableModels)); n != 0 {
		t.Errorf("%d models stored by refused saves", n)
	}
	// A reader may not create one.
	if resp := e.do("POST", "/sequence/us/models", `{"name":"a"}`, plugintest.Reader); resp.Status != 403 {
		t.Errorf("reader: %d %s", resp.Status, resp.Body)
	}
}

// Create, read, list, update and delete, with the defaults filled in.
func TestModelCRUD(t *testing.T) {
	e := newEnv(t)
	m := e.call("POST", "/sequence/us/models", `{"name":"Trench 1","seed":42}`, plugintest.Writer, 201)["model"].(map[string]any)
	if m["tb"] != "us" || m["name"] != "Trench 1" || m["boundaries"] != "contiguous" || m["seed"] != 42.0 ||
		m["iterations"] != float64(defaultIterations) || m["last_run"] != nil || m["filter"] != nil ||
		fmt.Sprint(m["phases"]) != "map[by:none field:<nil>]" || m["created_at"] == "" {
		t.Fatalf("created %v", m)
	}
	id := int64(m["id"].(float64))
	url := fmt.Sprintf("/sequence/us/models/%d", id)
	got := e.call("PUT", url, `{"phases":{"by":"field","field":"phase"},"boundaries":"sequential","iterations":2000}`, plugintest.Writer, 200)["model"].(map[string]any)
	if got["name"] != "Trench 1" || got["boundaries"] != "sequential" || got["iterations"] != 2000.0 ||
		fmt.Sprint(got["phases"]) != "map[by:field field:phase]" || got["seed"] != 42.0 {
		t.Fatalf("updated %v", got)
	}
	if read := e.call("GET", url, "", plugintest.Reader, 200)["model"]; fmt.Sprint(read) != fmt.Sprint(got) {
		t.Fatalf("read %v\nwant %v", read, got)
	}
	e.call("PUT", url, `{"boundaries":"both"}`, plugintest.Writer, 400)
	list := e.call("GET", "/sequence/us/models", "", plugintest.Reader, 200)["models"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["boundaries"] != "sequential" {
		t.Fatalf("list %v", list)
	}
	if l := e.call("GET", "/sequence/finds/models", "", plugintest.Reader, 200)["models"].([]any); len(l) != 0 {
		t.Fatalf("another table's list %v", l)
	}
	// Another table's path does not reach the model.
	e.call("GET", fmt.Sprintf("/sequence/finds/models/%d", id), "", plugintest.Reader, 404)
	e.call("DELETE", url, "", plugintest.Writer, 200)
	if m := e.call("GET", url, "", plugintest.Reader, 404); m["code"] != "sequence_model_not_found" {
		t.Fatalf("after delete %v", m)
	}
}

// A run: a job with progress, its result stored and answered again; a
// reader with a row subset gets it without the dates it cannot see; the
// exports and the OxCal comparison.
func TestRunResultExport(t *testing.T) {
	e := newEnv(t)
	id := e.create(`{"name":"Trench 1","phases":{"by":"chronology"},"seed":7,"iterations":2000}`)
	url := fmt.Sprintf("/sequence/us/models/%d", id)
	if m := e.call("GET", url+"/result", "", plugintest.Reader, 404); m["code"] != "sequence_not_run" {
		t.Fatalf("before a run: %v", m)
	}
	if m := e.call("POST", url+"/oxcal", "ocd[1].name=\"A\";", plugintest.Writer, 404); m["code"] != "sequence_not_run" {
		t.Fatalf("oxcal before a run: %v", m)
	}
	ran := e.call("POST", url+"/run", "", plugintest.Writer, 200)
	run := ran["run"].(map[string]any)
	if run["seed"] != 7.0 || run["finished_at"] == "" || run["a_model"].(float64) <= 0 {
		t.Fatalf("run %v", run)
	}
	var res model.Result
	b, _ := json.Marshal(ran["result"])
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Dates) != 4 || len(res.Boundaries) != 4 || res.Iterations < 2000 {
		t.Fatalf("result: %d dates, %d boundaries, %d iterations", len(res.Dates), len(res.Boundaries), res.Iterations)
	}
	for _, est := range append(res.Dates, res.Boundaries...) {
		if len(est.Posterior.HPD95) == 0 || len(est.Posterior.Density) == 0 {
			t.Errorf("%s: no posterior", est.Name)
		}
	}
	if res.Dates[0].Name != "OxA-2" || res.Dates[0].Phase != "Roman" || res.Boundaries[0].Name != "Start Bronze" {
		t.Errorf("names: %s %s %s", res.Dates[0].Name, res.Dates[0].Phase, res.Boundaries[0].Name)
	}
	reports := e.host.JobReports()
	if len(reports) == 0 || reports[len(reports)-1].Done != reports[len(reports)-1].Total || reports[0].Job != "job-1" {
		t.Errorf("job reports %v", reports)
	}
	// Stored: the list shows it, the result answers it again.
	last := e.call("GET", "/sequence/us/models", "", plugintest.Reader, 200)["models"].([]any)[0].(map[string]any)["last_run"].(map[string]any)
	if last["id"] != run["id"] || last["a_model"] != run["a_model"] || last["converged"] != run["converged"] {
		t.Errorf("last_run %v, run %v", last, run)
	}
	again := e.call("GET", url+"/result", "", plugintest.Reader, 200)
	if a, b := mustJSON(t, again["result"]), mustJSON(t, ran["result"]); a != b {
		t.Errorf("stored result differs from the run's")
	}
	// A reader who sees only US2 and US4.
	narrow := pluginsdk.Actor{App: "demo", UserID: 9, Privilege: pluginsdk.PrivilegeReader}
	e.host.SetRights(narrow, "us", plugintest.Rights{Subset: map[string]any{"id": map[string]any{"_in": []any{2, 4}}}})
	sub := e.call("GET", url+"/result", "", narrow, 200)
	var names []string
	for _, d := range sub["result"].(map[string]any)["dates"].([]any) {
		names = append(names, d.(map[string]any)["name"].(string))
	}
	if strings.Join(names, " ") != "OxA-2 OxA-4" || len(sub["dates"].([]any)) != 2 {
		t.Errorf("narrow reader sees %v and %v", names, sub["dates"])
	}
	if n := len(sub["result"].(map[string]any)["boundaries"].([]any)); n != 4 {
		t.Errorf("narrow reader: %d boundaries", n)
	}

	// Exports.
	resp := e.do("GET", url+"/export/oxcal", "", plugintest.Reader)
	if resp.Status != 200 || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
		resp.Header.Get("Content-Disposition") != `attachment; filename="Trench 1.oxcal"` ||
		!strings.Contains(string(resp.Body), `R_Date("OxA-4",2450,30)`) || !strings.Contains(string(resp.Body), `Phase("Bronze")`) {
		t.Errorf("oxcal export: %d %v\n%s", resp.Status, resp.Header, resp.Body)
	}
	want := model.ExportOxCal(previewModel(t, e, id))
	if string(resp.Body) != want {
		t.Errorf("oxcal export is not the model's export:\n%s\nwant\n%s", resp.Body, want)
	}
	resp = e.do("GET", url+"/export/chronomodel", "", plugintest.Reader)
	if resp.Status != 200 || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
		resp.Header.Get("Content-Disposition") != `attachment; filename="Trench 1.csv"` || !strings.Contains(string(resp.Body), "OxA-6") {
		t.Errorf("chronomodel export: %d %v\n%s", resp.Status, resp.Header, resp.Body)
	}

	// OxCal's results: our own ranges written as OxCal writes them, one
	// date moved 30 years older, one name OxCal lacks.
	if m := e.call("GET", url+"/oxcal", "", plugintest.Reader, 404); m["code"] != "sequence_no_oxcal" {
		t.Fatalf("no comparison yet: %v", m)
	}
	js := oxcalJS(res, "OxA-4", 30, "OxA-5")
	cmpAns := e.call("POST", url+"/oxcal", js, plugintest.Writer, 200)["comparison"].([]any)
	if len(cmpAns) != 8 {
		t.Fatalf("comparison %v", cmpAns)
	}
	for _, x := range cmpAns {
		c := x.(map[string]any)
		wantShift, wantFound := 0.0, true
		switch c["name"] {
		case "OxA-4":
			wantShift = 30
		case "OxA-5":
			wantShift, wantFound = -1, false
		}
		if c["shift95"] != wantShift || c["found"] != wantFound {
			t.Errorf("%v: shift %v found %v, want %v %v", c["name"], c["shift95"], c["found"], wantShift, wantFound)
		}
	}
	if stored := e.call("GET", url+"/oxcal", "", plugintest.Reader, 200)["comparison"].([]any); len(stored) != 8 {
		t.Errorf("stored comparison %v", stored)
	}
	if n := len(e.call("GET", url+"/oxcal", "", narrow, 200)["comparison"].([]any)); n != 6 {
		t.Errorf("narrow reader: %d comparisons, want 2 dates and 4 boundaries", n)
	}
	if m := e.call("POST", url+"/oxcal", "this is not OxCal", plugintest.Writer, 400); m["code"] != "invalid_oxcal" {
		t.Errorf("bad file: %v", m)
	}
	// Deleting the model deletes its runs and comparison.
	e.call("DELETE", url, "", plugintest.Writer, 200)
	if r, o := e.host.SystemRows("demo", tableRuns), e.host.SystemRows("demo", tableOxCal); len(r)+len(o) != 0 {
		t.Errorf("left behind: %d runs, %d comparisons", len(r), len(o))
	}
}

// A cancelled job stops the run and stores nothing.
func TestRunCancelled(t *testing.T) {
	e := newEnv(t)
	id := e.create(`{"name":"long","iterations":1000000}`)
	e.host.CancelJob("job-1")
	m := e.call("POST", fmt.Sprintf("/sequence/us/models/%d/run", id), "", plugintest.Writer, 503)
	if m["code"] != "sequence_interrupted" {
		t.Fatalf("%v", m)
	}
	if n := len(e.host.SystemRows("demo", tableRuns)); n != 0 {
		t.Errorf("%d runs stored", n)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// previewModel is the model.Model the preview describes, made here from
// the preview's answer (not by the plugin's build).
func previewModel(t *testing.T, e *env, id int64) model.Model {
	t.Helper()
	p := e.preview(id, plugintest.Reader)
	m := model.Model{Name: "Trench 1", Boundaries: model.Contiguous}
	for _, o := range p.Orders {
		m.Orders = append(m.Orders, model.Order{Older: fmt.Sprint(o.Older), Younger: fmt.Sprint(o.Younger)})
	}
	members := map[string][]string{}
	for _, d := range p.Dates {
		did := fmt.Sprint(d.ID)
		m.Dates = append(m.Dates, model.Date{ID: did, Label: d.Name, BP: d.BP, Error: d.Error, Curve: d.Curve})
		if d.Phase != nil {
			members[*d.Phase] = append(members[*d.Phase], did)
		}
	}
	for _, ph := range p.Phases {
		m.Phases = append(m.Phases, model.Phase{Name: ph, Dates: members[ph]})
	}
	return m
}

// oxcalJS writes res's 95.4 % ranges as an OxCal results file would
// (OxCal's continuous scale: G1 is the start of AD 1), moving date shift
// older by years and leaving date skip out.
func oxcalJS(res model.Result, shift string, years int, skip string) string {
	astro := func(y int) int {
		if y < 0 {
			return y + 1
		}
		return y
	}
	var b strings.Builder
	n := 0
	for _, e := range append(slices.Clone(res.Dates), res.Boundaries...) {
		if e.Name == skip {
			continue
		}
		n++
		fmt.Fprintf(&b, "ocd[%d]={};\nocd[%d].name=%q;\nocd[%d].op=\"R_Date\";\n", n, n, e.Name, n)
		for i, r := range e.Posterior.HPD95 {
			from := astro(r.From)
			if e.Name == shift && i == 0 {
				from -= years
			}
			fmt.Fprintf(&b, "ocd[%d].posterior.range[2][%d]=[%d, %.1f, %.1f];\n", n, i, from, float64(astro(r.To))+0.5, r.P*100)
		}
	}
	return b.String()
}

// A table keeps at most maxModels models.
func TestModelsBounded(t *testing.T) {
	e := newEnv(t)
	for i := range maxModels {
		e.create(fmt.Sprintf(`{"name":"m%d"}`, i))
	}
	if m := e.call("POST", "/sequence/us/models", `{"name":"one more"}`, plugintest.Writer, 409); m["code"] != "too_many_models" {
		t.Fatalf("%v", m)
	}
	if n := len(e.host.SystemRows("demo", tableModels)); n != maxModels {
		t.Fatalf("%d models stored", n)
	}
	// Another table is not held by this one's.
	e.call("POST", "/sequence/finds/models", `{"name":"finds"}`, plugintest.Writer, 201)
}

// A model keeps its last keepRuns runs; the result is the latest's.
func TestRunsBounded(t *testing.T) {
	e := newEnv(t)
	id := e.create(`{"name":"short","iterations":100}`)
	url := fmt.Sprintf("/sequence/us/models/%d", id)
	var last any
	for range keepRuns + 2 {
		last = e.call("POST", url+"/run", "", plugintest.Writer, 200)["run"].(map[string]any)["id"]
	}
	rows := e.host.SystemRows("demo", tableRuns)
	if len(rows) != keepRuns {
		t.Fatalf("%d runs kept, want %d", len(rows), keepRuns)
	}
	if got := e.call("GET", url+"/result", "", plugintest.Reader, 200)["run"].(map[string]any)["id"]; got != last {
		t.Errorf("result of run %v, want the latest %v", got, last)
	}
}
