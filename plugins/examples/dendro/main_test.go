package main

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

func TestConformance(t *testing.T) {
	plugintest.Conformance(t, &dendro{model: DefaultModel})
}

// TestBeforeSave: partial updates are completed from the stored row as
// the server hands it over (the harness builds Record from the fake
// host's rows, as the server does from the locked row).
func TestBeforeSave(t *testing.T) {
	host := plugintest.NewFakeHost()
	host.SetRecords("demo", "samples",
		map[string]any{"id": 7, colFirst: 1400, colLast: 1490, colSapwood: 12, colBark: false, colFrom: 1490, colTo: 1528},
		map[string]any{"id": 8, colFirst: 1400, colLast: 1490, colSapwood: nil, colBark: true, colFrom: 1490, colTo: 1490})
	h := plugintest.New(t, &dendro{model: DefaultModel}, plugintest.WithHost(host))
	cases := []struct {
		name     string
		row      pluginsdk.Row
		from, to any    // the computed range when accepted
		errField string // the field refused, if any
	}{
		{"new sample", pluginsdk.Row{Values: map[string]any{colFirst: 1300, colLast: 1420, colSapwood: 3}}, int64(1427), int64(1467), ""},
		{"new sample without rings", pluginsdk.Row{Values: map[string]any{}}, nil, nil, ""},
		{"last ring alone, stored sapwood", pluginsdk.Row{ID: 7, Values: map[string]any{colLast: 1500}}, int64(1500), int64(1538), ""},
		{"sapwood alone, stored last ring", pluginsdk.Row{ID: 7, Values: map[string]any{colSapwood: 2}}, int64(1498), int64(1538), ""},
		{"bark edge stored", pluginsdk.Row{ID: 8, Values: map[string]any{colLast: 1495}}, int64(1495), int64(1495), ""},
		{"first ring after the stored last", pluginsdk.Row{ID: 7, Values: map[string]any{colFirst: 1491}}, nil, nil, colFirst},
		{"negative sapwood", pluginsdk.Row{Values: map[string]any{colLast: 1490, colSapwood: -2}}, nil, nil, colSapwood},
		{"text for a year", pluginsdk.Row{Values: map[string]any{colLast: "late"}}, nil, nil, colLast},
	}
	call := pluginsdk.SaveCall{Feature: featureName, Table: "samples", Actor: plugintest.Writer}
	for _, c := range cases {
		call.Rows = append(call.Rows, c.row)
	}
	res, err := h.BeforeSave(call)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		r := res[i]
		if c.errField != "" {
			if len(r.Errors) != 1 || r.Errors[0].Field != c.errField {
				t.Errorf("%s: errors %+v, want one on %s", c.name, r.Errors, c.errField)
			}
			continue
		}
		if len(r.Errors) > 0 {
			t.Errorf("%s: refused: %+v", c.name, r.Errors)
			continue
		}
		from, _ := pluginsdk.Int(r.Values[colFrom])
		to, _ := pluginsdk.Int(r.Values[colTo])
		if !sameAny(r.Values[colFrom], from, c.from) || !sameAny(r.Values[colTo], to, c.to) {
			t.Errorf("%s: felling %v–%v, want %v–%v", c.name, r.Values[colFrom], r.Values[colTo], c.from, c.to)
		}
		if c.row.ID == 0 && r.Values[colBark] != false {
			t.Errorf("%s: a new sample's bark_edge is %v, want the default false", c.name, r.Values[colBark])
		}
	}
}

func sameAny(raw any, n int64, want any) bool {
	if want == nil {
		return raw == nil
	}
	return raw != nil && n == want.(int64)
}

func TestFelledBetween(t *testing.T) {
	h := plugintest.New(t, &dendro{model: DefaultModel})
	for _, bad := range []string{`"1490"`, `[1490]`, `[1490, 1500, 1510]`, `[1500, 1490]`, `"1500,1490"`, `"a,b"`, `"[1490]"`, `{"from":1}`} {
		_, err := h.ResolveFilter(pluginsdk.FilterCall{Operator: "_felled_between", Table: "samples", Field: colFrom,
			Value: json.RawMessage(bad), Actor: plugintest.Reader})
		var pe *pluginsdk.Error
		if !errors.As(err, &pe) || pe.Code != "invalid_filter" {
			t.Errorf("%s: %v, want invalid_filter", bad, err)
		}
	}
	want := `{"_and":[{"felling_from":{"_lte":1500}},{"_or":[{"felling_to":{"_gte":1480}},{"felling_to":{"_null":true}}]}]}`
	for _, operand := range []string{`[1480, 1500]`, `"[1480,1500]"`, `" 1480 , 1500 "`} {
		res, err := h.ResolveFilter(pluginsdk.FilterCall{Operator: "_felled_between", Table: "samples", Field: "dendro",
			Value: json.RawMessage(operand), Actor: plugintest.Reader})
		if err != nil || res.UseIDs {
			t.Fatalf("%s: %+v %v", operand, res, err)
		}
		if b, _ := json.Marshal(res.Filter); string(b) != want {
			t.Errorf("%s: filter %s, want %s", operand, b, want)
		}
	}
}
