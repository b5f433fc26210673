package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/strata-archaeo/strata/plugins/radiocarbon/calib"
)

// Date is one radiocarbon measurement: a conventional age BP ± Error on a
// named curve. ID must be unique in the model (a lab code or a row key);
// Label is what people read (it defaults to ID).
type Date struct {
	ID    string  `json:"id"`
	Label string  `json:"label,omitempty"`
	BP    float64 `json:"bp"`
	Error float64 `json:"bp_error"`
	Curve string  `json:"curve"`
}

// Name is the label shown and exported: Label, else ID.
func (d Date) Name() string {
	if d.Label != "" {
		return d.Label
	}
	return d.ID
}

// Order says that the date Older is older than (or, on the 1-year grid, as
// old as) the date Younger: from the Harris matrix, a lower unit is older.
type Order struct {
	Older   string `json:"older"`
	Younger string `json:"younger"`
}

// Phase is a group of dates (by ID) that are unordered among themselves
// (apart from any Orders between them) and uniformly distributed between
// the phase's start and end boundaries.
type Phase struct {
	Name  string   `json:"name"`
	Dates []string `json:"dates"`
}

// BoundaryMode says how the phases of the sequence meet.
type BoundaryMode string

const (
	// Contiguous: OxCal's usual Sequence{Boundary; Phase; Boundary; Phase;
	// Boundary}: K phases share K+1 boundaries, the end of one phase is the
	// start of the next ("Start P1", "P1/P2", …, "End Pk").
	Contiguous BoundaryMode = "contiguous"
	// Sequential: each phase has its own start and end boundary
	// ("Start P", "End P"), and the end of a phase is no younger than the
	// start of the next (a possible hiatus between them).
	Sequential BoundaryMode = "sequential"
)

// CalRange is a span of calendar years in cal BP (years before AD 1950):
// Young ≤ Old, both included.
type CalRange struct {
	Young int `json:"young"`
	Old   int `json:"old"`
}

// Model is what Run computes: the dates, the ordering constraints between
// them, and optionally a sequence of phases with boundaries (doc.go gives
// the exact prior).
type Model struct {
	Name   string  `json:"name"`
	Dates  []Date  `json:"dates"`
	Orders []Order `json:"orders,omitempty"`
	// Phases in sequence, oldest first. Empty: no boundaries, the dates
	// are constrained only by Orders. A date belongs to at most one phase;
	// dates in no phase are not bounded by any boundary.
	Phases []Phase `json:"phases,omitempty"`
	// Boundaries: Contiguous (default when empty) or Sequential.
	Boundaries BoundaryMode `json:"boundaries,omitempty"`
	// Range bounds every parameter (the prior's support). Nil: the span of
	// the dates' calibrated likelihoods (years within 4 combined sigmas),
	// widened on both sides by that span's width and by at least
	// DefaultRangePad years, clipped to the curves.
	Range *CalRange `json:"range,omitempty"`
}

// DefaultRangePad is the least number of years the default Range adds on
// each side of the dates' calibrated span, room for the boundaries' tails.
const DefaultRangePad = 500

// MaxGridYears bounds the calendar range of a model (memory and time grow
// with it: one float per year per parameter and chain).
const MaxGridYears = 20000

// MaxParams bounds the number of dates plus boundaries of a model.
const MaxParams = 2000

// MaxCells bounds parameters × grid years of a model (each date keeps
// three arrays over the grid, each chain one per parameter).
const MaxCells = 4_000_000

// maxChainCells bounds chains × parameters × grid years of a run (the
// Rao–Blackwell accumulators: 8 bytes each).
const maxChainCells = 32_000_000

// Errors; Prepare and Run wrap them with detail, test with errors.Is.
var (
	ErrInvalidModel = errors.New("invalid model")
	ErrCycle        = errors.New("the ordering constraints contain a cycle")
	ErrCalibration  = errors.New("a date cannot be calibrated")
)

// Boundary is a derived parameter of the phase structure.
type Boundary struct {
	Name string `json:"name"`
	// Kind: "start", "end" or "transition" (Contiguous, between two phases).
	Kind string `json:"kind"`
}

// Prepared is a validated model with every date's calibrated likelihood
// on the 1-year grid of its range. It is read-only and may be run many
// times, concurrently.
type Prepared struct {
	model  Model
	rng    CalRange
	n      int // grid years
	nd, nb int
	bounds []Boundary

	// lik[i][k]: normalised likelihood of date i at cal BP rng.Young+k;
	// cum[i][k] = sum of lik[i][:k]; win[i]: the years where lik is above
	// 1e-14 of its peak (RB accumulation outside them is negligible).
	lik [][]float64
	cum [][]float64
	win [][2]int
	// For the exact log-space path: curve age and variance per grid year
	// (by date), the lab error squared.
	mu, v [][]float64
	e2    []float64

	// Constraint graph over parameters 0..nd-1 (dates) and nd.. (boundaries):
	// above[p] are the parameters that must be ≥ p (older), below[p] those
	// that must be ≤ p.
	above, below [][]int32
	// phases: start and end boundary parameter and number of dates.
	phases []phaseInfo
	// bphase[b] lists, for boundary parameter b, the phases it starts or ends.
	bphase  [][]phaseRole
	order   []int32 // topological order, oldest first
	phaseOf []int   // phase index per date, -1 none
	logTab  []float64
	pwOK    []bool // per boundary parameter: all its phases have pw tables
	// logL[i][k]: log-likelihood of date i (unnormalised), for the shift
	// moves and the far-tail path.
	logL [][]float64
	// shifts: the block moves (see shift.go).
	shifts []shiftMove
}

type phaseInfo struct {
	start, end int32
	n          float64
	// pw[k] = k^−n for spans k = 1…grid years (pw[0] unused), or nil when
	// that would underflow (then boundaries use log weights).
	pw []float64
}

type phaseRole struct {
	phase int
	start bool
}

// Model returns the model as given (after defaults).
func (p *Prepared) Model() Model { return p.model }

// Range is the calendar range the model is computed on.
func (p *Prepared) Range() CalRange { return p.rng }

// Boundaries lists the boundaries derived from the phases, in sequence
// order (oldest first).
func (p *Prepared) Boundaries() []Boundary { return slices.Clone(p.bounds) }

// Prepare validates m against the curves and calibrates its dates.
func Prepare(m Model, curves calib.Curves) (*Prepared, error) {
	if m.Boundaries == "" {
		m.Boundaries = Contiguous
	}
	if m.Boundaries != Contiguous && m.Boundaries != Sequential {
		return nil, fmt.Errorf("%w: boundaries must be %q or %q, got %q", ErrInvalidModel, Contiguous, Sequential, m.Boundaries)
	}
	nd := len(m.Dates)
	if nd == 0 {
		return nil, fmt.Errorf("%w: no dates", ErrInvalidModel)
	}
	idx := make(map[string]int, nd)
	for i, d := range m.Dates {
		if strings.TrimSpace(d.ID) == "" {
			return nil, fmt.Errorf("%w: date %d has no id", ErrInvalidModel, i+1)
		}
		if _, dup := idx[d.ID]; dup {
			return nil, fmt.Errorf("%w: date id %q is repeated", ErrInvalidModel, d.ID)
		}
		idx[d.ID] = i
	}
	for _, ph := range m.Phases {
		if strings.TrimSpace(ph.Name) == "" {
			return nil, fmt.Errorf("%w: a phase has no name", ErrInvalidModel)
		}
	}
	nb := 0
	if len(m.Phases) > 0 {
		if m.Boundaries == Contiguous {
			nb = len(m.Phases) + 1
		} else {
			nb = 2 * len(m.Phases)
		}
	}
	if nd+nb > MaxParams {
		return nil, fmt.Errorf("%w: %d dates and %d boundaries, at most %d parameters", ErrInvalidModel, nd, nb, MaxParams)
	}

	// Calibrate each date once: validates it (consistently with the
	// radiocarbon plugin) and gives the span for the default range.
	cal := make([]*calib.Result, nd)
	used := map[string]*calib.Curve{}
	for i, d := range m.Dates {
		name := strings.ToLower(strings.TrimSpace(d.Curve))
		if name == "" {
			name = calib.DefaultCurve
		}
		m.Dates[i].Curve = name
		c, ok := curves[name]
		if !ok {
			return nil, fmt.Errorf("%w: date %q: %w: %q", ErrCalibration, d.ID, calib.ErrUnknownCurve, name)
		}
		r, err := c.Calibrate(d.BP, d.Error)
		if err != nil {
			return nil, fmt.Errorf("%w: date %q: %w", ErrCalibration, d.ID, err)
		}
		cal[i] = r
		used[name] = c
	}

	// The range.
	var rng CalRange
	cy, co := math.MinInt, math.MaxInt // intersection of the curves' spans
	for _, c := range used {
		a, b := c.CalRange()
		cy, co = max(cy, a), min(co, b)
	}
	if m.Range != nil {
		rng = *m.Range
		if rng.Young > rng.Old {
			return nil, fmt.Errorf("%w: range young %d is older than old %d", ErrInvalidModel, rng.Young, rng.Old)
		}
		if rng.Young < cy || rng.Old > co {
			return nil, fmt.Errorf("%w: range %d–%d cal BP reaches beyond the curves (%d–%d)", ErrInvalidModel, rng.Young, rng.Old, cy, co)
		}
	} else {
		lo, hi := math.MaxInt, math.MinInt
		for _, r := range cal {
			d := r.Distribution
			lo = min(lo, d[0].CalBP)
			hi = max(hi, d[len(d)-1].CalBP+r.Step-1)
		}
		pad := max(DefaultRangePad, hi-lo)
		rng = CalRange{Young: max(cy, lo-pad), Old: min(co, hi+pad)}
	}
	n := rng.Old - rng.Young + 1
	if n > MaxGridYears {
		return nil, fmt.Errorf("%w: range %d–%d cal BP is %d years, at most %d", ErrInvalidModel, rng.Young, rng.Old, n, MaxGridYears)
	}
	if (nd+nb)*n > MaxCells {
		return nil, fmt.Errorf("%w: %d parameters over %d years is more than %d cells; narrow the range", ErrInvalidModel, nd+nb, n, MaxCells)
	}
	m.Range = &rng

	p := &Prepared{model: m, rng: rng, n: n, nd: nd, nb: nb}
	p.lik = make([][]float64, nd)
	p.cum = make([][]float64, nd)
	p.win = make([][2]int, nd)
	p.mu = make([][]float64, nd)
	p.v = make([][]float64, nd)
	p.e2 = make([]float64, nd)
	grids := map[string][2][]float64{}
	for i, d := range m.Dates {
		g, ok := grids[d.Curve]
		if !ok {
			c := used[d.Curve]
			mu, v := make([]float64, n), make([]float64, n)
			for k := range n {
				a, s, _ := c.At(rng.Young + k)
				mu[k], v[k] = a, s*s
			}
			g = [2][]float64{mu, v}
			grids[d.Curve] = g
		}
		p.mu[i], p.v[i] = g[0], g[1]
		e2 := d.Error * d.Error
		p.e2[i] = e2
		// The likelihood as calib.Calibrate computes it: the normal
		// density of the measured age given the curve, 1/σ included.
		l := make([]float64, n)
		sum, peak := 0.0, 0.0
		for k := range n {
			tot := e2 + g[1][k]
			dd := d.BP - g[0][k]
			l[k] = math.Exp(-0.5*dd*dd/tot) / math.Sqrt(tot)
			sum += l[k]
			peak = max(peak, l[k])
		}
		if !(sum > 0) {
			return nil, fmt.Errorf("%w: date %q: %w: no probability within the range %d–%d cal BP", ErrCalibration, d.ID, calib.ErrOutOfRange, rng.Young, rng.Old)
		}
		c := make([]float64, n+1)
		wlo, whi := -1, -1
		for k := range n {
			l[k] /= sum
			c[k+1] = c[k] + l[k]
			if l[k] >= peak/sum*1e-14 {
				if wlo < 0 {
					wlo = k
				}
				whi = k
			}
		}
		p.lik[i], p.cum[i], p.win[i] = l, c, [2]int{wlo, whi}
	}

	// Structure.
	np := nd + nb
	p.above = make([][]int32, np)
	p.below = make([][]int32, np)
	edge := func(older, younger int) {
		if !slices.Contains(p.above[younger], int32(older)) {
			p.above[younger] = append(p.above[younger], int32(older))
			p.below[older] = append(p.below[older], int32(younger))
		}
	}
	for _, o := range m.Orders {
		a, ok1 := idx[o.Older]
		b, ok2 := idx[o.Younger]
		if !ok1 || !ok2 {
			miss := o.Older
			if ok1 {
				miss = o.Younger
			}
			return nil, fmt.Errorf("%w: order %q > %q names an unknown date %q", ErrInvalidModel, o.Older, o.Younger, miss)
		}
		if a == b {
			return nil, fmt.Errorf("%w: date %q is ordered against itself", ErrInvalidModel, o.Older)
		}
		edge(a, b)
	}
	p.phaseOf = make([]int, nd)
	for i := range p.phaseOf {
		p.phaseOf[i] = -1
	}
	p.bphase = make([][]phaseRole, np)
	for k, ph := range m.Phases {
		var s, e int
		if m.Boundaries == Contiguous {
			s, e = nd+k, nd+k+1
		} else {
			s, e = nd+2*k, nd+2*k+1
		}
		for _, id := range ph.Dates {
			i, ok := idx[id]
			if !ok {
				return nil, fmt.Errorf("%w: phase %q names an unknown date %q", ErrInvalidModel, ph.Name, id)
			}
			if p.phaseOf[i] >= 0 {
				return nil, fmt.Errorf("%w: date %q is in phases %q and %q", ErrInvalidModel, id, m.Phases[p.phaseOf[i]].Name, ph.Name)
			}
			p.phaseOf[i] = k
			edge(s, i)
			edge(i, e)
		}
		edge(s, e)
		if m.Boundaries == Sequential && k > 0 {
			edge(s-1, s) // end of the previous phase ≥ start of this one
		}
		cnt := 0
		for _, pi := range p.phaseOf {
			if pi == k {
				cnt++
			}
		}
		p.phases = append(p.phases, phaseInfo{start: int32(s), end: int32(e), n: float64(cnt)})
		p.bphase[s] = append(p.bphase[s], phaseRole{phase: k, start: true})
		p.bphase[e] = append(p.bphase[e], phaseRole{phase: k, start: false})
	}
	p.bounds = boundaryNames(m)
	p.logL = make([][]float64, nd)
	for i, d := range m.Dates {
		l := make([]float64, n)
		for k := range n {
			tot := p.e2[i] + p.v[i][k]
			dd := d.BP - p.mu[i][k]
			l[k] = -0.5*dd*dd/tot - 0.5*math.Log(tot)
		}
		p.logL[i] = l
	}

	ord, cyc := topoOrder(p.above, p.below)
	if cyc != nil {
		names := make([]string, len(cyc))
		for i, v := range cyc {
			names[i] = p.paramName(int(v))
		}
		return nil, fmt.Errorf("%w: %s", ErrCycle, strings.Join(names, " > "))
	}
	p.order = ord
	p.logTab = make([]float64, n+2)
	for k := 1; k < len(p.logTab); k++ {
		p.logTab[k] = math.Log(float64(k))
	}
	p.pwOK = make([]bool, np)
	for k := range p.phases {
		ph := &p.phases[k]
		// A transition boundary multiplies two factors: each must stay
		// far above the smallest normal float.
		if ph.n*p.logTab[n+1] < 300 {
			ph.pw = make([]float64, n+2)
			for j := 1; j < len(ph.pw); j++ {
				ph.pw[j] = math.Exp(-ph.n * p.logTab[j])
			}
		}
	}
	for b := nd; b < np; b++ {
		ok := true
		for _, r := range p.bphase[b] {
			ok = ok && p.phases[r.phase].pw != nil
		}
		p.pwOK[b] = ok
	}
	p.buildShifts()
	return p, nil
}

func boundaryNames(m Model) []Boundary {
	var out []Boundary
	k := len(m.Phases)
	if k == 0 {
		return nil
	}
	if m.Boundaries != Sequential { // "" is Contiguous, the default
		out = append(out, Boundary{Name: "Start " + m.Phases[0].Name, Kind: "start"})
		for i := 1; i < k; i++ {
			out = append(out, Boundary{Name: m.Phases[i-1].Name + "/" + m.Phases[i].Name, Kind: "transition"})
		}
		out = append(out, Boundary{Name: "End " + m.Phases[k-1].Name, Kind: "end"})
		return out
	}
	for _, ph := range m.Phases {
		out = append(out, Boundary{Name: "Start " + ph.Name, Kind: "start"}, Boundary{Name: "End " + ph.Name, Kind: "end"})
	}
	return out
}

func (p *Prepared) paramName(v int) string {
	if v < p.nd {
		return p.model.Dates[v].ID
	}
	return p.bounds[v-p.nd].Name
}

// topoOrder orders the parameters oldest first (Kahn); on a cycle it
// returns one cycle as a path that starts and ends at the same parameter.
func topoOrder(above, below [][]int32) ([]int32, []int32) {
	n := len(above)
	indeg := make([]int, n)
	var queue []int32
	for v := range n {
		indeg[v] = len(above[v])
		if indeg[v] == 0 {
			queue = append(queue, int32(v))
		}
	}
	order := make([]int32, 0, n)
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		order = append(order, v)
		for _, w := range below[v] {
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	if len(order) == n {
		return order, nil
	}
	// Every parameter left has an older one left: walk upwards until a
	// parameter repeats.
	left := make([]bool, n)
	start := -1
	for v := range n {
		if indeg[v] > 0 {
			left[v] = true
			start = v
		}
	}
	seen := map[int32]int{}
	var path []int32
	v := int32(start)
	for {
		if at, ok := seen[v]; ok {
			cyc := slices.Clone(path[at:])
			cyc = append(cyc, v)
			slices.Reverse(cyc) // oldest first: each is older than the next
			return nil, cyc
		}
		seen[v] = len(path)
		path = append(path, v)
		for _, u := range above[v] {
			if left[u] {
				v = u
				break
			}
		}
	}
}
