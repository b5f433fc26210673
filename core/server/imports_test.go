package server_test

import (
	"fmt"
	"testing"

	"golang.org/x/text/encoding/charmap"

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
			{"unknown token", `{"temp_id":"x","tb":"sites"}`, 404, "import_file_not_found"},
			{"a token already imported", fmt.Sprintf(`{"temp_id":%q,"tb":"sites"}`, tok), 404, "import_file_not_found"},
		} {
			if code, m := importData(tc.body); code != tc.status || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		_, m = preview("k.csv", []byte("name\nX\n"))
		if code, m := importData(fmt.Sprintf(`{"temp_id":%q,"tb":"sites","key_field":"nope"}`, m["temp_id"])); code != 400 || m["code"] != "invalid_field" {
			t.Fatalf("unknown key field: %d %v", code, m)
		}
		if code, m := preview("e.csv", []byte("")); code != 400 || m["code"] != "import_file_invalid" {
			t.Fatalf("empty file: %d %v", code, m)
		}
		if code, _ := f.upload(t, f.writer, api+"/preview-file", "file", "x.csv", []byte("a\n1\n")); code != 403 {
			t.Fatalf("writer previews: %d", code)
		}
	})
}
