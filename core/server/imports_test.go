package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/charmap"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestImport: preview then import, all rows or none, updating by a key
// field, CSV (Windows-1252, semicolons) and JSON, the bad cases, on both
// engines.
func TestImport(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api/import"
		preview := func(name string, content []byte) (int, map[string]any) {
			return f.upload(t, f.super, api+"/preview-file", "file", name, content)
		}
		importData := func(body string) (int, map[string]any) { return f.do(t, f.super, "POST", api+"/data", body) }
		count := func(q string) float64 {
			_, m := f.do(t, f.reader, "GET", "/dig/api/records/sites?"+q, "")
			return m["total"].(float64)
		}

		if _, m := f.do(t, f.super, "GET", api+"/sites/fields", ""); len(m["fields"].([]any)) == 0 {
			t.Fatalf("fields: %v", m)
		}
		if _, m := f.do(t, f.super, "GET", api+"/nope/fields", ""); fmt.Sprint(m["fields"]) != "[]" {
			t.Fatalf("fields of no table: %v", m)
		}
		csv, _ := charmap.Windows1252.NewEncoder().String("name;ignored\nCittà;x\nPaestum;y\n")
		code, m := preview("siti.csv", []byte(csv))
		if code != 200 || m["count"] != float64(2) || m["encoding"] != "Windows-1252" || m["delimiter"] != ";" {
			t.Fatalf("preview: %d %v", code, m)
		}
		tok := m["temp_id"].(string)
		// A dry run writes nothing.
		if code, m := importData(fmt.Sprintf(`{"temp_id":%q,"tb":"sites","mapping":{"name":"name"},"dry_run":true}`, tok)); code != 200 || m["inserted"] != float64(2) {
			t.Fatalf("dry run: %d %v", code, m)
		}
		if count("") != 0 {
			t.Fatal("the dry run wrote")
		}
		code, m = importData(fmt.Sprintf(`{"temp_id":%q,"type":"csv","tb":"sites","mapping":{"name":"name"},"key_field":"name"}`, tok))
		if code != 200 || m["code"] != "ok_import_data" || m["inserted"] != float64(2) || m["updated"] != float64(0) {
			t.Fatalf("import: %d %v", code, m)
		}
		if count("filter[name][_eq]=Città") != 1 {
			t.Fatal("the Windows-1252 name was not imported as UTF-8")
		}
		// Again with the key: updates, a version each.
		_, m = preview("siti.csv", []byte(csv))
		code, m = importData(fmt.Sprintf(`{"temp_id":%q,"tb":"sites","mapping":{"name":"name"},"key_field":"name"}`, m["temp_id"]))
		if code != 200 || m["inserted"] != float64(0) || m["updated"] != float64(2) {
			t.Fatalf("re-import: %d %v", code, m)
		}
		// JSON; a row that breaks a rule (sites.name is required and unique)
		// imports nothing.
		_, m = preview("x.json", []byte(`[{"name":"Cuma"},{"name":""},{"name":"Paestum"}]`))
		code, m = importData(fmt.Sprintf(`{"file_token":%q,"tb":"sites"}`, m["temp_id"]))
		if code != 400 || m["code"] != "import_rows_invalid" {
			t.Fatalf("bad rows: %d %v", code, m)
		}
		rows := fmt.Sprint(m["errors"])
		if count("") != 2 || rows == "[]" {
			t.Fatalf("after refused import: %v rows, errors %s", count(""), rows)
		}
		_, m = preview("ok.json", []byte(`[{"name":"Cuma"},{"name":"Velia"}]`))
		if code, m := importData(fmt.Sprintf(`{"temp_id":%q,"tb":"sites"}`, m["temp_id"])); code != 200 || m["inserted"] != float64(2) || count("") != 4 {
			t.Fatalf("json import: %d %v", code, m)
		}
		for _, tc := range []struct {
			name, body string
			status     int
			code       string
		}{
			{"no token", `{"tb":"sites"}`, 400, "parameter_missing"},
			{"unknown token", `{"temp_id":"x","tb":"sites"}`, 404, "import_error_no_file"},
			{"a token already imported", fmt.Sprintf(`{"temp_id":%q,"tb":"sites"}`, tok), 404, "import_error_no_file"},
		} {
			if code, m := importData(tc.body); code != tc.status || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		// A bad mapping answers BraDypUS's codes, with a detail.
		for _, tc := range []struct {
			name, body, code string
		}{
			{"unknown key field", `"key_field":"nope"`, "import_error_invalid_field"},
			{"mapped to no field", `"mapping":{"name":"nope"}`, "import_error_invalid_field"},
			{"no mapped column in the file", `"mapping":{"ghost":"name"}`, "import_error_mapping_mismatch"},
			{"key field not mapped", `"tb":"units","mapping":{"name":"code"},"key_field":"site"`, "import_error_no_key"},
		} {
			_, m = preview("k.csv", []byte("name\nX\n"))
			code, m := importData(fmt.Sprintf(`{"temp_id":%q,"tb":"sites",%s}`, m["temp_id"], tc.body))
			if code != 400 || m["code"] != tc.code || m["detail"] == nil {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		// A file with a header and no rows: a warning, nothing imported.
		_, m = preview("h.csv", []byte("name\n"))
		if code, m := importData(fmt.Sprintf(`{"temp_id":%q,"tb":"sites"}`, m["temp_id"])); code != 200 || m["status"] != "warning" || m["total"] != float64(0) {
			t.Fatalf("header only: %d %v", code, m)
		}
		// An unknown type is refused before the file is read.
		if code, m := f.uploadWith(t, f.super, api+"/preview-file", map[string]string{"type": "xml"}, "file", "x.csv", []byte("a\n1\n")); code != 400 || m["code"] != "import_error_unknown_type" {
			t.Fatalf("unknown type: %d %v", code, m)
		}
		if code, m := preview("e.csv", []byte("")); code != 400 || m["code"] != "import_file_invalid" {
			t.Fatalf("empty file: %d %v", code, m)
		}
		if code, _ := f.upload(t, f.writer, api+"/preview-file", "file", "x.csv", []byte("a\n1\n")); code != 403 {
			t.Fatalf("writer previews: %d", code)
		}
	})
}

// A lookup may be given by the label (id_field) of the record it names,
// found within the caller's rows; an unknown or ambiguous label is the
// row's error and nothing is imported.
func TestImportLookupByLabel(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		f := newDig(t, e)
		if _, err := schema.PutTable(t.Context(), f.app.DB, "sites", schema.TableConfig{IDField: schema.Set("name")}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		pompeii := f.create(t, f.super, "sites", `{"name":"Pompeii"}`)
		f.create(t, f.super, "sites", `{"name":"Ercolano"}`)
		preview := func(csv string) string {
			_, m := f.upload(t, f.super, "/dig/api/import/preview-file", "file", "u.csv", []byte(csv))
			return m["temp_id"].(string)
		}
		code, m := f.do(t, f.super, "POST", "/dig/api/import/data", fmt.Sprintf(`{"temp_id":%q,"tb":"units"}`, preview("code,site\nUS1,Pompeii\nUS2,Nowhere\nUS3,Ercolano\n")))
		if code != 400 || m["code"] != "import_rows_invalid" || !strings.Contains(fmt.Sprint(m["errors"]), "label_not_found") || !strings.Contains(fmt.Sprint(m["errors"]), "row:2") {
			t.Fatalf("unknown label: %d %v", code, m)
		}
		code, m = f.do(t, f.super, "POST", "/dig/api/import/data", fmt.Sprintf(`{"temp_id":%q,"tb":"units"}`, preview(fmt.Sprintf("code,site\nUS1,Pompeii\nUS3,%d\n", pompeii))))
		if code != 200 || m["inserted"] != float64(2) {
			t.Fatalf("labels and ids: %d %v", code, m)
		}
		_, list := f.do(t, f.super, "GET", "/dig/api/records/units?filter[site][_eq]="+fmt.Sprint(pompeii), "")
		if list["total"] != float64(2) {
			t.Fatalf("units of Pompeii: %v", list)
		}
	})
}

// TestImportDryRunKeepsIDs: a dry run goes through the real saves and is
// rolled back, and PostgreSQL never rolls a sequence back, so each dry run
// took the next record ids (and a version id per update) from the real
// run. The ids records and versions get from two imports (new rows, then
// updates by key, one of a row the same file creates) must be the same
// with dry runs before each import as without, and the dry runs must
// count what the real runs do.
func TestImportDryRunKeepsIDs(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		steps := []struct{ csv, key string }{
			{"name\nAlpha\nBeta\nGamma\n", ""},
			{"name\nAlpha\nBeta\nGamma\nDelta\nDelta\n", "name"},
		}
		run := func(t *testing.T, dryRuns int) (ids string) {
			f := newDig(t, e)
			const api = "/dig/api/import"
			for _, s := range steps {
				_, m := f.upload(t, f.super, api+"/preview-file", "file", "s.csv", []byte(s.csv))
				body := fmt.Sprintf(`{"temp_id":%q,"tb":"sites","mapping":{"name":"name"},"key_field":%q`, m["temp_id"], s.key)
				var checked map[string]any
				for range dryRuns {
					code, m := f.do(t, f.super, "POST", api+"/data", body+`,"dry_run":true}`)
					if code != 200 || m["code"] != "ok_import_checked" {
						t.Fatalf("dry run: %d %v", code, m)
					}
					checked = m
				}
				code, real := f.do(t, f.super, "POST", api+"/data", body+`}`)
				if code != 200 || real["code"] != "ok_import_data" {
					t.Fatalf("import: %d %v", code, real)
				}
				if dryRuns > 0 && (checked["inserted"] != real["inserted"] || checked["updated"] != real["updated"]) {
					t.Fatalf("the dry run counted %v/%v, the import %v/%v", checked["inserted"], checked["updated"], real["inserted"], real["updated"])
				}
			}
			return ids + idPairs(t, f.app.DB, `SELECT id, name FROM `+f.app.DB.Qualify("sites"), `SELECT id, record_id FROM `+f.app.DB.Sys("versions"))
		}
		want := run(t, 0)
		if got := run(t, 2); got != want {
			t.Fatalf("ids after dry runs:\n%s\nwithout:\n%s", got, want)
		}
	})
}

// TestImportPreviewFirstRows: a preview answers the file's first 20 rows
// and the count of all (it keeps no more than those 20 while it reads:
// BenchmarkPreview in core/imports measures it), refuses a row that breaks
// the rules wherever it is, and keeps the whole file for the import.
func TestImportPreviewFirstRows(t *testing.T) {
	var big, ragged strings.Builder
	big.WriteString("name;note\n")
	ragged.WriteString("name;note\n")
	for i := range 1000 {
		fmt.Fprintf(&big, "Site %04d;\"a; note\"\n", i)
		if i == 898 { // after the header and 898 rows
			ragged.WriteString("only one value\n") // line 900
		}
		fmt.Fprintf(&ragged, "Site %04d;x\n", i)
	}
	wb := excelize.NewFile()
	if err := wb.SetSheetRow("Sheet1", "A1", &[]any{"name", "note"}); err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		if err := wb.SetSheetRow("Sheet1", fmt.Sprintf("A%d", i+2), &[]any{fmt.Sprintf("Place %04d", i), i}); err != nil {
			t.Fatal(err)
		}
	}
	xlsx, err := wb.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		f := newDig(t, e)
		const api = "/dig/api/import"
		for _, c := range []struct {
			name, file string
			data       []byte
			count      int
			first      string // the names of the first and 20th rows
			last       string
			total      int // sites after importing it
		}{
			{"csv", "s.csv", []byte(big.String()), 1000, "Site 0000", "Site 0019", 1000},
			{"xlsx", "s.xlsx", xlsx.Bytes(), 60, "Place 0000", "Place 0019", 1060},
		} {
			t.Run(c.name, func(t *testing.T) {
				code, m := f.upload(t, f.super, api+"/preview-file", "file", c.file, c.data)
				rows, _ := m["rows"].([]any)
				if code != 200 || m["count"] != float64(c.count) || len(rows) != 20 || fmt.Sprint(m["columns"]) != "[name note]" ||
					rows[0].(map[string]any)["name"] != c.first || rows[19].(map[string]any)["name"] != c.last {
					t.Fatalf("preview: %d %v", code, m)
				}
				code, m = f.do(t, f.super, "POST", api+"/data", fmt.Sprintf(`{"temp_id":%q,"tb":"sites","mapping":{"name":"name"}}`, m["temp_id"]))
				if code != 200 || m["inserted"] != float64(c.count) {
					t.Fatalf("import: %d %v", code, m)
				}
				if _, m := f.do(t, f.reader, "GET", "/dig/api/records/sites", ""); m["total"] != float64(c.total) {
					t.Fatalf("sites: %v", m["total"])
				}
			})
		}
		code, m := f.upload(t, f.super, api+"/preview-file", "file", "r.csv", []byte(ragged.String()))
		if code != 400 || m["code"] != "import_file_invalid" || !strings.Contains(fmt.Sprint(m["detail"]), "line 900 has 1 values") {
			t.Fatalf("ragged: %d %v", code, m)
		}
	})
}

// idPairs lists, for each query of two columns (an id and a text), its
// rows in id order as "id:text ", each query's followed by "| ": what a
// test compares to see which ids a run took.
func idPairs(t *testing.T, db *store.DB, queries ...string) string {
	t.Helper()
	var out strings.Builder
	for _, q := range queries {
		rows, err := db.Query(context.Background(), q+` ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			var what string
			if err := rows.Scan(&id, &what); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&out, "%d:%s ", id, what)
		}
		rows.Close()
		out.WriteString("| ")
	}
	return out.String()
}
