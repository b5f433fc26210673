package rscheck

import (
	"math/rand/v2"
	"strconv"

	"github.com/strata-archaeo/strata/core/records"
)

// Site is the benchmarks' table (here and core/server's), the size
// issue 33 names: 20,000 units and 60,000
// relations, each unit above a few of the next ones in the sequence (as
// core/matrix's benchmark), a few "same as" (no cycle), every unit dated by
// chronology to a century around its depth and every tenth with a
// radiocarbon date, with one unit in a thousand misdated by chronology
// and one date in a thousand 300 years too late so that the dating checks have inversions to find.
func Site() *records.MatrixCheck {
	r := rand.New(rand.NewPCG(33, 20000))
	const units = 20000
	// The last twins units are each recorded as one with a unit of the
	// sequence (and dated as it) and have no other relation, so the site
	// has no cycle and the reduction runs.
	const twins = 120
	d := &records.MatrixCheck{HasChronology: true, HasRadiocarbon: true}
	year := func(i int) int64 { return 1500 - int64(i)/10 } // deeper is older
	for i := range units {
		y := year(i)
		if i%1000 == 999 {
			y += 400
		}
		from, to := y-50, y+50
		if from == 0 {
			from = -1
		}
		if to == 0 {
			to = 1
		}
		d.Units = append(d.Units, records.CheckUnit{ID: int64(i + 1), Label: "US " + strconv.Itoa(i+1), ChronoFrom: &from, ChronoTo: &to})
		if i%10 == 0 && i < units-twins {
			bp := 1950 - year(i)
			if i%1000 == 500 {
				bp -= 300 // a sample from an intrusion: 300 years too late
			}
			d.Dates = append(d.Dates, records.CheckDate{ID: int64(i/10 + 1), Unit: int64(i + 1), LabCode: "L-" + strconv.Itoa(i), Cal2From: bp - 40, Cal2To: bp + 40})
		}
	}
	seen := map[[2]int]bool{}
	twin := 0
	for rel := 0; len(d.Relations) < 60000; rel++ {
		if rel%500 == 0 && twin < twins {
			t := units - twins + twin
			twin++
			p := r.IntN(units - twins)
			d.Units[t].ChronoFrom, d.Units[t].ChronoTo = d.Units[p].ChronoFrom, d.Units[p].ChronoTo
			d.Relations = append(d.Relations, records.CheckRelation{ID: int64(len(d.Relations) + 1), First: int64(p + 1), Second: int64(t + 1), Relation: 9})
			continue
		}
		a := r.IntN(units - twins - 1)
		b := a + 1 + r.IntN(min(40, units-twins-1-a))
		if seen[[2]int{a, b}] {
			continue
		}
		seen[[2]int{a, b}] = true
		d.Relations = append(d.Relations, records.CheckRelation{ID: int64(len(d.Relations) + 1), First: int64(a + 1), Second: int64(b + 1), Relation: 5 + r.IntN(4)})
	}
	return d
}
