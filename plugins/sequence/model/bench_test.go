package model

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-archaeo/strata/plugins/radiocarbon/calib"
)

// benchModel is 50 dates in 5 contiguous phases of 150 years each, from
// 3600 to 2850 cal BP, simulated from IntCal20 (true year within the
// phase, the curve's age there, ±30 noise), with a few matrix orders
// inside each phase.
func benchModel(t testing.TB) Model {
	cs := curves(t)
	c := cs[calib.IntCal20]
	r := rand.New(rand.NewPCG(2024, 1))
	m := Model{Name: "bench"}
	for p := range 5 {
		ph := Phase{Name: fmt.Sprintf("P%d", p+1)}
		old := 3600 - 150*p
		// True years oldest first, so that the matrix orders added
		// (each third date below the one before it) are true ones.
		years := make([]int, 10)
		for i := range years {
			years[i] = old - r.IntN(150)
		}
		slices.Sort(years)
		slices.Reverse(years)
		for i, year := range years {
			mu, _, _ := c.At(year)
			id := fmt.Sprintf("P%d-%02d", p+1, i+1)
			m.Dates = append(m.Dates, Date{ID: id, BP: float64(int(mu + 30*r.NormFloat64())), Error: 30, Curve: calib.IntCal20})
			ph.Dates = append(ph.Dates, id)
			if i%3 == 1 {
				m.Orders = append(m.Orders, Order{Older: fmt.Sprintf("P%d-%02d", p+1, i), Younger: id})
			}
		}
		m.Phases = append(m.Phases, ph)
	}
	return m
}

func BenchmarkFiftyDatesFivePhases(b *testing.B) {
	m := benchModel(b)
	cs := curves(b)
	p, err := Prepare(m, cs)
	if err != nil {
		b.Fatal(err)
	}
	var res *Result
	for b.Loop() {
		res, err = p.Run(context.Background(), Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(res.Convergence, "C")
	b.ReportMetric(float64(res.Iterations), "sweeps/chain")
	b.ReportMetric(float64(p.Range().Old-p.Range().Young+1), "grid-years")
	for _, e := range append(res.Dates, res.Boundaries...) {
		if e.Convergence < ConvergenceTarget+2 {
			b.Logf("%s: C = %.1f, A = %.1f", e.ID, e.Convergence, e.Agreement)
		}
	}
	if !res.Converged {
		b.Errorf("not converged: C = %.1f after %d sweeps per chain", res.Convergence, res.Iterations)
	}
}
