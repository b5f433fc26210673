package calib

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Point is one data row of a .14c file, as published.
type Point struct {
	CalBP         float64 // calendar age, years before AD 1950
	Age           float64 // conventional 14C age, BP
	Sigma         float64 // 1σ of Age
	Delta14C      float64 // ‰; 0 when the file has only three columns
	Delta14CSigma float64
}

// Curve is a parsed calibration curve plus the 1-year grid that Calibrate
// works on. The grid is built once, in Parse, so that a calibration never
// interpolates.
type Curve struct {
	Name   string
	Points []Point // file order: oldest (largest cal BP) first

	// Header holds the file's comment lines, '#' and spaces trimmed,
	// empty ones left out: in the published files, the citation and the
	// column header.
	Header []string
	// Citation is what to cite with a result of this curve: the paper for
	// a built-in curve, the header for one read from a file (Load sets it).
	Citation string
	// Source is "built-in" or the path of the file the curve was read from.
	Source string

	// grid[i] is cal BP minBP+i. mu is the interpolated 14C age; v is the
	// interpolated curve sigma squared (sigma is interpolated, then squared,
	// as OxCal and rcarbon do).
	minBP int
	mu    []float64
	v     []float64

	// Per block of blockSize grid years: the extremes of mu and the largest
	// v. They let Calibrate skip, with a handful of comparisons per block,
	// the bulk of the 55,000-year curve where the likelihood is nil.
	bMuMin, bMuMax, bVMax []float64

	ageMin, ageMax float64 // range of the 14C ages on the grid
}

const blockSize = 64

// ParseError reports a malformed curve file, with the 1-based line number.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// Parse reads a curve in the IntCal .14c format: lines starting with '#'
// are comments, data rows are "cal BP, 14C age, sigma[, Delta14C, sigma]"
// ordered from oldest to youngest. CRLF endings are accepted because
// SHCal20 is published with them. No step size is assumed: IntCal20 itself
// changes from 20 to 10 to 5 to 1 year.
func Parse(name string, r io.Reader) (*Curve, error) {
	c := &Curve{Name: name}
	br := bufio.NewReader(r)
	line := 0
	for {
		s, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return nil, &ParseError{File: name, Line: line + 1, Msg: err.Error()}
		}
		if s == "" && err == io.EOF {
			break
		}
		line++
		s = strings.TrimRight(s, "\r\n")
		t := strings.TrimSpace(s)
		if t == "" || strings.HasPrefix(t, "#") {
			if h := strings.TrimSpace(strings.TrimLeft(t, "#")); h != "" && len(c.Points) == 0 {
				c.Header = append(c.Header, h)
			}
			if err == io.EOF {
				break
			}
			continue
		}
		p, perr := parseRow(t)
		if perr != nil {
			return nil, &ParseError{File: name, Line: line, Msg: perr.Error()}
		}
		if n := len(c.Points); n > 0 && !(p.CalBP < c.Points[n-1].CalBP) {
			return nil, &ParseError{File: name, Line: line, Msg: fmt.Sprintf(
				"cal BP %v does not follow %v: rows must run from oldest to youngest, without repeats",
				p.CalBP, c.Points[n-1].CalBP)}
		}
		c.Points = append(c.Points, p)
		if err == io.EOF {
			break
		}
	}
	if len(c.Points) < 2 {
		return nil, &ParseError{File: name, Msg: fmt.Sprintf("%d data rows, need at least 2", len(c.Points))}
	}
	if err := c.buildGrid(); err != nil {
		return nil, &ParseError{File: name, Msg: err.Error()}
	}
	return c, nil
}

func parseRow(t string) (Point, error) {
	f := strings.Split(t, ",")
	if len(f) < 3 || len(f) > 5 {
		return Point{}, fmt.Errorf("%d comma-separated fields, want 3 to 5 (cal BP, 14C age, sigma, Delta14C, sigma)", len(f))
	}
	var v [5]float64
	names := [5]string{"cal BP", "14C age", "sigma", "Delta14C", "Delta14C sigma"}
	for i, s := range f {
		s = strings.TrimSpace(s)
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return Point{}, fmt.Errorf("%s %q is not a finite number", names[i], s)
		}
		v[i] = x
	}
	if v[2] < 0 {
		return Point{}, fmt.Errorf("sigma %v is negative", v[2])
	}
	return Point{CalBP: v[0], Age: v[1], Sigma: v[2], Delta14C: v[3], Delta14CSigma: v[4]}, nil
}

// buildGrid interpolates the curve linearly to every whole calendar year
// between its first and last row.
func (c *Curve) buildGrid() error {
	last := len(c.Points) - 1
	lo := int(math.Ceil(c.Points[last].CalBP))
	hi := int(math.Floor(c.Points[0].CalBP))
	if hi < lo {
		return errors.New("the curve spans no whole calendar year")
	}
	if hi-lo > 10_000_000 {
		return errors.New("the curve spans more than 10 million years")
	}
	n := hi - lo + 1
	c.minBP = lo
	c.mu = make([]float64, n)
	c.v = make([]float64, n)
	// Walk the knots from youngest to oldest alongside the grid.
	k := last // Points[k] is the younger end of the current segment
	for i := 0; i < n; i++ {
		y := float64(lo + i)
		for k > 0 && c.Points[k-1].CalBP <= y {
			k--
		}
		a := c.Points[k] // a.CalBP <= y < Points[k-1].CalBP (or k == 0 and a.CalBP == y)
		var age, sig float64
		if a.CalBP == y || k == 0 {
			age, sig = a.Age, a.Sigma
		} else {
			b := c.Points[k-1] // older knot, b.CalBP > y
			f := (y - a.CalBP) / (b.CalBP - a.CalBP)
			age = a.Age + f*(b.Age-a.Age)
			sig = a.Sigma + f*(b.Sigma-a.Sigma)
		}
		c.mu[i] = age
		c.v[i] = sig * sig
	}
	nb := (n + blockSize - 1) / blockSize
	c.bMuMin = make([]float64, nb)
	c.bMuMax = make([]float64, nb)
	c.bVMax = make([]float64, nb)
	c.ageMin, c.ageMax = math.Inf(1), math.Inf(-1)
	for b := 0; b < nb; b++ {
		mn, mx, vm := math.Inf(1), math.Inf(-1), 0.0
		for i := b * blockSize; i < min((b+1)*blockSize, n); i++ {
			mn = math.Min(mn, c.mu[i])
			mx = math.Max(mx, c.mu[i])
			vm = math.Max(vm, c.v[i])
		}
		c.bMuMin[b], c.bMuMax[b], c.bVMax[b] = mn, mx, vm
		c.ageMin = math.Min(c.ageMin, mn)
		c.ageMax = math.Max(c.ageMax, mx)
	}
	return nil
}

// CalRange is the span of the 1-year grid in cal BP (from ≤ to).
func (c *Curve) CalRange() (from, to int) { return c.minBP, c.minBP + len(c.mu) - 1 }

// AgeRange is the span of the curve's 14C ages on the grid.
func (c *Curve) AgeRange() (min, max float64) { return c.ageMin, c.ageMax }

// At returns the interpolated 14C age and its sigma at a whole cal BP year
// (ok false outside the curve).
func (c *Curve) At(calBP int) (age, sigma float64, ok bool) {
	i := calBP - c.minBP
	if i < 0 || i >= len(c.mu) {
		return 0, 0, false
	}
	return c.mu[i], math.Sqrt(c.v[i]), true
}

// ParseFile parses one .14c file; the curve is named after the file
// without its extension, lower case.
func ParseFile(path string) (*Curve, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := Parse(curveName(path), f)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.File = path
		}
		return nil, err
	}
	return c, nil
}
