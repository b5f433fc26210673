package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/plugins/chronology/chrono"
	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

func TestConformance(t *testing.T) {
	plugintest.Conformance(t, newPlugin())
}

func num(n int) json.Number { return json.Number(fmt.Sprint(n)) }

// save runs BeforeSave on rows of the sites table as a writer.
func save(t *testing.T, h *plugintest.Harness, rows ...pluginsdk.Row) []pluginsdk.RowResult {
	t.Helper()
	res, err := h.BeforeSave(pluginsdk.SaveCall{Feature: feature, Table: "sites", Rows: rows, Actor: plugintest.Writer})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestBeforeSaveFillsAndNormalises(t *testing.T) {
	h := plugintest.New(t, newPlugin())
	for _, c := range []struct {
		name string
		in   map[string]any
		want map[string]any
	}{
		{"label alone fills the bounds", map[string]any{colLabel: " c4l BCE "},
			map[string]any{colLabel: "c4l BCE", colFrom: num(-325), colTo: num(-301)}},
		{"range", map[string]any{colLabel: "c1 CE/c2 CE"},
			map[string]any{colLabel: "c1 CE/c2 CE", colFrom: num(1), colTo: num(200)}},
		{"ante quem: from open", map[string]any{colLabel: "?/c3 CE"},
			map[string]any{colLabel: "?/c3 CE", colFrom: nil, colTo: num(300)}},
		{"post quem: to open", map[string]any{colLabel: "c2 BCE/?"},
			map[string]any{colLabel: "c2 BCE/?", colFrom: num(-200), colTo: nil}},
		{"undated", map[string]any{colLabel: "?"},
			map[string]any{colLabel: "?", colFrom: nil, colTo: nil}},
		{"a number as label is a year", map[string]any{colLabel: 79},
			map[string]any{colLabel: "79", colFrom: num(79), colTo: num(79)}},
		{"label with bounds is free text", map[string]any{colLabel: "Late Roman", colFrom: 300, colTo: "450"},
			map[string]any{colLabel: "Late Roman", colFrom: num(300), colTo: num(450)}},
		{"label with one bound is kept as sent", map[string]any{colLabel: "Late Roman", colFrom: 300},
			map[string]any{colLabel: "Late Roman", colFrom: num(300)}},
		{"blank label is null, bounds untouched", map[string]any{colLabel: "  "},
			map[string]any{colLabel: nil}},
		{"numeric text years", map[string]any{colFrom: " -250 ", colTo: "-1"},
			map[string]any{colFrom: num(-250), colTo: num(-1)}},
		{"blank years are null", map[string]any{colFrom: "", colTo: nil},
			map[string]any{colFrom: nil, colTo: nil}},
		{"from equal to to", map[string]any{colFrom: -44, colTo: -44},
			map[string]any{colFrom: num(-44), colTo: num(-44)}},
		{"certainty word", map[string]any{colCertainty: "Probabile"}, map[string]any{colCertainty: num(2)}},
		{"certainty legacy word", map[string]any{colCertainty: "certa"}, map[string]any{colCertainty: num(1)}},
		{"certainty possible", map[string]any{colCertainty: "possible"}, map[string]any{colCertainty: num(3)}},
		{"certainty text level", map[string]any{colCertainty: "2"}, map[string]any{colCertainty: num(2)}},
		{"certainty level", map[string]any{colCertainty: 3}, map[string]any{colCertainty: num(3)}},
		{"certainty blank", map[string]any{colCertainty: ""}, map[string]any{colCertainty: nil}},
		{"period trimmed", map[string]any{colPeriod: "  Roman  "}, map[string]any{colPeriod: "Roman"}},
		{"period blank", map[string]any{colPeriod: " "}, map[string]any{colPeriod: nil}},
		{"nothing sent", map[string]any{}, map[string]any{}},
	} {
		res := save(t, h, pluginsdk.Row{Values: c.in})
		if len(res[0].Errors) > 0 || !reflect.DeepEqual(res[0].Values, c.want) {
			t.Errorf("%s: %v → %v %+v, want %v", c.name, c.in, res[0].Values, res[0].Errors, c.want)
		}
	}
}

func TestBeforeSaveRefuses(t *testing.T) {
	h := plugintest.New(t, newPlugin())
	for _, c := range []struct {
		in          map[string]any
		field, rule string
	}{
		{map[string]any{colLabel: "Roman imperial"}, colLabel, ruleLabel},
		{map[string]any{colLabel: "c4 BCE/c5 BCE"}, colLabel, ruleLabel},
		{map[string]any{colLabel: true}, colLabel, ruleType},
		{map[string]any{colFrom: "abc"}, colFrom, ruleInteger},
		{map[string]any{colTo: 12.5}, colTo, ruleInteger},
		{map[string]any{colFrom: 0}, colFrom, ruleRange},
		{map[string]any{colTo: 20_000_000}, colTo, ruleRange},
		{map[string]any{colFrom: 100, colTo: -100}, colFrom, ruleOrder},
		{map[string]any{colCertainty: 5}, colCertainty, ruleCertainty},
		{map[string]any{colCertainty: "maybe"}, colCertainty, ruleCertainty},
		{map[string]any{colCertainty: false}, colCertainty, ruleCertainty},
		{map[string]any{colPeriod: []any{"x"}}, colPeriod, ruleType},
	} {
		res := save(t, h, pluginsdk.Row{Values: c.in})
		errs := res[0].Errors
		if len(errs) != 1 || errs[0].Field != c.field || errs[0].Rule != c.rule || errs[0].Message == "" {
			t.Errorf("%v: errors %+v, want one %s error on %s", c.in, errs, c.rule, c.field)
		}
	}
}

// A huge value is never echoed back: messages repeat at most its start.
func TestRefusalsDoNotEchoLargeInput(t *testing.T) {
	h := plugintest.New(t, newPlugin())
	huge := strings.Repeat("Roman ", 40_000) // 240 KB
	for _, in := range []map[string]any{{colLabel: huge}, {colFrom: huge}, {colCertainty: huge}} {
		res := save(t, h, pluginsdk.Row{Values: in})
		for _, e := range res[0].Errors {
			if len(e.Message) > 400 {
				t.Errorf("a %d-byte message echoes the input", len(e.Message))
			}
		}
		if len(res[0].Errors) == 0 {
			t.Errorf("a 240 KB value was accepted")
		}
	}
	resp, err := h.CallRoute("GET", "/chrono/parse?q="+url.QueryEscape(huge), nil, plugintest.Reader)
	if err != nil || resp.Status != 400 || len(resp.Body) > 600 {
		t.Errorf("parse of a huge label: %d, %d bytes, %v", resp.Status, len(resp.Body), err)
	}
}

// An update sending one bound is checked against the bound stored on the
// record: the row's Record (built by the harness from the fake host's
// row, as the server builds it), never a read of the plugin's own.
func TestBeforeSaveChecksStoredBound(t *testing.T) {
	host := plugintest.NewFakeHost()
	host.SetRecords("demo", "sites",
		map[string]any{"id": 7, colFrom: -100, colTo: -50},
		map[string]any{"id": 8, colFrom: nil, colTo: 300})
	h := plugintest.New(t, newPlugin(), plugintest.WithHost(host))
	res := save(t, h,
		pluginsdk.Row{ID: 7, Values: map[string]any{colTo: -200}},   // before the stored from
		pluginsdk.Row{ID: 7, Values: map[string]any{colFrom: -60}},  // fine
		pluginsdk.Row{ID: 7, Values: map[string]any{colFrom: -40}},  // after the stored to
		pluginsdk.Row{ID: 8, Values: map[string]any{colFrom: 500}},  // after the stored to
		pluginsdk.Row{ID: 8, Values: map[string]any{colTo: 100}},    // ante quem stays open
		pluginsdk.Row{ID: 9, Values: map[string]any{colFrom: 1000}}, // not visible: the server decides
	)
	wantErr := []string{colTo, "", colFrom, colFrom, "", ""}
	for i, field := range wantErr {
		errs := res[i].Errors
		switch {
		case field == "" && len(errs) > 0:
			t.Errorf("row %d: unexpected errors %+v", i, errs)
		case field != "" && (len(errs) != 1 || errs[0].Field != field || errs[0].Rule != ruleOrder):
			t.Errorf("row %d: errors %+v, want an order error on %s", i, errs, field)
		}
	}
	if qs := host.Queries(); len(qs) != 0 {
		t.Errorf("queries %+v: the stored bounds come with the row's Record", qs)
	}
	// The Record given is what counts, not what a read would find: the
	// server writes the answer only while the record is at that state.
	res = save(t, h, pluginsdk.Row{ID: 7, Values: map[string]any{colTo: -80},
		Record: map[string]any{"id": 7, colFrom: -70, colTo: -80}})
	if errs := res[0].Errors; len(errs) != 1 || errs[0].Field != colTo || errs[0].Rule != ruleOrder {
		t.Errorf("against the given Record (from -70): %+v, want an order error on %s", errs, colTo)
	}
}

func TestParseRoute(t *testing.T) {
	h := plugintest.New(t, newPlugin())
	for q, want := range map[string]map[string]any{
		"c4l+BCE":       {"from": num(-325), "to": num(-301), "kind": "single"},
		"c1+CE%2Fc2+CE": {"from": num(1), "to": num(200), "kind": "range"},
		"%3F%2Fc3+CE":   {"from": nil, "to": num(300), "kind": "ante_quem"},
		"c2+BCE%2F%3F":  {"from": num(-200), "to": nil, "kind": "post_quem"},
		"-250%2F100":    {"from": num(-250), "to": num(100), "kind": "range"},
		"500+BCE":       {"from": num(-500), "to": num(-500), "kind": "single"},
		"%3F":           {"from": nil, "to": nil, "kind": "undated"},
	} {
		resp, err := h.CallRoute("GET", "/chrono/parse?q="+q, nil, plugintest.Reader)
		var body map[string]any
		if err != nil || resp.Status != 200 || resp.JSON(&body) != nil {
			t.Fatalf("%s: %d %s %v", q, resp.Status, resp.Body, err)
		}
		for k, v := range want {
			if !reflect.DeepEqual(body[k], v) {
				t.Errorf("%s: %s = %v, want %v (%s)", q, k, body[k], v, resp.Body)
			}
		}
	}
	expectError(t, h, "/chrono/parse", plugintest.Reader, 400, "parameter_missing")
	expectError(t, h, "/chrono/parse?q=Roman", plugintest.Reader, 400, "invalid_label")
	expectError(t, h, "/chrono/parse?q=c4+BCE", plugintest.Anonymous, 401, "unauthenticated")
}

// expectError calls a GET route and checks the error answer.
func expectError(t *testing.T, h *plugintest.Harness, target string, actor pluginsdk.Actor, status int, code string) {
	t.Helper()
	resp, err := h.CallRoute("GET", target, nil, actor)
	var body map[string]any
	if err != nil || resp.JSON(&body) != nil || resp.Status != status || body["code"] != code || body["status"] != "error" {
		t.Errorf("%s: %d %s %v; want %d %s", target, resp.Status, resp.Body, err, status, code)
	}
}

func overlap(t *testing.T, h *plugintest.Harness, operand string) (pluginsdk.FilterResult, error) {
	t.Helper()
	return h.ResolveFilter(pluginsdk.FilterCall{Operator: opOverlap, Table: "sites", Field: colFrom,
		Value: json.RawMessage(operand), Actor: plugintest.Reader})
}

// The operator's filter, evaluated by plugintest.Match, selects exactly
// what chrono.Overlaps says, open bounds included.
func TestOverlapFilterMatchesOverlaps(t *testing.T) {
	h := plugintest.New(t, newPlugin())
	years := []*int{nil, ip(-400), ip(-350), ip(-330), ip(-320), ip(-300), ip(1)}
	queries := [][2]int{{-350, -320}, {-320, -350}, {-1000, -900}, {-330, -330}, {-1, 1}}
	for _, q := range queries {
		res, err := overlap(t, h, fmt.Sprintf("[%d, %d]", q[0], q[1]))
		if err != nil || res.UseIDs {
			t.Fatalf("%v: %+v %v", q, res, err)
		}
		for _, from := range years {
			for _, to := range years {
				if from != nil && to != nil && *from > *to {
					continue
				}
				row := map[string]any{colFrom: val(from), colTo: val(to)}
				got, err := plugintest.Match(res.Filter, row)
				if err != nil {
					t.Fatalf("filter %v: %v", res.Filter, err)
				}
				if want := chrono.Overlaps(from, to, q[0], q[1]); got != want {
					t.Errorf("query %v, record %v..%v: matched %v, want %v (filter %v)", q, show(row[colFrom]), show(row[colTo]), got, want, res.Filter)
				}
			}
		}
	}
}

func TestOverlapOpenBounds(t *testing.T) {
	h := plugintest.New(t, newPlugin())
	res, err := overlap(t, h, `{"from": -350, "to": -320}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		from, to any
		want     bool
	}{
		{"post quem starting inside", -330, nil, true},
		{"post quem starting before: open upwards", -1000, nil, true},
		{"post quem starting after", -300, nil, false},
		{"ante quem ending inside", nil, -340, true},
		{"ante quem ending after: open downwards", nil, 500, true},
		{"ante quem ending before", nil, -400, false},
		{"undated never matches", nil, nil, false},
		{"closed inside", -340, -330, true},
		{"closed touching the start", -400, -350, true},
		{"closed touching the end", -320, -300, true},
		{"closed before", -500, -351, false},
		{"closed after", -319, -1, false},
		{"closed around", -1000, 1000, true},
	} {
		got, err := plugintest.Match(res.Filter, map[string]any{colFrom: c.from, colTo: c.to})
		if err != nil || got != c.want {
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		}
	}
}

func TestOverlapOperands(t *testing.T) {
	h := plugintest.New(t, newPlugin())
	base, _ := overlap(t, h, `[-350, -320]`)
	for _, same := range []string{`{"from": -350, "to": -320}`, `["-350", "-320"]`, `[-320, -350]`,
		`{"to": "-320", "from": "-350"}`, `[-350, "-320"]`} {
		res, err := overlap(t, h, same)
		if err != nil || !reflect.DeepEqual(res.Filter, base.Filter) {
			t.Errorf("%s: %v %v, want %v", same, res.Filter, err, base.Filter)
		}
	}
	// Tokens: from takes the first year, to the last.
	res, err := overlap(t, h, `["c4 BCE", "c4 BCE"]`)
	want, _ := overlap(t, h, `[-400, -301]`)
	if err != nil || !reflect.DeepEqual(res.Filter, want.Filter) {
		t.Errorf("tokens: %v %v, want %v", res.Filter, err, want.Filter)
	}
	// One open query side.
	res, err = overlap(t, h, `{"from": -350}`)
	if err != nil {
		t.Fatal(err)
	}
	for row, want := range map[[2]int]bool{{-1000, -351}: false, {-1000, -350}: true, {5000, 6000}: true} {
		if got, _ := plugintest.Match(res.Filter, map[string]any{colFrom: row[0], colTo: row[1]}); got != want {
			t.Errorf("from only, record %v: %v, want %v", row, got, want)
		}
	}
	res, err = overlap(t, h, `[null, -320]`)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := plugintest.Match(res.Filter, map[string]any{colFrom: -319, colTo: 10}); got {
		t.Errorf("to only: a record starting after matched")
	}

	for _, bad := range []string{`"x"`, `""`, `1`, `null`, `{}`, `[]`, `[1]`, `[1, 2, 3]`, `{"form": 1, "to": 2}`,
		`[0, 5]`, `[null, null]`, `["x", 5]`, `[true, 5]`, `[[1], 5]`, `[1, 99999999999]`, `{"from":"x"}`} {
		_, err := overlap(t, h, bad)
		var pe *pluginsdk.Error
		if !errors.As(err, &pe) || pe.Code != "invalid_filter" {
			t.Errorf("operand %s: %v, want invalid_filter", bad, err)
		}
	}
	// Keyed by the plugin's name, the same window.
	byName, err := h.ResolveFilter(pluginsdk.FilterCall{Operator: opOverlap, Field: pluginName, Value: json.RawMessage(`[-350, -320]`)})
	byField, _ := h.ResolveFilter(pluginsdk.FilterCall{Operator: opOverlap, Field: colFrom, Value: json.RawMessage(`[-350, -320]`)})
	if err != nil || !reflect.DeepEqual(byName.Filter, byField.Filter) {
		t.Errorf("keyed by the plugin's name: %v %v, want %v", byName.Filter, err, byField.Filter)
	}
	_, err = h.ResolveFilter(pluginsdk.FilterCall{Operator: opOverlap, Field: colTo, Value: json.RawMessage(`[1, 2]`)})
	var pe *pluginsdk.Error
	if !errors.As(err, &pe) || pe.Code != "invalid_filter" {
		t.Errorf("keyed by chrono_to: %v, want invalid_filter", err)
	}
}

func ip(v int) *int { return &v }

func val(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
