package server_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"mime/multipart"
	"path/filepath"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// makeZip packs name → content.
func makeZip(t *testing.T, entries [][2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.Create(e[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e[1]))
	}
	zw.Close()
	return buf.Bytes()
}

// Photo import: a ZIP matched to records by a pattern or an index, shown
// first, then linked all or none, with a version of each record.
func TestImportPhotos(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		f := newDig(t, e)
		unit := f.create(t, f.super, "units", `{"code":"1"}`)
		other := f.create(t, f.super, "units", `{"code":"3"}`)
		send := func(fields map[string]string, parts map[string][]byte) (int, map[string]any) {
			var buf bytes.Buffer
			w := multipart.NewWriter(&buf)
			for k, v := range fields {
				w.WriteField(k, v)
			}
			for k, v := range parts {
				fw, _ := w.CreateFormFile(k, k+".bin")
				fw.Write(v)
			}
			w.Close()
			rec := f.send(t, f.super, "POST", "/dig/api/import/preview-photos", buf.Bytes(), map[string]string{"Content-Type": w.FormDataContentType()})
			return rec.Code, decode(t, rec.Body.Bytes())
		}
		blobs := func() int {
			n := 0
			filepath.WalkDir(filepath.Join(f.inst.Config.DataDir, "files"), func(_ string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					n++
				}
				return nil
			})
			return n
		}
		fileRows := func() int {
			var n int
			if err := f.app.DB.QueryRow(t.Context(), `SELECT COUNT(*) FROM `+f.app.DB.Sys("files")).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		photos := makeZip(t, [][2]string{{"scavo/US_1_a.png", "png a"}, {"scavo/US_1_b.PNG", "png b"}, {"US_2_x.png", "png x"},
			{"notes.txt", "n"}, {"__MACOSX/._US_1_a.png", "fork"}, {"scavo/", ""}})

		for _, tc := range []struct {
			name   string
			fields map[string]string
			parts  map[string][]byte
			status int
			code   string
		}{
			{"no zip", map[string]string{"tb": "units"}, nil, 400, "import_error_no_file"},
			{"no index nor pattern", map[string]string{"tb": "units"}, map[string][]byte{"zip": photos}, 400, "parameter_missing"},
			{"no table", map[string]string{"pattern": "US_{code}_*.png"}, map[string][]byte{"zip": photos}, 400, "parameter_missing"},
			{"unknown table", map[string]string{"tb": "nope", "pattern": "US_{code}_*.png"}, map[string][]byte{"zip": photos}, 404, "table_not_found"},
			{"bad pattern", map[string]string{"tb": "units", "pattern": "US_{code}*.png"}, map[string][]byte{"zip": photos}, 400, "invalid_pattern"},
			{"pattern field unknown", map[string]string{"tb": "units", "pattern": "US_{nope}_*.png"}, map[string][]byte{"zip": photos}, 400, "import_error_invalid_field"},
			{"not a zip", map[string]string{"tb": "units", "pattern": "US_{code}_*.png"}, map[string][]byte{"zip": []byte("hello")}, 400, "import_file_invalid"},
		} {
			if code, m := send(tc.fields, tc.parts); code != tc.status || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		if code, m := f.do(t, f.super, "POST", "/dig/api/import/photos", `{}`); code != 400 || m["code"] != "parameter_missing" {
			t.Fatalf("import without temp_id: %d %v", code, m)
		}

		// By pattern: two photos of unit 1, one of a unit that does not exist.
		code, m := send(map[string]string{"tb": "units", "pattern": "US_{code}_*.png"}, map[string][]byte{"zip": photos})
		if code != 200 || m["total"] != float64(3) || m["not_found"] != float64(1) || fmt.Sprint(m["unmatched_files"]) != "[notes.txt]" {
			t.Fatalf("preview: %d %v", code, m)
		}
		if fileRows() != 0 {
			t.Fatal("a preview linked files")
		}
		tok := m["temp_id"].(string)
		if code, m := f.do(t, f.super, "POST", "/dig/api/import/photos", fmt.Sprintf(`{"temp_id":%q,"tb":"sites"}`, tok)); code != 400 || m["code"] != "invalid_parameter" {
			t.Fatalf("another table: %d %v", code, m)
		}
		code, m = f.do(t, f.super, "POST", "/dig/api/import/photos", fmt.Sprintf(`{"temp_id":%q,"tb":"units"}`, tok))
		if code != 200 || m["code"] != "ok_import_photos" || m["linked"] != float64(2) || m["not_found"] != float64(1) {
			t.Fatalf("import: %d %v", code, m)
		}
		if got := f.recordFiles(t, f.super, "units", unit); len(got) != 2 {
			t.Fatalf("unit files: %v", got)
		}
		if code, m := f.do(t, f.super, "GET", fmt.Sprintf("/dig/api/record/units/%d/versions", unit), ""); code != 200 || !bytes.Contains([]byte(fmt.Sprint(m)), []byte("files")) {
			t.Fatalf("versions: %d %v", code, m)
		}
		if code, m := f.do(t, f.super, "POST", "/dig/api/import/photos", fmt.Sprintf(`{"temp_id":%q,"tb":"units"}`, tok)); code != 404 || m["code"] != "import_error_no_file" {
			t.Fatalf("second import of the same preview: %d %v", code, m)
		}

		// By index; a photo that cannot be stored (empty) links nothing.
		index := fmt.Sprintf("filename,record_id\nUS_2_x.png,%d\nempty.png,%d\nmissing.png,%d\n", other, other, other)
		bad := makeZip(t, [][2]string{{"US_2_x.png", "png x"}, {"empty.png", ""}})
		code, m = send(map[string]string{"tb": "units"}, map[string][]byte{"zip": bad, "index": []byte(index)})
		if code != 200 || m["total"] != float64(3) || fmt.Sprint(m["missing_files"]) != "[missing.png]" {
			t.Fatalf("index preview: %d %v", code, m)
		}
		rowsBefore, blobsBefore := fileRows(), blobs()
		code, m = f.do(t, f.super, "POST", "/dig/api/import/photos", fmt.Sprintf(`{"temp_id":%q,"tb":"units"}`, m["temp_id"]))
		if code != 400 || m["code"] != "empty_file" || m["file"] != "empty.png" {
			t.Fatalf("import with an empty photo: %d %v", code, m)
		}
		if fileRows() != rowsBefore || blobs() != blobsBefore {
			t.Fatalf("a refused import left rows %d→%d, blobs %d→%d", rowsBefore, fileRows(), blobsBefore, blobs())
		}
		// A reader may not.
		if code, _ := f.do(t, f.reader, "POST", "/dig/api/import/photos", fmt.Sprintf(`{"temp_id":%q,"tb":"units"}`, tok)); code != 403 {
			t.Fatalf("reader: %d", code)
		}
	})
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return m
}
