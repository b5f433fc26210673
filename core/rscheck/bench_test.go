package rscheck

import (
	"encoding/json"
	"testing"

	"github.com/strata-archaeo/strata/core/records"
)

// BenchmarkCheck is the whole report of a site, encoded as its answer
// (issue 33's target: under 2 s on 2 cores). The reading of the table
// is measured apart (core/server's BenchmarkMatrixCheckHTTP).
func BenchmarkCheck(b *testing.B) {
	d := Site()
	b.ResetTimer()
	for b.Loop() {
		r := Check("us", d, nil)
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckTangled is the site with one wrong "same as" between a
// unit near the top and one far below: most of the sequence becomes one
// cycle, the case the check is most needed for.
func BenchmarkCheckTangled(b *testing.B) {
	d := Site()
	d.Relations = append(d.Relations, records.CheckRelation{ID: int64(len(d.Relations) + 1), First: 100, Second: 15000, Relation: 9})
	b.ResetTimer()
	for b.Loop() {
		r := Check("us", d, nil)
		if r.Problems[Cycle].Count == 0 {
			b.Fatal("no cycle")
		}
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
}
