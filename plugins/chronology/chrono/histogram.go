package chrono

import "math"

// DefaultBins is the number of bins of /chrono/related (SPEC.md §4.6).
const DefaultBins = 60

// Interval is one record's dating as stored: signed years, nil = open.
type Interval struct {
	From *int `json:"from"`
	To   *int `json:"to"`
}

// Span is a closed range of signed years.
type Span struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// Bin is one histogram bin: the years it covers and the records' weight
// that falls in them.
type Bin struct {
	From   int     `json:"from"`
	To     int     `json:"to"`
	Weight float64 `json:"weight"`
}

// Density is a chronological density histogram.
type Density struct {
	// Axis covered by the bins (From of the first, To of the last); zero
	// when no closed interval was given.
	Axis     Span  `json:"axis"`
	BinWidth int   `json:"bin_width"` // years per bin
	Bins     []Bin `json:"bins"`
	// Peak is the run of consecutive bins, starting at the earliest bin
	// with the highest weight, that all share that weight; nil without
	// data.
	Peak *Span `json:"peak"`
	// What went in: Dated closed intervals were spread over the bins;
	// Open (ante/post quem) ones and Undated ones were left out and only
	// counted; Invalid ones (year 0, from > to) were skipped.
	Dated   int `json:"dated"`
	Open    int `json:"open"`
	Undated int `json:"undated"`
	Invalid int `json:"invalid"`
	// Outside: closed intervals with no year on a fixed axis (HistogramIn).
	Outside int `json:"outside,omitempty"`
}

// Histogram builds the /chrono/related density over the data's own range:
// from the earliest start to the latest end of the closed intervals.
//
// Each closed interval carries weight 1, spread uniformly over the years it
// covers (a 100-year interval puts 0.01 in each year), so a bin's weight is
// the expected number of records dated in it and the weights sum to Dated.
//
// Open-ended intervals (ante quem, post quem) are excluded from the
// density and from the axis, and counted in Open: they say where a record
// is not, not where it is, and spreading them to the edge of the data
// would let the data's range — itself an accident of what else is dated —
// decide their weight. Bins cover whole years: the width is the axis
// length divided by the bin count, rounded up, so the last bins may extend
// past the latest end (and hold no weight). Years are counted
// astronomically, so an interval across the era boundary has no phantom
// year 0. bins ≤ 0 means DefaultBins.
func Histogram(intervals []Interval, bins int) Density {
	d := classify(intervals)
	lo, hi := math.MaxInt, math.MinInt
	for _, iv := range intervals {
		if closedValid(iv) {
			lo, hi = min(lo, *iv.From), max(hi, *iv.To)
		}
	}
	if d.Dated == 0 {
		return d
	}
	return fill(d, intervals, bins, lo, hi)
}

// HistogramIn is Histogram on a fixed axis starting at from and covering at
// least to, e.g. to share one axis between tables. Intervals reaching
// outside contribute only the weight of their years inside; Dated counts
// those with any year inside, Outside the others. from > to is read the
// right way round.
func HistogramIn(intervals []Interval, bins, from, to int) Density {
	if from > to {
		from, to = to, from
	}
	d := classify(intervals)
	d.Dated = 0
	for _, iv := range intervals {
		if closedValid(iv) {
			if *iv.From <= to && *iv.To >= from {
				d.Dated++
			} else {
				d.Outside++
			}
		}
	}
	return fill(d, intervals, bins, from, to)
}

func closedValid(iv Interval) bool {
	return iv.From != nil && iv.To != nil && Check(iv.From, iv.To) == nil
}

func classify(intervals []Interval) Density {
	var d Density
	for _, iv := range intervals {
		switch {
		case iv.From == nil && iv.To == nil:
			d.Undated++
		case Check(iv.From, iv.To) != nil:
			d.Invalid++
		case iv.From == nil || iv.To == nil:
			d.Open++
		default:
			d.Dated++
		}
	}
	return d
}

// fill spreads the closed intervals over bins on the axis lo..hi (signed).
func fill(d Density, intervals []Interval, bins, lo, hi int) Density {
	if bins <= 0 {
		bins = DefaultBins
	}
	a0 := Astronomical(lo)
	n := Astronomical(hi) - a0 + 1
	w := (n + bins - 1) / bins
	d.BinWidth = w
	d.Bins = make([]Bin, bins)
	for k := range d.Bins {
		d.Bins[k].From = FromAstronomical(a0 + k*w)
		d.Bins[k].To = FromAstronomical(a0 + (k+1)*w - 1)
	}
	d.Axis = Span{d.Bins[0].From, d.Bins[bins-1].To}
	end := a0 + bins*w // first astronomical year past the axis
	for _, iv := range intervals {
		if !closedValid(iv) {
			continue
		}
		a, b := Astronomical(*iv.From), Astronomical(*iv.To)
		per := 1 / float64(b-a+1)
		a, b = max(a, a0), min(b, end-1)
		if a > b {
			continue
		}
		for k := (a - a0) / w; k <= (b-a0)/w; k++ {
			bs, be := a0+k*w, a0+(k+1)*w-1
			years := min(b, be) - max(a, bs) + 1
			d.Bins[k].Weight += float64(years) * per
		}
	}
	best := 0
	for k, b := range d.Bins {
		if b.Weight > d.Bins[best].Weight {
			best = k
		}
	}
	if top := d.Bins[best].Weight; top > 0 {
		last := best
		// Equal within rounding: a flat top (one long interval) is one peak.
		for last+1 < bins && math.Abs(d.Bins[last+1].Weight-top) <= 1e-9*top {
			last++
		}
		d.Peak = &Span{d.Bins[best].From, d.Bins[last].To}
	}
	return d
}
