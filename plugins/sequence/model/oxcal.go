package model

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/plugins/radiocarbon/calib"
)

// oxcalCurveFiles are the file names OxCal ships the built-in curves as.
// OxCal's own scripts name them Curve("IntCal20","intcal20.14c"): the
// label as published, the file in lower case as in OxCal's bin folder.
var oxcalCurveFiles = map[string][2]string{
	calib.IntCal20: {"IntCal20", "intcal20.14c"},
	calib.SHCal20:  {"SHCal20", "shcal20.14c"},
	calib.Marine20: {"Marine20", "marine20.14c"},
}

func oxcalCurve(name string) (label, file string) {
	if f, ok := oxcalCurveFiles[name]; ok {
		return f[0], f[1]
	}
	return name, name + ".14c"
}

// oxq quotes a name as a CQL2 string: double quotes, with any double quote
// or backslash in it replaced by a single quote (CQL2 has no escape we can
// rely on) and line breaks by spaces.
func oxq(s string) string {
	r := strings.NewReplacer(`"`, "'", `\`, "'", "\n", " ", "\r", " ")
	return `"` + r.Replace(s) + `"`
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// ExportOxCal writes m as an OxCal CQL2 script (OxCal 4):
//
//	Options(){ UniformSpanPrior=FALSE; };          (models with boundaries)
//	Plot()
//	{
//	 Curve("IntCal20","intcal20.14c");
//	 Sequence("name")
//	 {
//	  Boundary("Start I");
//	  Phase("I")
//	  {
//	   R_Date("OxA-1",2450,30);
//	  };
//	  Boundary("I/II");
//	  …
//	  Boundary("End II");
//	 };
//	 Sequence("Matrix 1"){ Date("=OxA-2"); Date("=OxA-3"); };
//	};
//
// Phases become Phase groups between Boundary commands in one Sequence
// (Contiguous: shared boundaries; Sequential: "End P" then "Start Q").
// Dates in no phase are listed after the Sequence. Orders not already
// implied by the phases (an earlier phase is older) become two-element
// Sequences of cross-references to the dates ("=name", OxCal's way of
// putting one parameter under several constraints). A model without
// phases whose orders chain every date is written as one Sequence of
// R_Dates. A Curve command precedes each date whose curve differs from
// the one in force. UniformSpanPrior=FALSE makes OxCal use the prior of
// doc.go (OxCal's default adds a factor making the overall span uniform).
// Dates are named by Date.Name().
func ExportOxCal(m Model) string {
	var b strings.Builder
	nd := len(m.Dates)
	idx := make(map[string]int, nd)
	for i, d := range m.Dates {
		idx[d.ID] = i
	}
	phaseOf := make([]int, nd)
	for i := range phaseOf {
		phaseOf[i] = -1
	}
	for k, ph := range m.Phases {
		for _, id := range ph.Dates {
			if i, ok := idx[id]; ok {
				phaseOf[i] = k
			}
		}
	}
	name := m.Name
	if name == "" {
		name = "Strata model"
	}
	fmt.Fprintf(&b, "/* %s: exported by Strata (sequence plugin). Dates are named by label; */\n", strings.ReplaceAll(name, "*/", "* /"))
	b.WriteString("/* orders from the Harris matrix that the phases do not imply are cross-referenced Sequences. */\n")
	if len(m.Phases) > 0 {
		b.WriteString("Options()\n{\n UniformSpanPrior=FALSE;\n};\n")
	}
	b.WriteString("Plot()\n{\n")
	// The curve of the first date written, set before any group.
	first := -1
	if len(m.Phases) == 0 {
		if chain := orderChain(m, idx); chain != nil {
			first = chain[0]
		} else {
			first = 0
		}
	} else {
		for _, ph := range m.Phases {
			for _, id := range ph.Dates {
				if i, ok := idx[id]; ok && first < 0 {
					first = i
				}
			}
		}
		for i := range m.Dates {
			if phaseOf[i] < 0 && first < 0 {
				first = i
			}
		}
	}
	curve := ""
	curveOf := func(i int) string {
		c := strings.ToLower(m.Dates[i].Curve)
		if c == "" {
			c = calib.DefaultCurve
		}
		return c
	}
	if first >= 0 {
		curve = curveOf(first)
		l, f := oxcalCurve(curve)
		fmt.Fprintf(&b, " Curve(%s,%s);\n", oxq(l), oxq(f))
	}
	date := func(ind string, i int) {
		d := m.Dates[i]
		c := curveOf(i)
		if c != curve {
			l, f := oxcalCurve(c)
			fmt.Fprintf(&b, "%sCurve(%s,%s);\n", ind, oxq(l), oxq(f))
			curve = c
		}
		fmt.Fprintf(&b, "%sR_Date(%s,%s,%s);\n", ind, oxq(d.Name()), num(d.BP), num(d.Error))
	}
	var rest []Order
	if len(m.Phases) == 0 {
		if chain := orderChain(m, idx); chain != nil {
			fmt.Fprintf(&b, " Sequence(%s)\n {\n", oxq(name))
			for _, i := range chain {
				date("  ", i)
			}
			b.WriteString(" };\n")
		} else {
			for i := range m.Dates {
				date(" ", i)
			}
			rest = m.Orders
		}
	} else {
		bn := boundaryNames(m)
		fmt.Fprintf(&b, " Sequence(%s)\n {\n", oxq(name))
		for k, ph := range m.Phases {
			if m.Boundaries == Sequential {
				fmt.Fprintf(&b, "  Boundary(%s);\n", oxq(bn[2*k].Name))
			} else {
				fmt.Fprintf(&b, "  Boundary(%s);\n", oxq(bn[k].Name))
			}
			fmt.Fprintf(&b, "  Phase(%s)\n  {\n", oxq(ph.Name))
			for _, id := range ph.Dates {
				if i, ok := idx[id]; ok {
					date("   ", i)
				}
			}
			b.WriteString("  };\n")
			if m.Boundaries == Sequential {
				fmt.Fprintf(&b, "  Boundary(%s);\n", oxq(bn[2*k+1].Name))
			}
		}
		if m.Boundaries != Sequential {
			fmt.Fprintf(&b, "  Boundary(%s);\n", oxq(bn[len(bn)-1].Name))
		}
		b.WriteString(" };\n")
		for i := range m.Dates {
			if phaseOf[i] < 0 {
				date(" ", i)
			}
		}
		for _, o := range m.Orders {
			a, ok1 := idx[o.Older]
			c, ok2 := idx[o.Younger]
			if ok1 && ok2 && phaseOf[a] >= 0 && phaseOf[c] >= 0 && phaseOf[a] < phaseOf[c] {
				continue // the phase sequence says it already
			}
			rest = append(rest, o)
		}
	}
	for k, o := range rest {
		a, ok1 := idx[o.Older]
		c, ok2 := idx[o.Younger]
		if !ok1 || !ok2 {
			continue
		}
		fmt.Fprintf(&b, " Sequence(%s)\n {\n  Date(%s);\n  Date(%s);\n };\n",
			oxq(fmt.Sprintf("Matrix %d", k+1)), oxq("="+m.Dates[a].Name()), oxq("="+m.Dates[c].Name()))
	}
	b.WriteString("};\n")
	return b.String()
}

// orderChain returns the dates oldest first when the orders chain every
// date (each consecutive pair ordered), else nil.
func orderChain(m Model, idx map[string]int) []int {
	nd := len(m.Dates)
	if nd < 2 {
		return nil
	}
	next := make([]int, nd)
	prev := make([]int, nd)
	for i := range next {
		next[i], prev[i] = -1, -1
	}
	for _, o := range m.Orders {
		a, ok1 := idx[o.Older]
		c, ok2 := idx[o.Younger]
		if !ok1 || !ok2 || next[a] >= 0 || prev[c] >= 0 {
			return nil
		}
		next[a], prev[c] = c, a
	}
	if len(m.Orders) != nd-1 {
		return nil
	}
	start := slices.Index(prev, -1)
	var out []int
	for v := start; v >= 0 && len(out) <= nd; v = next[v] {
		out = append(out, v)
	}
	if len(out) != nd {
		return nil
	}
	return out
}

// OxCalItem is one ocd[] entry of an OxCal results file (.js).
type OxCalItem struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	Op    string `json:"op"` // "R_Date", "Boundary", "Phase", "Sequence", …
	// Date and Error: the measurement of an R_Date (BP).
	Date  float64 `json:"date,omitempty"`
	Error float64 `json:"error,omitempty"`
	// Likelihood and Posterior ranges by level: [1] 68.3 %, [2] 95.4 %,
	// [3] 99.7 % (index 0 unused), each as OxCal wrote them: start, end
	// on OxCal's time-scale and probability in %.
	Likelihood [4][]OxCalRange `json:"likelihood"`
	Posterior  [4][]OxCalRange `json:"posterior"`
	// Agreement is the individual agreement index (posterior.agreement);
	// Convergence is posterior.convergence; nil when absent.
	Agreement   *float64 `json:"agreement,omitempty"`
	Convergence *float64 `json:"convergence,omitempty"`
}

// OxCalRange is one range of an OxCal results file: From and To on
// OxCal's continuous time-scale G (G1 is the start of AD 1, G0 the start
// of 1 BC) and the probability in %.
type OxCalRange struct {
	From float64 `json:"from"`
	To   float64 `json:"to"`
	P    float64 `json:"p"`
}

// Years converts r to signed calendar years (negative BCE, no year 0) as
// Range uses them: every year the range overlaps is included (OxCal
// writes years' starts or middles; the ends can differ from what OxCal
// prints by one year).
func (r OxCalRange) Years() Range {
	hist := func(astro int) int {
		if astro <= 0 {
			return astro - 1
		}
		return astro
	}
	return Range{From: hist(int(math.Floor(r.From))), To: hist(int(math.Ceil(r.To)) - 1), P: math.Round(r.P*1e4) / 1e6}
}

// OxCalResults is what ParseOxCalJS reads.
type OxCalResults struct {
	Items []OxCalItem `json:"items"` // ocd[1…] in index order
	// ModelAgreement and OverallAgreement: ocd[0].posterior.modelAgreement
	// and overallAgreement (nil when absent).
	ModelAgreement   *float64 `json:"model_agreement,omitempty"`
	OverallAgreement *float64 `json:"overall_agreement,omitempty"`
}

// MaxOxCalItems bounds the entries ParseOxCalJS accepts.
const MaxOxCalItems = 100000

// ParseOxCalJS reads an OxCal results file (the .js that OxCal writes next
// to the .oxcal): lines "ocd[N].path=value;". It keeps name, op, date,
// error, likelihood.range[L][i], posterior.range[L][i] (arrays [start,
// end, probability]), posterior.agreement, posterior.convergence and, on
// ocd[0], posterior.modelAgreement and posterior.overallAgreement; other
// lines are skipped. A line it cannot read where it expects one of these
// is an error with its line number.
func ParseOxCalJS(r io.Reader) (*OxCalResults, error) {
	items := map[int]*OxCalItem{}
	get := func(i int) *OxCalItem {
		it, ok := items[i]
		if !ok {
			it = &OxCalItem{Index: i}
			items[i] = it
		}
		return it
	}
	res := &OxCalResults{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(s, "ocd[") {
			continue
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			continue
		}
		lhs, rhs := s[:eq], strings.TrimSuffix(strings.TrimSpace(s[eq+1:]), ";")
		rb := strings.IndexByte(lhs, ']')
		if rb < 0 {
			continue
		}
		n, err := strconv.Atoi(lhs[4:rb])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("oxcal results line %d: bad index in %q", line, lhs)
		}
		path := strings.TrimPrefix(lhs[rb+1:], ".")
		bad := func(what string) error {
			return fmt.Errorf("oxcal results line %d: %s: cannot read %q", line, what, rhs)
		}
		if n == 0 {
			switch path {
			case "posterior.modelAgreement", "posterior.overallAgreement":
				x, err := strconv.ParseFloat(rhs, 64)
				if err != nil {
					return nil, bad(path)
				}
				if path == "posterior.modelAgreement" {
					res.ModelAgreement = &x
				} else {
					res.OverallAgreement = &x
				}
			}
			continue
		}
		if _, seen := items[n]; !seen && len(items) >= MaxOxCalItems {
			return nil, fmt.Errorf("oxcal results: more than %d entries", MaxOxCalItems)
		}
		switch {
		case path == "name" || path == "op":
			v, err := strconv.Unquote(rhs)
			if err != nil {
				v = strings.Trim(rhs, `"'`)
			}
			if path == "name" {
				get(n).Name = v
			} else {
				get(n).Op = v
			}
		case path == "date" || path == "error":
			x, err := strconv.ParseFloat(rhs, 64)
			if err != nil {
				continue // NaN or an expression: not a measurement
			}
			if path == "date" {
				get(n).Date = x
			} else {
				get(n).Error = x
			}
		case path == "posterior.agreement" || path == "posterior.convergence":
			x, err := strconv.ParseFloat(rhs, 64)
			if err != nil {
				continue
			}
			if path == "posterior.agreement" {
				get(n).Agreement = &x
			} else {
				get(n).Convergence = &x
			}
		case strings.HasPrefix(path, "likelihood.range[") || strings.HasPrefix(path, "posterior.range["):
			post := strings.HasPrefix(path, "posterior.")
			rest := path[strings.IndexByte(path, '[')+1:]
			lv, ok := strings.CutSuffix(rest, "]")
			if !ok {
				return nil, bad(path)
			}
			// "L][i" for one range, or "L" for the whole level as an array
			// of arrays.
			li, ii, one := strings.Cut(lv, "][")
			level, err := strconv.Atoi(li)
			if err != nil || level < 1 || level > 3 {
				continue
			}
			var ranges []OxCalRange
			if one {
				if _, err := strconv.Atoi(ii); err != nil {
					return nil, bad(path)
				}
				r, err := parseTriple(rhs)
				if err != nil {
					return nil, bad(path)
				}
				ranges = []OxCalRange{r}
			} else {
				inner := strings.TrimSpace(rhs)
				if !strings.HasPrefix(inner, "[") || !strings.HasSuffix(inner, "]") {
					return nil, bad(path)
				}
				inner = strings.TrimSpace(inner[1 : len(inner)-1])
				for inner != "" {
					end := strings.IndexByte(inner, ']')
					if end < 0 {
						return nil, bad(path)
					}
					r, err := parseTriple(inner[:end+1])
					if err != nil {
						return nil, bad(path)
					}
					ranges = append(ranges, r)
					inner = strings.TrimLeft(inner[end+1:], " ,")
				}
			}
			it := get(n)
			if post {
				it.Posterior[level] = append(it.Posterior[level], ranges...)
			} else {
				it.Likelihood[level] = append(it.Likelihood[level], ranges...)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("oxcal results: %w", err)
	}
	keys := make([]int, 0, len(items))
	for k := range items {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		res.Items = append(res.Items, *items[k])
	}
	return res, nil
}

func parseTriple(s string) (OxCalRange, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return OxCalRange{}, fmt.Errorf("not an array")
	}
	f := strings.Split(s[1:len(s)-1], ",")
	if len(f) != 3 {
		return OxCalRange{}, fmt.Errorf("want 3 numbers")
	}
	var v [3]float64
	for i, x := range f {
		y, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return OxCalRange{}, err
		}
		v[i] = y
	}
	return OxCalRange{From: v[0], To: v[1], P: v[2]}, nil
}

// Comparison sets our result for one parameter beside OxCal's, matched by
// name (Estimate.Name and the ocd entry's name; for OxCal a name may
// appear on several entries, the first with a posterior is used).
type Comparison struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Ours and OxCal: 68.3 % and 95.4 % posterior ranges in signed years.
	OursHPD68  []Range `json:"ours_hpd68"`
	OursHPD95  []Range `json:"ours_hpd95"`
	OxCalHPD68 []Range `json:"oxcal_hpd68"`
	OxCalHPD95 []Range `json:"oxcal_hpd95"`
	// Agreement indices (dates); OxCalAgreement is nil when OxCal gave none.
	OursAgreement  float64  `json:"ours_agreement"`
	OxCalAgreement *float64 `json:"oxcal_agreement,omitempty"`
	// Shift95: the larger of the differences, in years, between the outer
	// ends (oldest From, youngest To) of the two 95.4 % regions; -1 when
	// either is missing.
	Shift95 int `json:"shift95"`
	// Found: OxCal has a posterior for this name.
	Found bool `json:"found"`
}

// Compare pairs every date and boundary of res with OxCal's posterior of
// the same name, in res's order (dates, then boundaries).
func Compare(res *Result, ox *OxCalResults) []Comparison {
	byName := map[string]*OxCalItem{}
	for i := range ox.Items {
		it := &ox.Items[i]
		if _, ok := byName[it.Name]; ok || len(it.Posterior[2]) == 0 {
			continue
		}
		byName[it.Name] = it
	}
	var out []Comparison
	for _, e := range append(slices.Clone(res.Dates), res.Boundaries...) {
		c := Comparison{Name: e.Name, Kind: e.Kind, OursHPD68: e.Posterior.HPD68, OursHPD95: e.Posterior.HPD95,
			OursAgreement: e.Agreement, Shift95: -1}
		if it, ok := byName[e.Name]; ok {
			c.Found = true
			for _, r := range it.Posterior[1] {
				c.OxCalHPD68 = append(c.OxCalHPD68, r.Years())
			}
			for _, r := range it.Posterior[2] {
				c.OxCalHPD95 = append(c.OxCalHPD95, r.Years())
			}
			c.OxCalAgreement = it.Agreement
			if len(c.OursHPD95) > 0 && len(c.OxCalHPD95) > 0 {
				of, ot := envelopeOf(c.OursHPD95)
				xf, xt := envelopeOf(c.OxCalHPD95)
				c.Shift95 = max(absInt(of-xf), absInt(ot-xt))
			}
		}
		out = append(out, c)
	}
	return out
}

func envelopeOf(rs []Range) (from, to int) {
	from, to = rs[0].From, rs[0].To
	for _, r := range rs[1:] {
		from, to = min(from, r.From), max(to, r.To)
	}
	return from, to
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
