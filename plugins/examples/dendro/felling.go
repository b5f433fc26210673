package main

import "fmt"

// Model is the sapwood estimate of a region and species: how many
// sapwood rings a complete sapwood band holds, as a range. A sample whose
// outer rings are sapwood but lacks the bark edge lost between
// max(0, Min-sapwood) and max(0, Max-sapwood) rings.
type Model struct {
	Min int `json:"sapwood_min"`
	Max int `json:"sapwood_max"`
}

// DefaultModel is a broad range for European oak (roughly the 95% span of
// sapwood counts reported across north-western Europe); a museum sets its
// own in the plugin settings.
var DefaultModel = Model{Min: 10, Max: 50}

// Sample is what the plugin reads of one record.
type Sample struct {
	FirstRing *int64 // calendar year (astronomical: 0 = 1 BC) of the innermost ring
	LastRing  *int64 // calendar year of the outermost ring
	Sapwood   *int64 // sapwood rings present; nil: the heartwood boundary is not seen
	BarkEdge  bool   // the last ring grew just under the bark
}

// Felling is the felling date range a sample gives: To nil means "not
// before From" (a terminus post quem).
type Felling struct {
	From, To *int64
}

// Problem is a value the sample cannot hold, by field.
type Problem struct {
	Field, Rule, Message string
}

// Check lists what is wrong with a sample.
func (s Sample) Check() []Problem {
	var out []Problem
	ordered := s.FirstRing != nil && s.LastRing != nil && *s.FirstRing <= *s.LastRing
	if s.FirstRing != nil && s.LastRing != nil && !ordered {
		out = append(out, Problem{"first_ring", "order", fmt.Sprintf("the first ring (%d) is after the last ring (%d)", *s.FirstRing, *s.LastRing)})
	}
	if s.Sapwood != nil {
		switch {
		case *s.Sapwood < 0:
			out = append(out, Problem{"sapwood", "range", "sapwood counts rings: it cannot be negative"})
		case ordered && *s.Sapwood > *s.LastRing-*s.FirstRing+1:
			out = append(out, Problem{"sapwood", "range", fmt.Sprintf("%d sapwood rings do not fit in a sample of %d rings", *s.Sapwood, *s.LastRing-*s.FirstRing+1)})
		}
	}
	if s.BarkEdge && s.LastRing == nil {
		out = append(out, Problem{"last_ring", "required", "a bark edge dates the last ring: give its year"})
	}
	return out
}

// Felling estimates when the tree was felled; a sample without a dated
// last ring has no felling date.
func (s Sample) Felling(m Model) Felling {
	if s.LastRing == nil {
		return Felling{}
	}
	last := *s.LastRing
	switch {
	case s.BarkEdge:
		return Felling{From: &last, To: &last}
	case s.Sapwood == nil:
		// No sapwood seen: at least the smallest sapwood band is missing,
		// and any number of heartwood rings beyond it.
		from := last + int64(m.Min)
		return Felling{From: &from}
	default:
		from := last + max(0, int64(m.Min)-*s.Sapwood)
		to := last + max(0, int64(m.Max)-*s.Sapwood)
		return Felling{From: &from, To: &to}
	}
}

// Overlaps says whether a felling range meets the years [a, b].
func (f Felling) Overlaps(a, b int64) bool {
	if f.From == nil {
		return false
	}
	return *f.From <= b && (f.To == nil || *f.To >= a)
}
