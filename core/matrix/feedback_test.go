package matrix

import (
	"math/rand/v2"
	"testing"
)

// acyclicBrute tells, by the brute matrix, whether the relations above
// (with the classes of same) leave no class above itself.
func acyclicBrute(n int, above, same [][2]int) bool {
	b := newBrute(n, above, same)
	for c := 0; c < n; c++ {
		if b.reach[c][c] {
			return false
		}
	}
	return true
}

// TestFeedbackArcsAreTheFewest: on random matrices, removing every
// cycle's feedback relations leaves the matrix without a cycle, and for
// each cycle no smaller set of its relations would do (checked over
// every subset with the brute matrix).
func TestFeedbackArcsAreTheFewest(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 128))
	for round := 0; round < 300; round++ {
		n := 2 + r.IntN(9)
		g, above, same := randomMatrix(r, n, false)
		cycles, cuts := g.Cycles(), g.FeedbackArcs()
		if len(cycles) != len(cuts) {
			t.Fatalf("round %d: %d cycles, %d cuts", round, len(cycles), len(cuts))
		}
		dropped := map[[2]int]bool{}
		for _, cut := range cuts {
			for _, e := range cut {
				dropped[[2]int{int(e.Upper), int(e.Lower)}] = true
			}
		}
		var rest [][2]int
		for _, e := range above {
			if !dropped[e] {
				rest = append(rest, e)
			}
		}
		if !acyclicBrute(n, rest, same) {
			t.Fatalf("round %d: cycles remain after removing %v (above %v, same %v)", round, cuts, above, same)
		}
		for i, c := range cycles {
			if len(c.Relations) > 10 {
				continue
			}
			// The smallest subset of the cycle's relations whose removal
			// leaves the whole matrix's other relations acyclic there.
			best := len(c.Relations) + 1
			for mask := 0; mask < 1<<len(c.Relations); mask++ {
				size := 0
				drop := map[[2]int]bool{}
				for j, e := range c.Relations {
					if mask&(1<<j) != 0 {
						drop[[2]int{int(e.Upper), int(e.Lower)}] = true
						size++
					}
				}
				if size >= best {
					continue
				}
				var kept [][2]int
				for _, e := range c.Relations {
					if k := [2]int{int(e.Upper), int(e.Lower)}; !drop[k] {
						kept = append(kept, k)
					}
				}
				if acyclicBrute(n, kept, same) {
					best = size
				}
			}
			if len(cuts[i]) != best {
				t.Fatalf("round %d: cycle %v cut by %v, but %d relations suffice", round, c.Units, cuts[i], best)
			}
		}
	}
}

// TestGreedyCutBreaksLargeTangles: a tangle too large for the exact
// search is still broken by the greedy order.
func TestGreedyCutBreaksLargeTangles(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 160))
	for round := 0; round < 50; round++ {
		g := New()
		var above [][2]int
		const n = 30
		for i := 0; i < n; i++ { // a ring, so that every unit is in the tangle
			g.Above(int64(i), int64((i+1)%n))
			above = append(above, [2]int{i, (i + 1) % n})
		}
		for range 40 {
			a, b := r.IntN(n), r.IntN(n)
			if a != b {
				g.Above(int64(a), int64(b))
				above = append(above, [2]int{a, b})
			}
		}
		cuts := g.FeedbackArcs()
		if len(cuts) != 1 || len(g.Cycles()[0].Relations) <= exactLimit {
			t.Fatalf("round %d: %d cycles, want one large tangle", round, len(cuts))
		}
		dropped := map[[2]int]bool{}
		for _, e := range cuts[0] {
			dropped[[2]int{int(e.Upper), int(e.Lower)}] = true
		}
		var rest [][2]int
		for _, e := range above {
			if !dropped[e] {
				rest = append(rest, e)
			}
		}
		if !acyclicBrute(n, rest, nil) || len(cuts[0]) >= len(above)/2 {
			t.Fatalf("round %d: greedy cut %d of %d relations, acyclic %v", round, len(cuts[0]), len(above), acyclicBrute(n, rest, nil))
		}
	}
}
