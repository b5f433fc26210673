package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/plugins/radiocarbon/calib"
	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

// env is a getenv with only the given variables set.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// withCurves is the plugin as installed: the built-in curves, no
// STRATA_CURVES_DIR.
func withCurves(testing.TB) *plugin {
	return newPlugin(env(nil))
}

func save(t testing.TB, h *plugintest.Harness, rows ...pluginsdk.Row) []pluginsdk.RowResult {
	t.Helper()
	res, err := h.BeforeSave(pluginsdk.SaveCall{Feature: feature, Table: "finds", RowTable: "finds_radiocarbon", Rows: rows, Actor: plugintest.Writer})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func n(v int) json.Number { return json.Number(fmt.Sprint(v)) }

// pinned are the cal_* of 3200 ± 40 BP on IntCal20 (issue 5).
var pinned = map[string]any{cal1From: n(3386), cal1To: n(3450), cal2From: n(3278), cal2To: n(3486)}

func calOf(values map[string]any) map[string]any {
	out := map[string]any{}
	for _, c := range computed {
		if v, ok := values[c]; ok {
			out[c] = v
		}
	}
	return out
}

func TestConformance(t *testing.T) {
	plugintest.Conformance(t, withCurves(t))
}

func TestConformanceWithEmptyCurvesDir(t *testing.T) {
	plugintest.Conformance(t, newPlugin(env(map[string]string{"STRATA_CURVES_DIR": t.TempDir()})))
}

func TestBeforeSavePin(t *testing.T) {
	h := plugintest.New(t, withCurves(t))
	res := save(t, h,
		pluginsdk.Row{Values: map[string]any{colLab: " OxA-1 ", colBP: 3200, colErr: 40, colMat: "charcoal", colD13C: "-25.1",
			// Sent by a client that should not have: replaced.
			cal1From: 1, cal2To: 99999}},
		pluginsdk.Row{Values: map[string]any{colBP: "3200", colErr: "40", colCurve: " IntCal20 "}},
	)
	for i, r := range res {
		if len(r.Errors) > 0 || !reflect.DeepEqual(calOf(r.Values), pinned) || r.Values[colCurve] != "intcal20" {
			t.Errorf("row %d: %v %+v, want %v on intcal20", i, r.Values, r.Errors, pinned)
		}
	}
	want := map[string]any{colLab: "OxA-1", colBP: n(3200), colErr: n(40), colMat: "charcoal", colD13C: json.Number("-25.1"), colCurve: "intcal20"}
	for k, v := range want {
		if res[0].Values[k] != v {
			t.Errorf("%s = %#v, want %#v", k, res[0].Values[k], v)
		}
	}
}

func TestBeforeSaveOtherCurvesAndNoAge(t *testing.T) {
	cs, err := calib.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	h := plugintest.New(t, withCurves(t))
	res := save(t, h,
		pluginsdk.Row{Values: map[string]any{colBP: 3200, colErr: 40, colCurve: "shcal20"}},
		pluginsdk.Row{Values: map[string]any{colLab: "pending", colBP: nil, colErr: 40}},
		pluginsdk.Row{Values: map[string]any{}},
	)
	r, _ := cs.Calibrate("shcal20", 3200, 40)
	want := map[string]any{cal1From: n(r.Sigma1.From), cal1To: n(r.Sigma1.To), cal2From: n(r.Sigma2.From), cal2To: n(r.Sigma2.To)}
	if got := calOf(res[0].Values); !reflect.DeepEqual(got, want) || len(res[0].Errors) > 0 {
		t.Errorf("shcal20: %v %+v, want %v", got, res[0].Errors, want)
	}
	noAge := map[string]any{cal1From: nil, cal1To: nil, cal2From: nil, cal2To: nil}
	for i := 1; i < 3; i++ {
		if got := calOf(res[i].Values); !reflect.DeepEqual(got, noAge) || len(res[i].Errors) > 0 || res[i].Values[colCurve] != "intcal20" {
			t.Errorf("row %d without an age: %v %+v", i, res[i].Values, res[i].Errors)
		}
	}
}

func TestBeforeSaveRefuses(t *testing.T) {
	h := plugintest.New(t, withCurves(t))
	for _, c := range []struct {
		values      map[string]any
		field, rule string
	}{
		{map[string]any{colBP: 3200, colErr: 0}, colErr, "range"},
		{map[string]any{colBP: 3200, colErr: -40}, colErr, "range"},
		{map[string]any{colBP: 3200}, colErr, "required"},
		{map[string]any{colBP: 60000, colErr: 40}, colBP, "out_of_range"},
		{map[string]any{colBP: -500, colErr: 40}, colBP, "out_of_range"},
		{map[string]any{colBP: 3200, colErr: 40, colCurve: "intcal13"}, colCurve, "unknown_curve"},
		{map[string]any{colBP: 3200, colErr: 40, colCurve: 20}, colCurve, "type"},
		{map[string]any{colBP: "about 3200", colErr: 40}, colBP, "integer"},
		{map[string]any{colBP: 3200.5, colErr: 40}, colBP, "integer"},
		{map[string]any{colBP: 3200, colErr: "x"}, colErr, "integer"},
		{map[string]any{colD13C: "x"}, colD13C, "number"},
		{map[string]any{colLab: true}, colLab, "type"},
		{map[string]any{colNotes: []any{"x"}}, colNotes, "type"},
	} {
		res := save(t, h, pluginsdk.Row{Values: c.values})
		errs := res[0].Errors
		if len(errs) != 1 || errs[0].Field != c.field || errs[0].Rule != c.rule || errs[0].Message == "" {
			t.Errorf("%v: %+v, want one %s error on %s", c.values, errs, c.rule, c.field)
		}
	}
	// One bad row among good ones: the good ones are calibrated, the save
	// is refused as a whole by the server (the errors name the row).
	res := save(t, h,
		pluginsdk.Row{Values: map[string]any{colBP: 3200, colErr: 40}},
		pluginsdk.Row{Values: map[string]any{colBP: 3200, colErr: 0}})
	if len(res[0].Errors) != 0 || len(res[1].Errors) != 1 {
		t.Errorf("errors %+v / %+v", res[0].Errors, res[1].Errors)
	}
}

// Updates recompute from the stored values they do not send, and leave
// the ranges alone when no input to them changes.
func TestBeforeSavePartialUpdates(t *testing.T) {
	host := plugintest.NewFakeHost()
	host.SetRecords("demo", "finds_radiocarbon",
		map[string]any{"id": 5, "id_link": 1, colBP: 3200, colErr: 40, colCurve: "intcal20"},
		map[string]any{"id": 6, "id_link": 1, colBP: 3200, colErr: 10, colCurve: nil})
	h := plugintest.New(t, withCurves(t), plugintest.WithHost(host))
	res := save(t, h,
		pluginsdk.Row{ID: 5, ParentID: 1, Values: map[string]any{colNotes: "re-measured"}},
		pluginsdk.Row{ID: 6, ParentID: 1, Values: map[string]any{colErr: 40}},
		pluginsdk.Row{ID: 5, ParentID: 1, Values: map[string]any{colErr: 0}},
		pluginsdk.Row{ID: 5, ParentID: 1, Values: map[string]any{colBP: 3200, colErr: 40, colCurve: "intcal20"}},
	)
	if got := calOf(res[0].Values); len(got) != 0 || res[0].Values[colNotes] != "re-measured" {
		t.Errorf("notes only: %v, want the ranges left alone", res[0].Values)
	}
	if got := calOf(res[1].Values); !reflect.DeepEqual(got, pinned) {
		t.Errorf("bp_error only (stored bp, default curve): %v, want %v", got, pinned)
	}
	if _, set := res[1].Values[colCurve]; set {
		t.Errorf("an update that does not send the curve changed it: %v", res[1].Values)
	}
	if errs := res[2].Errors; len(errs) != 1 || errs[0].Field != colErr {
		t.Errorf("bad error: %+v", errs)
	}
	if got := calOf(res[3].Values); !reflect.DeepEqual(got, pinned) {
		t.Errorf("full update: %v", got)
	}
	if qs := host.Queries(); len(qs) != 0 {
		t.Errorf("queries %+v: the stored values come with the row's Record", qs)
	}
	// The Record given is what counts, not what a read would find: bp
	// 3200 with the Record's error 10 is not the stored error 40's range.
	res = save(t, h, pluginsdk.Row{ID: 5, ParentID: 1, Values: map[string]any{colBP: 3200},
		Record: map[string]any{"id": 5, "id_link": 1, colBP: 3200, colErr: 10, colCurve: "intcal20"}})
	if got := calOf(res[0].Values); len(res[0].Errors) > 0 || reflect.DeepEqual(got, pinned) || got[cal1From] == nil {
		t.Errorf("bp with the Record's bp_error 10: %v %+v, want a narrower range than %v", got, res[0].Errors, pinned)
	}
}

// Installed without any curve file, the plugin calibrates with its
// built-in curves; an empty or wrong STRATA_CURVES_DIR changes nothing but
// a warning.
func TestBuiltinCurvesWithoutFiles(t *testing.T) {
	empty := t.TempDir()
	for name, c := range map[string]struct {
		vars  map[string]string
		level string
	}{
		"nothing set":               {nil, "info"},
		"empty STRATA_CURVES_DIR":   {map[string]string{"STRATA_CURVES_DIR": empty}, "info"},
		"missing STRATA_CURVES_DIR": {map[string]string{"STRATA_CURVES_DIR": filepath.Join(empty, "nowhere")}, "warn"},
		"data dir without curves":   {map[string]string{"STRATA_DATA_DIR": empty}, "info"},
	} {
		host := plugintest.NewFakeHost()
		h := plugintest.New(t, newPlugin(env(c.vars)), plugintest.WithHost(host))
		res := save(t, h, pluginsdk.Row{Values: map[string]any{colBP: 3200, colErr: 40}})
		if len(res[0].Errors) != 0 || !reflect.DeepEqual(calOf(res[0].Values), pinned) {
			t.Errorf("%s: %v %+v, want %v", name, res[0].Values, res[0].Errors, pinned)
		}
		resp, err := h.CallRoute("GET", "/radiocarbon/calibrate?bp=3200&error=40", nil, plugintest.Reader)
		var body map[string]any
		if err != nil || resp.Status != 200 || resp.JSON(&body) != nil || body["citation"] != calib.Citations[calib.IntCal20] {
			t.Errorf("%s: route %d %s %v", name, resp.Status, resp.Body, err)
		}
		logs := host.Logs()
		if len(logs) != 1 || logs[0].Level != c.level || logs[0].Fields["curves"] != "intcal20,marine20,shcal20" || logs[0].Fields["from_dir"] != "" {
			t.Errorf("%s: logs %+v", name, logs)
		}
		if c.level == "warn" && !strings.Contains(logs[0].Message, "STRATA_CURVES_DIR") {
			t.Errorf("%s: the warning does not name STRATA_CURVES_DIR: %q", name, logs[0].Message)
		}
	}
}

// shifted is IntCal20 with every 14C age 100 years older: an override
// that calibrates visibly differently from the built-in curve.
func shifted(t testing.TB) string {
	t.Helper()
	b, err := calib.BuiltinFile("intcal20.14c")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	out.WriteString("# Test lab, IntCal20 shifted by 100 years\n")
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, ",")
		if !strings.HasPrefix(line, "#") {
			var age int
			fmt.Sscan(f[1], &age)
			f[1] = fmt.Sprint(age + 100)
		}
		out.WriteString(strings.Join(f, ",") + "\n")
	}
	return out.String()
}

// A file in STRATA_CURVES_DIR named like a built-in curve replaces it; any
// other adds a curve; a broken one fails only the rows that use it.
func TestCurvesDirOverridesAndAdds(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("intcal20.14c", shifted(t))
	marine, err := calib.BuiltinFile("marine20.14c")
	if err != nil {
		t.Fatal(err)
	}
	write("lake.14c", "# Lake reservoir test curve\n"+string(marine))
	write("shcal20.14c", "55000,50132\n")
	host := plugintest.NewFakeHost()
	h := plugintest.New(t, newPlugin(env(map[string]string{"STRATA_CURVES_DIR": dir})), plugintest.WithHost(host))

	builtin, err := calib.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := builtin.Calibrate("intcal20", 3300, 40) // the shifted curve puts 3300 BP where IntCal20 puts 3200
	res := save(t, h,
		pluginsdk.Row{Values: map[string]any{colBP: 3300, colErr: 40}},
		pluginsdk.Row{Values: map[string]any{colBP: 3300, colErr: 40, colCurve: "Lake"}},
		pluginsdk.Row{Values: map[string]any{colBP: 3300, colErr: 40, colCurve: "shcal20"}},
		pluginsdk.Row{Values: map[string]any{colBP: 3300, colErr: 40, colCurve: "marine20"}})
	if got := calOf(res[0].Values); len(res[0].Errors) != 0 || !reflect.DeepEqual(got, pinned) {
		t.Errorf("override: %v %+v, want %v (built-in would give %v)", got, res[0].Errors, pinned, want.Sigma2)
	}
	if len(res[1].Errors) != 0 || res[1].Values[colCurve] != "lake" || res[1].Values[cal2From] == nil {
		t.Errorf("added curve: %v %+v", res[1].Values, res[1].Errors)
	}
	if errs := res[2].Errors; len(errs) != 1 || errs[0].Field != colCurve || errs[0].Rule != "curve_not_loaded" || !strings.Contains(errs[0].Message, "shcal20.14c") {
		t.Errorf("broken override: %+v, want a curve error naming the file", errs)
	}
	if len(res[3].Errors) != 0 {
		t.Errorf("built-in marine20: %+v", res[3].Errors)
	}
	logs := host.Logs()
	if len(logs) != 1 || logs[0].Level != "warn" || logs[0].Fields["dir"] != dir || logs[0].Fields["from_dir"] != "intcal20,lake" {
		t.Errorf("logs %+v", logs)
	}

	resp, err := h.CallRoute("GET", "/radiocarbon/calibrate?bp=3300&error=40", nil, plugintest.Reader)
	var body map[string]any
	if err != nil || resp.Status != 200 || resp.JSON(&body) != nil || body["citation"] != "Test lab, IntCal20 shifted by 100 years "+strings.Join(builtin["intcal20"].Header[:len(builtin["intcal20"].Header)-1], " ") {
		t.Errorf("route: %d %s %v", resp.Status, resp.Body, err)
	}
	resp, err = h.CallRoute("GET", "/radiocarbon/calibrate?bp=3200&error=40&curve=shcal20", nil, plugintest.Reader)
	if err != nil || resp.Status != 503 || !strings.Contains(string(resp.Body), "curve_not_loaded") {
		t.Errorf("broken curve: %d %s %v", resp.Status, resp.Body, err)
	}
}

// <data-dir>/curves is used when STRATA_CURVES_DIR is not set, and the
// directory is logged through the server.
func TestDataDirCurvesLogged(t *testing.T) {
	data := t.TempDir()
	if err := os.Mkdir(filepath.Join(data, "curves"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "curves", "intcal20.14c"), []byte(shifted(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	host := plugintest.NewFakeHost()
	h := plugintest.New(t, newPlugin(env(map[string]string{"STRATA_DATA_DIR": data})), plugintest.WithHost(host))
	logs := host.Logs()
	if len(logs) != 1 || logs[0].Level != "info" || logs[0].Fields["dir"] != filepath.Join(data, "curves") ||
		logs[0].Fields["curves"] != "intcal20,marine20,shcal20" || logs[0].Fields["from_dir"] != "intcal20" {
		t.Errorf("logs %+v", logs)
	}
	// Configure again (as after a reconnect): the curves are not reloaded.
	if err := h.Configure(nil); err != nil || len(host.Logs()) != 1 {
		t.Errorf("second Configure: %v, logs %+v", err, host.Logs())
	}
	res := save(t, h, pluginsdk.Row{Values: map[string]any{colBP: 3300, colErr: 40}})
	if !reflect.DeepEqual(calOf(res[0].Values), pinned) {
		t.Errorf("%v", res[0].Values)
	}
}

func TestCalibrateRoute(t *testing.T) {
	h := plugintest.New(t, withCurves(t))
	for _, target := range []string{
		"/radiocarbon/calibrate?bp=3200&error=40&curve=intcal20",
		"/radiocarbon/calibrate?bp=3200&bp_error=40",
		"/radiocarbon/calibrate?bp=+3200+&error=40&curve=IntCal20",
	} {
		resp, err := h.CallRoute("GET", target, nil, plugintest.Reader)
		var body struct {
			Status       string             `json:"status"`
			Curve        string             `json:"curve"`
			BP           float64            `json:"bp"`
			BPError      float64            `json:"bp_error"`
			Sigma1       calib.Interval     `json:"sigma1"`
			Sigma2       calib.Interval     `json:"sigma2"`
			Sigma1Years  span               `json:"sigma1_years"`
			Sigma2Years  span               `json:"sigma2_years"`
			Distribution []calib.Density    `json:"distribution"`
			Step         int                `json:"step"`
			Truncated    bool               `json:"truncated"`
			Convention   string             `json:"convention"`
			Citation     string             `json:"citation"`
			Levels       map[string]float64 `json:"levels"`
		}
		if err != nil || resp.Status != 200 || json.Unmarshal(resp.Body, &body) != nil {
			t.Fatalf("%s: %d %s %v", target, resp.Status, resp.Body, err)
		}
		if body.Status != "success" || body.Curve != "intcal20" || body.BP != 3200 || body.BPError != 40 ||
			body.Sigma1 != (calib.Interval{From: 3386, To: 3450}) || body.Sigma2 != (calib.Interval{From: 3278, To: 3486}) {
			t.Errorf("%s: %+v", target, body)
		}
		// 3486 cal BP is 1537 BCE; 3278 cal BP is 1329 BCE.
		if body.Sigma2Years != (span{-1537, -1329}) || body.Sigma1Years != (span{CalBPToYear(3450), CalBPToYear(3386)}) {
			t.Errorf("%s: years %+v %+v", target, body.Sigma1Years, body.Sigma2Years)
		}
		if body.Step != 1 || body.Truncated || len(body.Distribution) < 100 || !strings.Contains(body.Convention, "1950") ||
			!strings.Contains(body.Citation, "IntCal20") || body.Levels["sigma2"] != calib.Level2Sigma {
			t.Errorf("%s: step %d truncated %v, %d points, %q, %q", target, body.Step, body.Truncated, len(body.Distribution), body.Convention, body.Citation)
		}
		sum := 0.0
		for i, d := range body.Distribution {
			sum += d.P
			if i > 0 && d.CalBP != body.Distribution[i-1].CalBP+1 {
				t.Fatalf("%s: distribution not on a 1-year grid at %d", target, i)
			}
		}
		if sum < 0.99 || sum > 1.0001 {
			t.Errorf("%s: distribution sums to %v", target, sum)
		}
	}
	for _, c := range []struct {
		target string
		actor  pluginsdk.Actor
		status int
		code   string
	}{
		{"/radiocarbon/calibrate?error=40", plugintest.Reader, 400, "parameter_missing"},
		{"/radiocarbon/calibrate?bp=3200", plugintest.Reader, 400, "parameter_missing"},
		{"/radiocarbon/calibrate?bp=abc&error=40", plugintest.Reader, 400, "invalid_parameter"},
		{"/radiocarbon/calibrate?bp=3200&error=0", plugintest.Reader, 400, "invalid_parameter"},
		{"/radiocarbon/calibrate?bp=3200&error=-40", plugintest.Reader, 400, "invalid_parameter"},
		{"/radiocarbon/calibrate?bp=NaN&error=40", plugintest.Reader, 400, "invalid_parameter"},
		{"/radiocarbon/calibrate?bp=60000&error=40", plugintest.Reader, 400, "out_of_range"},
		{"/radiocarbon/calibrate?bp=3200&error=40&curve=intcal13", plugintest.Reader, 400, "unknown_curve"},
		{"/radiocarbon/calibrate?bp=3200&error=40", plugintest.Anonymous, 401, "unauthenticated"},
	} {
		resp, err := h.CallRoute("GET", c.target, nil, c.actor)
		var body map[string]any
		if err != nil || resp.JSON(&body) != nil || resp.Status != c.status || body["code"] != c.code || body["status"] != "error" {
			t.Errorf("%s: %d %s %v; want %d %s", c.target, resp.Status, resp.Body, err, c.status, c.code)
		}
	}
}

// CalBPToYear is calib's conversion, named here for the expectations.
func CalBPToYear(bp int) int { return calib.CalBPToYear(bp) }

// BenchmarkBeforeSave is a save of ten radiocarbon rows through the plugin
// over gRPC: what the hook adds to a save.
func BenchmarkBeforeSave(b *testing.B) {
	h := plugintest.New(b, withCurves(b))
	rows := make([]pluginsdk.Row, 10)
	for i := range rows {
		rows[i] = pluginsdk.Row{Values: map[string]any{colBP: 2000 + 300*i, colErr: 30, colLab: fmt.Sprintf("OxA-%d", i)}}
	}
	call := pluginsdk.SaveCall{Feature: feature, Table: "finds", RowTable: "finds_radiocarbon", Rows: rows, Actor: plugintest.Writer}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.BeforeSave(call); err != nil {
			b.Fatal(err)
		}
	}
}
