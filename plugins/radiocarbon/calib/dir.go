package calib

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Known curves, loaded by LoadDir from "<name>.14c".
const (
	IntCal20 = "intcal20"
	SHCal20  = "shcal20"
	Marine20 = "marine20"

	// DefaultCurve is what a radiocarbon row without a curve uses.
	DefaultCurve = IntCal20
)

// CurveNames lists the curves LoadDir looks for, default first.
var CurveNames = []string{IntCal20, SHCal20, Marine20}

// Curves is a set of loaded curves by lower-case name.
type Curves map[string]*Curve

// MissingCurvesError is returned by LoadDir, together with the curves it
// did load, when some of CurveNames have no file in the directory.
type MissingCurvesError struct {
	Dir     string
	Missing []string // curve names, e.g. "marine20"
}

func (e *MissingCurvesError) Error() string {
	files := make([]string, len(e.Missing))
	for i, n := range e.Missing {
		files[i] = n + ".14c"
	}
	return fmt.Sprintf("calibration curve(s) %s missing: no %s in %s",
		strings.Join(e.Missing, ", "), strings.Join(files, ", "), e.Dir)
}

// LoadDir loads every curve of CurveNames from dir ("<name>.14c").
//
// A malformed file, or a directory holding none of the curves, is an error
// and the set is nil. When only some curves are missing, LoadDir returns
// the curves it loaded AND a *MissingCurvesError naming the others: the
// issue wants a missing curve to fail only the radiocarbon rows that use
// it (a field error on that row), so the plugin can log the error and keep
// serving the curves it has; Curves.Calibrate then names the missing curve
// (ErrCurveNotLoaded). A caller that wants all three treats any error as
// fatal.
func LoadDir(dir string) (Curves, error) {
	cs := Curves{}
	var missing []string
	for _, name := range CurveNames {
		c, err := ParseFile(filepath.Join(dir, name+".14c"))
		if errors.Is(err, os.ErrNotExist) {
			missing = append(missing, name)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("calibration curve %s: %w", name, err)
		}
		c.Name = name
		cs[name] = c
	}
	if len(cs) == 0 {
		return nil, &MissingCurvesError{Dir: dir, Missing: missing}
	}
	if len(missing) > 0 {
		return cs, &MissingCurvesError{Dir: dir, Missing: missing}
	}
	return cs, nil
}

// Names lists the loaded curves, sorted.
func (cs Curves) Names() []string {
	out := make([]string, 0, len(cs))
	for n := range cs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Calibrate calibrates with the named curve (case-insensitive; "" means
// DefaultCurve). A name outside CurveNames is ErrUnknownCurve; a known
// curve whose file was missing is ErrCurveNotLoaded.
func (cs Curves) Calibrate(curve string, bp, bpError float64) (*Result, error) {
	name := strings.ToLower(strings.TrimSpace(curve))
	if name == "" {
		name = DefaultCurve
	}
	c, ok := cs[name]
	if !ok {
		for _, n := range CurveNames {
			if n == name {
				return nil, fmt.Errorf("%w: %s (%s.14c was not found in the curves directory)", ErrCurveNotLoaded, name, name)
			}
		}
		return nil, fmt.Errorf("%w: %q (known: %s)", ErrUnknownCurve, curve, strings.Join(CurveNames, ", "))
	}
	return c.Calibrate(bp, bpError)
}

// ResolveDir picks the curves directory, in this order:
//
//  1. env (the value of STRATA_CURVES_DIR) when not empty — it must be a
//     directory; an explicit setting never falls back silently;
//  2. <dataDir>/curves, when dataDir is set and that directory holds at
//     least one known .14c file;
//  3. each candidate in turn (the plugin passes "../shared/data" for a
//     development checkout), under the same condition.
//
// It returns the chosen directory as an absolute path, so the caller can
// log which one is used; the error lists everything that was tried.
func ResolveDir(env, dataDir string, candidates ...string) (string, error) {
	if env != "" {
		st, err := os.Stat(env)
		if err != nil {
			return "", fmt.Errorf("STRATA_CURVES_DIR=%s: %w", env, err)
		}
		if !st.IsDir() {
			return "", fmt.Errorf("STRATA_CURVES_DIR=%s: not a directory", env)
		}
		return abs(env), nil
	}
	var tried []string
	try := func(d string) bool {
		tried = append(tried, d)
		return hasCurve(d)
	}
	if dataDir != "" {
		if d := filepath.Join(dataDir, "curves"); try(d) {
			return abs(d), nil
		}
	}
	for _, d := range candidates {
		if d != "" && try(d) {
			return abs(d), nil
		}
	}
	return "", fmt.Errorf("no calibration curves directory: STRATA_CURVES_DIR is not set and none of [%s] holds a .14c curve (%s)",
		strings.Join(tried, ", "), strings.Join(CurveNames, ", "))
}

func hasCurve(dir string) bool {
	for _, n := range CurveNames {
		if st, err := os.Stat(filepath.Join(dir, n+".14c")); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
