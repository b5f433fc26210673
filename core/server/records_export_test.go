package server_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// exportNotes are texts that CSV and JSON must carry intact.
var exportNotes = []string{`he said "hi", then left`, "line 1\nline 2", "ünïcödé ẞ", "=1+2", "", "  padded  ", "a;b,c"}

// fillFinds inserts n finds straight into the table (faster than the API)
// with repeated and missing values, so that every sort has ties and NULLs
// across batch boundaries.
func fillFinds(t testing.TB, f *digFixture, n int) {
	t.Helper()
	ctx, db := context.Background(), f.app.DB
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	err := db.Tx(ctx, func(tx *store.DB) error {
		for i := 0; i < n; i++ {
			var label, weight, found, complete, notes any
			if i%17 != 0 {
				label = fmt.Sprintf("L%d", i%13)
			}
			if i%9 != 0 {
				weight = float64(i%7) + 0.25*float64(i%2)
			}
			if i%5 != 0 {
				found = start.AddDate(0, 0, i%400).Format("2006-01-02")
			}
			if i%3 != 0 {
				complete = i%2 == 0
				if f.inst.Engine == store.SQLite {
					complete = map[bool]int64{false: 0, true: 1}[i%2 == 0]
				}
			}
			if i%4 == 0 {
				notes = exportNotes[(i/4)%len(exportNotes)]
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+tx.Qualify("finds")+` (label, weight, found_on, complete, notes) VALUES (?, ?, ?, ?, ?)`,
				label, weight, found, complete, notes); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// listAll reads every page of the list with query and returns its columns
// and rows.
func listAll(t *testing.T, f *digFixture, who, tb, query string) ([]map[string]any, []map[string]any) {
	t.Helper()
	var fields, rows []map[string]any
	for page := 1; ; page++ {
		code, m := f.do(t, who, "GET", fmt.Sprintf("/dig/api/records/%s?per_page=200&page=%d&%s", tb, page, query), "")
		if code != 200 {
			t.Fatalf("list %s: %d %v", query, code, m)
		}
		if fields == nil {
			for _, x := range m["fields"].([]any) {
				fields = append(fields, x.(map[string]any))
			}
		}
		data := m["data"].([]any)
		for _, r := range data {
			rows = append(rows, r.(map[string]any))
		}
		if len(data) < 200 {
			return fields, rows
		}
	}
}

// export sends GET /records/{tb}/export as who and returns the raw answer.
func (f *digFixture) export(t *testing.T, who, tb, query string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("GET", "/dig/api/records/"+tb+"/export?"+query, nil)
	req.Header.Set("Authorization", who)
	rec := httptest.NewRecorder()
	f.inst.Server.ServeHTTP(rec, req)
	return rec
}

// listText is a list value as CSV writes it: JSON's text of numbers and
// booleans, strings as they are, null as nothing.
func listText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// xlsxText is a list value as a raw spreadsheet cell reads back.
func xlsxText(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "1"
		}
		return "0"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return listText(v)
}

// parseExport reads an exported file back into a header and rows of text
// (CSV, XLSX) or, for JSON, rows of values.
func parseExport(t *testing.T, format string, body []byte) (header []string, cells [][]string, objects []map[string]any) {
	t.Helper()
	switch format {
	case "csv":
		if !bytes.HasPrefix(body, []byte("\xEF\xBB\xBF")) {
			t.Fatalf("CSV without the UTF-8 byte order mark: %q", body[:min(len(body), 20)])
		}
		recs, err := csv.NewReader(bytes.NewReader(body[3:])).ReadAll()
		if err != nil {
			t.Fatalf("CSV does not parse: %v", err)
		}
		return recs[0], recs[1:], nil
	case "json":
		if err := json.Unmarshal(body, &objects); err != nil {
			t.Fatalf("JSON does not parse: %v", err)
		}
		return nil, nil, objects
	}
	x, err := excelize.OpenReader(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("XLSX does not open: %v", err)
	}
	defer x.Close()
	rows, err := x.GetRows("finds", excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatalf("XLSX sheet: %v", err)
	}
	return rows[0], rows[1:], nil
}

func TestExportMatchesList(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSearchDig(t, e)
		fillFinds(t, f.digFixture, 3000)
		for _, v := range []struct {
			name, query string
			filtered    bool
		}{
			{"every column, by id", "", false},
			{"number desc: ties and NULLs first", "sort_field=weight&sort_dir=desc&columns=label,weight,complete", false},
			{"text asc: ties and NULLs last", "sort_field=label&columns=label,found_on,notes", false},
			{"date desc with a filter and quick search", "sort_field=found_on&sort_dir=desc&columns=found_on,complete&" +
				url.Values{"filter[complete][_eq]": {"true"}, "search": {"L"}}.Encode(), true},
		} {
			t.Run(v.name, func(t *testing.T) {
				fields, want := listAll(t, f.digFixture, f.reader, "finds", v.query)
				if len(want) <= 500 {
					t.Fatalf("the list has %d rows: too few to cross batches", len(want))
				}
				if v.filtered && len(want) >= 3000 {
					t.Fatalf("the filter kept %d rows: it should keep about a third", len(want))
				}
				for _, format := range []string{"csv", "json", "xlsx"} {
					rec := f.export(t, f.reader, "finds", "format="+format+"&"+v.query)
					if rec.Code != 200 {
						t.Fatalf("%s: %d %s", format, rec.Code, rec.Body.String())
					}
					if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename="finds.`+format+`"` {
						t.Errorf("%s: Content-Disposition %q", format, cd)
					}
					header, cells, objects := parseExport(t, format, rec.Body.Bytes())
					if format == "json" {
						if !reflect.DeepEqual(objects, want) {
							t.Errorf("json: %d rows differ from the list's %d (first %v / %v)", len(objects), len(want), objects[:1], want[:1])
						}
						first := strings.TrimLeft(rec.Body.String(), "[\n")
						if !strings.HasPrefix(first, `{"id":`) {
							t.Errorf("json keys not in column order: %.60s", first)
						}
						continue
					}
					// CSV is headed by names (it imports back), XLSX by labels.
					var labels []string
					for _, fd := range fields {
						key := "label"
						if format == "csv" {
							key = "name"
						}
						labels = append(labels, fd[key].(string))
					}
					if !reflect.DeepEqual(header, labels) {
						t.Errorf("%s header %q, want %q", format, header, labels)
					}
					if len(cells) != len(want) {
						t.Fatalf("%s: %d rows, the list has %d", format, len(cells), len(want))
					}
					text := listText
					if format == "xlsx" {
						text = xlsxText
					}
					for i, row := range cells {
						for j, fd := range fields {
							got := ""
							if j < len(row) { // GetRows leaves out trailing empty cells
								got = row[j]
							}
							w := text(want[i][fd["name"].(string)])
							if s, isText := want[i][fd["name"].(string)].(string); isText && strings.IndexAny(s[:min(1, len(s))], "=+-@\t\r") == 0 {
								w = "'" + w // a formula-looking text is defused (OWASP)
							}
							if got != w {
								t.Fatalf("%s row %d %s: %q, want %q", format, i, fd["name"], got, w)
							}
						}
					}
				}
			})
		}
	})
}

func TestExportFormats(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newSearchDig(t, e)
		for _, c := range []struct{ format, contentType string }{
			{"csv", "text/csv; charset=utf-8"},
			{"json", "application/json; charset=utf-8"},
			{"xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
			{"CSV", "text/csv; charset=utf-8"},
		} {
			rec := f.export(t, f.readerKey, "finds", "format="+c.format)
			if rec.Code != 200 || rec.Header().Get("Content-Type") != c.contentType {
				t.Errorf("%s: %d %q", c.format, rec.Code, rec.Header().Get("Content-Type"))
			}
			if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename="finds.`+strings.ToLower(c.format)+`"` {
				t.Errorf("%s: Content-Disposition %q", c.format, cd)
			}
		}
		// An empty table: the header alone.
		if _, err := f.app.DB.Exec(context.Background(), `DELETE FROM `+f.app.DB.Qualify("units")); err != nil {
			t.Fatal(err)
		}
		if got := f.export(t, f.reader, "units", "format=csv&columns=code").Body.String(); got != "\uFEFFid,code\r\n" {
			t.Errorf("empty CSV %q", got)
		}
		if got := f.export(t, f.reader, "units", "format=json").Body.String(); got != "[]\n" {
			t.Errorf("empty JSON %q", got)
		}
		x, err := excelize.OpenReader(bytes.NewReader(f.export(t, f.reader, "units", "format=xlsx&columns=code,site").Body.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if rows, err := x.GetRows("units"); err != nil || !reflect.DeepEqual(rows, [][]string{{"ID", "Code", "Site"}}) {
			t.Errorf("empty XLSX %v %v", rows, err)
		}
		x.Close()

		// Typed spreadsheet cells: numbers and booleans are not text, and
		// a text that looks like a formula stays text.
		code, m := f.do(t, f.writer, "POST", "/dig/api/record/finds", `{"core":{"label":"eq","weight":3.5,"complete":true,"notes":"=1+2"}}`)
		if code != 200 {
			t.Fatal(m)
		}
		x, err = excelize.OpenReader(bytes.NewReader(f.export(t, f.reader, "finds", "format=xlsx&columns=weight,complete,notes&sort_field=id&sort_dir=desc").Body.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		for cell, want := range map[string]excelize.CellType{"B2": excelize.CellTypeUnset, "C2": excelize.CellTypeBool, "D2": excelize.CellTypeInlineString} {
			if got, err := x.GetCellType("finds", cell); err != nil || got != want {
				t.Errorf("cell %s type %v, want %v (%v)", cell, got, want, err)
			}
		}
		if v, _ := x.GetCellValue("finds", "B2"); v != "3.5" {
			t.Errorf("number cell %q", v)
		}
		if formula, _ := x.GetCellFormula("finds", "D2"); formula != "" {
			t.Errorf("text became a formula: %q", formula)
		}
		if v, _ := x.GetCellValue("finds", "D2"); v != "'=1+2" {
			t.Errorf("formula-looking text %q, want it defused with an apostrophe", v)
		}

		for _, s := range []testenv.Scenario{
			{Name: "format missing", URL: "/dig/api/records/finds/export", ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`, `"parameter":"format"`}},
			{Name: "unknown format", URL: "/dig/api/records/finds/export?format=pdf", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_parameter"`, `"allowed":["csv","json","xlsx","geojson","kml"]`}},
			{Name: "unknown table", URL: "/dig/api/records/nowhere/export?format=csv", ExpectedStatus: 404, ExpectedContent: []string{`"code":"table_not_found"`}},
			{Name: "unknown column", URL: "/dig/api/records/finds/export?format=csv&columns=label,nope", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`}},
			{Name: "unknown sort field", URL: "/dig/api/records/finds/export?format=json&sort_field=nope", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`}},
			{Name: "bad sort dir", URL: "/dig/api/records/finds/export?format=xlsx&sort_dir=up", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_parameter"`}},
			{Name: "bad list parameter", URL: "/dig/api/records/finds/export?format=csv&page=x", ExpectedStatus: 400, ExpectedContent: []string{`"parameter":"page"`}},
			{Name: "filter on an unknown field", URL: "/dig/api/records/finds/export?format=csv&filter[nope][_eq]=1", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_field"`}},
			{Name: "unknown filter operator", URL: "/dig/api/records/finds/export?format=json&filter[label][_like]=a", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_filter"`}},
		} {
			s.Headers = testenv.Bearer(f.reader)
			t.Run(s.Name, func(t *testing.T) {
				rec := s.Run(t, f.inst.Server)
				if cd := rec.Header().Get("Content-Disposition"); cd != "" {
					t.Errorf("an error carries Content-Disposition %q", cd)
				}
			})
		}
		for _, s := range []testenv.Scenario{
			{Name: "pending", Headers: testenv.Bearer(f.pending), ExpectedStatus: 403},
			{Name: "override 40 on the table", Headers: testenv.Bearer(f.noFinds), ExpectedStatus: 403},
			{Name: "no credential", ExpectedStatus: 401},
		} {
			s.URL = "/dig/api/records/finds/export?format=csv"
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
	})
}
