package chrono

import (
	"errors"
	"fmt"
)

// Astronomical maps a signed calendar year (no year 0) to astronomical
// numbering, which has a year 0 and so counts without a gap: 1 BCE → 0,
// 2 BCE → −1, 1 CE → 1. All span arithmetic goes through it.
func Astronomical(y int) int {
	if y < 0 {
		return y + 1
	}
	return y
}

// FromAstronomical is the inverse of Astronomical: 0 → −1 (1 BCE).
func FromAstronomical(a int) int {
	if a <= 0 {
		return a - 1
	}
	return a
}

// Years is the number of calendar years from..to inclusive, skipping the
// non-existent year 0: Years(-1, 1) = 2, Years(-100, 100) = 200 (c1 BCE
// and c1 CE), Years(1, 100) = 100. It is 0 when to < from.
func Years(from, to int) int {
	n := Astronomical(to) - Astronomical(from) + 1
	return max(n, 0)
}

// Check validates stored bounds: neither is year 0 or beyond ±MaxYear, and
// from ≤ to when both are set. Either may be nil (ante/post quem).
func Check(from, to *int) error {
	for _, b := range []struct {
		name string
		v    *int
	}{{"chrono_from", from}, {"chrono_to", to}} {
		if b.v == nil {
			continue
		}
		if *b.v == 0 {
			return fmt.Errorf("%s: there is no year 0", b.name)
		}
		if *b.v > MaxYear || *b.v < -MaxYear {
			return fmt.Errorf("%s: year beyond ±%d", b.name, MaxYear)
		}
	}
	if from != nil && to != nil && *from > *to {
		return errors.New("chrono_from must not be after chrono_to")
	}
	return nil
}

// Overlaps is the _chrono_overlap filter operator: does a record dated
// from..to (inclusive; nil = open) share at least one year with qFrom..qTo?
//
// An open bound is unbounded on its side: ante quem (from nil) reaches
// back indefinitely, post quem (to nil) forward. A record with neither
// bound is undated and never overlaps. A query given backwards is read
// the right way round. As SQL on the plugin columns this is
//
//	(chrono_from IS NOT NULL OR chrono_to IS NOT NULL)
//	AND (chrono_from IS NULL OR chrono_from <= qTo)
//	AND (chrono_to   IS NULL OR chrono_to   >= qFrom)
func Overlaps(from, to *int, qFrom, qTo int) bool {
	if qFrom > qTo {
		qFrom, qTo = qTo, qFrom
	}
	return InWindow(from, to, &qFrom, &qTo)
}

// InWindow is Overlaps with optional query bounds, the /chrono/timeline
// rule (CONTRACT.md §8): only records with some chronology; a query from
// keeps records whose to is open or ≥ from; a query to keeps records whose
// from is open or ≤ to. Year comparisons need no astronomical conversion:
// skipping year 0 does not change the order.
func InWindow(from, to, qFrom, qTo *int) bool {
	if from == nil && to == nil {
		return false
	}
	if qFrom != nil && to != nil && *to < *qFrom {
		return false
	}
	if qTo != nil && from != nil && *from > *qTo {
		return false
	}
	return true
}
