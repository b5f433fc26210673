package main

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

func TestConformance(t *testing.T) {
	plugintest.Conformance(t, munsell{})
}

func TestParse(t *testing.T) {
	valid := map[string]string{
		"10YR 5/3":       "10YR 5/3",
		"10yr5/3":        "10YR 5/3",
		"  10 YR 5 / 3 ": "10YR 5/3",
		"2.5Y 6/4":       "2.5Y 6/4",
		"2,5y 6/4":       "2.5Y 6/4",
		"7.50YR 2.5/1":   "7.5YR 2.5/1",
		"5R 4/14":        "5R 4/14",
		"10GY 5/1":       "10GY 5/1",
		"5PB 3/26":       "5PB 3/26",
		"10RP 0/0":       "10RP 0/0",
		"5BG 10/2":       "5BG 10/2",
		"N 5/":           "N 5/",
		"n5":             "N 5/",
		"N 2.5/0":        "N 2.5/",
		"N 10/":          "N 10/",
	}
	for in, want := range valid {
		c, err := Parse(in)
		if err != nil || c.Notation != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, c.Notation, err, want)
		}
	}
	invalid := []string{"", "blue", "10YR", "10YR 5", "10YR 5/", "3YR 5/3", "12.5YR 5/3", "0YR 5/3",
		"10YR 11/3", "10YR 5/27", "10XR 5/3", "10YR -5/3", "N 5/2", "5N 5/", "10YR 5/3 wet", "YR 5/3"}
	for _, in := range invalid {
		if c, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", in, c)
		}
	}
	c, _ := Parse("7.5yr 4/6")
	want := Colour{Notation: "7.5YR 4/6", Hue: "7.5YR", HueStep: 7.5, Family: "YR", Value: 4, Chroma: 6}
	if c != want {
		t.Errorf("Parse = %+v, want %+v", c, want)
	}
}

func TestBeforeSaveNormalisesAndRefuses(t *testing.T) {
	h := plugintest.New(t, munsell{})
	res, err := h.BeforeSave(pluginsdk.SaveCall{Feature: "munsell", Table: "layers", Actor: plugintest.Writer, Rows: []pluginsdk.Row{
		{Values: map[string]any{column: "10yr5/3"}},
		{ID: 4, Values: map[string]any{column: "  "}},
		{ID: 5, Values: map[string]any{column: nil}},
		{ID: 6, Values: map[string]any{}},
		{Values: map[string]any{column: "blue"}},
		{Values: map[string]any{column: 12}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	wantValues := []map[string]any{{column: "10YR 5/3"}, {column: nil}, {column: nil}, {}}
	for i, want := range wantValues {
		if !reflect.DeepEqual(res[i].Values, want) || len(res[i].Errors) != 0 {
			t.Errorf("row %d: %+v, want values %v and no errors", i, res[i], want)
		}
	}
	for i, rule := range map[int]string{4: "munsell", 5: "type"} {
		if errs := res[i].Errors; len(errs) != 1 || errs[0].Field != column || errs[0].Rule != rule {
			t.Errorf("row %d: errors %+v, want one %q error on %s", i, errs, rule, column)
		}
	}
}

func TestParseRoute(t *testing.T) {
	h := plugintest.New(t, munsell{})
	resp, err := h.CallRoute("GET", "/munsell/parse?q=10yr+5%2F3", nil, plugintest.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := resp.JSON(&body); err != nil || resp.Status != 200 {
		t.Fatalf("status %d, body %s, %v", resp.Status, resp.Body, err)
	}
	want := map[string]any{"status": "success", "notation": "10YR 5/3", "hue": "10YR", "hue_step": json.Number("10"),
		"hue_family": "YR", "value": json.Number("5"), "chroma": json.Number("3"), "neutral": false}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("body %v, want %v", body, want)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}

	for _, c := range []struct {
		target string
		actor  pluginsdk.Actor
		status int
		code   string
	}{
		{"/munsell/parse", plugintest.Reader, 400, "missing_parameter"},
		{"/munsell/parse?q=10YR+5/99", plugintest.Reader, 400, "invalid_munsell"},
		{"/munsell/parse?q=N+5/", plugintest.Anonymous, 401, "unauthenticated"},
		{"/munsell/nothing", plugintest.Reader, 404, "route_not_found"},
	} {
		resp, err := h.CallRoute("GET", c.target, nil, c.actor)
		var body map[string]any
		if err != nil || resp.JSON(&body) != nil || resp.Status != c.status || body["code"] != c.code {
			t.Errorf("%s: status %d, body %s, %v; want %d %s", c.target, resp.Status, resp.Body, err, c.status, c.code)
		}
	}
}

func TestHueFilter(t *testing.T) {
	h := plugintest.New(t, munsell{})
	rows := []string{"10YR 5/3", "10Y 6/1", "2.5YR 4/6", "N 5/", "5Y 7/2"}
	for operand, want := range map[string][]string{
		"10YR":  {"10YR 5/3"},
		"10y":   {"10Y 6/1"},
		"yr":    {"10YR 5/3", "2.5YR 4/6"},
		"N":     {"N 5/"},
		"2,5YR": {"2.5YR 4/6"},
	} {
		res, err := h.ResolveFilter(pluginsdk.FilterCall{Operator: "_munsell_hue", Table: "layers", Field: column,
			Value: json.RawMessage(`"` + operand + `"`), Actor: plugintest.Reader})
		if err != nil || res.UseIDs {
			t.Fatalf("%s: %+v, %v", operand, res, err)
		}
		var got []string
		for _, r := range rows {
			ok, err := plugintest.Match(res.Filter, map[string]any{column: r})
			if err != nil {
				t.Fatalf("%s: filter %v: %v", operand, res.Filter, err)
			}
			if ok {
				got = append(got, r)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: filter %v selects %v, want %v", operand, res.Filter, got, want)
		}
	}
	// Keyed by the column or by the plugin's name, the condition is on
	// the column.
	for _, key := range []string{column, "munsell"} {
		res, _ := h.ResolveFilter(pluginsdk.FilterCall{Operator: "_munsell_hue", Field: key, Value: json.RawMessage(`"10YR"`)})
		want := map[string]any{column: map[string]any{"_starts_with": "10YR "}}
		if !reflect.DeepEqual(res.Filter, want) {
			t.Errorf("keyed by %s: filter %v, want %v", key, res.Filter, want)
		}
	}

	for _, bad := range []string{`"3YR"`, `"5N"`, `"purple"`, `12`, `{}`} {
		_, err := h.ResolveFilter(pluginsdk.FilterCall{Operator: "_munsell_hue", Field: column, Value: json.RawMessage(bad)})
		var pe *pluginsdk.Error
		if !errors.As(err, &pe) || pe.Code != "invalid_filter" {
			t.Errorf("operand %s: %v, want a invalid_filter error", bad, err)
		}
	}
}
