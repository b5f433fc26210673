// Package chrono is the domain logic of the chronology (fuzzy dating)
// plugin (plugins/chronology): parsing chronology labels into signed year
// bounds, certainty words, the _chrono_overlap filter operator, the
// /chrono/timeline window rule and the /chrono/related density histogram.
// It imports only the standard library.
//
// Where the rules come from: issue 5 ("Chronology"); SPEC.md §2.8 (the
// columns chrono_from, chrono_to, chrono_label, chrono_certainty,
// chrono_period) and §4.6 (timeline, related: 60-bin histogram with a
// peak interval); CONTRACT.md §8 (the _chrono_overlap and timeline rules,
// and "Chronology labels": token forms, century spans, qualifier offsets
// and certainty words).
//
// Years are signed integers, negative BCE, and there is no year 0: 1 BCE
// is followed by 1 CE. Comparisons work on these numbers directly (the
// gap does not change the order); lengths and bins go through astronomical
// numbering (Astronomical: 1 BCE = 0), so c1 BCE/c1 CE is 200 years, not
// 201.
//
// Open bounds: an ante quem (?/T) has from = nil, a post quem (T/?) has
// to = nil. In Overlaps and InWindow an open bound is unbounded on its
// side; a record with neither bound is undated and matches nothing. In the
// histogram open-ended records are counted but excluded from the density
// (see Histogram for why).
package chrono
