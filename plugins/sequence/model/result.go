package model

import (
	"cmp"
	"math"
	"slices"

	"github.com/strata-archaeo/strata/plugins/radiocarbon/calib"
)

// Probability levels of the reported ranges (as the radiocarbon plugin's).
const (
	Level68 = calib.Level1Sigma
	Level95 = calib.Level2Sigma
)

// OutlierThreshold: a date whose agreement index A is below it is flagged
// (OxCal's 60 %).
const OutlierThreshold = 60.0

// MaxDensityPoints bounds a Summary's Density; wider spans are averaged
// over Step years.
const MaxDensityPoints = 500

// densityCut: the plotted span is where the density is at least this
// fraction of its peak.
const densityCut = 1e-4

// Range is one interval of a highest density region, in signed calendar
// years (negative BCE, no year 0; calib.CalBPToYear): From ≤ To, both
// years included, with the probability it holds.
type Range struct {
	From int     `json:"from"`
	To   int     `json:"to"`
	P    float64 `json:"p"`
}

// Density is the probability of one calendar year (Year, signed, and the
// same year in CalBP), or the mean per year over Step years from it
// towards the present when Step > 1.
type Density struct {
	Year  int     `json:"year"`
	CalBP int     `json:"cal_bp"`
	P     float64 `json:"p"`
}

// Summary of one distribution: its 68.3 % and 95.4 % highest density
// regions (oldest interval first) and its density for plotting, oldest
// year first.
type Summary struct {
	HPD68 []Range `json:"hpd68"`
	HPD95 []Range `json:"hpd95"`
	// MeanCalBP and SD: the distribution's mean (in cal BP, a continuous
	// scale, unlike signed years with no year 0) and standard deviation.
	MeanCalBP float64   `json:"mean_cal_bp"`
	SD        float64   `json:"sd"`
	Step      int       `json:"step"`
	Density   []Density `json:"density"`
}

// Estimate is the result for one parameter.
type Estimate struct {
	// ID: the date's ID, or the boundary's name.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Kind: "date", or the boundary's kind ("start", "end", "transition").
	Kind  string `json:"kind"`
	Phase string `json:"phase,omitempty"`
	// Likelihood: the date calibrated alone (dates only).
	Likelihood *Summary `json:"likelihood,omitempty"`
	Posterior  Summary  `json:"posterior"`
	// Agreement is the individual agreement index A (dates only), in %.
	Agreement float64 `json:"agreement,omitempty"`
	// Outlier: Agreement < OutlierThreshold.
	Outlier bool `json:"outlier,omitempty"`
	// Convergence index C of this parameter, in %.
	Convergence float64 `json:"convergence"`
}

// Result of a run.
type Result struct {
	Range      CalRange   `json:"range"`
	Dates      []Estimate `json:"dates"`      // in Model.Dates order
	Boundaries []Estimate `json:"boundaries"` // in sequence order, oldest first
	// AModel and AOverall: OxCal's model and overall agreement indices (%).
	AModel   float64 `json:"a_model"`
	AOverall float64 `json:"a_overall"`
	// AModelThreshold: OxCal's A'c = 100/√(2n); AModel below it suggests
	// the model and the dates disagree.
	AModelThreshold float64 `json:"a_model_threshold"`
	// Convergence: the lowest convergence index of any parameter (%).
	Convergence float64 `json:"convergence"`
	Converged   bool    `json:"converged"`
	Seed        uint64  `json:"seed"`
	Chains      int     `json:"chains"`
	BurnIn      int     `json:"burn_in"`
	Iterations  int     `json:"iterations"` // kept sweeps per chain
}

func (p *Prepared) summarise(chains []*chain) *Result {
	np := p.nd + p.nb
	res := &Result{Range: p.rng, Convergence: 100}
	logF := 0.0
	post := make([]float64, p.n)
	per := make([][]float64, len(chains))
	for c := range per {
		per[c] = make([]float64, p.n)
	}
	for v := range np {
		clear(post)
		for c, ch := range chains {
			inv := 1 / float64(ch.kept)
			for k, x := range ch.acc[v] {
				per[c][k] = x * inv
				post[k] += x * inv
			}
		}
		normalise(post)
		conv := 100.0
		for c := range per {
			normalise(per[c])
			conv = min(conv, 100*overlap(per[c], post))
		}
		res.Convergence = min(res.Convergence, conv)
		e := Estimate{Posterior: Summarise(post, p.rng.Young), Convergence: conv}
		if v < p.nd {
			d := p.model.Dates[v]
			e.ID, e.Name, e.Kind = d.ID, d.Name(), "date"
			if ph := p.phaseOf[v]; ph >= 0 {
				e.Phase = p.model.Phases[ph].Name
			}
			lik := p.lik[v]
			ls := Summarise(lik, p.rng.Young)
			e.Likelihood = &ls
			f := Agreement(post, lik)
			e.Agreement = 100 * f
			e.Outlier = e.Agreement < OutlierThreshold
			logF += math.Log(f)
			res.Dates = append(res.Dates, e)
		} else {
			b := p.bounds[v-p.nd]
			e.ID, e.Name, e.Kind = b.Name, b.Name, b.Kind
			res.Boundaries = append(res.Boundaries, e)
		}
	}
	n := float64(p.nd)
	res.AModel = 100 * math.Exp(logF/math.Sqrt(n))
	res.AOverall = 100 * math.Exp(logF/n)
	res.AModelThreshold = 100 / math.Sqrt(2*n)
	res.Converged = res.Convergence >= ConvergenceTarget
	return res
}

func normalise(p []float64) {
	s := 0.0
	for _, x := range p {
		s += x
	}
	if s > 0 {
		for i := range p {
			p[i] /= s
		}
	}
}

// overlap is (Σ a·b)² / (Σ a² · Σ b²): 1 for identical distributions.
func overlap(a, b []float64) float64 {
	ab, aa, bb := 0.0, 0.0, 0.0
	for i := range a {
		ab += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab * ab / (aa * bb)
}

// Agreement is Bronk Ramsey's (1995) F = Σ post·lik / Σ lik² for two
// distributions on the same grid, each normalised to sum 1 (A = 100·F).
func Agreement(post, lik []float64) float64 {
	num, den := 0.0, 0.0
	for i := range lik {
		num += post[i] * lik[i]
		den += lik[i] * lik[i]
	}
	return num / den
}

// Summarise describes p, a distribution over the calendar years cal BP
// young, young+1, … (normalised to sum 1): HPD regions, mean and SD, and
// the density over the span where it is at least 1e-4 of its peak.
func Summarise(p []float64, young int) Summary {
	s := Summary{HPD68: HPD(p, young, Level68), HPD95: HPD(p, young, Level95)}
	m, m2, peak := 0.0, 0.0, 0.0
	for k, x := range p {
		y := float64(young + k)
		m += x * y
		m2 += x * y * y
		peak = max(peak, x)
	}
	s.MeanCalBP = m
	s.SD = math.Sqrt(max(0, m2-m*m))
	lo, hi := -1, -1
	for k, x := range p {
		if x >= peak*densityCut {
			if lo < 0 {
				lo = k
			}
			hi = k
		}
	}
	if lo < 0 {
		return s
	}
	span := hi - lo + 1
	s.Step = 1
	if span > MaxDensityPoints {
		s.Step = (span + MaxDensityPoints - 1) / MaxDensityPoints
	}
	// Oldest first: from hi down to lo, each point the mean of Step years
	// towards the present.
	for k := hi; k >= lo; k -= s.Step {
		acc, cnt := 0.0, 0
		for j := k; j > k-s.Step && j >= 0; j-- {
			acc += p[j]
			cnt++
		}
		s.Density = append(s.Density, Density{Year: calib.CalBPToYear(young + k), CalBP: young + k, P: acc / float64(s.Step)})
	}
	return s
}

// HPD is the highest density region of p (over cal BP young, young+1, …,
// normalised to sum 1) at a level: years taken by descending probability
// (ties: the younger year first, as in calib) until the level is reached,
// the crossing year included; runs of taken years closer than
// calib.HPDMergeGap are one interval. Intervals are in signed calendar
// years, oldest first.
func HPD(p []float64, young int, level float64) []Range {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(p[b], p[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	taken := make([]bool, len(p))
	cum := 0.0
	for _, i := range idx {
		taken[i] = true
		cum += p[i]
		if cum >= level {
			break
		}
	}
	// Runs from the oldest year (highest index) down.
	var out []Range
	last := -1 // index of the last taken year (going down)
	for i := len(p) - 1; i >= 0; i-- {
		if !taken[i] {
			continue
		}
		if last < 0 || last-i-1 >= calib.HPDMergeGap {
			out = append(out, Range{From: calib.CalBPToYear(young + i)})
			last = i + 1
		}
		r := &out[len(out)-1]
		for j := last - 1; j >= i; j-- {
			r.P += p[j]
		}
		r.To = calib.CalBPToYear(young + i)
		last = i
	}
	return out
}
