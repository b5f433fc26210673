package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http/httptest"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
)

// BenchmarkImport10k imports a CSV of 10,000 finds through the router,
// preview then data, on both engines (rows/s reported).
func BenchmarkImport10k(b *testing.B) { benchImport(b, 10000) }

// BenchmarkImport100k is the same with 100,000 rows (one transaction).
func BenchmarkImport100k(b *testing.B) { benchImport(b, 100000) }

func benchImport(b *testing.B, rows int) {
	var csv bytes.Buffer
	csv.WriteString("label;weight;notes\n")
	for i := range rows {
		fmt.Fprintf(&csv, "%x;%d;row %d of the import\n", i, i%90, i)
	}
	for _, e := range store.Engines {
		b.Run(string(e), func(b *testing.B) {
			f := newDigWith(b, e)
			send := func(method, url, ctype string, body []byte) map[string]any {
				req := httptest.NewRequest(method, url, bytes.NewReader(body))
				req.Header.Set("Authorization", f.super)
				req.Header.Set("Content-Type", ctype)
				rec := httptest.NewRecorder()
				f.inst.Server.ServeHTTP(rec, req)
				var m map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || rec.Code != 200 {
					b.Fatalf("%s: %d %s", url, rec.Code, rec.Body.String())
				}
				return m
			}
			b.ResetTimer()
			for range b.N {
				var body bytes.Buffer
				w := multipart.NewWriter(&body)
				part, _ := w.CreateFormFile("file", "finds.csv")
				part.Write(csv.Bytes())
				w.Close()
				m := send("POST", "/dig/api/import/preview-file", w.FormDataContentType(), body.Bytes())
				m = send("POST", "/dig/api/import/data", "application/json", []byte(fmt.Sprintf(`{"temp_id":%q,"tb":"finds","mapping":{"label":"label","weight":"weight","notes":"notes"}}`, m["temp_id"])))
				if m["inserted"] != float64(rows) {
					b.Fatalf("inserted %v", m["inserted"])
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
