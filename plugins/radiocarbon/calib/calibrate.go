package calib

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Probability levels of the 1σ and 2σ ranges (the figures, i.e.
// the mass of a normal distribution within ±1σ and ±2σ, rounded).
const (
	Level1Sigma = 0.682689
	Level2Sigma = 0.954500
)

const (
	// rangeSigmas decides "outside the curve" and the plotted span: a
	// calendar year counts when the measured age is within rangeSigmas
	// combined sigmas of the curve's age there.
	rangeSigmas = 4.0
	// windowSigmas bounds the years whose likelihood is computed at all.
	// Beyond 8 combined sigmas the likelihood is below e^-32 ≈ 1.3e-14 of
	// that of a perfect fit, and a normal tail there holds ~1e-15: far
	// below anything that could move a bound (TestMatchesNaiveFullGrid
	// compares with the whole 55,000-year grid).
	windowSigmas = 8.0
	// MaxDistributionPoints caps Result.Distribution; a wider span is
	// thinned by averaging Step consecutive years.
	MaxDistributionPoints = 1000
)

// Errors; Calibrate wraps them with detail, test with errors.Is.
var (
	ErrInvalidError   = errors.New("bp_error must be a positive number")
	ErrInvalidAge     = errors.New("bp must be a finite number")
	ErrOutOfRange     = errors.New("age outside the calibration curve")
	ErrUnknownCurve   = errors.New("unknown calibration curve")
	ErrCurveNotLoaded = errors.New("calibration curve not loaded")
)

// FieldOf names the radiocarbon column a calibration error belongs to
// ("bp", "bp_error" or "curve"), so the plugin can report a field error on
// the row; "" for other errors.
func FieldOf(err error) string {
	switch {
	case errors.Is(err, ErrInvalidError):
		return "bp_error"
	case errors.Is(err, ErrInvalidAge), errors.Is(err, ErrOutOfRange):
		return "bp"
	case errors.Is(err, ErrUnknownCurve), errors.Is(err, ErrCurveNotLoaded):
		return "curve"
	}
	return ""
}

// Interval is a calibrated range in cal BP, From ≤ To (From is the younger
// end).
type Interval struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// Years converts the interval to signed calendar years (negative BCE, no
// year 0), returned in chronological order: from ≤ to.
func (iv Interval) Years() (from, to int) { return CalBPToYear(iv.To), CalBPToYear(iv.From) }

// CalBPToYear converts cal BP (before AD 1950) to a signed calendar year
// without year 0: 0 → 1950, 1949 → 1, 1950 → -1 (1 BCE).
func CalBPToYear(calBP int) int {
	y := 1950 - calBP
	if y <= 0 {
		y--
	}
	return y
}

// HPDInterval is one run of consecutive years of a highest posterior
// density region, in cal BP (From ≤ To, both years included), with the
// probability the distribution puts on those years.
type HPDInterval struct {
	Interval
	P float64 `json:"p"`
}

// Density is the probability of one calendar year (or, when Result.Step
// > 1, the mean per-year probability over CalBP … CalBP+Step-1).
type Density struct {
	CalBP int     `json:"cal_bp"`
	P     float64 `json:"p"`
}

// Result of one calibration.
type Result struct {
	Curve  string   `json:"curve"`
	BP     float64  `json:"bp"`
	Error  float64  `json:"bp_error"` // not "error": clients read that as a failure
	Sigma1 Interval `json:"sigma1"`   // 68.2689 %
	Sigma2 Interval `json:"sigma2"`   // 95.4500 %
	// HPD1 and HPD2 are the highest posterior density regions behind
	// Sigma1 and Sigma2, as intervals of consecutive years, youngest
	// first: the years the method takes (by descending probability until
	// the level is reached) split where HPDMergeGap or more years are left
	// out. Sigma1 and
	// Sigma2 are their envelopes (the first run's From, the last run's
	// To), which a multimodal distribution can make far wider than the
	// region itself; each run carries the probability it holds.
	HPD1 []HPDInterval `json:"hpd1"`
	HPD2 []HPDInterval `json:"hpd2"`
	// Distribution covers, in ascending cal BP, every year from the
	// youngest to the oldest year whose curve age is within 4 combined
	// sigmas of the measurement (widened to the 2σ range if that reaches
	// further, which happens only beyond the end of the curve). It is
	// normalised over the whole computed window, so it sums to slightly
	// less than 1. Step is 1 unless the span is longer than
	// MaxDistributionPoints years; then each point is the mean over Step
	// years (P·Step is the bin's probability).
	Step         int       `json:"step"`
	Distribution []Density `json:"distribution"`
	// Truncated: the 4σ span reaches the first or last year of the curve,
	// so part of the probability lies beyond it and the bounds are
	// clipped there.
	Truncated bool `json:"truncated"`
}

// Selection by buckets. Taking years in descending probability only needs
// a full ordering inside the bucket where a level is crossed: every year in
// a higher bucket is more probable and is taken anyway. A bucket is the top
// 16 bits of the float64 (sign, exponent, 4 mantissa bits), which orders
// non-negative floats, so each bucket spans at most 6.25 % in probability
// and holds few years. Buckets are counted down from the peak's; the last
// one collects everything 128 octaves or more below the peak (never
// reached in practice, and still handled exactly if it were).
const (
	bucketShift = 48
	nBuckets    = 2048
)

type scratch struct {
	p      []float64
	sel    []int32
	mass   [nBuckets]float64
	count  [nBuckets]int32
	lo, hi [nBuckets]int32 // first and last index in each bucket
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// Calibrate calibrates a conventional radiocarbon age bp ± bpError.
//
// Method (issue 5): the curve on its 1-year grid; for each calendar year t
// the Gaussian likelihood N(bp; mu(t), sqrt(bpError² + sigma(t)²)); the
// likelihoods normalised to sum 1; years taken by descending probability
// (ties in ascending cal BP) until the cumulative sum reaches 68.2689 % and
// 95.4500 %, the year that crosses the level included; each range is the
// min and max cal BP of the years taken.
//
// Outside the curve (ErrOutOfRange): no calendar year has a curve age
// within 4 combined sigmas of bp, i.e. |bp − mu(t)| > 4·sqrt(bpError² +
// sigma(t)²) everywhere. With the curve sigma set to 0 this is exactly
// "bp ± 4·bpError does not meet the curve's 14C age range"; the curve
// sigma widens it, as it does the likelihood. The sum of likelihoods is
// then always positive, so a degenerate distribution cannot occur.
func (c *Curve) Calibrate(bp, bpError float64) (*Result, error) {
	if math.IsNaN(bp) || math.IsInf(bp, 0) {
		return nil, fmt.Errorf("%w: %v", ErrInvalidAge, bp)
	}
	if !(bpError > 0) || math.IsInf(bpError, 0) {
		return nil, fmt.Errorf("%w, got %v", ErrInvalidError, bpError)
	}
	e2 := bpError * bpError

	// The blocks that may hold a year within windowSigmas.
	fb, lb := -1, -1
	for b := range c.bMuMin {
		r := windowSigmas * math.Sqrt(e2+c.bVMax[b])
		if bp >= c.bMuMin[b]-r && bp <= c.bMuMax[b]+r {
			if fb < 0 {
				fb = b
			}
			lb = b
		}
	}
	if fb < 0 {
		return nil, c.outOfRange(bp, bpError)
	}
	lo := fb * blockSize
	hi := min((lb+1)*blockSize, len(c.mu))
	w := hi - lo

	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	if cap(s.p) < w {
		s.p = make([]float64, w)
	}
	p := s.p[:w]

	mu, v := c.mu[lo:hi], c.v[lo:hi]
	const z2Max = rangeSigmas * rangeSigmas
	sum, peak := 0.0, 0.0
	in4lo, in4hi := -1, -1
	for i := range p {
		tot := e2 + v[i]
		d := bp - mu[i]
		z2 := d * d / tot
		if z2 <= z2Max {
			if in4lo < 0 {
				in4lo = i
			}
			in4hi = i
		}
		l := math.Exp(-0.5*z2) / math.Sqrt(tot)
		p[i] = l
		sum += l
		if l > peak {
			peak = l
		}
	}
	if in4lo < 0 || !(sum > 0) {
		return nil, c.outOfRange(bp, bpError)
	}
	for i := range p {
		p[i] /= sum
	}
	peak /= sum

	base := c.minBP + lo
	r := &Result{Curve: c.Name, BP: bp, Error: bpError}
	var cut [2]threshold
	r.Sigma1, r.Sigma2, cut = s.ranges(p, peak)
	r.HPD1 = runs(p, cut[0], base)
	r.HPD2 = runs(p, cut[1], base)
	r.Sigma1.From += base
	r.Sigma1.To += base
	r.Sigma2.From += base
	r.Sigma2.To += base

	r.Truncated = lo+in4lo == 0 || lo+in4hi == len(c.mu)-1

	// The plotted span: the 4σ years, widened to the 2σ range, which
	// reaches past them only when the measurement lies beyond the end of
	// the curve and all the probability sits in the far tail.
	dlo := min(in4lo, r.Sigma2.From-base)
	dhi := max(in4hi, r.Sigma2.To-base)
	m := dhi - dlo + 1
	step := 1
	if m > MaxDistributionPoints {
		step = (m + MaxDistributionPoints - 1) / MaxDistributionPoints
	}
	r.Step = step
	r.Distribution = make([]Density, 0, (m+step-1)/step)
	for k := dlo; k <= dhi; k += step {
		// A bin always stands for Step years; the last one may run past
		// the span into years computed but negligible, or past the end of
		// the curve, which count as 0. So sum(P·Step) is the mass shown.
		acc := 0.0
		for j := k; j < min(k+step, w); j++ {
			acc += p[j]
		}
		r.Distribution = append(r.Distribution, Density{CalBP: base + k, P: acc / float64(step)})
	}
	return r, nil
}

func bucketOf(x float64, top int) int {
	return min(top-int(math.Float64bits(x)>>bucketShift), nBuckets-1)
}

// threshold is the last year the method takes for a level: year i is
// taken when p[i] > p, or p[i] == p and i ≤ idx (ties go by ascending
// index). idx < 0 means every year is taken.
type threshold struct {
	p   float64
	idx int
}

func (th threshold) takes(p []float64, i int) bool {
	return th.idx < 0 || p[i] > th.p || (p[i] == th.p && i <= th.idx)
}

// HPDMergeGap: runs of taken years fewer than this many years apart are
// one interval, the years between included (and their probability
// counted). On the 1-year grid the density of a wiggly stretch of the
// curve crosses the threshold back and forth, and the region splits into
// slivers a year or two wide (2450 ± 30 BP on IntCal20 leaves out
// 2413–2414, 2499–2506 and 2508 cal BP); OxCal calibrates on a 5-year
// grid by default and reports those stretches as one range (2412–2510 in
// the issue). Gaps of 10 years or more are kept: they are real troughs.
const HPDMergeGap = 10

// runs splits the years th takes into runs of consecutive years (joined
// across gaps shorter than HPDMergeGap), each with the sum of the
// probabilities of all its years; base is the cal BP of p[0].
func runs(p []float64, th threshold, base int) []HPDInterval {
	var out []HPDInterval
	last := -1 // index of the last year taken
	for i := range p {
		if !th.takes(p, i) {
			continue
		}
		if last < 0 || i-last-1 >= HPDMergeGap {
			out = append(out, HPDInterval{Interval: Interval{From: base + i, To: base + i}})
			last = i - 1
		}
		iv := &out[len(out)-1]
		for j := last + 1; j <= i; j++ {
			iv.P += p[j]
		}
		iv.To = base + i
		last = i
	}
	return out
}

// ranges returns the 1σ and 2σ ranges as indices into p (normalised
// probabilities of consecutive years): years taken by descending p, ties
// by ascending index, until the cumulative sum reaches each level, the
// crossing year included. cut says, per level, which years were taken.
func (s *scratch) ranges(p []float64, peak float64) (s1, s2 Interval, cut [2]threshold) {
	top := int(math.Float64bits(peak) >> bucketShift)
	used := 0
	for i, x := range p {
		b := bucketOf(x, top)
		if s.count[b] == 0 {
			s.lo[b] = int32(i)
		}
		s.hi[b] = int32(i)
		s.count[b]++
		s.mass[b] += x
		used = max(used, b)
	}
	defer func() {
		clear(s.mass[:used+1])
		clear(s.count[:used+1])
	}()

	levels := [2]float64{Level1Sigma, Level2Sigma}
	var out [2]Interval
	level := 0
	cum := 0.0
	mn, mx := int32(len(p)), int32(-1)
	for b := 0; b <= used && level < 2; b++ {
		if s.count[b] == 0 {
			continue
		}
		if cum+s.mass[b] < levels[level] {
			cum += s.mass[b]
			mn, mx = min(mn, s.lo[b]), max(mx, s.hi[b])
			continue
		}
		// The level is crossed in this bucket: its years one by one, in
		// the method's order.
		sel := s.sel[:0]
		for i := s.lo[b]; i <= s.hi[b]; i++ {
			if bucketOf(p[i], top) == b {
				sel = append(sel, i)
			}
		}
		slices.SortFunc(sel, func(a, b int32) int {
			pa, pb := p[a], p[b]
			switch {
			case pa > pb:
				return -1
			case pa < pb:
				return 1
			}
			return int(a - b)
		})
		s.sel = sel
		for _, i := range sel {
			cum += p[i]
			mn, mx = min(mn, i), max(mx, i)
			for level < 2 && cum >= levels[level] {
				out[level] = Interval{int(mn), int(mx)}
				cut[level] = threshold{p[i], int(i)}
				level++
			}
			if level == 2 {
				break
			}
		}
	}
	// Only reachable if rounding kept the total a hair under a level: the
	// whole window is then the range.
	for ; level < 2; level++ {
		out[level] = Interval{int(mn), int(mx)}
		cut[level] = threshold{idx: -1}
	}
	return out[0], out[1], cut
}

func (c *Curve) outOfRange(bp, bpError float64) error {
	return fmt.Errorf("%w: %v ± %v BP is more than %v sigma from %s everywhere (its 14C ages run %.0f to %.0f BP)",
		ErrOutOfRange, bp, bpError, rangeSigmas, c.Name, c.ageMin, c.ageMax)
}
