package pluginsdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

func TestDescribeOverTheWire(t *testing.T) {
	p := &probe{}
	h := plugintest.New(t, p)
	got := h.Manifest()
	want := p.Manifest()
	want.ProtocolVersion = pluginsdk.ProtocolVersion
	for i := range want.Routes {
		want.Routes[i].Handler = nil // handlers stay in the plugin
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("manifest over the wire:\n got %+v\nwant %+v", got, want)
	}
	if err := pluginsdk.Check(p); err != nil {
		t.Errorf("Check: %v", err)
	}
}

func TestRouteRequestAndResponse(t *testing.T) {
	h := plugintest.New(t, &probe{})
	resp, err := h.Do(plugintest.Request{
		Method: "POST", Target: "/probe/echo/42?q=a+b", Body: []byte(`{"x":1}`), Actor: plugintest.Writer,
		Header: map[string][]string{"X-Test": {"hello"}, "Authorization": {"Bearer secret"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := resp.JSON(&body); err != nil || resp.Status != 201 {
		t.Fatalf("status %d body %s: %v", resp.Status, resp.Body, err)
	}
	actor := map[string]any{"App": "demo", "UserID": json.Number("2"), "APIKeyID": json.Number("0"),
		"Privilege": json.Number("20"), "Name": "Writer", "Email": "writer@example.org"}
	want := map[string]any{"method": "POST", "path": "/probe/echo/42", "query": "a b", "uri": "/probe/echo/42?q=a+b",
		"header": "hello", "auth": "", "body": `{"x":1}`, "length": json.Number("7"), "actor": actor, "id": "42",
		"path_value": "42", "deadline": true}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("echo:\n got %v\nwant %v", body, want)
	}
	if resp.Header.Get("X-Echo") != "yes" || resp.Header.Get("X-Multi") != "a, b" ||
		resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("headers %v", resp.Header)
	}

	// Nothing written but a body: 200 and a sniffed type, as net/http does.
	resp, err = h.CallRoute("GET", "/probe/plain", nil, plugintest.Anonymous)
	if err != nil || resp.Status != 200 || string(resp.Body) != "hello" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("plain: %d %q %v %v", resp.Status, resp.Body, resp.Header, err)
	}

	// The harness applies the route's access like the server.
	resp, _ = h.CallRoute("POST", "/probe/echo/1", nil, plugintest.Reader)
	if resp.Status != 403 {
		t.Errorf("a reader on an edit route: %d %s", resp.Status, resp.Body)
	}
}

func TestUnknownRouteIs404(t *testing.T) {
	h := plugintest.New(t, &probe{})
	for _, c := range [][2]string{{"GET", "/probe/none"}, {"DELETE", "/probe/echo/1"}} {
		resp, err := h.CallRoute(c[0], c[1], nil, plugintest.SuperAdmin)
		var body map[string]any
		if err != nil || resp.Status != 404 || resp.JSON(&body) != nil || body["code"] != "route_not_found" || body["status"] != "error" {
			t.Errorf("%s %s: %d %s %v", c[0], c[1], resp.Status, resp.Body, err)
		}
	}
}

func TestPanicsBecomeErrorsAndThePluginSurvives(t *testing.T) {
	h := plugintest.New(t, &probe{})
	_, err := h.CallRoute("GET", "/probe/panic", nil, plugintest.Anonymous)
	if !pluginsdk.IsPanic(err) || !strings.Contains(err.Error(), "route boom") {
		t.Errorf("route panic: %v", err)
	}
	_, err = h.BeforeSave(pluginsdk.SaveCall{Feature: "notes", Table: "t", Rows: []pluginsdk.Row{{Values: map[string]any{"note": "panic"}}}})
	if !pluginsdk.IsPanic(err) || !strings.Contains(err.Error(), "hook boom") {
		t.Errorf("hook panic: %v", err)
	}
	if _, ok := pluginsdk.ErrorFromStatus(err); ok {
		t.Error("a panic reads as a client error")
	}
	resp, err := h.CallRoute("GET", "/probe/plain", nil, plugintest.Anonymous)
	if err != nil || resp.Status != 200 {
		t.Errorf("after the panics: %d %v", resp.Status, err)
	}
}

func TestBeforeSave(t *testing.T) {
	h := plugintest.New(t, &probe{})
	res, err := h.BeforeSave(pluginsdk.SaveCall{Feature: "notes", Table: "t", Actor: plugintest.Writer, Rows: []pluginsdk.Row{
		{Values: map[string]any{"note": "abc", "big": json.Number("12345678901234567890")}},
		{ID: 7, Values: map[string]any{"note": "bad"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Numbers arrive as json.Number, so an untouched one goes back exactly.
	want0 := map[string]any{"note": "abc", "note_len": json.Number("3"), "big": json.Number("12345678901234567890")}
	if !reflect.DeepEqual(res[0].Values, want0) || res[0].Errors != nil {
		t.Errorf("row 0: %+v", res[0])
	}
	if e := res[1].Errors; len(e) != 1 || e[0] != (pluginsdk.FieldError{Field: "note", Rule: "bad", Message: "bad note", Path: "x[0]"}) {
		t.Errorf("row 1 errors: %+v", e)
	}

	// nil results: every row as sent.
	child := pluginsdk.SaveCall{Feature: "samples", Table: "t", RowTable: "t_samples", Rows: []pluginsdk.Row{{ParentID: 3, Values: map[string]any{"code": "S1"}}, {ParentID: 3}}}
	res, err = h.BeforeSave(child)
	if err != nil || len(res) != 2 || res[0].Values["code"] != "S1" || len(res[1].Values) != 0 {
		t.Errorf("child rows: %+v %v", res, err)
	}

	_, err = h.BeforeSave(pluginsdk.SaveCall{Feature: "notes", Table: "t", Rows: []pluginsdk.Row{{Values: map[string]any{"note": "refuse"}}}})
	var pe *pluginsdk.Error
	if !errors.As(err, &pe) || pe.Code != "refused" || pe.Message != "the probe refuses" {
		t.Errorf("refusal: %v", err)
	}
	_, err = h.BeforeSave(pluginsdk.SaveCall{Feature: "notes", Table: "t", Rows: []pluginsdk.Row{{}, {Values: map[string]any{"note": "short"}}}})
	if err == nil || !strings.Contains(err.Error(), "1 results for 2 rows") {
		t.Errorf("short results: %v", err)
	}
}

func TestAfterSave(t *testing.T) {
	p := &probe{}
	h := plugintest.New(t, p)
	call := pluginsdk.SaveCall{Feature: "notes", Table: "t", Actor: plugintest.Writer, Rows: []pluginsdk.Row{{ID: 9, Values: map[string]any{"note": "x"}}}}
	if err := h.AfterSave(call); err != nil {
		t.Fatal(err)
	}
	call.RowTable = "t" // the harness fills it
	call.Rows[0].Values = map[string]any{"note": "x"}
	if _, got := p.state(); len(got) != 1 || !reflect.DeepEqual(got[0], call) {
		t.Errorf("AfterSave got %+v, want %+v", got, call)
	}
	call.Rows[0].Values["note"] = "fail"
	if err := h.AfterSave(call); err == nil || !strings.Contains(err.Error(), "after save failed") {
		t.Errorf("failing AfterSave: %v", err)
	}
}

func TestResolveFilterAndEnrich(t *testing.T) {
	h := plugintest.New(t, &probe{})
	res, err := h.ResolveFilter(pluginsdk.FilterCall{Operator: "_probe_ids", Table: "t", Field: "note", Value: json.RawMessage(`[3,1]`)})
	if err != nil || !res.UseIDs || !reflect.DeepEqual(res.IDs, []int64{3, 1}) || res.Filter != nil {
		t.Errorf("ids: %+v %v", res, err)
	}
	res, err = h.ResolveFilter(pluginsdk.FilterCall{Operator: "_probe_ids", Value: json.RawMessage(`[]`)})
	if err != nil || !res.UseIDs || res.IDs == nil || len(res.IDs) != 0 {
		t.Errorf("no ids (matches nothing): %+v %v", res, err)
	}
	var pe *pluginsdk.Error
	if _, err := h.ResolveFilter(pluginsdk.FilterCall{Operator: "_probe_ids", Value: json.RawMessage(`"x"`)}); !errors.As(err, &pe) || pe.Code != "invalid_filter" {
		t.Errorf("bad operand: %v", err)
	}
	if _, err := h.ResolveFilter(pluginsdk.FilterCall{Operator: "_probe_both"}); err == nil || errors.As(err, &pe) {
		t.Errorf("filter and ids: %v", err)
	}
	if _, err := h.ResolveFilter(pluginsdk.FilterCall{Operator: "_probe_plain"}); err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), "plain failure") {
		t.Errorf("plain failure: %v", err)
	}

	got, err := h.Enrich(pluginsdk.EnrichCall{Section: "probe_section", Table: "finds", IDs: []int64{5, 6}, Actor: plugintest.Reader})
	want := map[int64]any{
		5: map[string]any{"id": json.Number("5"), "table": "finds", "app": "demo"},
		6: map[string]any{"id": json.Number("6"), "table": "finds", "app": "demo"},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("enrich: %v %v", got, err)
	}
}

func TestHostThroughTheBroker(t *testing.T) {
	host := plugintest.NewFakeHost()
	host.SetRecords("demo", "finds",
		map[string]any{"kind": "pot", "n": 1},
		map[string]any{"kind": "coin", "n": 2},
		map[string]any{"kind": "pot", "n": 3})
	host.SetAppSettings("demo", map[string]string{"lang": "it"})
	p := &probe{}
	h := plugintest.New(t, p, plugintest.WithHost(host), plugintest.WithSettings(json.RawMessage(`{"refuse":false}`)))
	if settings, _ := p.state(); string(settings) != `{"refuse":false}` {
		t.Errorf("settings %s", settings)
	}
	resp, err := h.CallRoute("POST", "/probe/host", nil, plugintest.Reader)
	if err != nil || resp.Status != 200 {
		t.Fatalf("%d %s %v", resp.Status, resp.Body, err)
	}
	var body map[string]any
	if err := resp.JSON(&body); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"rows":               []any{map[string]any{"id": json.Number("3"), "kind": "pot"}},
		"total":              json.Number("2"),
		"ids":                []any{json.Number("1")},
		"state":              []any{map[string]any{"id": json.Number("1"), "k": "last", "v": "x"}},
		"settings":           map[string]any{"lang": "it"},
		"undeclared_refused": true,
	}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("host results:\n got %v\nwant %v", body, want)
	}
	q := host.Queries()
	if len(q) != 1 || q[0].Actor == nil || *q[0].Actor != plugintest.Reader || q[0].Table != "finds" {
		t.Errorf("queries %+v", q)
	}
	if logs := host.Logs(); len(logs) != 1 || logs[0].Message != "probe used the host" || logs[0].Fields["app"] != "demo" {
		t.Errorf("logs %+v", logs)
	}
	if rows := host.SystemRows("demo", "state"); len(rows) != 1 || rows[0]["v"] != "x" {
		t.Errorf("system rows %v", rows)
	}
}

func TestConfigure(t *testing.T) {
	p := &probe{}
	h := plugintest.New(t, p, plugintest.WithoutConfigure())
	resp, _ := h.CallRoute("POST", "/probe/host", nil, plugintest.Reader)
	if resp.Status != 503 {
		t.Errorf("before Configure: %d %s", resp.Status, resp.Body)
	}
	var pe *pluginsdk.Error
	if err := h.Configure(json.RawMessage(`{"refuse":true}`)); !errors.As(err, &pe) || pe.Code != "bad_settings" {
		t.Errorf("refused settings: %v", err)
	}
	// Configure again (as after a restart): the host connection is replaced.
	for range 2 {
		if err := h.Configure(nil); err != nil {
			t.Fatal(err)
		}
	}
	if settings, _ := p.state(); settings != nil {
		t.Errorf("no settings: %q", settings)
	}
	resp, _ = h.CallRoute("POST", "/probe/host", nil, plugintest.Reader)
	if resp.Status != 200 {
		t.Errorf("after Configure: %d %s", resp.Status, resp.Body)
	}
}

func TestIntAndFloat(t *testing.T) {
	ints := map[any]int64{json.Number("12"): 12, json.Number("5.0"): 5, json.Number("1e3"): 1000, " -7 ": -7, 3: 3, int64(4): 4, 2.0: 2,
		json.Number("9007199254740993"): 9007199254740993}
	for in, want := range ints {
		if got, ok := pluginsdk.Int(in); !ok || got != want {
			t.Errorf("Int(%#v) = %d, %v", in, got, ok)
		}
	}
	for _, in := range []any{nil, "x", json.Number("1.5"), 2.5, true, "", json.Number("1e30")} {
		if got, ok := pluginsdk.Int(in); ok {
			t.Errorf("Int(%#v) = %d, want not ok", in, got)
		}
	}
	if f, ok := pluginsdk.Float(json.Number("1.25")); !ok || f != 1.25 {
		t.Errorf("Float: %v %v", f, ok)
	}
	if f, ok := pluginsdk.Float(" 2e1 "); !ok || f != 20 {
		t.Errorf("Float string: %v %v", f, ok)
	}
	for _, in := range []any{nil, "NaN", "Inf", "x", true} {
		if _, ok := pluginsdk.Float(in); ok {
			t.Errorf("Float(%#v) ok", in)
		}
	}
}

// recordEcho answers each row with its Record: what the plugin was given.
type recordEcho struct{}

func (recordEcho) Manifest() pluginsdk.Manifest {
	return pluginsdk.Manifest{Name: "echo_rec", Version: "0.1.0", Features: []pluginsdk.Feature{{
		Name: "dates", BeforeSave: true, DependsOn: []string{"site"},
		Columns: []pluginsdk.Column{{Name: "from_year", Type: "text", DBType: "int"}, {Name: "to_year", Type: "text", DBType: "int"}}}}}
}

func (recordEcho) BeforeSave(_ context.Context, call pluginsdk.SaveCall) ([]pluginsdk.RowResult, error) {
	out := make([]pluginsdk.RowResult, len(call.Rows))
	for i, r := range call.Rows {
		out[i].Values = r.Record
	}
	return out, nil
}

// Row.Record crosses the wire decoded like Values (numbers as
// json.Number); the harness builds it as the server does, from the row
// stored in the fake host overlaid with the row's Values, unless the test
// gives one.
func TestBeforeSaveRecord(t *testing.T) {
	host := plugintest.NewFakeHost()
	host.SetRecords("demo", "sites", map[string]any{"id": 4, "from_year": -100, "to_year": 50, "site": "Veii"})
	h := plugintest.New(t, recordEcho{}, plugintest.WithHost(host))
	res, err := h.BeforeSave(pluginsdk.SaveCall{Feature: "dates", Table: "sites", Actor: plugintest.Writer, Rows: []pluginsdk.Row{
		{ID: 4, Values: map[string]any{"to_year": 75}},
		{Values: map[string]any{"from_year": 1}},
		{ID: 4, Values: map[string]any{"to_year": 75}, Record: map[string]any{"id": 4, "from_year": 60, "to_year": 75}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"id": json.Number("4"), "from_year": json.Number("-100"), "to_year": json.Number("75"), "site": "Veii"},
		{"from_year": json.Number("1")},
		{"id": json.Number("4"), "from_year": json.Number("60"), "to_year": json.Number("75")},
	}
	for i, w := range want {
		if !reflect.DeepEqual(res[i].Values, w) {
			t.Errorf("row %d: Record %v, want %v", i, res[i].Values, w)
		}
	}
}
