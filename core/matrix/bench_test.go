package matrix

import (
	"math/rand/v2"
	"testing"
)

// site is a matrix the size issue 33 names: 20,000 units and 60,000
// relations, each unit above a few of the next ones in the sequence (as
// a deep excavation is), with a few "same as" units.
func site() *Graph {
	r := rand.New(rand.NewPCG(33, 20000))
	g := New()
	const units = 20000
	for i := 0; i < units; i++ {
		g.Add(int64(i))
	}
	for rel := 0; rel < 60000; rel++ {
		a := r.IntN(units - 1)
		b := a + 1 + r.IntN(min(40, units-1-a))
		if rel%500 == 0 {
			g.Same(int64(a), int64(b))
			continue
		}
		g.Above(int64(a), int64(b))
	}
	return g
}

// BenchmarkCheck is the report's graph work on a site: cycles, their
// cuts and the reduction (issue 33's target: under 2 s).
func BenchmarkCheck(b *testing.B) {
	g := site()
	b.ResetTimer()
	for b.Loop() {
		g.Cycles()
		g.FeedbackArcs()
		g.Redundant()
	}
}

// BenchmarkPathCloses is the strict save's question on a site: would a
// new relation close a cycle (issue 33's target: under 5 ms p50 added to
// a save).
func BenchmarkPathCloses(b *testing.B) {
	g := site()
	r := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for b.Loop() {
		a := r.IntN(19000)
		g.PathCloses(int64(a), int64(a+1+r.IntN(500)))
	}
}
