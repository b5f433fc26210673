package model

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/strata-archaeo/strata/plugins/radiocarbon/calib"
)

// The independent computation: the posterior of the same prior (doc.go)
// by direct summation on the 1-year grid, written without the sampler or
// Prepare. Dates in a sequence are a chain, so forward–backward sums give
// each marginal exactly; in a two-phase model the dates are independent
// given the boundaries, so sums over boundary pairs give them exactly.

func curves(t testing.TB) calib.Curves {
	t.Helper()
	cs, err := calib.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// exactLik is N(bp; mu(t), sqrt(err²+sigma(t)²)) on years young…young+n-1,
// normalised, from the curve's At (calib's documented method).
func exactLik(t testing.TB, c *calib.Curve, bp, e float64, young, n int) []float64 {
	l := make([]float64, n)
	s := 0.0
	for k := range n {
		mu, sig, ok := c.At(young + k)
		if !ok {
			t.Fatalf("year %d outside the curve", young+k)
		}
		tot := e*e + sig*sig
		l[k] = math.Exp(-0.5*(bp-mu)*(bp-mu)/tot) / math.Sqrt(tot)
		s += l[k]
	}
	for k := range l {
		l[k] /= s
	}
	return l
}

func norm(p []float64) []float64 {
	s := 0.0
	for _, x := range p {
		s += x
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

// exactSequence: t_1 ≥ t_2 ≥ … (index = years from young, larger is older),
// uniform prior. alpha_j(k) ∝ L_j(k)·Σ_{k'≥k} alpha_{j-1}(k'),
// beta_j(k) = Σ_{k'≤k} L_{j+1}(k')·beta_{j+1}(k'); marginal ∝ alpha·beta.
func exactSequence(L [][]float64) [][]float64 {
	m, n := len(L), len(L[0])
	alpha := make([][]float64, m)
	for j := range m {
		alpha[j] = make([]float64, n)
		if j == 0 {
			copy(alpha[j], L[0])
			continue
		}
		tail := 0.0
		for k := n - 1; k >= 0; k-- {
			tail += alpha[j-1][k]
			alpha[j][k] = L[j][k] * tail
		}
		norm(alpha[j])
	}
	beta := make([][]float64, m)
	beta[m-1] = make([]float64, n)
	for k := range beta[m-1] {
		beta[m-1][k] = 1
	}
	for j := m - 2; j >= 0; j-- {
		beta[j] = make([]float64, n)
		head := 0.0
		for k := range n {
			head += L[j+1][k] * beta[j+1][k]
			beta[j][k] = head
		}
		mx := 0.0
		for _, x := range beta[j] {
			mx = max(mx, x)
		}
		for k := range beta[j] {
			beta[j][k] /= mx
		}
	}
	out := make([][]float64, m)
	for j := range m {
		out[j] = make([]float64, n)
		for k := range n {
			out[j][k] = alpha[j][k] * beta[j][k]
		}
		norm(out[j])
	}
	return out
}

// exactTwoPhase: boundaries b0 ≥ b1 ≥ b2, phase 1 dates in [b1, b0],
// phase 2 dates in [b2, b1], density Π_p (start−end+1)^−n_p · Π L_i.
// Returns the marginals of phase 1's dates, phase 2's dates, then b0, b1, b2.
func exactTwoPhase(L1, L2 [][]float64) (d1, d2 [][]float64, b [3][]float64) {
	n := len(L1[0])
	prefix := func(L [][]float64) [][]float64 {
		out := make([][]float64, len(L))
		for i, l := range L {
			c := make([]float64, n+1)
			for k := range n {
				c[k+1] = c[k] + l[k]
			}
			out[i] = c
		}
		return out
	}
	C1, C2 := prefix(L1), prefix(L2)
	// prod of M_j(s,e) = Σ_{e..s} L_j over j ≠ skip, divided by span^n.
	pf := func(C [][]float64, s, e, skip int) float64 {
		v := math.Pow(float64(s-e+1), -float64(len(C)))
		for j, c := range C {
			if j != skip {
				v *= c[s+1] - c[e]
			}
		}
		return v
	}
	W2 := make([]float64, n) // W2[b1] = Σ_{b2≤b1} P2(b1,b2)
	V1 := make([]float64, n) // V1[b1] = Σ_{b0≥b1} P1(b0,b1)
	for b1 := range n {
		for b2 := 0; b2 <= b1; b2++ {
			W2[b1] += pf(C2, b1, b2, -1)
		}
		for b0 := b1; b0 < n; b0++ {
			V1[b1] += pf(C1, b0, b1, -1)
		}
	}
	for i := range 3 {
		b[i] = make([]float64, n)
	}
	for b1 := range n {
		b[1][b1] = V1[b1] * W2[b1]
		for b0 := b1; b0 < n; b0++ {
			b[0][b0] += pf(C1, b0, b1, -1) * W2[b1]
		}
		for b2 := 0; b2 <= b1; b2++ {
			b[2][b2] += V1[b1] * pf(C2, b1, b2, -1)
		}
	}
	for i := range 3 {
		norm(b[i])
	}
	date := func(L [][]float64, C [][]float64, i int, weight []float64, first bool) []float64 {
		// coef(t) = Σ over boundary pairs (s ≥ t ≥ e) of the other dates'
		// factor times the other phase's weight: a difference array.
		D := make([]float64, n+1)
		for s := range n {
			for e := 0; e <= s; e++ {
				var c float64
				if first {
					c = pf(C, s, e, i) * weight[e] // s = b0, e = b1
				} else {
					c = pf(C, s, e, i) * weight[s] // s = b1, e = b2
				}
				D[e] += c
				D[s+1] -= c
			}
		}
		out := make([]float64, n)
		run := 0.0
		for k := range n {
			run += D[k]
			out[k] = L[i][k] * run
		}
		return norm(out)
	}
	for i := range L1 {
		d1 = append(d1, date(L1, C1, i, W2, true))
	}
	for i := range L2 {
		d2 = append(d2, date(L2, C2, i, V1, false))
	}
	return d1, d2, b
}

type age struct {
	id    string
	bp, e float64
}

func dates(as []age) []Date {
	out := make([]Date, len(as))
	for i, a := range as {
		out[i] = Date{ID: a.id, BP: a.bp, Error: a.e, Curve: calib.IntCal20}
	}
	return out
}

func testOptions(seed uint64) Options {
	// 80,000 kept sweeps per chain: the transition boundary of the
	// two-phase model sits on the Hallstatt plateau, where its density is
	// flat and the 95.4 % cut moves with Monte Carlo noise; at 20,000 one
	// seed in two missed by 8 years.
	// Fewer would not hold the 5-year tolerance, so short mode keeps them
	// and runs one seed of the two-phase model instead of two.
	return Options{Seed: seed, Chains: 4, BurnIn: 500, Iterations: 80000, MaxIterations: 80000}
}

// envelope is the 95.4 % region's outer years (oldest From, youngest To).
func envelope(rs []Range) (int, int) { return rs[0].From, rs[len(rs)-1].To }

const (
	yearTol  = 5
	agreeTol = 5.0
)

func checkAgainst(t *testing.T, what string, got Estimate, exact []float64, young int) {
	t.Helper()
	want := HPD(exact, young, Level95)
	gf, gt := envelope(got.Posterior.HPD95)
	wf, wt := envelope(want)
	t.Logf("%s: 95.4%% %d…%d, integrated %d…%d", what, gf, gt, wf, wt)
	if abs(gf-wf) > yearTol || abs(gt-wt) > yearTol {
		t.Errorf("%s: 95.4%% range %d…%d, integrated %d…%d", what, gf, gt, wf, wt)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestSequenceAgainstIntegration(t *testing.T) {
	cs := curves(t)
	rng := CalRange{Young: 1800, Old: 3400}
	n := rng.Old - rng.Young + 1
	for _, tc := range []struct {
		name string
		ages []age // oldest first
	}{
		{"two", []age{{"A", 2500, 30}, {"B", 2420, 30}}},
		{"three", []age{{"A", 2510, 30}, {"B", 2450, 30}, {"C", 2400, 30}}},
		{"four", []age{{"A", 2520, 30}, {"B", 2480, 30}, {"C", 2440, 30}, {"D", 2400, 30}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Model{Name: tc.name, Dates: dates(tc.ages), Range: &rng}
			for i := 1; i < len(tc.ages); i++ {
				m.Orders = append(m.Orders, Order{Older: tc.ages[i-1].id, Younger: tc.ages[i].id})
			}
			res, err := Run(context.Background(), m, cs, testOptions(7))
			if err != nil {
				t.Fatal(err)
			}
			L := make([][]float64, len(tc.ages))
			for i, a := range tc.ages {
				L[i] = exactLik(t, cs[calib.IntCal20], a.bp, a.e, rng.Young, n)
			}
			post := exactSequence(L)
			logF := 0.0
			for i := range tc.ages {
				checkAgainst(t, tc.ages[i].id, res.Dates[i], post[i], rng.Young)
				f := Agreement(post[i], L[i])
				logF += math.Log(f)
				if d := math.Abs(res.Dates[i].Agreement - 100*f); d > agreeTol {
					t.Errorf("%s: A = %.1f, integrated %.1f", tc.ages[i].id, res.Dates[i].Agreement, 100*f)
				}
			}
			nn := float64(len(tc.ages))
			if d := math.Abs(res.AModel - 100*math.Exp(logF/math.Sqrt(nn))); d > agreeTol {
				t.Errorf("A_model %.1f, integrated %.1f", res.AModel, 100*math.Exp(logF/math.Sqrt(nn)))
			}
			if d := math.Abs(res.AOverall - 100*math.Exp(logF/nn)); d > agreeTol {
				t.Errorf("A_overall %.1f, integrated %.1f", res.AOverall, 100*math.Exp(logF/nn))
			}
			if !res.Converged {
				t.Errorf("convergence %.1f", res.Convergence)
			}
		})
	}
}

func twoPhaseModel(rng CalRange) (Model, []age, []age) {
	p1 := []age{{"A1", 2520, 30}, {"A2", 2490, 30}, {"A3", 2470, 30}}
	p2 := []age{{"B1", 2440, 30}, {"B2", 2410, 30}, {"B3", 2390, 30}}
	m := Model{Name: "two phases", Dates: dates(append(append([]age{}, p1...), p2...)), Range: &rng,
		Phases: []Phase{{Name: "I", Dates: []string{"A1", "A2", "A3"}}, {Name: "II", Dates: []string{"B1", "B2", "B3"}}}}
	return m, p1, p2
}

// TestTwoPhaseAgainstIntegration runs two seeds: each, not only one
// lucky stream, must agree with the integration.
func TestTwoPhaseAgainstIntegration(t *testing.T) {
	seeds := []uint64{11, 12}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { twoPhaseAgainstIntegration(t, seed) })
	}
}

func twoPhaseAgainstIntegration(t *testing.T, seed uint64) {
	cs := curves(t)
	rng := CalRange{Young: 2000, Old: 3200}
	n := rng.Old - rng.Young + 1
	m, p1, p2 := twoPhaseModel(rng)
	res, err := Run(context.Background(), m, cs, testOptions(seed))
	if err != nil {
		t.Fatal(err)
	}
	var L1, L2 [][]float64
	for _, a := range p1 {
		L1 = append(L1, exactLik(t, cs[calib.IntCal20], a.bp, a.e, rng.Young, n))
	}
	for _, a := range p2 {
		L2 = append(L2, exactLik(t, cs[calib.IntCal20], a.bp, a.e, rng.Young, n))
	}
	d1, d2, b := exactTwoPhase(L1, L2)
	post := append(d1, d2...)
	L := append(L1, L2...)
	for i := range post {
		checkAgainst(t, res.Dates[i].ID, res.Dates[i], post[i], rng.Young)
		f := Agreement(post[i], L[i])
		if d := math.Abs(res.Dates[i].Agreement - 100*f); d > agreeTol {
			t.Errorf("%s: A = %.1f, integrated %.1f", res.Dates[i].ID, res.Dates[i].Agreement, 100*f)
		}
	}
	if len(res.Boundaries) != 3 {
		t.Fatalf("%d boundaries", len(res.Boundaries))
	}
	for i := range 3 {
		checkAgainst(t, res.Boundaries[i].Name, res.Boundaries[i], b[i], rng.Young)
	}
	if want := []string{"Start I", "I/II", "End II"}; res.Boundaries[0].Name != want[0] || res.Boundaries[1].Name != want[1] || res.Boundaries[2].Name != want[2] {
		t.Errorf("boundary names %v", []string{res.Boundaries[0].Name, res.Boundaries[1].Name, res.Boundaries[2].Name})
	}
}

func TestSeeds(t *testing.T) {
	cs := curves(t)
	rng := CalRange{Young: 2000, Old: 3200}
	m, _, _ := twoPhaseModel(rng)
	run := func(seed uint64, workers int) (*Result, []byte) {
		o := testOptions(seed)
		o.Iterations, o.MaxIterations = 500, 500
		o.Workers = workers
		r, err := Run(context.Background(), m, cs, o)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return r, b
	}
	_, ab := run(3, 1)
	_, bb := run(3, 2) // same seed, chains scheduled differently
	if string(ab) != string(bb) {
		t.Error("the same seed gave different results")
	}
	// That another seed still agrees is TestTwoPhaseAgainstIntegration's
	// second seed; here only that it is used at all.
	_, cb := run(4, 2)
	if string(ab) == string(cb) {
		t.Error("a different seed gave byte-identical results: the seed is not used")
	}
}

func TestOutOfSequenceFlagged(t *testing.T) {
	cs := curves(t)
	// C lies above B in the matrix but is dated centuries older.
	m := Model{Dates: dates([]age{{"A", 3300, 25}, {"B", 3200, 25}, {"C", 3100, 25}, {"D", 3600, 60}}),
		Orders: []Order{{"A", "B"}, {"B", "C"}, {"C", "D"}}}
	o := testOptions(5)
	o.Iterations, o.MaxIterations = 5000, 5000 // A is far from the threshold either way
	res, err := Run(context.Background(), m, cs, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Dates {
		t.Logf("%s A=%.1f outlier=%v", d.ID, d.Agreement, d.Outlier)
	}
	c := res.Dates[3]
	if !(c.Agreement < 60) || !c.Outlier {
		t.Errorf("D: A = %.1f, outlier %v; want A < 60 and flagged", c.Agreement, c.Outlier)
	}
	// C, next to D, shares some of the conflict; A and B, further up,
	// must not.
	for _, d := range res.Dates[:2] {
		if d.Outlier {
			t.Errorf("%s flagged too (A = %.1f)", d.ID, d.Agreement)
		}
	}
	for _, d := range res.Dates[:3] {
		if d.Agreement <= c.Agreement {
			t.Errorf("%s: A = %.1f, not above D's %.1f", d.ID, d.Agreement, c.Agreement)
		}
	}
	if res.AOverall >= 60 {
		t.Errorf("A_overall %.1f for a model the dates contradict", res.AOverall)
	}
	// The same dates in the order the matrix should have had agree.
	m.Orders = []Order{{"D", "A"}, {"A", "B"}, {"B", "C"}}
	res, err = Run(context.Background(), m, cs, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Dates {
		if d.Outlier {
			t.Errorf("%s flagged (A = %.1f) in a consistent order", d.ID, d.Agreement)
		}
	}
}

func ExampleRun() {
	cs, _ := calib.Builtin()
	m := Model{
		Dates:  []Date{{ID: "OxA-1", BP: 2500, Error: 30}, {ID: "OxA-2", BP: 2420, Error: 30}},
		Orders: []Order{{Older: "OxA-1", Younger: "OxA-2"}},
	}
	res, err := Run(context.Background(), m, cs, Options{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(res.Dates), res.Converged)
	// Output: 2 true
}
