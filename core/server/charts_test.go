package server_test

import (
	"fmt"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestCharts: aggregates in SQL over the caller's rows, grouped by one or
// two fields and by date buckets, the bad definitions, and saved charts.
func TestCharts(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		for _, r := range []string{
			`{"label":"a","weight":10,"found_on":"2024-05-01","complete":true}`,
			`{"label":"a","weight":20,"found_on":"2024-06-01","complete":false}`,
			`{"label":"b","weight":5,"found_on":"2025-01-10","complete":true}`,
			`{"label":"b","found_on":"2025-02-10","complete":true}`,
		} {
			f.create(t, f.writer, "finds", r)
		}
		data := func(def string) (int, map[string]any) {
			return f.do(t, f.reader, "POST", api+"/chart/data", `{"definition":`+def+`}`)
		}
		cases := []struct {
			name, def string
			want      string
		}{
			{"count by label", `{"tb":"finds","type":"pie","x_field":"label","y_field":"id","y_function":"COUNT"}`, "[a b] [2 2]"},
			{"sum by label", `{"tb":"finds","type":"bar","x_field":"label","y_field":"weight","y_function":"SUM"}`, "[a b] [30 5]"},
			{"count ignores nulls", `{"tb":"finds","type":"bar","x_field":"label","y_field":"weight","y_function":"count"}`, "[a b] [2 1]"},
			{"max", `{"tb":"finds","type":"line","x_field":"label","y_field":"weight","y_function":"MAX"}`, "[a b] [20 5]"},
			{"by year", `{"tb":"finds","type":"bar","x_field":"found_on","x_bucket":"year","y_function":"COUNT"}`, "[2024 2025] [2 2]"},
			{"by month", `{"tb":"finds","type":"bar","x_field":"found_on","x_bucket":"month","y_function":"COUNT"}`, "[2024-05 2024-06 2025-01 2025-02] [1 1 1 1]"},
			{"distinct", `{"tb":"finds","type":"bar","x_field":"label","y_field":"weight","y_function":"COUNT_DISTINCT"}`, "[a b] [2 1]"},
			{"filtered", `{"tb":"finds","type":"bar","x_field":"label","y_function":"COUNT","filter":{"weight":{"_gt":6}}}`, "[a] [2]"},
		}
		for _, tc := range cases {
			code, m := data(tc.def)
			if code != 200 || fmt.Sprint(m["labels"], " ", m["data"]) != tc.want {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		// Two fields: a series per second value, aligned to the labels.
		_, m := data(`{"tb":"finds","type":"bar","x_field":"label","x2_field":"found_on","x_bucket":"","y_function":"COUNT"}`)
		if len(m["series"].([]any)) != 4 || len(m["labels"].([]any)) != 2 {
			t.Fatalf("two fields: %v", m)
		}
		if _, m := data(`{"tb":"finds","type":"metric","field":"weight","function":"AVG"}`); m["value"] != float64(35)/3 {
			t.Fatalf("metric: %v", m)
		}
		for _, tc := range []struct{ name, def, code string }{
			{"no table", `{"type":"bar","x_field":"label"}`, "parameter_missing"},
			{"unknown field", `{"tb":"finds","type":"bar","x_field":"nope"}`, "invalid_field"},
			{"an injection for a field", `{"tb":"finds","type":"bar","x_field":"label\"; DROP TABLE finds; --"}`, "invalid_field"},
			{"sum of text", `{"tb":"finds","type":"bar","x_field":"label","y_field":"label","y_function":"SUM"}`, "invalid_field"},
			{"unknown function", `{"tb":"finds","type":"bar","x_field":"label","y_function":"MEDIAN"}`, "invalid_chart"},
			{"unknown type", `{"tb":"finds","type":"radar","x_field":"label"}`, "invalid_chart"},
			{"no x_field", `{"tb":"finds","type":"bar"}`, "invalid_chart"},
		} {
			if code, m := data(tc.def); code != 400 || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		if code, m := data(`{"tb":"nope","type":"bar","x_field":"label"}`); code != 404 {
			t.Fatalf("unknown table: %d %v", code, m)
		}

		// The reader's row subset applies.
		reader := f.userID(t, "reader@example.org")
		if code, m := f.do(t, f.super, "POST", fmt.Sprintf("%s/user/%d/privileges", api, reader), `{"table_name":"finds","privilege":30,"subset":{"label":{"_eq":"a"}}}`); code != 200 {
			t.Fatalf("subset: %d %v", code, m)
		}
		if _, m := data(`{"tb":"finds","type":"pie","x_field":"label","y_function":"COUNT"}`); fmt.Sprint(m["labels"], " ", m["data"]) != "[a] [2]" {
			t.Fatalf("under a subset: %v", m)
		}

		// Saved charts.
		code, m := f.do(t, f.writer, "POST", api+"/charts", `{"name":"By label","definition":{"tb":"finds","type":"pie","x_field":"label","y_field":"id","y_function":"COUNT","style":{"colors":["#f00"]}}}`)
		if code != 200 || m["code"] != "ok_save_chart" {
			t.Fatalf("save: %d %v", code, m)
		}
		id := m["chart"].(map[string]any)["id"]
		if code, m := f.do(t, f.writer, "POST", api+"/charts", `{"name":"Bad","definition":{"tb":"finds","type":"pie","x_field":"nope"}}`); code != 400 {
			t.Fatalf("bad saved: %d %v", code, m)
		}
		if _, m := f.do(t, f.reader, "GET", api+"/charts", ""); len(m["charts"].([]any)) != 0 {
			t.Fatalf("private chart seen: %v", m)
		}
		// Saving a chart is for writers and above (BraDypUS's suite 09#8);
		// a reader computes and reads charts but keeps none.
		if code, m := f.do(t, f.reader, "POST", api+"/charts", `{"name":"Mine","definition":{"tb":"finds","type":"pie","x_field":"label","y_field":"id","y_function":"COUNT"}}`); code != 403 || m["code"] != "not_enough_privilege" {
			t.Fatalf("reader saves a chart: %d %v", code, m)
		}
		if code, m := f.do(t, f.writer, "POST", fmt.Sprintf("%s/chart/%v/share", api, id), ""); code != 200 || m["code"] != "ok_sharing_chart" {
			t.Fatalf("share: %d %v", code, m)
		}
		_, m = f.do(t, f.reader, "GET", api+"/charts", "")
		ch := m["charts"].([]any)[0].(map[string]any)
		if ch["is_global"] != float64(1) || ch["definition"].(map[string]any)["style"] == nil {
			t.Fatalf("shared chart: %v", ch)
		}
		if code, _ := f.do(t, f.reader, "DELETE", fmt.Sprintf("%s/chart/%v", api, id), ""); code != 403 {
			t.Fatalf("reader deletes: %d", code)
		}
		if code, m := f.do(t, f.writer, "POST", fmt.Sprintf("%s/chart/%v/unshare", api, id), ""); code != 200 || m["code"] != "ok_unsharing_chart" {
			t.Fatalf("unshare: %d %v", code, m)
		}
		if code, m := f.do(t, f.writer, "DELETE", fmt.Sprintf("%s/chart/%v", api, id), ""); code != 200 || m["code"] != "ok_chart_erase" {
			t.Fatalf("delete: %d %v", code, m)
		}
	})
}
