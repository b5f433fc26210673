package model

import "math"

// Block shift moves. Single-parameter Gibbs updates mix slowly when a
// group of parameters must move together: the dates of a phase and its
// boundaries pin each other, so the phase as a whole creeps along a
// plateau of the curve, and its span contracts or widens one small step
// at a time. A shift move proposes to move a whole block of parameters by
// the same number of years δ (symmetric proposal) and accepts it by the
// Metropolis rule with the ratio of the likelihoods of the moved dates and
// of the phase factors whose span changes; constraints are checked on the
// edges between the block and the rest. It leaves the posterior invariant
// and adds no Rao–Blackwell term (the Gibbs sweep does that).
//
// The blocks: every date (and boundary) of the model; for each boundary,
// everything at or before it in the sequence (its phases, their dates and
// the boundaries up to it) and everything at or after it; and each
// phase's dates alone.
type shiftMove struct {
	params []int32
	dates  []int32 // the moved dates (subset of params)
	// cross: edges (older, younger) with exactly one end moved.
	cross [][2]int32
	// spans: phases with exactly one boundary moved, and whether it is the
	// start.
	spans []phaseRole
}

func (p *Prepared) buildShifts() {
	np := p.nd + p.nb
	add := func(in []bool) {
		var mv shiftMove
		for v := range np {
			if in[v] {
				mv.params = append(mv.params, int32(v))
				if v < p.nd {
					mv.dates = append(mv.dates, int32(v))
				}
			}
		}
		if len(mv.params) == 0 {
			return
		}
		for w := range np {
			for _, u := range p.above[w] {
				if in[u] != in[w] {
					mv.cross = append(mv.cross, [2]int32{u, int32(w)})
				}
			}
		}
		for k, ph := range p.phases {
			if in[ph.start] != in[ph.end] && ph.n > 0 {
				mv.spans = append(mv.spans, phaseRole{phase: k, start: in[ph.start]})
			}
		}
		p.shifts = append(p.shifts, mv)
	}
	all := make([]bool, np)
	for v := range all {
		all[v] = true
	}
	add(all)
	// Boundaries are numbered in sequence order (nd + index, oldest
	// first), and a phase's boundaries are start < end in that order.
	for b := 0; b < p.nb; b++ {
		older := make([]bool, np)
		younger := make([]bool, np)
		for c := 0; c < p.nb; c++ {
			older[p.nd+c] = c <= b
			younger[p.nd+c] = c >= b
		}
		for i := 0; i < p.nd; i++ {
			if ph := p.phaseOf[i]; ph >= 0 {
				older[i] = int(p.phases[ph].end)-p.nd <= b
				younger[i] = int(p.phases[ph].start)-p.nd >= b
			}
		}
		add(older)
		add(younger)
	}
	for k := range p.phases {
		in := make([]bool, np)
		for i := 0; i < p.nd; i++ {
			in[i] = p.phaseOf[i] == k
		}
		add(in)
	}
}

// shiftScales: the proposal draws |δ| uniformly from 1…D, D one of these
// at random, so that both small and large displacements are tried.
var shiftScales = [...]int{3, 15, 60}

func (c *chain) shift(mv *shiftMove) {
	p := c.p
	d := 1 + c.rnd.IntN(shiftScales[c.rnd.IntN(len(shiftScales))])
	if c.rnd.IntN(2) == 0 {
		d = -d
	}
	for _, v := range mv.params {
		if x := c.val[v] + d; x < 0 || x >= p.n {
			return
		}
	}
	moved := func(v int32) int {
		return c.val[v] + d
	}
	for _, e := range mv.cross {
		// Exactly one end moves.
		o, y := c.val[e[0]], c.val[e[1]]
		if c.inMove(mv, e[0]) {
			o = moved(e[0])
		} else {
			y = moved(e[1])
		}
		if o < y {
			return
		}
	}
	logr := 0.0
	for _, i := range mv.dates {
		l := p.logL[i]
		logr += l[c.val[i]+d] - l[c.val[i]]
	}
	for _, r := range mv.spans {
		ph := p.phases[r.phase]
		s, e := c.val[ph.start], c.val[ph.end]
		var s2, e2 int
		if r.start {
			s2, e2 = s+d, e
		} else {
			s2, e2 = s, e+d
		}
		logr -= ph.n * (p.logTab[s2-e2+1] - p.logTab[s-e+1])
	}
	if logr < 0 && c.rnd.Float64() >= math.Exp(logr) {
		return
	}
	for _, v := range mv.params {
		c.val[v] += d
	}
}

// inMove reports whether v is moved by mv (params is sorted).
func (c *chain) inMove(mv *shiftMove, v int32) bool {
	lo, hi := 0, len(mv.params)
	for lo < hi {
		m := (lo + hi) / 2
		if mv.params[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(mv.params) && mv.params[lo] == v
}
