package calib

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// The built-in curves (Builtin); a curves directory may replace them with
// a file "<name>.14c" of the same name.
const (
	IntCal20 = "intcal20"
	SHCal20  = "shcal20"
	Marine20 = "marine20"

	// DefaultCurve is what a radiocarbon row without a curve uses.
	DefaultCurve = IntCal20
)

// CurveNames lists the built-in curves, default first.
var CurveNames = []string{IntCal20, SHCal20, Marine20}

// Curves is a set of loaded curves by lower-case name.
type Curves map[string]*Curve

// DirError reports the .14c files of a curves directory that could not be
// read. Load leaves those curves out of the set it returns (a broken
// override does not fall back to the built-in curve of that name), so
// Calibrate answers ErrCurveNotLoaded for them, and the rest is served.
type DirError struct {
	Dir    string
	Broken map[string]error // by curve name
}

func (e *DirError) Error() string {
	names := make([]string, 0, len(e.Broken))
	for n := range e.Broken {
		names = append(names, n)
	}
	sort.Strings(names)
	msgs := make([]string, len(names))
	for i, n := range names {
		msgs[i] = e.Broken[n].Error()
	}
	return fmt.Sprintf("calibration curve(s) %s in %s not loaded: %s", strings.Join(names, ", "), e.Dir, strings.Join(msgs, "; "))
}

// ReadDir parses every "<name>.14c" file of dir (the name is the curve's,
// lower case). Files that fail to parse are left out and named by a
// *DirError returned with the others; a dir that cannot be listed is an
// error and no set.
func ReadDir(dir string) (Curves, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("calibration curves directory: %w", err)
	}
	cs := Curves{}
	var broken map[string]error
	for _, e := range entries {
		if !strings.EqualFold(filepath.Ext(e.Name()), ".14c") || e.IsDir() {
			continue
		}
		file := filepath.Join(dir, e.Name())
		c, err := ParseFile(file)
		if err != nil {
			if broken == nil {
				broken = map[string]error{}
			}
			broken[curveName(file)] = err
			continue
		}
		c.Source = file
		cs[c.Name] = c
	}
	if broken != nil {
		return cs, &DirError{Dir: dir, Broken: broken}
	}
	return cs, nil
}

// Load returns the built-in curves with those of dir on top: a file named
// like a built-in curve replaces it, any other adds a curve. dir "" is the
// built-in set alone. A curve read from a file is cited by its header
// (the published files carry their citation there), else by the built-in
// citation of that name; a file with the header of the built-in curve it
// replaces keeps that curve's citation.
//
// The error, when not nil, is a *DirError or a directory that could not be
// read; the set returned with it is still usable: the broken files' curves
// are missing from it (a broken override is not silently replaced by the
// built-in curve), an unreadable directory leaves the built-in set.
func Load(dir string) (Curves, error) {
	cs, err := Builtin()
	if err != nil || dir == "" {
		return cs, err
	}
	extra, err := ReadDir(dir)
	for name, c := range extra {
		switch b := cs[name]; {
		case b != nil && b.Source == BuiltinSource && slices.Equal(b.Header, c.Header):
			c.Citation = b.Citation // the published file again (e.g. a copy of shared/data)
		default:
			if c.Citation = headerCitation(c); c.Citation == "" {
				c.Citation = Citations[name]
			}
		}
		cs[name] = c
	}
	var de *DirError
	if errors.As(err, &de) {
		for name := range de.Broken {
			delete(cs, name)
		}
	}
	return cs, err
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
// DefaultCurve). A name not in the set is ErrUnknownCurve, except a
// built-in name (its override file was broken): ErrCurveNotLoaded.
func (cs Curves) Calibrate(curve string, bp, bpError float64) (*Result, error) {
	name := strings.ToLower(strings.TrimSpace(curve))
	if name == "" {
		name = DefaultCurve
	}
	c, ok := cs[name]
	if !ok {
		if slices.Contains(CurveNames, name) {
			return nil, fmt.Errorf("%w: %s", ErrCurveNotLoaded, name)
		}
		return nil, fmt.Errorf("%w: %q (known: %s)", ErrUnknownCurve, curve, strings.Join(cs.Names(), ", "))
	}
	return c.Calibrate(bp, bpError)
}

// ResolveDir picks the directory whose curves Load lays over the built-in
// ones:
//
//  1. env (the value of STRATA_CURVES_DIR) when not empty — it must be a
//     directory; an explicit setting is never ignored silently;
//  2. <dataDir>/curves, when dataDir is set and that directory holds at
//     least one .14c file;
//  3. else "" and no error: the built-in curves alone.
//
// A directory is returned as an absolute path, so the caller can log it.
func ResolveDir(env, dataDir string) (string, error) {
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
	if dataDir != "" {
		if d := filepath.Join(dataDir, "curves"); hasCurve(d) {
			return abs(d), nil
		}
	}
	return "", nil
}

func hasCurve(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.14c"))
	for _, f := range m {
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// curveName is the name of the curve of a file: its base name without the
// extension, lower case.
func curveName(file string) string {
	return strings.ToLower(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
