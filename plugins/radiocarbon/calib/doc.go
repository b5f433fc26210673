// Package calib calibrates conventional radiocarbon ages against the
// IntCal20, SHCal20 and Marine20 curves. It is the domain logic of the
// radiocarbon plugin (plugins/radiocarbon), which calls it on every save of
// a <tb>_radiocarbon row and from GET /radiocarbon/calibrate; it imports
// only the standard library so it can be tested and reused on its own.
//
// Where the rules come from: issue 5 ("Radiocarbon") fixes the method and
// the pin (3200 ± 40 BP on IntCal20 → 1σ 3386–3450, 2σ 3278–3486 cal BP);
// SPEC.md §2.8 says the stored values are one min–max range per level, not
// disjoint regions, always computed by the service; curves/README.md
// describes the .14c files (comment lines, CRLF in SHCal20, rows oldest
// first, uneven steps).
//
// Method. Parse interpolates each curve once to a 1-year grid (14C age and
// its sigma linearly). Calibrate takes, for each calendar year t, the
// Gaussian likelihood of the measured age given the curve,
// N(bp; mu(t), sqrt(err² + sigma(t)²)) — including its 1/σ factor, so a
// year where the curve is uncertain weighs less — normalises, then takes
// years in descending probability (ties: ascending cal BP) until 68.2689 %
// and 95.4500 %, the crossing year included, and reports the min and max
// cal BP of the years taken.
//
// Decisions:
//
//   - Out of range: an age is outside the curve when no calendar year has
//     a curve age within 4 combined sigmas (lab and curve in quadrature)
//     of it. With no curve error this is "bp ± 4·err does not meet the
//     curve's 14C age range"; the curve's own error widens it, as it does
//     in the likelihood. 60,000 BP and -500 BP are out on IntCal20;
//     55,000 ± 1,000 BP is in (the curve ends at 50,100 ± 1,024) and is
//     flagged Truncated, as is anything whose 4σ span reaches the first or
//     last curve year (e.g. 120 ± 30 BP, which could be post-1950).
//   - Only years within 8 combined sigmas are computed (blocks of 64
//     years are skipped by their precomputed extremes); the rest weigh
//     below 1e-14 of a perfect fit. A test checks that the bounds equal a
//     plain full-grid computation.
//   - Ordering: only the probability bucket (16 per octave, by float bits)
//     where a level is crossed is sorted; everything above it is taken
//     whole. Same result as sorting all years, O(n).
//   - Distribution (for plotting): the 1-year grid from the youngest to the
//     oldest year within 4 combined sigmas (widened to the 2σ range if
//     that reaches further), normalised over the whole computed window;
//     spans over MaxDistributionPoints years are thinned to the mean of
//     Step consecutive years.
//   - The published curve files ship inside the package (curves/, go:embed;
//     Builtin). Load lays the .14c files of a directory over them: same
//     name replaces, another name adds. A broken file fails only the rows
//     that use its curve (it is left out of the set, with a *DirError),
//     rather than silently falling back to the built-in curve.
//
// The directory is found with ResolveDir: STRATA_CURVES_DIR, else
// <data-dir>/curves when it holds any .14c file. Cite the curve used:
// Citations for the built-in ones, the file's header for the others.
package calib
