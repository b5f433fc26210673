package calib

import (
	"errors"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

func loadReal(t testing.TB) Curves {
	t.Helper()
	cs, err := Builtin()
	if err != nil {
		t.Fatalf("built-in curves: %v", err)
	}
	return cs
}

func TestPinIntCal20(t *testing.T) {
	cs := loadReal(t)
	r, err := cs.Calibrate("intcal20", 3200, 40)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Interval{3386, 3450}); r.Sigma1 != want {
		t.Errorf("1σ = %v, want %v", r.Sigma1, want)
	}
	if want := (Interval{3278, 3486}); r.Sigma2 != want {
		t.Errorf("2σ = %v, want %v", r.Sigma2, want)
	}
	if r.Truncated || r.Step != 1 || r.Curve != "intcal20" {
		t.Errorf("truncated %v, step %d, curve %q", r.Truncated, r.Step, r.Curve)
	}
	from, to := r.Sigma2.Years()
	if from != -1537 || to != -1329 {
		t.Errorf("2σ in years = %d…%d, want -1537…-1329", from, to)
	}
}

func TestBuiltinCurves(t *testing.T) {
	cs := loadReal(t)
	if got := cs.Names(); !reflect.DeepEqual(got, []string{"intcal20", "marine20", "shcal20"}) {
		t.Fatalf("names %v", got)
	}
	// Row counts and first/last rows as data/README.md lists them.
	for _, tc := range []struct {
		name        string
		rows        int
		first, last Point
	}{
		{"intcal20", 9501, Point{55000, 50100, 1024, 528.5, 193.9}, Point{0, 199, 11, -24.5, 1.4}},
		{"shcal20", 9501, Point{55000, 50132, 1008, 521.9, 190.2}, Point{0, 174, 11, -21.4, 1.3}},
		{"marine20", 5501, Point{55000, 50788, 991, 402.2, 171.9}, Point{0, 603, 60, -72.3, 6.9}},
	} {
		c := cs[tc.name]
		if len(c.Points) != tc.rows {
			t.Errorf("%s: %d rows, want %d", tc.name, len(c.Points), tc.rows)
		}
		if c.Points[0] != tc.first || c.Points[len(c.Points)-1] != tc.last {
			t.Errorf("%s: first %v last %v", tc.name, c.Points[0], c.Points[len(c.Points)-1])
		}
		if from, to := c.CalRange(); from != 0 || to != 55000 {
			t.Errorf("%s: grid %d…%d", tc.name, from, to)
		}
	}
	// 1-year interpolation between IntCal20's 20-year knots 55000 and
	// 54980 (ages 50100, 50081; sigmas 1024, 1018).
	age, sig, ok := cs["intcal20"].At(54990)
	if !ok || age != 50090.5 || sig != 1021 {
		t.Errorf("At(54990) = %v, %v, %v", age, sig, ok)
	}
}

func TestOtherCurves(t *testing.T) {
	cs := loadReal(t)
	for _, name := range []string{"shcal20", "marine20", "SHCal20", " Marine20 "} {
		r, err := cs.Calibrate(name, 3200, 40)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkResult(t, name, r)
		if m := mass(r); m < 0.9999 {
			t.Errorf("%s: the 4σ span holds only %v", name, m)
		}
	}
	// Southern-hemisphere 14C ages run a few decades older (the
	// interhemispheric offset), so the same measurement lands a little
	// younger; the marine reservoir (~500 14C years) makes it much younger.
	ic, _ := cs.Calibrate("intcal20", 3200, 40)
	sh, _ := cs.Calibrate("shcal20", 3200, 40)
	ma, _ := cs.Calibrate("marine20", 3200, 40)
	if !(sh.Sigma2.From <= ic.Sigma2.From) || !(ma.Sigma2.To < ic.Sigma2.From) {
		t.Errorf("intcal %v shcal %v marine %v", ic.Sigma2, sh.Sigma2, ma.Sigma2)
	}
	if r, err := cs.Calibrate("", 3200, 40); err != nil || r.Curve != DefaultCurve || r.Sigma1 != ic.Sigma1 {
		t.Errorf("default curve: %v %v", r, err)
	}
}

// checkResult asserts the invariants every result has.
func checkResult(t *testing.T, what string, r *Result) {
	t.Helper()
	if !(r.Sigma1.From <= r.Sigma1.To && r.Sigma2.From <= r.Sigma2.To) {
		t.Errorf("%s: bounds not ordered %v %v", what, r.Sigma1, r.Sigma2)
	}
	if !(r.Sigma2.From <= r.Sigma1.From && r.Sigma1.To <= r.Sigma2.To) {
		t.Errorf("%s: 1σ %v not inside 2σ %v", what, r.Sigma1, r.Sigma2)
	}
	if len(r.Distribution) == 0 || len(r.Distribution) > MaxDistributionPoints {
		t.Fatalf("%s: %d distribution points", what, len(r.Distribution))
	}
	total := 0.0
	peak := r.Distribution[0]
	for i, d := range r.Distribution {
		if i > 0 && d.CalBP != r.Distribution[i-1].CalBP+r.Step {
			t.Fatalf("%s: distribution not on a %d-year grid at %d", what, r.Step, i)
		}
		if d.P < 0 || math.IsNaN(d.P) {
			t.Fatalf("%s: p(%d) = %v", what, d.CalBP, d.P)
		}
		total += d.P * float64(r.Step)
		if d.P > peak.P {
			peak = d
		}
	}
	// The span always covers the 2σ range. (Where the measurement fits
	// the curve well it holds nearly everything: TestOtherCurves.)
	if total > 1+1e-9 || total < Level2Sigma {
		t.Errorf("%s: distribution mass %v", what, total)
	}
	first, last := r.Distribution[0].CalBP, r.Distribution[len(r.Distribution)-1].CalBP+r.Step-1
	if r.Sigma2.From < first || r.Sigma2.To > last {
		t.Errorf("%s: 2σ %v outside the distribution %d…%d", what, r.Sigma2, first, last)
	}
	if peak.CalBP+r.Step-1 < r.Sigma1.From || peak.CalBP > r.Sigma1.To {
		t.Errorf("%s: peak %d outside 1σ %v", what, peak.CalBP, r.Sigma1)
	}
}

func mass(r *Result) float64 {
	total := 0.0
	for _, d := range r.Distribution {
		total += d.P * float64(r.Step)
	}
	return total
}

func TestInvalidError(t *testing.T) {
	c := loadReal(t)["intcal20"]
	for _, e := range []float64{0, -40, math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := c.Calibrate(3200, e)
		if !errors.Is(err, ErrInvalidError) || FieldOf(err) != "bp_error" {
			t.Errorf("error %v: %v (field %q)", e, err, FieldOf(err))
		}
	}
	for _, bp := range []float64{math.NaN(), math.Inf(1)} {
		if _, err := c.Calibrate(bp, 40); !errors.Is(err, ErrInvalidAge) || FieldOf(err) != "bp" {
			t.Errorf("bp %v: %v", bp, err)
		}
	}
}

func TestOutOfRange(t *testing.T) {
	cs := loadReal(t)
	for _, tc := range []struct {
		curve   string
		bp, err float64
	}{
		{"intcal20", 60000, 1000}, // curve ends at 50100 ± 1024: 9900 > 4·1431
		{"intcal20", 60000, 100},
		{"intcal20", 1e6, 50},
		{"intcal20", -500, 30}, // youngest curve age is 95 BP
		{"intcal20", -500, 100},
		{"intcal20", -50, 20},
		{"shcal20", 60000, 500},
		{"marine20", -500, 30},
		{"marine20", 100, 20}, // Marine20 never goes below ~500 BP: 4 combined σ ≈ 250
	} {
		_, err := cs.Calibrate(tc.curve, tc.bp, tc.err)
		if !errors.Is(err, ErrOutOfRange) || FieldOf(err) != "bp" {
			t.Errorf("%s %v±%v: %v", tc.curve, tc.bp, tc.err, err)
		}
	}
	// Near the ends but within 4 combined sigmas: calibrated, flagged.
	for _, tc := range []struct {
		bp, err   float64
		truncated bool
	}{
		{50000, 1000, true}, // beyond 55 kBP is plausible
		{55000, 1000, true}, // beyond the curve by 4900 < 4·1431: all mass in the tail
		{120, 30, true},     // within 4σ of 199 BP at 0 cal BP: could be post-1950
		{400, 30, false},
		{10, 30, false}, // fits only the ~95 BP dip near 50 cal BP
		{40000, 500, false},
	} {
		r, err := cs.Calibrate("intcal20", tc.bp, tc.err)
		if err != nil {
			t.Errorf("%v±%v: %v", tc.bp, tc.err, err)
			continue
		}
		checkResult(t, "edge", r)
		if r.Truncated != tc.truncated {
			t.Errorf("%v±%v: truncated %v, want %v (2σ %v)", tc.bp, tc.err, r.Truncated, tc.truncated, r.Sigma2)
		}
	}
}

func TestUnknownAndMissingCurve(t *testing.T) {
	cs := loadReal(t)
	_, err := cs.Calibrate("intcal13", 3200, 40)
	if !errors.Is(err, ErrUnknownCurve) || FieldOf(err) != "curve" || !strings.Contains(err.Error(), "intcal13") {
		t.Errorf("unknown curve: %v", err)
	}
	partial := Curves{"intcal20": cs["intcal20"]}
	_, err = partial.Calibrate("marine20", 3200, 40)
	if !errors.Is(err, ErrCurveNotLoaded) || FieldOf(err) != "curve" || !strings.Contains(err.Error(), "marine20") {
		t.Errorf("missing curve: %v", err)
	}
}

func TestMonotoneInError(t *testing.T) {
	cs := loadReal(t)
	for _, name := range CurveNames {
		for _, bp := range []float64{1000, 2450, 3200, 4500, 8000, 12000, 25000, 40000} {
			prev := (*Result)(nil)
			for _, e := range []float64{15, 25, 40, 60, 100, 160, 250} {
				r, err := cs.Calibrate(name, bp, e)
				if err != nil {
					t.Fatalf("%s %v±%v: %v", name, bp, e, err)
				}
				checkResult(t, name, r)
				if prev != nil {
					// A larger error never narrows a range; both ends move
					// outward or stay.
					if r.Sigma1.From > prev.Sigma1.From || r.Sigma1.To < prev.Sigma1.To ||
						r.Sigma2.From > prev.Sigma2.From || r.Sigma2.To < prev.Sigma2.To {
						t.Errorf("%s %v: ±%v gives 1σ %v 2σ %v, ±%v gave 1σ %v 2σ %v",
							name, bp, e, r.Sigma1, r.Sigma2, prev.Error, prev.Sigma1, prev.Sigma2)
					}
				}
				prev = r
			}
		}
	}
	// And strictly: a sixfold error is a wider range.
	a, _ := cs.Calibrate("intcal20", 3200, 40)
	b, _ := cs.Calibrate("intcal20", 3200, 240)
	if !(b.Sigma2.To-b.Sigma2.From > a.Sigma2.To-a.Sigma2.From) || !(b.Sigma1.To-b.Sigma1.From > a.Sigma1.To-a.Sigma1.From) {
		t.Errorf("±40 %v %v, ±240 %v %v", a.Sigma1, a.Sigma2, b.Sigma1, b.Sigma2)
	}
}

func TestDeterministicAndConcurrent(t *testing.T) {
	cs := loadReal(t)
	want, err := cs.Calibrate("intcal20", 2450, 35) // the Hallstatt plateau: many near-ties
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				// Interleave other sizes so pooled buffers get reused dirty.
				if _, err := cs.Calibrate("marine20", 30000+float64(g*1000), 300); err != nil {
					errs <- err.Error()
					return
				}
				got, err := cs.Calibrate("intcal20", 2450, 35)
				if err != nil || !reflect.DeepEqual(got, want) {
					errs <- "result changed between runs"
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func TestDistributionThinned(t *testing.T) {
	cs := loadReal(t)
	r, err := cs.Calibrate("intcal20", 30000, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if r.Step < 2 {
		t.Fatalf("step %d for a %d-point distribution", r.Step, len(r.Distribution))
	}
	checkResult(t, "thinned", r)
}

// naiveCalibrate is the method written out plainly, over the whole curve,
// interpolating from the rows directly: the windowed, pooled Calibrate must
// give identical bounds.
func naiveCalibrate(c *Curve, bp, e float64) (s1, s2 Interval) {
	pts := slices.Clone(c.Points)
	slices.Reverse(pts) // youngest first
	lo, hi := int(pts[0].CalBP), int(pts[len(pts)-1].CalBP)
	n := hi - lo + 1
	p := make([]float64, n)
	sum := 0.0
	for i := range p {
		y := float64(lo + i)
		k := sort.Search(len(pts), func(k int) bool { return pts[k].CalBP >= y })
		age, sig := pts[k].Age, pts[k].Sigma
		if pts[k].CalBP != y {
			a, b := pts[k-1], pts[k]
			f := (y - a.CalBP) / (b.CalBP - a.CalBP)
			age, sig = a.Age+f*(b.Age-a.Age), a.Sigma+f*(b.Sigma-a.Sigma)
		}
		tot := e*e + sig*sig
		p[i] = math.Exp(-0.5*(bp-age)*(bp-age)/tot) / math.Sqrt(tot)
		sum += p[i]
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
		p[i] /= sum
	}
	sort.SliceStable(order, func(a, b int) bool { return p[order[a]] > p[order[b]] })
	cum, mn, mx := 0.0, n, -1
	done1 := false
	for _, i := range order {
		cum += p[i]
		mn, mx = min(mn, i), max(mx, i)
		if !done1 && cum >= Level1Sigma {
			s1, done1 = Interval{lo + mn, lo + mx}, true
		}
		if cum >= Level2Sigma {
			return s1, Interval{lo + mn, lo + mx}
		}
	}
	return s1, Interval{lo + mn, lo + mx}
}

func TestMatchesNaiveFullGrid(t *testing.T) {
	cs := loadReal(t)
	rng := rand.New(rand.NewSource(20))
	cases := 12
	if testing.Short() {
		cases = 3
	}
	// Fixed cases first: the pin, the Hallstatt plateau, and young small
	// errors on the 1-year part of the curve where equal probabilities
	// (ties) are common; then random ages and errors.
	fixed := [][2]float64{{3200, 40}, {2450, 35}, {1500, 15}, {640, 20}, {4900, 25}, {11000, 50}}
	for _, name := range CurveNames {
		c := cs[name]
		for i := 0; i < len(fixed)+cases; i++ {
			bp := 700 + rng.Float64()*44000
			e := 10 + rng.Float64()*300
			if i < len(fixed) {
				bp, e = fixed[i][0], fixed[i][1]
			}
			bp, e = math.Round(bp), math.Round(e)
			r, err := c.Calibrate(bp, e)
			if err != nil {
				t.Fatalf("%s %v±%v: %v", name, bp, e, err)
			}
			n1, n2 := naiveCalibrate(c, bp, e)
			if r.Sigma1 != n1 || r.Sigma2 != n2 {
				t.Errorf("%s %v±%v: got %v %v, full grid %v %v", name, bp, e, r.Sigma1, r.Sigma2, n1, n2)
			}
		}
	}
}

func TestCalBPToYear(t *testing.T) {
	for bp, y := range map[int]int{0: 1950, 1949: 1, 1950: -1, 1951: -2, 3450: -1501, -50: 2000} {
		if got := CalBPToYear(bp); got != y {
			t.Errorf("CalBPToYear(%d) = %d, want %d", bp, got, y)
		}
	}
}

func BenchmarkCalibrate(b *testing.B) {
	cs := loadReal(b)
	for _, bc := range []struct {
		name    string
		curve   string
		bp, err float64
	}{
		{"intcal20_3200±40", "intcal20", 3200, 40},
		{"intcal20_2450±35_plateau", "intcal20", 2450, 35},
		{"shcal20_8000±60", "shcal20", 8000, 60},
		{"marine20_30000±400", "marine20", 30000, 400},
		{"intcal20_40000±1000", "intcal20", 40000, 1000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.Calibrate(bc.curve, bc.bp, bc.err); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
