package server_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// BenchmarkPublish100k: a snapshot of 100,000 records through the real
// server and job system, on both engines: rscheck.Site's 20,000 units
// with their 60,000 relations and radiocarbon dates, and 80,000 finds
// referring to them, every one published (CSV, Linked Art document,
// item row), zipped and stored. Issue 34's target: under 2 minutes on 2
// cores, the server's memory under 200 MB. The peak Go heap in use while
// the job runs is reported as heap-MB (sampled every 20 ms).
func BenchmarkPublish100k(b *testing.B) {
	for _, e := range store.Engines {
		b.Run(string(e), func(b *testing.B) {
			inst := testenv.NewInstanceWithJobs(b, e)
			a := testenv.NewApp(b, inst.Apps, "dig")
			seedSite(b, a)
			seedFinds(b, a, 80_000)
			token := testenv.Login(b, inst.Server, "dig", "admin@example.org", testenv.Password)
			h := testenv.Bearer(token)
			cfg := `{"title":"Bench","licence":"CC-BY-4.0","contact":"d@example.org","authors":[{"name":"Bench, Ann"}],
			 "tables":[{"name":"us","kind":"stratigraphic_unit","fields":["code"]},{"name":"finds","kind":"find","fields":["code","material","weight","unit"]}]}`
			if st, m := testenv.Do(&testing.T{}, inst.Server, "PUT", "/dig/api/publish/config", cfg, h); st != 200 {
				b.Fatalf("config: %d %v", st, m)
			}
			b.Logf("%s: 100,000 records; %d cores", e, runtime.NumCPU())
			for b.Loop() {
				var peak atomic.Uint64
				stop := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					var ms runtime.MemStats
					for {
						runtime.ReadMemStats(&ms)
						if ms.HeapInuse > peak.Load() {
							peak.Store(ms.HeapInuse)
						}
						select {
						case <-stop:
							return
						case <-time.After(20 * time.Millisecond):
						}
					}
				}()
				s := publishBench(b, inst, h)
				close(stop)
				<-done
				if s.Status != "done" {
					b.Fatalf("snapshot %+v", s)
				}
				b.ReportMetric(float64(peak.Load())/(1<<20), "heap-MB")
			}
		})
	}
}

// publishBench starts a snapshot and waits for it (no testing.T in a
// benchmark: publishNow's helpers take one).
func publishBench(b *testing.B, inst *testenv.Instance, h map[string]string) pubSnapshot {
	t := &testing.T{}
	st, m := testenv.Do(t, inst.Server, "POST", "/dig/api/publish/snapshots", "", h)
	if st != 202 {
		b.Fatalf("publish: %d %v", st, m)
	}
	id := int64(m["snapshot"].(map[string]any)["id"].(float64))
	for {
		_, m := testenv.Do(t, inst.Server, "GET", fmt.Sprintf("/dig/api/publish/snapshots/%d", id), "", h)
		s := m["snapshot"].(map[string]any)
		if s["status"] != "running" {
			if s["status"] != "done" {
				b.Fatalf("snapshot: %v", s)
			}
			return pubSnapshot{ID: id, Status: s["status"].(string)}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// seedFinds adds n finds referring to the units of seedSite.
func seedFinds(b *testing.B, a *apps.App, n int) {
	ctx, now := context.Background(), time.Now().UTC()
	if _, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "finds", Label: "Finds"}, now); err != nil {
		b.Fatal(err)
	}
	for _, fd := range []schema.FieldDef{{Name: "code", Label: "Code"}, {Name: "material", Label: "Material"},
		{Name: "weight", Label: "Weight", DBType: "float"}, {Name: "unit", Label: "Unit", Type: "combo_select", IDFromTb: "us"}} {
		if _, err := schema.AddField(ctx, a.DB, "finds", fd, now); err != nil {
			b.Fatal(err)
		}
	}
	var units int64
	if err := a.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+a.DB.Qualify("us")).Scan(&units); err != nil {
		b.Fatal(err)
	}
	materials := []string{"bronze", "bone", "pottery, coarse ware", "glass", "iron"}
	const per = 500
	err := a.DB.Tx(ctx, func(tx *store.DB) error {
		for start := 0; start < n; start += per {
			var args []any
			var marks []string
			for i := start; i < min(start+per, n); i++ {
				args = append(args, fmt.Sprintf("F%06d", i), materials[i%len(materials)], float64(i%997)/10, int64(i)%units+1)
				marks = append(marks, "(?, ?, ?, ?)")
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+tx.Qualify("finds")+` ("code", "material", "weight", "unit") VALUES `+strings.Join(marks, ", "), args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
