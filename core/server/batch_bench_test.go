package server_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/demo"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// BenchmarkBatchCreate loads finds (demo catalog: a unique label, a
// checked lookup, a vocabulary, a float with a bound) through the real
// router with a session token, one client at a time, on both engines:
// batch_1000 sends POST /batch with 1,000 creations per request, single
// one POST /record/finds per row. Compare their rows/s.
func BenchmarkBatchCreate(b *testing.B) {
	const perBatch = 1000
	for _, e := range store.Engines {
		b.Run(string(e), func(b *testing.B) {
			inst := testenv.NewInstance(b, e)
			a := testenv.NewApp(b, inst.Apps, "bench")
			if err := demo.Seed(context.Background(), a, demo.Small, 1, time.Now().UTC()); err != nil {
				b.Fatal(err)
			}
			token := testenv.Login(b, inst.Server, "bench", "admin@example.org", testenv.Password)
			units := 48
			next := 1_000_000
			row := func() string {
				next++
				return fmt.Sprintf(`{"core":{"label":"B-%d","unit":%d,"material":"bone","weight":%d,"found_on":"2024-05-01"}}`, next, 1+next%units, next%500)
			}
			post := func(b *testing.B, url, body string) {
				req := httptest.NewRequest("POST", url, strings.NewReader(body))
				req.Header.Set("Authorization", token)
				rec := httptest.NewRecorder()
				inst.Server.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("%s: %d %.300s", url, rec.Code, rec.Body.String())
				}
			}
			b.Run("batch_1000", func(b *testing.B) {
				bodies := make([]string, b.N)
				for i := range bodies {
					reqs := make([]string, perBatch)
					for j := range reqs {
						reqs[j] = `{"method":"POST","url":"/record/finds","body":` + row() + `}`
					}
					bodies[i] = `{"requests":[` + strings.Join(reqs, ",") + `]}`
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					post(b, "/bench/api/batch", bodies[i])
				}
				b.ReportMetric(float64(b.N*perBatch)/b.Elapsed().Seconds(), "rows/s")
			})
			// plain: the load benchmark's table (cmd/strata-bench): four
			// fields without rules that look at other rows.
			plain := false
			b.Run("plain_batch_1000", func(b *testing.B) {
				if !plain { // once: b.Run calls this for each b.N it tries
					plain = true
					post(b, "/bench/api/config/tables", `{"name":"plain"}`)
					for _, f := range []string{`{"name":"title","type":"text"}`, `{"name":"material","type":"text"}`,
						`{"name":"weight","type":"float"}`, `{"name":"context","type":"text"}`} {
						post(b, "/bench/api/config/table/plain/field", f)
					}
					post(b, "/bench/api/config/table/plain/indexes", `{"name":"ix_plain_material","columns":["material"]}`)
				}
				bodies := make([]string, b.N)
				for i := range bodies {
					reqs := make([]string, perBatch)
					for j := range reqs {
						next++
						reqs[j] = fmt.Sprintf(`{"method":"POST","url":"/record/plain","body":{"core":{"title":"Broken Amphora %d","material":"bone","weight":%d.5,"context":"US %d"}}}`, next, next%500, next%90)
					}
					bodies[i] = `{"requests":[` + strings.Join(reqs, ",") + `]}`
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					post(b, "/bench/api/batch", bodies[i])
				}
				b.ReportMetric(float64(b.N*perBatch)/b.Elapsed().Seconds(), "rows/s")
			})
			b.Run("single", func(b *testing.B) {
				bodies := make([]string, b.N)
				for i := range bodies {
					bodies[i] = row()
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					post(b, "/bench/api/record/finds", bodies[i])
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		})
	}
}
