package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/demo"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// latencies collects request durations across goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) { l.mu.Lock(); l.d = append(l.d, d); l.mu.Unlock() }

func (l *latencies) report(b *testing.B) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return
	}
	slices.Sort(l.d)
	pct := func(p float64) float64 { return float64(l.d[int(p*float64(len(l.d)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// heapPeak samples the heap while a benchmark runs.
func heapPeak(stop <-chan struct{}, peak *atomic.Uint64) {
	var ms runtime.MemStats
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > peak.Load() {
			peak.Store(ms.HeapInuse)
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// BenchmarkRecords measures the record API on 100,000 finds in 2,000 units
// (demo.Bench), through the real router with a session token, on both
// engines, with all cores busy (RunParallel).
func BenchmarkRecords(b *testing.B) {
	for _, e := range store.Engines {
		b.Run(string(e), func(b *testing.B) {
			inst := testenv.NewInstance(b, e)
			a := testenv.NewApp(b, inst.Apps, "bench")
			start := time.Now()
			if err := demo.Seed(context.Background(), a, demo.Bench, 1, time.Now().UTC()); err != nil {
				b.Fatal(err)
			}
			// As in the comparison with PocketBase (docs/performance.md):
			// material is indexed.
			if _, err := schema.CreateIndex(context.Background(), a.DB, "finds", schema.IndexInput{Columns: []string{"material"}}, time.Now().UTC()); err != nil {
				b.Fatal(err)
			}
			// The searched description gets a search index (label and
			// material have theirs as preview fields).
			on := true
			if _, err := schema.PutField(context.Background(), a.DB, "finds", "description", schema.FieldUpdate{SearchIndex: schema.Set(&on)}, time.Now().UTC()); err != nil {
				b.Fatal(err)
			}
			b.Logf("%s: seeded 100,000 finds in %s; %d cores", e, time.Since(start).Round(time.Millisecond), runtime.NumCPU())
			token := testenv.Login(b, inst.Server, "bench", "admin@example.org", testenv.Password)
			units, finds := 2000, 100000
			var nextLabel atomic.Int64
			nextLabel.Store(1_000_000)
			cases := []struct {
				name   string
				method string
				url    func(r *rand.Rand) string
				body   func(r *rand.Rand) string
			}{
				{"list_eq_indexed", "GET", func(r *rand.Rand) string {
					return fmt.Sprintf("/bench/api/records/finds?filter[unit][_eq]=%d", 1+r.IntN(units))
				}, nil},
				{"list_material_eq", "GET", func(r *rand.Rand) string {
					return "/bench/api/records/finds?filter[material][_eq]=" + url.QueryEscape(demo.Materials[r.IntN(len(demo.Materials))])
				}, nil},
				{"list_sorted_deep", "GET", func(r *rand.Rand) string {
					return fmt.Sprintf("/bench/api/records/finds?sort_field=weight&sort_dir=desc&page=%d", 40+r.IntN(20))
				}, nil},
				{"list_icontains", "GET", func(r *rand.Rand) string {
					return "/bench/api/records/finds?filter[description][_icontains]=" + url.QueryEscape(fmt.Sprintf("unit %d", 1+r.IntN(units)))
				}, nil},
				{"list_lookup_nested", "GET", func(r *rand.Rand) string {
					return "/bench/api/records/finds?filter[unit][code][_eq]=" + url.QueryEscape(fmt.Sprintf("US %d", 1+r.IntN(units)))
				}, nil},
				{"read_full", "GET", func(r *rand.Rand) string { return fmt.Sprintf("/bench/api/record/finds/%d", 1+r.IntN(finds)) }, nil},
				{"create", "POST", func(*rand.Rand) string { return "/bench/api/record/finds" }, func(r *rand.Rand) string {
					return fmt.Sprintf(`{"core":{"label":"B-%d","unit":%d,"material":"bone","weight":%d}}`, nextLabel.Add(1), 1+r.IntN(units), r.IntN(500))
				}},
				{"update_with_version", "POST", func(*rand.Rand) string { return "/bench/api/record/finds" }, func(r *rand.Rand) string {
					return fmt.Sprintf(`{"id":%d,"core":{"weight":%d}}`, 1+r.IntN(finds), r.IntN(500))
				}},
			}
			for _, c := range cases {
				b.Run(c.name, func(b *testing.B) {
					lat := &latencies{}
					var peak atomic.Uint64
					stop := make(chan struct{})
					go heapPeak(stop, &peak)
					var seed atomic.Uint64
					b.ResetTimer()
					b.RunParallel(func(pb *testing.PB) {
						r := rand.New(rand.NewPCG(seed.Add(1), 42))
						for pb.Next() {
							var body string
							if c.body != nil {
								body = c.body(r)
							}
							req := httptest.NewRequest(c.method, c.url(r), strings.NewReader(body))
							req.Header.Set("Authorization", token)
							rec := httptest.NewRecorder()
							t0 := time.Now()
							inst.Server.ServeHTTP(rec, req)
							lat.add(time.Since(t0))
							if rec.Code >= 300 {
								b.Fatalf("%s: %d %s", c.name, rec.Code, rec.Body.String())
							}
						}
					})
					b.StopTimer()
					close(stop)
					lat.report(b)
					b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
				})
			}
		})
	}
}
