package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

// A small excavation: sites → layers (lookup "site") → finds (lookup
// "layer"); samples hang off sites without chronology; sites_radiocarbon
// is a plugin child table. Chronology is active on layers and finds.
func excavation() pluginsdk.Catalog {
	chron := map[string]bool{feature: true}
	return pluginsdk.Catalog{Tables: []pluginsdk.CatalogTable{
		{Name: "sites", Label: "Sites", IDField: "code"},
		{Name: "layers", Label: "Layers", IDField: "us", Features: chron,
			Fields: []pluginsdk.CatalogField{{Name: "site", Type: "select", DBType: "int", IDFromTb: "sites"}}},
		{Name: "finds", Label: "Finds", Features: chron,
			Fields: []pluginsdk.CatalogField{{Name: "layer", Type: "select", DBType: "int", IDFromTb: "layers"}}},
		{Name: "samples", Label: "Samples", Features: map[string]bool{feature: false},
			Fields: []pluginsdk.CatalogField{{Name: "site", Type: "select", DBType: "int", IDFromTb: "sites"}}},
		{Name: "sites_radiocarbon", IsPlugin: true, PluginOf: "sites"},
	}}
}

func excavationHost() *plugintest.FakeHost {
	host := plugintest.NewFakeHost()
	host.SetCatalog("demo", excavation())
	host.SetRecords("demo", "sites",
		map[string]any{"id": 1, "code": "POM"},
		map[string]any{"id": 2, "code": "HER"})
	host.SetRecords("demo", "layers",
		map[string]any{"id": 10, "site": 1, "us": "US 10", colFrom: -400, colTo: -301, colLabel: "c4 BCE", colCertainty: 1},
		map[string]any{"id": 11, "site": 1, "us": "US 11", colFrom: -350, colTo: -301, colLabel: "c4m BCE/c4 BCE", colCertainty: 2},
		map[string]any{"id": 12, "site": 1, "us": nil, colFrom: nil, colTo: -200, colLabel: "?/c2 BCE"},
		map[string]any{"id": 13, "site": 1, "us": "US 13", colFrom: nil, colTo: nil},
		map[string]any{"id": 20, "site": 2, "us": "US 20", colFrom: 1, colTo: 100, colLabel: "c1 CE"})
	host.SetRecords("demo", "finds",
		map[string]any{"id": 100, "layer": 10, colFrom: -380, colTo: -360},
		map[string]any{"id": 101, "layer": 10, colFrom: -300, colTo: nil, colLabel: "c3 BCE/?"},
		map[string]any{"id": 102, "layer": 11, colFrom: -340, colTo: -330},
		map[string]any{"id": 103, "layer": 20, colFrom: 50, colTo: 60})
	host.SetRecords("demo", "samples", map[string]any{"id": 5, "site": 1})
	return host
}

func getJSON(t *testing.T, h *plugintest.Harness, target string) map[string]any {
	t.Helper()
	resp, err := h.CallRoute("GET", target, nil, plugintest.Reader)
	var body map[string]any
	if err != nil || resp.Status != 200 || resp.JSON(&body) != nil || body["status"] != "success" {
		t.Fatalf("%s: %d %s %v", target, resp.Status, resp.Body, err)
	}
	return body
}

// keys lists "tb:id" of the timeline's records, in order.
func keys(body map[string]any) []string {
	var out []string
	for _, r := range body["records"].([]any) {
		rec := r.(map[string]any)
		out = append(out, fmt.Sprintf("%s:%s", rec["tb"], rec["id"]))
	}
	return out
}

func TestTimeline(t *testing.T) {
	host := excavationHost()
	h := plugintest.New(t, newPlugin(), plugintest.WithHost(host))

	// Every chronology table by default; undated rows never appear; ordered
	// by from with ante quem first.
	body := getJSON(t, h, "/chrono/timeline")
	want := []string{"layers:12", "layers:10", "finds:100", "layers:11", "finds:102", "finds:101", "layers:20", "finds:103"}
	if got := keys(body); !reflect.DeepEqual(got, want) {
		t.Errorf("records %v, want %v", got, want)
	}
	if body["total"] != json.Number("8") || body["truncated"] != false {
		t.Errorf("total %v truncated %v", body["total"], body["truncated"])
	}
	first := body["records"].([]any)[0].(map[string]any)
	wantFirst := map[string]any{"tb": "layers", "id": json.Number("12"), "label": "12", "from": nil,
		"to": json.Number("-200"), "label_text": "?/c2 BCE", "certainty": nil}
	if !reflect.DeepEqual(first, wantFirst) {
		t.Errorf("first record %v, want %v (no us: the id is the label)", first, wantFirst)
	}
	second := body["records"].([]any)[1].(map[string]any)
	if second["label"] != "US 10" || second["certainty"] != json.Number("1") {
		t.Errorf("second record %v: want the id_field as label and certainty 1", second)
	}

	// The window rules: from keeps to ≥ from or open; to keeps from ≤ to
	// or open.
	for target, want := range map[string][]string{
		"/chrono/timeline?from=-310&to=-200&tb[]=finds":             {"finds:101"},
		"/chrono/timeline?from=-310&tb[]=layers":                    {"layers:12", "layers:10", "layers:11", "layers:20"},
		"/chrono/timeline?to=-390&tb[]=layers&tb[]=finds":           {"layers:12", "layers:10"},
		"/chrono/timeline?from=c1+CE&tb=finds,layers":               {"finds:101", "layers:20", "finds:103"},
		"/chrono/timeline?from=-1000&to=-900&tb[]=finds&tb[]=finds": {},
	} {
		got := keys(getJSON(t, h, target))
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", target, got, want)
		}
	}
	for _, q := range host.Queries() {
		if q.Actor == nil || q.Actor.UserID != plugintest.Reader.UserID {
			t.Errorf("query of %s ran as %+v, want the caller", q.Table, q.Actor)
		}
	}

	// The same records grouped as BraDypUS's client reads them: tables in
	// the catalog's order, each with its records in the timeline's order.
	grouped := getJSON(t, h, "/chrono/timeline?tb[]=finds&tb[]=layers&tb[]=finds")
	var groups []string
	for _, g := range grouped["tables"].([]any) {
		g := g.(map[string]any)
		var ids []string
		for _, r := range g["records"].([]any) {
			ids = append(ids, fmt.Sprint(r.(map[string]any)["id"]))
		}
		groups = append(groups, fmt.Sprintf("%s(%s):%v", g["tb_id"], g["tb_label"], ids))
	}
	if want := []string{"finds(Finds):[100 102 101 103]", "layers(Layers):[12 10 11 20]"}; !slices.Equal(groups, want) {
		t.Errorf("tables %v, want %v", groups, want)
	}
	rec := grouped["tables"].([]any)[1].(map[string]any)["records"].([]any)[1].(map[string]any)
	wantRec := map[string]any{"id": json.Number("10"), "label": "US 10", "from": json.Number("-400"), "to": json.Number("-301"),
		"chrono_label": "c4 BCE", "certainty": json.Number("1"), "period": nil}
	if !reflect.DeepEqual(rec, wantRec) {
		t.Errorf("grouped record %v, want %v", rec, wantRec)
	}
	if empty := getJSON(t, h, "/chrono/timeline?from=-1000&to=-900&tb[]=finds"); !reflect.DeepEqual(empty["tables"], []any{}) {
		t.Errorf("tables of an empty window: %v", empty["tables"])
	}

	// A table without the feature: skipped, as BraDypUS does, and said why.
	for target, want := range map[string][]string{
		"/chrono/timeline?tb[]=samples":                  {},
		"/chrono/timeline?tb[]=samples&tb[]=finds":       {"finds:100", "finds:102", "finds:101", "finds:103"},
		"/chrono/timeline?tb[]=samples&tb[]=samples":     {},
		"/chrono/timeline?tb[]=finds":                    nil, // no reason
		"/chrono/timeline?from=-1000&to=-900&tb[]=finds": nil,
	} {
		body := getJSON(t, h, target)
		if want == nil {
			if _, ok := body["reason"]; ok {
				t.Errorf("%s: reason %v on a table with the feature", target, body["reason"])
			}
			continue
		}
		if got := keys(body); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", target, got, want)
		}
		if body["reason"] != "feature_not_active" || body["message"] != `chronology is not active on samples` ||
			!reflect.DeepEqual(body["inactive"], []any{"samples"}) {
			t.Errorf("%s: reason %v message %v inactive %v", target, body["reason"], body["message"], body["inactive"])
		}
	}
	expectError(t, h, "/chrono/timeline?tb[]=nowhere", plugintest.Reader, 404, "table_not_found")
	expectError(t, h, "/chrono/timeline?from=abc", plugintest.Reader, 400, "invalid_parameter")
	expectError(t, h, "/chrono/timeline?from=0", plugintest.Reader, 400, "invalid_parameter")
	expectError(t, h, "/chrono/timeline?from=100&to=-100", plugintest.Reader, 400, "invalid_parameter")
	expectError(t, h, "/chrono/timeline", plugintest.Anonymous, 401, "unauthenticated")
}

func related(t *testing.T, body map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range body["related"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

// matching lists the ids of table's rows that a click-through filter selects.
func matching(t *testing.T, table string, filter any) []int64 {
	t.Helper()
	var ids []int64
	for _, r := range excavationRows(table) {
		ok, err := plugintest.Match(filter, r)
		if err != nil {
			t.Fatalf("filter %v: %v", filter, err)
		}
		if ok {
			ids = append(ids, int64(r["id"].(int)))
		}
	}
	return ids
}

// excavationRows are the rows excavationHost seeds, for Match.
func excavationRows(table string) []map[string]any {
	switch table {
	case "layers":
		return []map[string]any{{"id": 10, "site": 1}, {"id": 11, "site": 1}, {"id": 12, "site": 1}, {"id": 13, "site": 1}, {"id": 20, "site": 2}}
	case "finds":
		return []map[string]any{{"id": 100, "layer": 10}, {"id": 101, "layer": 10}, {"id": 102, "layer": 11}, {"id": 103, "layer": 20}}
	}
	return nil
}

func TestRelatedAutomaticHop(t *testing.T) {
	host := excavationHost()
	h := plugintest.New(t, newPlugin(), plugintest.WithHost(host))
	body := getJSON(t, h, "/chrono/related/sites/1")
	if body["mode"] != "auto" {
		t.Errorf("mode %v", body["mode"])
	}
	entries := related(t, body)
	// layers only: samples has chronology inactive, sites_radiocarbon none.
	if len(entries) != 1 {
		t.Fatalf("related %v, want layers only", entries)
	}
	e := entries[0]
	if e["tb"] != "layers" || e["label"] != "Layers" || e["fk_col"] != "site" || e["records"] != json.Number("4") || e["truncated"] != false {
		t.Errorf("entry %v", e)
	}
	wantFilter := map[string]any{"site": map[string]any{"_eq": json.Number("1")}}
	if !reflect.DeepEqual(e["filter"], wantFilter) {
		t.Errorf("filter %v, want %v", e["filter"], wantFilter)
	}
	if got := matching(t, "layers", e["filter"]); !slices.Equal(got, []int64{10, 11, 12, 13}) {
		t.Errorf("the click-through selects %v", got)
	}
	hist := e["histogram"].(map[string]any)
	if n := len(hist["bins"].([]any)); n != 60 {
		t.Errorf("%d bins, want 60", n)
	}
	// Two closed datings (the ante quem and the undated layer only counted):
	// -400..-301 and -350..-301 overlap most from -350 on.
	if hist["dated"] != json.Number("2") || hist["open"] != json.Number("1") || hist["undated"] != json.Number("1") {
		t.Errorf("counts %v", hist)
	}
	peak := e["peak"].(map[string]any)
	if peak["from"] != json.Number("-350") || peak["to"] != json.Number("-301") {
		t.Errorf("peak %v, want -350..-301", peak)
	}
	if !reflect.DeepEqual(e["peak"], hist["peak"]) {
		t.Errorf("peak %v differs from the histogram's %v", e["peak"], hist["peak"])
	}

	// "sources", as BraDypUS clients read them: the dated rows (3 of the
	// 4 layers: one is undated) with the same click-through filter.
	srcs := body["sources"].([]any)
	if len(srcs) != 1 {
		t.Fatalf("sources %v, want layers only", srcs)
	}
	src := srcs[0].(map[string]any)
	if src["tb_id"] != "layers" || len(src["records"].([]any)) != 3 || !reflect.DeepEqual(src["filter"], wantFilter) {
		t.Errorf("source %v", src)
	}

	// A fixed axis.
	body = getJSON(t, h, "/chrono/related/sites/1?from=-600&to=c1+CE")
	axis := related(t, body)[0]["histogram"].(map[string]any)["axis"].(map[string]any)
	if axis["from"] != json.Number("-600") {
		t.Errorf("axis %v, want it to start at -600", axis)
	}

	// A record without related chronology tables.
	body = getJSON(t, h, "/chrono/related/finds/100")
	if len(related(t, body)) != 0 || len(body["sources"].([]any)) != 0 {
		t.Errorf("finds/100: %v, want no related tables", body["related"])
	}

	expectError(t, h, "/chrono/related/sites/3", plugintest.Reader, 404, "record_not_found")
	expectError(t, h, "/chrono/related/nowhere/1", plugintest.Reader, 404, "table_not_found")
	expectError(t, h, "/chrono/related/sites/x", plugintest.Reader, 400, "invalid_parameter")
	expectError(t, h, "/chrono/related/sites/1?from=-100", plugintest.Reader, 400, "invalid_parameter")
	expectError(t, h, "/chrono/related/sites/1", plugintest.Anonymous, 401, "unauthenticated")
	for _, q := range host.Queries() {
		if q.Actor == nil || q.Actor.UserID != plugintest.Reader.UserID {
			t.Errorf("query of %s ran as %+v, want the caller", q.Table, q.Actor)
		}
	}
}

func TestRelatedDensityPath(t *testing.T) {
	host := excavationHost()
	cat := excavation()
	cat.Tables[0].ChronoDensityPath = []string{"layers", "finds"}
	host.SetCatalog("demo", cat)
	h := plugintest.New(t, newPlugin(), plugintest.WithHost(host))

	body := getJSON(t, h, "/chrono/related/sites/1")
	entries := related(t, body)
	if body["mode"] != "path" || len(entries) != 1 {
		t.Fatalf("%v", body)
	}
	e := entries[0]
	if e["tb"] != "finds" || e["records"] != json.Number("3") || !reflect.DeepEqual(e["path"], []any{"layers", "finds"}) {
		t.Errorf("entry %v", e)
	}
	wantFilter := map[string]any{"id": map[string]any{"_in": []any{json.Number("100"), json.Number("101"), json.Number("102")}}}
	if !reflect.DeepEqual(e["filter"], wantFilter) {
		t.Errorf("filter %v, want %v", e["filter"], wantFilter)
	}
	if got := matching(t, "finds", e["filter"]); !slices.Equal(got, []int64{100, 101, 102}) {
		t.Errorf("the click-through selects %v", got)
	}
	peak := e["peak"].(map[string]any)
	if peak["from"] == nil {
		t.Errorf("no peak: %v", e)
	}

	// A one-table path is a hop through the lookup.
	cat.Tables[0].ChronoDensityPath = []string{"layers"}
	host.SetCatalog("demo", cat)
	e = related(t, getJSON(t, h, "/chrono/related/sites/2"))[0]
	if e["tb"] != "layers" || !reflect.DeepEqual(e["filter"], map[string]any{"id": map[string]any{"_in": []any{json.Number("20")}}}) {
		t.Errorf("one-hop path: %v", e)
	}

	// Paths that no longer hold are refused, not followed.
	for _, path := range [][]string{
		{"layers", "samples"}, // samples is not a child of layers
		{"samples"},           // chronology inactive on the last table
		{"layers", "finds", "layers"},
		{"sites", "layers"},
		{"nowhere"},
		{"layers", "finds", "a", "b", "c", "d", "e", "f", "g"},
	} {
		cat.Tables[0].ChronoDensityPath = path
		host.SetCatalog("demo", cat)
		expectError(t, h, "/chrono/related/sites/1", plugintest.Reader, 409, "invalid_density_path")
	}
}

func TestInFilterChunks(t *testing.T) {
	ids := make([]int64, 2500)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	f, ok := inFilter([]string{"id"}, ids)
	alts, isOr := f.(map[string]any)["_or"].([]any)
	if !ok || !isOr || len(alts) != 3 {
		t.Fatalf("2500 ids: %v chunks, ok %v", len(alts), ok)
	}
	for i := range 3 {
		row := map[string]any{"id": ids[i*1000]}
		if m, err := plugintest.Match(f, row); !m || err != nil {
			t.Errorf("id %d not matched: %v", ids[i*1000], err)
		}
	}
	if m, _ := plugintest.Match(f, map[string]any{"id": 2501}); m {
		t.Error("id 2501 matched")
	}
	big := make([]int64, 20000)
	for i := range big {
		big[i] = int64(1_000_000 + i)
	}
	if _, ok := inFilter([]string{"id"}, big); ok {
		t.Error("20,000 ids fit in a filter")
	}
	f, _ = inFilter([]string{"id"}, nil)
	if m, _ := plugintest.Match(f, map[string]any{"id": 1}); m {
		t.Error("no ids matched a row")
	}
}

func TestWriteHostError(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		code   string
	}{
		{pluginsdk.ErrNoHost, 503, "plugin_unavailable"},
		{fmt.Errorf("query records: %w", status.Error(codes.PermissionDenied, "no")), 403, "not_enough_privilege"},
		{fmt.Errorf("query records: %w", status.Error(codes.NotFound, "gone")), 404, "not_found"},
		{fmt.Errorf("query records: %w", status.Error(codes.InvalidArgument, "bad")), 400, "invalid_request"},
		{fmt.Errorf("query records: %w", status.Error(codes.DeadlineExceeded, "slow")), 504, "timeout"},
		{errors.New("broken"), 502, "host_error"},
	} {
		w := httptest.NewRecorder()
		writeHostError(w, c.err)
		var body map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &body)
		if w.Code != c.status || body["code"] != c.code {
			t.Errorf("%v: %d %v, want %d %s", c.err, w.Code, body, c.status, c.code)
		}
	}
}
