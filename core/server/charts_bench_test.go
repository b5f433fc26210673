package server_test

import (
	"context"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/demo"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// BenchmarkChartData: POST /chart/data over 100,000 finds (demo.Bench),
// through the real router as an admin, on both engines: by a plain field,
// by a lookup's label (2,000 units), by year, and two fields with one a
// lookup. SPEC asks for well under a second.
func BenchmarkChartData(b *testing.B) {
	for _, e := range store.Engines {
		b.Run(string(e), func(b *testing.B) {
			inst := testenv.NewInstance(b, e)
			a := testenv.NewApp(b, inst.Apps, "bench")
			if err := demo.Seed(context.Background(), a, demo.Bench, 1, time.Now().UTC()); err != nil {
				b.Fatal(err)
			}
			token := testenv.Login(b, inst.Server, "bench", "admin@example.org", testenv.Password)
			b.Logf("%s: 100,000 finds; %d cores", e, runtime.NumCPU())
			for _, c := range []struct{ name, def string }{
				{"count_by_material", `{"tb":"finds","type":"bar","x_field":"material","y_function":"COUNT"}`},
				{"avg_by_unit_label", `{"tb":"finds","type":"bar","x_field":"unit","y_field":"weight","y_function":"AVG"}`},
				{"sum_by_year", `{"tb":"finds","type":"bar","x_field":"found_on","x_bucket":"year","y_field":"weight","y_function":"SUM"}`},
				{"count_by_material_and_unit_label", `{"tb":"finds","type":"bar","x_field":"material","x2_field":"unit","y_function":"COUNT"}`},
			} {
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						req := httptest.NewRequest("POST", "/bench/api/chart/data", strings.NewReader(`{"definition":`+c.def+`}`))
						req.Header.Set("Authorization", token)
						req.Header.Set("Content-Type", "application/json")
						rec := httptest.NewRecorder()
						inst.Server.ServeHTTP(rec, req)
						if rec.Code != 200 {
							b.Fatalf("%d %s", rec.Code, rec.Body.String())
						}
					}
				})
			}
		})
	}
}
