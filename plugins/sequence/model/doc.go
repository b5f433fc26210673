// Package model is the science of the sequence plugin: Bayesian
// chronological modelling of radiocarbon dates under the order of a Harris
// matrix and an optional sequence of phases, in the manner of OxCal
// (Bronk Ramsey 1995, 2009). It imports no server code: only the
// radiocarbon plugin's calib package, for the curves and the likelihood.
//
// # Model
//
// Time is the 1-year grid of calendar years in cal BP (years before AD
// 1950; larger is older) over a bounded range R = [Young, Old]
// (Model.Range, or a default: the span of the dates' calibrated
// likelihoods widened by its own width and at least DefaultRangePad years
// each side, clipped to the curves). The parameters are one calendar year
// t_i ∈ R per date and, when there are phases, one year b_j ∈ R per
// boundary.
//
// Likelihood of date i (BP_i ± e_i on curve c), exactly as
// calib.Calibrate computes it:
//
//	L_i(t) = N(BP_i; μ_c(t), s_i(t)) = exp(−(BP_i − μ_c(t))² / 2s_i(t)²) / s_i(t),
//	s_i(t)² = e_i² + σ_c(t)²
//
// with μ_c and σ_c the curve's age and error linearly interpolated to the
// year (calib.Curve.At). The dates are independent given their years.
//
// Prior. Write "x ≥ y" for "x is at least as old as y" (cal BP x ≥ y):
// on the grid two events may fall in the same year.
//
//   - Orders: for every Order{Older: a, Younger: b}, t_a ≥ t_b. A lower
//     unit of the Harris matrix is older.
//
//   - Phases (Model.Phases, oldest first). With K phases the boundaries
//     are, in sequence order,
//     Contiguous (OxCal's Sequence{Boundary; Phase; Boundary; Phase; …;
//     Boundary}): b_0 ≥ b_1 ≥ … ≥ b_K, phase k between start b_{k−1} and
//     end b_k (named "Start P1", "P1/P2", …, "End PK");
//     Sequential (Sequence{Boundary; Phase; Boundary; Boundary; Phase;
//     Boundary; …}): s_1 ≥ e_1 ≥ s_2 ≥ e_2 ≥ … ≥ e_K ("Start P", "End P").
//     Every date i of phase k satisfies start_k ≥ t_i ≥ end_k.
//
//   - Density: the prior is, up to a constant,
//
//     p(t, b) ∝ 1[all of the above, every parameter in R] · Π_k (start_k − end_k + 1)^(−n_k)
//
//     where n_k is the number of dates in phase k. This is OxCal's
//     uniform phase model (Bronk Ramsey 2009) on the grid: given
//     its boundaries, each date of a phase is uniform over the
//     start_k − end_k + 1 years between them. Dates in no phase are
//     uniform over R subject to the orders. Boundaries are otherwise
//     uniform over R subject to their order: OxCal's default
//     "UniformSpanPrior" (an extra factor making the total span of the
//     boundaries uniform; Nicholls & Jones 2001, Bronk Ramsey 2009) is NOT
//     applied, and the OxCal
//     export says so (Options UniformSpanPrior=FALSE) so that OxCal
//     computes the same posterior.
//
// The posterior is p(t, b | data) ∝ p(t, b) · Π_i L_i(t_i). An independent
// computation can target it exactly; exact_test.go does so by summation.
//
// # Method
//
// Gibbs sampling on the grid (e.g. Buck, Cavanagh & Litton 1996). A sweep
// draws each date from its full conditional, which is L_i restricted to
// the interval allowed by the other parameters (the phase factor does not
// depend on t_i): by inverse CDF on prefix sums of L_i, or, when that
// interval holds less than 1e-9 of L_i's mass (far tails, where prefix
// sums lose precision), from exact log weights. Then each boundary from
// its full conditional on its allowed interval, the product of the
// (start − end + 1)^(−n) factors it takes part in, enumerated. Then block
// shift moves (Metropolis, symmetric proposals of ±1…60 years): the whole
// model, everything older or younger than each boundary, and each phase's
// dates, each moved together; they make phases move and stretch as a
// whole, which single-parameter updates do slowly (shift.go).
//
// Several chains (Options.Chains, default 4) start from different feasible
// states, each with its own PCG stream derived from Options.Seed and the
// chain's index, so the result is byte-identical for a seed whatever the
// number of workers. After Options.BurnIn sweeps, every sweep adds each
// parameter's full conditional density (not just its drawn year) to the
// chain's accumulator: the Rao–Blackwellised estimate of the marginal
// posterior, much smoother than a histogram of draws, so that HPD ends
// and agreement indices are stable on a 1-year grid.
//
// # Outputs
//
//   - Marginal posterior of each date and boundary (the chains pooled),
//     with its 68.3 % and 95.4 % highest posterior density regions (HPD:
//     years by descending probability until the level, runs closer than
//     calib.HPDMergeGap years joined, as the radiocarbon plugin does) and
//     a density for plotting (where it is ≥ 1e-4 of its peak, at most
//     MaxDensityPoints points). Each date also gets the same summary of
//     its likelihood alone (its calibration).
//   - Agreement (Bronk Ramsey 1995): with p_post the posterior and p_lik
//     the normalised likelihood of a date on the grid,
//     F_i = Σ p_post·p_lik / Σ p_lik², A_i = 100·F_i;
//     A_model = 100·(Π F_i)^(1/√n), A_overall = 100·(Π F_i)^(1/n);
//     OxCal's threshold for A_model, 100/√(2n), is AModelThreshold. A date
//     with A_i < 60 is flagged Outlier.
//   - Convergence: for each parameter, C = 100·min over chains of
//     (Σ p_c·p)² / (Σ p_c² · Σ p²), p_c a chain's density and p the
//     pooled one: the overlap integral Bronk Ramsey (1995) uses for
//     OxCal's convergence index, taken between chains here. The model's C
//     is the lowest; a run whose C is below 95 is extended by
//     Options.Iterations sweeps per chain, up to Options.MaxIterations.
//
// # Calendar years
//
// Ranges and densities are given in signed historical years: negative
// BCE, positive CE, no year 0 (calib.CalBPToYear: 1950 cal BP is 1 BCE,
// written −1), the convention of the radiocarbon plugin. Densities also
// carry the cal BP year; means are in cal BP (a continuous scale). OxCal's
// results use its own continuous scale G (G1 = start of AD 1, G0 = start
// of 1 BC); OxCalRange.Years converts.
//
// # Exports and import
//
// ExportOxCal writes the model as an OxCal CQL2 script, ExportChronoModel
// as a ChronoModel CSV import file (events and dates; ChronoModel's CSV
// cannot carry phases or constraints, which are listed as comments);
// ParseOxCalJS reads OxCal's results file and Compare sets it beside a
// Result by name.
//
// # Why no gonum
//
// Everything here is integer-grid sampling, prefix sums and sums of
// products: the standard library's math and math/rand/v2 (PCG) cover it,
// and a dependency would add nothing that serves the computation.
//
// # References
//
// Bronk Ramsey C. 1995. Radiocarbon calibration and analysis of
// stratigraphy: the OxCal program. Radiocarbon 37(2):425–430.
//
// Bronk Ramsey C. 2009. Bayesian analysis of radiocarbon dates.
// Radiocarbon 51(1):337–360.
//
// Buck CE, Cavanagh WG, Litton CD. 1996. Bayesian Approach to
// Interpreting Archaeological Data. Wiley.
//
// Nicholls G, Jones M. 2001. Radiocarbon dating with temporal order
// constraints. Journal of the Royal Statistical Society C 50(4):503–521.
//
// Reimer PJ et al. 2020. The IntCal20 Northern Hemisphere radiocarbon age
// calibration curve (0–55 cal kBP). Radiocarbon 62(4):725–757.
package model
