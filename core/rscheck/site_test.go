package rscheck

import "testing"

// TestSite: the benchmark's site is what it says (no cycle, so every
// check runs) and its misdated units and dates are found, each pair once
// per category, with a path down from the upper unit to the lower.
func TestSite(t *testing.T) {
	d := Site()
	if len(d.Units) != 20000 || len(d.Relations) != 60000 {
		t.Fatalf("%d units, %d relations", len(d.Units), len(d.Relations))
	}
	r := Check("us", d, nil)
	if len(r.Skipped) != 0 || r.Problems[Cycle].Count != 0 {
		t.Fatalf("skipped %v, %d cycles", r.Skipped, r.Problems[Cycle].Count)
	}
	if r.Problems[Redundant].Count == 0 || r.Problems[PeriodInversion].Count == 0 || r.Problems[TPQInversion].Count == 0 {
		t.Fatalf("redundant %d, period inversions %d, tpq inversions %d", r.Problems[Redundant].Count, r.Problems[PeriodInversion].Count, r.Problems[TPQInversion].Count)
	}
	for _, k := range []string{PeriodInversion, TPQInversion} {
		seen := map[[2]int64]bool{}
		for _, it := range r.Problems[k].Items {
			key := [2]int64{it.Upper, it.Lower}
			if seen[key] {
				t.Errorf("%s: pair %v reported twice", k, key)
			}
			seen[key] = true
			if it.Path[0] != it.Upper || it.Path[len(it.Path)-1] != it.Lower || len(it.Relations) < len(it.Path)-1 {
				t.Errorf("%s: path %v, relations %v", k, it.Path, it.Relations)
			}
			if it.LowerEarliest.Year <= it.UpperLatest.Year {
				t.Errorf("%s: not inverted: %+v %+v", k, it.LowerEarliest, it.UpperLatest)
			}
			if k == TPQInversion && it.LowerEarliest.Source != "radiocarbon" && it.UpperLatest.Source != "radiocarbon" {
				t.Errorf("%s: no date shows it: %+v %+v", k, it.LowerEarliest, it.UpperLatest)
			}
		}
	}
}
