package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/strata-archaeo/strata/plugins/radiocarbon/calib"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// convention is stated in every answer: the two year scales are easy to mix up.
const convention = "cal_bp values are calibrated years before AD 1950 (0 cal BP = 1950 CE; from ≤ to in cal BP, so from is the younger end); " +
	"*_years give the same ranges as signed calendar years, negative BCE, no year 0, from ≤ to"

// span is a calibrated range in calendar years.
type span struct {
	From int `json:"from"`
	To   int `json:"to"`
}

func yearsOf(iv calib.Interval) span {
	from, to := iv.Years()
	return span{from, to}
}

// hpdInterval is one interval of a highest posterior density region as
// the route gives it: cal BP, calendar years, and its probability.
type hpdInterval struct {
	From  int     `json:"from"`
	To    int     `json:"to"`
	Years span    `json:"years"`
	P     float64 `json:"p"`
}

func hpdOf(ivs []calib.HPDInterval) []hpdInterval {
	out := make([]hpdInterval, len(ivs))
	for i, iv := range ivs {
		out[i] = hpdInterval{From: iv.From, To: iv.To, Years: yearsOf(iv.Interval), P: iv.P}
	}
	return out
}

// calibrateRoute serves GET /radiocarbon/calibrate?bp=3200&error=40&curve=intcal20
// (error may also be given as bp_error; curve defaults to intcal20): the
// 1σ and 2σ ranges in cal BP and in calendar years (the envelopes the
// row stores), the highest posterior density intervals inside them with
// their probabilities (hpd1, hpd2), the probability distribution for
// plotting, and the citation of the curve used.
func (p *plugin) calibrateRoute(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	bp, ok := numberParam(w, q, "bp")
	if !ok {
		return
	}
	if q.Get("error") == "" && q.Get("bp_error") != "" {
		q.Set("error", q.Get("bp_error"))
	}
	bpError, ok := numberParam(w, q, "error")
	if !ok {
		return
	}
	curve := curveOf(q.Get("curve"))
	res, err := p.calibrate(curve, bp, bpError)
	switch {
	case errors.Is(err, calib.ErrCurveNotLoaded):
		pluginsdk.WriteError(w, http.StatusServiceUnavailable, "curve_not_loaded", err.Error())
		return
	case errors.Is(err, calib.ErrUnknownCurve):
		pluginsdk.WriteError(w, http.StatusBadRequest, "unknown_curve", err.Error())
		return
	case errors.Is(err, calib.ErrOutOfRange):
		pluginsdk.WriteError(w, http.StatusBadRequest, "out_of_range", err.Error())
		return
	case err != nil:
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_parameter", err.Error())
		return
	}
	distribution := res.Distribution
	if distribution == nil {
		distribution = []calib.Density{}
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{
		"status":       "success",
		"curve":        res.Curve,
		"bp":           res.BP,
		"bp_error":     res.Error,
		"sigma1":       res.Sigma1,
		"sigma2":       res.Sigma2,
		"sigma1_years": yearsOf(res.Sigma1),
		"sigma2_years": yearsOf(res.Sigma2),
		"hpd1":         hpdOf(res.HPD1),
		"hpd2":         hpdOf(res.HPD2),
		"levels":       map[string]float64{"sigma1": calib.Level1Sigma, "sigma2": calib.Level2Sigma},
		"distribution": distribution,
		"step":         res.Step,
		"truncated":    res.Truncated,
		"convention":   convention,
		"citation":     p.citation(res.Curve),
	})
}

// curveInfo describes one curve a row may name.
type curveInfo struct {
	Name     string `json:"name"`
	Default  bool   `json:"default"`
	Builtin  bool   `json:"builtin"` // shipped in the binary, not read from the curves directory
	Loaded   bool   `json:"loaded"`  // false: its file in the curves directory is broken
	Citation string `json:"citation"`
}

// curvesRoute serves GET /radiocarbon/curves: the curves a radiocarbon
// row may name, so that a client offers a choice instead of free text.
// The curves directory is not named (a server path is no business of a
// reader).
func (p *plugin) curvesRoute(w http.ResponseWriter, _ *http.Request) {
	names := p.curveNames()
	out := make([]curveInfo, len(names))
	for i, n := range names {
		c := p.curves[n]
		out[i] = curveInfo{Name: n, Default: n == calib.DefaultCurve, Loaded: c != nil,
			Builtin: c != nil && c.Source == calib.BuiltinSource, Citation: p.citation(n)}
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{"status": "success", "curves": out, "default": calib.DefaultCurve})
}

// numberParam reads a required finite number; it writes the 400 itself.
func numberParam(w http.ResponseWriter, q url.Values, name string) (float64, bool) {
	s := strings.TrimSpace(q.Get(name))
	if s == "" {
		pluginsdk.WriteError(w, http.StatusBadRequest, "parameter_missing", fmt.Sprintf("%s is required, e.g. ?bp=3200&error=40", name))
		return 0, false
	}
	f, ok := pluginsdk.Float(s)
	if !ok {
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_parameter", fmt.Sprintf("%s must be a number, not %q", name, s))
		return 0, false
	}
	return f, true
}
