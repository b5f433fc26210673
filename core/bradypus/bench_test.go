package bradypus_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// BenchmarkMajorUpgrade10k times the major upgrade of a BraDypUS
// application of 10,000 finds (each with a version, two in three with a
// chronology, one in five with an osteology document, 1,000 radiocarbon
// dates,
// files, geodata, a saved query, a chart, a template), with the real
// plugins checking their data, on each engine. Generating the folder is
// not timed. make bench runs it with the others; alone:
//
//	go test -run '^$' -bench MajorUpgrade10k -benchtime 1x ./core/bradypus/
func BenchmarkMajorUpgrade10k(b *testing.B) {
	for _, e := range store.Engines {
		b.Run(string(e), func(b *testing.B) {
			testenv.RequireEngine(b, e)
			v := newEnv(b, e, true)
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				name := fmt.Sprintf("big%d", i)
				makeFolder(b, filepath.Join(v.data, "bradypus"), name, fixture{records: 10000, c14Every: 10})
				b.StartTimer()
				code, body := v.do(b, "POST", "/"+name+"/api/upgrade/major", upgradeBody(superEmail, superPwd), nil)
				if code != 200 || body["verified"] != true {
					b.Fatalf("upgrade: %d %v", code, body)
				}
			}
			b.ReportMetric(float64(runtime.NumCPU()), "cores")
		})
	}
}
