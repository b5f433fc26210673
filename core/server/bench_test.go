package server_test

import (
	"net/http/httptest"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// BenchmarkRouting measures the fixed cost every request pays: gin routing,
// middleware, the app resolver (cached), and JSON encoding.
func BenchmarkRouting(b *testing.B) {
	for _, e := range store.Engines {
		b.Run(string(e), func(b *testing.B) {
			inst := testenv.NewInstance(b, e)
			testenv.NewApp(b, inst.Apps, "bench")
			for _, path := range []string{"/api/info", "/bench/api/upgrade/status", "/bench/api/nothing-here"} {
				b.Run(path, func(b *testing.B) {
					req := httptest.NewRequest("GET", path, nil)
					b.ReportAllocs()
					for b.Loop() {
						rec := httptest.NewRecorder()
						inst.Server.ServeHTTP(rec, req)
					}
				})
			}
		})
	}
}
