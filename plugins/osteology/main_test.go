package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"reflect"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-archaeo/strata/plugins/osteology/bones"
	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

func TestConformance(t *testing.T) {
	plugintest.Conformance(t, newPlugin())
}

func save(t *testing.T, h *plugintest.Harness, values ...any) []pluginsdk.RowResult {
	t.Helper()
	rows := make([]pluginsdk.Row, len(values))
	for i, v := range values {
		rows[i] = pluginsdk.Row{Values: map[string]any{column: v}}
	}
	res, err := h.BeforeSave(pluginsdk.SaveCall{Feature: feature, Table: "burials", Rows: rows, Actor: plugintest.Writer})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestBeforeSaveNormalises(t *testing.T) {
	h := plugintest.New(t, newPlugin())
	for _, c := range []struct {
		name string
		in   any
		want any
	}{
		{"synonyms, case and spaces",
			`{"individuals":[{"id":" T1 ","label":"Tomb 1","bones":{"Femur_Right":{"present":true,"conservation":"Frammentario","certainty":"CERTO"}}}]}`,
			`{"individuals":[{"id":"T1","label":"Tomb 1","notes":"","bones":{"femur_right":{"present":true,"conservation":"fragmentary","certainty":"certain"}}}]}`},
		// CONTRACT.md §8: per bone only present is required.
		{"only present",
			`{"individuals":[{"id":1,"bones":{"cranium":{"present":false},"tooth_36":{"present":true}}}]}`,
			`{"individuals":[{"id":1,"label":"","notes":"","bones":{"cranium":{"present":false},"tooth_36":{"present":true}}}]}`},
		{"the object itself",
			map[string]any{"individuals": []any{map[string]any{"id": "A", "bones": map[string]any{"ulna_left": map[string]any{"present": true, "conservation": "<50"}}}}},
			`{"individuals":[{"id":"A","label":"","notes":"","bones":{"ulna_left":{"present":true,"conservation":"lt50"}}}]}`},
		{"empty text is null", "  ", nil},
		{"null document is null", "null", nil},
		{"no individuals", `{}`, `{"individuals":[]}`},
		{"cleared", nil, nil},
	} {
		res := save(t, h, c.in)
		if len(res[0].Errors) > 0 || !reflect.DeepEqual(res[0].Values[column], c.want) {
			t.Errorf("%s: %v %+v, want %v", c.name, res[0].Values[column], res[0].Errors, c.want)
		}
	}
	// A row that does not send osteo_data is left alone.
	res, err := h.BeforeSave(pluginsdk.SaveCall{Feature: feature, Table: "burials", Rows: []pluginsdk.Row{{ID: 3, Values: map[string]any{}}}})
	if err != nil || len(res[0].Values) != 0 || len(res[0].Errors) != 0 {
		t.Errorf("empty update: %+v %v", res, err)
	}
}

func TestBeforeSaveRefusesWithPaths(t *testing.T) {
	h := plugintest.New(t, newPlugin())
	type fe struct{ rule, path string }
	for _, c := range []struct {
		in   any
		want []fe
	}{
		{`{"individuals":[{"id":"A","bones":{"femur_lft":{"present":true}}}]}`,
			[]fe{{bones.CodeUnknownElement, "individuals[0].bones.femur_lft"}}},
		{`{"individuals":[{"id":"A","bones":{"femur_left":{"conservation":"complete"}}}]}`,
			[]fe{{bones.CodeRequired, "individuals[0].bones.femur_left.present"}}},
		{`{"individuals":[{"id":"A","bones":{"femur_left":{"present":true,"conservation":"perfect"}}},{"label":"B"}]}`,
			[]fe{{bones.CodeInvalidValue, "individuals[0].bones.femur_left.conservation"}, {bones.CodeRequired, "individuals[1].id"}}},
		{`{"individuals":[{"id":"A","bones":{"cranium":{"present":true,"laterality_certainty":"certain"}}}]}`,
			[]fe{{bones.CodeInvalidValue, "individuals[0].bones.cranium.laterality_certainty"}}},
		{`{"individuals":[{"id":"A"},{"id":"A"}]}`, []fe{{bones.CodeDuplicate, "individuals[1].id"}}},
		{`{"individuals":[{"id":"A","sex":"F"}]}`, []fe{{bones.CodeUnknownField, "individuals[0].sex"}}},
		{`{"individuals":`, []fe{{bones.CodeInvalidJSON, ""}}},
		{`[1,2]`, []fe{{bones.CodeInvalidType, ""}}},
		{12, []fe{{bones.CodeInvalidType, ""}}},
		{true, []fe{{bones.CodeInvalidType, ""}}},
	} {
		res := save(t, h, c.in)
		var got []fe
		for _, e := range res[0].Errors {
			if e.Field != column || e.Message == "" {
				t.Errorf("%v: error %+v: want field %s and a message", c.in, e, column)
			}
			got = append(got, fe{e.Rule, e.Path})
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v: errors %v, want %v", c.in, got, c.want)
		}
	}
}

func TestSchemaRoute(t *testing.T) {
	h := plugintest.New(t, newPlugin())
	resp, err := h.CallRoute("GET", "/osteology/schema", nil, plugintest.Reader)
	var body struct {
		Status string
		bones.Schema
	}
	if err != nil || resp.Status != 200 || json.Unmarshal(resp.Body, &body) != nil || body.Status != "success" {
		t.Fatalf("%d %s %v", resp.Status, resp.Body, err)
	}
	if !reflect.DeepEqual(body.Schema, bones.GetSchema()) {
		t.Error("the route does not serve bones.GetSchema()")
	}
	el, ok := bones.Lookup("femur_right")
	if !ok || el.Region != bones.LowerLimb || el.Side != bones.Right || el.Labels.It == "" {
		t.Errorf("femur_right: %+v", el)
	}
	expectError(t, h, "/osteology/schema", plugintest.Anonymous, 401, "unauthenticated")
}

func expectError(t *testing.T, h *plugintest.Harness, target string, actor pluginsdk.Actor, status int, code string) map[string]any {
	t.Helper()
	resp, err := h.CallRoute("GET", target, nil, actor)
	var body map[string]any
	if err != nil || resp.JSON(&body) != nil || resp.Status != status || body["code"] != code || body["status"] != "error" {
		t.Errorf("%s: %d %s %v; want %d %s", target, resp.Status, resp.Body, err, status, code)
	}
	return body
}

func TestSummaryRoute(t *testing.T) {
	host := plugintest.NewFakeHost()
	host.SetCatalog("demo", pluginsdk.Catalog{Tables: []pluginsdk.CatalogTable{
		{Name: "burials", Features: map[string]bool{feature: true}},
		{Name: "finds"},
	}})
	host.SetRecords("demo", "burials",
		map[string]any{"id": 1, column: `{"individuals":[{"id":"T1","label":"Tomb 1","bones":{
			"femur_right":{"present":true,"conservation":"complete"},"femur_left":{"present":true},
			"patella_right":{"present":false},"tooth_11":{"present":true,"conservation":"traces"}}},{"id":2,"label":"child"}]}`},
		map[string]any{"id": 2, column: nil},
		map[string]any{"id": 3, column: `{"individuals":[{"id":"A","bones":{"femur_lft":{"present":true}}}]}`})
	h := plugintest.New(t, newPlugin(), plugintest.WithHost(host))

	resp, err := h.CallRoute("GET", "/osteology/summary/burials/1", nil, plugintest.Reader)
	var body struct {
		Status      string                    `json:"status"`
		Tb          string                    `json:"tb"`
		ID          int64                     `json:"id"`
		Individuals []bones.IndividualSummary `json:"individuals"`
		Regions     []bones.Region            `json:"regions"`
	}
	if err != nil || resp.Status != 200 || json.Unmarshal(resp.Body, &body) != nil {
		t.Fatalf("%d %s %v", resp.Status, resp.Body, err)
	}
	if body.Status != "success" || body.Tb != "burials" || body.ID != 1 || len(body.Individuals) != 2 || len(body.Regions) != 9 {
		t.Fatalf("%+v", body)
	}
	t1 := body.Individuals[0]
	if t1.ID != "T1" || t1.Label != "Tomb 1" || t1.Recorded != 4 || t1.Present != 3 {
		t.Errorf("T1: %+v", t1)
	}
	for _, r := range t1.Regions {
		switch r.Region {
		case bones.LowerLimb:
			if r.Recorded != 3 || r.Present != 2 || r.Conservation[bones.Complete] != 1 || r.Conservation[bones.Unspecified] != 1 {
				t.Errorf("lower limb %+v", r)
			}
		case bones.Teeth:
			if r.Present != 1 || r.Conservation[bones.Traces] != 1 {
				t.Errorf("teeth %+v", r)
			}
		}
	}
	if c := body.Individuals[1]; c.Label != "child" || c.Recorded != 0 {
		t.Errorf("child: %+v", c)
	}
	qs := host.Queries()
	if len(qs) != 1 || qs[0].Actor == nil || qs[0].Actor.UserID != plugintest.Reader.UserID || !reflect.DeepEqual(qs[0].Columns, []string{column}) {
		t.Errorf("queries %+v: want osteo_data read as the caller", qs)
	}

	resp, _ = h.CallRoute("GET", "/osteology/summary/burials/2", nil, plugintest.Reader)
	if resp.Status != 200 || !json.Valid(resp.Body) || string(mustField(t, resp.Body, "individuals")) != "[]" {
		t.Errorf("no data: %d %s", resp.Status, resp.Body)
	}
	body3 := expectError(t, h, "/osteology/summary/burials/3", plugintest.Reader, 409, "invalid_osteo_data")
	if errs, _ := body3["errors"].([]any); len(errs) != 1 {
		t.Errorf("stored errors %v", body3["errors"])
	}
	expectError(t, h, "/osteology/summary/burials/4", plugintest.Reader, 404, "record_not_found")
	expectError(t, h, "/osteology/summary/finds/1", plugintest.Reader, 404, "feature_not_active")
	expectError(t, h, "/osteology/summary/nowhere/1", plugintest.Reader, 404, "table_not_found")
	expectError(t, h, "/osteology/summary/burials/x", plugintest.Reader, 400, "invalid_parameter")
	expectError(t, h, "/osteology/summary/burials/1", plugintest.Anonymous, 401, "unauthenticated")
}

func mustField(t *testing.T, body []byte, key string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m[key]
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
