package chrono

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func ip(v int) *int { return &v }

func TestParseToken(t *testing.T) {
	for _, tc := range []struct {
		in         string
		start, end int
	}{
		// years
		{"-250", -250, -250},
		{"250", 250, 250},
		{"+250", 250, 250},
		{"500 BCE", -500, -500},
		{"500BCE", -500, -500},
		{"250 CE", 250, 250},
		{"250 ce", 250, 250},
		{"  250   CE ", 250, 250},
		{"44 BC", -44, -44},
		{"AD 79", 79, 79},
		{"79 AD", 79, 79},
		{"753 a.C.", -753, -753},
		{"476 d.C.", 476, 476},
		{"1 BCE", -1, -1},
		{"1", 1, 1},
		{"0044 bce", -44, -44},
		{"10000000 BCE", -10_000_000, -10_000_000},
		// whole centuries
		{"c4 BCE", -400, -301},
		{"c4 CE", 301, 400},
		{"c1 BCE", -100, -1},
		{"c1 CE", 1, 100},
		{"c99 CE", 9801, 9900},
		{"c99 BCE", -9900, -9801},
		{"c04 ce", 301, 400},
		{"C4 bce", -400, -301},
		{"c4BCE", -400, -301},
		{"c1ce", 1, 100},
		// qualifiers, BCE (counted forward from the first year, -400)
		{"c4e BCE", -400, -376},
		{"c4m BCE", -375, -326},
		{"c4l BCE", -325, -301},
		{"c4h1 BCE", -400, -351},
		{"c4h2 BCE", -350, -301},
		{"c4q1 BCE", -400, -376},
		{"c4q2 BCE", -375, -351},
		{"c4q3 BCE", -350, -326},
		{"c4q4 BCE", -325, -301},
		// qualifiers, CE (first year 301)
		{"c4e CE", 301, 325},
		{"c4m CE", 326, 375},
		{"c4l CE", 376, 400},
		{"c4h1 CE", 301, 350},
		{"c4h2 CE", 351, 400},
		{"c4q1 CE", 301, 325},
		{"c4q2 CE", 326, 350},
		{"c4q3 CE", 351, 375},
		{"c4q4 CE", 376, 400},
		{"c1l BCE", -25, -1},
		{"c1e CE", 1, 25},
		{"C4L bce", -325, -301},
		{"c4 l BCE", -325, -301},
		{"c4 H2 ce", 351, 400},
		{"c1ece", 1, 25},
	} {
		s, e, err := ParseToken(tc.in)
		if err != nil || s != tc.start || e != tc.end {
			t.Errorf("ParseToken(%q) = %d, %d, %v; want %d, %d", tc.in, s, e, err, tc.start, tc.end)
		}
	}
}

func TestParseTokenErrors(t *testing.T) {
	for _, tc := range []struct{ in, msg string }{
		{"0", "no year 0"},
		{"0 BCE", "no year 0"},
		{"-0", "no year 0"},
		{"000 ce", "no year 0"},
		{"c0 BCE", "1 to 99"},
		{"c100 CE", "1 to 99"},
		{"c4", "needs BCE or CE"},
		{"c4l", "needs BCE or CE"},
		{"c4x BCE", "unknown qualifier or era"},
		{"c4q5 CE", "unknown qualifier or era"},
		{"c4h3 CE", "unknown qualifier or era"},
		{"c4 BP", "unknown qualifier or era"},
		{"c4 late BCE", "unknown qualifier or era"},
		{"250 BP", "unknown era"},
		{"-250 BCE", "cannot also have an era"},
		{"+250 CE", "cannot also have an era"},
		{"20000000", "beyond"},
		{"123456789012 BCE", "beyond"},
		{"250-300", "T1/T2"},
		{"c 4 BCE", "circa"},
		{"c. 250 BCE", "circa"},
		{"c.250", "circa"},
		{"ca. 250", "circa"},
		{"circa 250", "circa"},
		{"IV sec. a.C.", "not a year"},
		{"abc", "not a year"},
		{"?", "not a year"},
		{"", "empty"},
		{"2.5", "not a year"},
	} {
		_, _, err := ParseToken(tc.in)
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ParseToken(%q): %v, want an error containing %q", tc.in, err, tc.msg)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in       string
		from, to *int
		kind     Kind
	}{
		{"?", nil, nil, Undated},
		{" ? ", nil, nil, Undated},
		{"?/?", nil, nil, Undated},
		{"c4l BCE", ip(-325), ip(-301), Single},
		{"500 BCE", ip(-500), ip(-500), Single},
		{"-250", ip(-250), ip(-250), Single},
		{"c1 CE/c2 CE", ip(1), ip(200), Range},
		{"c1 CE / c2 CE", ip(1), ip(200), Range},
		{"-250/100", ip(-250), ip(100), Range},
		{"-250/-100", ip(-250), ip(-100), Range},
		{"c1 BCE/c1 CE", ip(-100), ip(100), Range},
		{"500 BCE/250 CE", ip(-500), ip(250), Range},
		{"c4 BCE/c4 BCE", ip(-400), ip(-301), Range},
		{"c4l BCE/c4e BCE", ip(-325), ip(-376), Range}, // see below: refused
		{"250/250", ip(250), ip(250), Range},
		{"c1 CE/50", ip(1), ip(50), Range},
		{"?/c3 CE", nil, ip(300), AnteQuem},
		{"? / c3 CE", nil, ip(300), AnteQuem},
		{"?/-250", nil, ip(-250), AnteQuem},
		{"c2 BCE/?", ip(-200), nil, PostQuem},
		{"c2l BCE/?", ip(-125), nil, PostQuem},
		{"100/?", ip(100), nil, PostQuem},
	} {
		d, err := Parse(tc.in)
		if tc.in == "c4l BCE/c4e BCE" {
			// T1 starts at -325, T2 ends at -376: from > to.
			if err == nil {
				t.Errorf("Parse(%q) accepted a backwards range: %+v", tc.in, d)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if !eqp(d.From, tc.from) || !eqp(d.To, tc.to) || d.Kind != tc.kind {
			t.Errorf("Parse(%q) = %s/%s %s; want %s/%s %s", tc.in, ps(d.From), ps(d.To), d.Kind, ps(tc.from), ps(tc.to), tc.kind)
		}
		if d.From != nil && d.To != nil && *d.From > *d.To {
			t.Errorf("Parse(%q): from after to", tc.in)
		}
	}
}

func eqp(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func ps(p *int) string {
	if p == nil {
		return "nil"
	}
	return FormatYear(*p)
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, msg string }{
		{"", "empty"},
		{"   ", "empty"},
		{"c2 CE/c1 CE", "after it ends"},
		{"100/-100", "starts in 100 CE, after it ends in 100 BCE"},
		{"c4 BCE/c5 BCE", "after it ends"},
		{"0/100", "no year 0"},
		{"-100/0", "no year 0"},
		{"?/0", "no year 0"},
		{"c100 CE/?", "1 to 99"},
		{"c0 CE", "1 to 99"},
		{"1/2/3", "more than one"},
		{"/100", "both sides"},
		{"100/", "both sides"},
		{"/", "both sides"},
		{"c4 BCE/garbage", "not a year"},
		{"garbage", "not a year"},
		{"c4", "BCE or CE"},
	} {
		_, err := Parse(tc.in)
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Parse(%q): %v, want an error containing %q", tc.in, err, tc.msg)
			continue
		}
		// The message names the whole label, not just the failing token.
		if pe.Label != tc.in {
			t.Errorf("Parse(%q): error names %q", tc.in, pe.Label)
		}
	}
}

func TestParseCertainty(t *testing.T) {
	for in, want := range map[string]int{
		"1": 1, "2": 2, "3": 3, " 2 ": 2,
		"certain": 1, "Certa": 1, "certo": 1, "CERTAIN": 1,
		"probable": 2, "probabile": 2, "Probabile": 2,
		"uncertain": 3, "incerta": 3, "incerto": 3, "possible": 3, "possibile": 3,
	} {
		if got, err := ParseCertainty(in); err != nil || got != want {
			t.Errorf("ParseCertainty(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "4", "-1", "maybe", "1.0", "certainly"} {
		if _, err := ParseCertainty(in); err == nil {
			t.Errorf("ParseCertainty(%q) accepted", in)
		}
	}
	if CertaintyName(2) != "probable" || CertaintyName(0) != "" {
		t.Error("CertaintyName")
	}
}

func TestYears(t *testing.T) {
	for _, tc := range []struct{ from, to, n int }{
		{-1, 1, 2}, {-100, 100, 200}, {1, 100, 100}, {-400, -301, 100},
		{-325, -301, 25}, {250, 250, 1}, {-1, -1, 1}, {5, 4, 0}, {1, -1, 0},
	} {
		if got := Years(tc.from, tc.to); got != tc.n {
			t.Errorf("Years(%d, %d) = %d, want %d", tc.from, tc.to, got, tc.n)
		}
	}
	for _, y := range []int{-1000, -2, -1, 1, 2, 1000} {
		if FromAstronomical(Astronomical(y)) != y {
			t.Errorf("round trip %d", y)
		}
	}
	if Astronomical(-1) != 0 || FromAstronomical(0) != -1 {
		t.Error("1 BCE is astronomical year 0")
	}
}

func TestCheck(t *testing.T) {
	ok := [][2]*int{{nil, nil}, {ip(-5), nil}, {nil, ip(5)}, {ip(-5), ip(5)}, {ip(5), ip(5)}}
	for _, c := range ok {
		if err := Check(c[0], c[1]); err != nil {
			t.Errorf("Check(%s, %s): %v", ps(c[0]), ps(c[1]), err)
		}
	}
	bad := [][2]*int{{ip(0), nil}, {nil, ip(0)}, {ip(6), ip(5)}, {ip(-MaxYear - 1), nil}}
	for _, c := range bad {
		if err := Check(c[0], c[1]); err == nil {
			t.Errorf("Check(%v, %v) accepted", c[0], c[1])
		}
	}
}

func TestOverlaps(t *testing.T) {
	// Query -350…-320 (CONTRACT.md's example).
	q0, q1 := -350, -320
	for _, tc := range []struct {
		name     string
		from, to *int
		want     bool
	}{
		{"undated", nil, nil, false},
		{"inside", ip(-340), ip(-330), true},
		{"covers", ip(-400), ip(-301), true},
		{"touches start", ip(-400), ip(-350), true},
		{"touches end", ip(-320), ip(-300), true},
		{"just before", ip(-400), ip(-351), false},
		{"just after", ip(-319), ip(-300), false},
		{"single year in", ip(-335), ip(-335), true},
		{"ante quem, ends after start", nil, ip(-350), true},
		{"ante quem, ends inside", nil, ip(-330), true},
		{"ante quem, ends later", nil, ip(100), true},
		{"ante quem, ends before", nil, ip(-351), false},
		{"post quem, starts before end", ip(-500), nil, true},
		{"post quem, starts at end", ip(-320), nil, true},
		{"post quem, starts after", ip(-319), nil, false},
	} {
		if got := Overlaps(tc.from, tc.to, q0, q1); got != tc.want {
			t.Errorf("%s: Overlaps(%s, %s) = %v", tc.name, ps(tc.from), ps(tc.to), got)
		}
		if got := Overlaps(tc.from, tc.to, q1, q0); got != tc.want {
			t.Errorf("%s: backwards query gives %v", tc.name, got)
		}
	}
	// Across the era boundary no year 0 is needed: -1…1 overlaps 1 BCE and 1 CE.
	if !Overlaps(ip(-1), ip(-1), -1, 1) || !Overlaps(ip(1), ip(1), -1, 1) || Overlaps(ip(2), ip(5), -1, 1) {
		t.Error("era boundary")
	}
}

func TestInWindow(t *testing.T) {
	// The timeline rule: from keeps to null or ≥ from; to keeps from null or ≤ to.
	for _, tc := range []struct {
		name       string
		from, to   *int
		qFrom, qTo *int
		want       bool
	}{
		{"no query, dated", ip(1), ip(2), nil, nil, true},
		{"no query, undated", nil, nil, nil, nil, false},
		{"no query, ante quem", nil, ip(2), nil, nil, true},
		{"from only, to before", ip(1), ip(2), ip(3), nil, false},
		{"from only, to null", ip(1), nil, ip(3), nil, true},
		{"from only, to equal", ip(1), ip(3), ip(3), nil, true},
		{"to only, from after", ip(5), ip(9), nil, ip(4), false},
		{"to only, from null", nil, ip(9), nil, ip(4), true},
		{"both, around", ip(-10), ip(10), ip(-1), ip(1), true},
	} {
		if got := InWindow(tc.from, tc.to, tc.qFrom, tc.qTo); got != tc.want {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestHistogramKnownIntervals(t *testing.T) {
	// Axis -400 … -201 astronomically 200 years; 4 bins of 50 years:
	// [-400,-351] [-350,-301] [-300,-251] [-250,-201].
	ivs := []Interval{
		{ip(-400), ip(-301)}, // 100 years: 0.5 to each of the first two bins
		{ip(-350), ip(-301)}, // exactly bin 1
		{ip(-300), ip(-201)}, // 0.5 to each of the last two
		{ip(-260), ip(-251)}, // 10 years in bin 2
		{nil, ip(-300)},      // ante quem: out, counted
		{ip(-250), nil},      // post quem: out, counted
		{nil, nil},           // undated
		{ip(0), ip(5)},       // invalid: year 0
		{ip(-200), ip(-300)}, // invalid: backwards
	}
	d := Histogram(ivs, 4)
	if d.Dated != 4 || d.Open != 2 || d.Undated != 1 || d.Invalid != 2 {
		t.Errorf("counts %+v", d)
	}
	if d.BinWidth != 50 || d.Axis != (Span{-400, -201}) || len(d.Bins) != 4 {
		t.Fatalf("axis %+v width %d bins %d", d.Axis, d.BinWidth, len(d.Bins))
	}
	want := []Bin{{-400, -351, 0.5}, {-350, -301, 1.5}, {-300, -251, 1.5}, {-250, -201, 0.5}}
	for k, b := range d.Bins {
		if b.From != want[k].From || b.To != want[k].To || !near(b.Weight, want[k].Weight) {
			t.Errorf("bin %d = %+v, want %+v", k, b, want[k])
		}
	}
	// Bins 1 and 2 tie at 1.5: the peak runs over both.
	if d.Peak == nil || *d.Peak != (Span{-350, -251}) {
		t.Errorf("peak %+v", d.Peak)
	}
}

func TestHistogramAcrossEra(t *testing.T) {
	// c1 BCE/c1 CE is 200 years (no year 0): 2 bins of 100 years, the
	// boundary between -1 and 1.
	d := Histogram([]Interval{{ip(-100), ip(100)}}, 2)
	if d.BinWidth != 100 || d.Bins[0].From != -100 || d.Bins[0].To != -1 || d.Bins[1].From != 1 || d.Bins[1].To != 100 {
		t.Fatalf("%+v", d.Bins)
	}
	if !near(d.Bins[0].Weight, 0.5) || !near(d.Bins[1].Weight, 0.5) {
		t.Errorf("%+v", d.Bins)
	}
}

func TestHistogramDefaultsAndSum(t *testing.T) {
	ivs := []Interval{{ip(-325), ip(-301)}, {ip(-500), ip(250)}, {ip(1), ip(200)}, {ip(-44), ip(-44)}, {ip(79), ip(79)}, {ip(79), ip(79)}}
	d := Histogram(ivs, 0)
	if len(d.Bins) != DefaultBins {
		t.Fatalf("%d bins", len(d.Bins))
	}
	// 750 years / 60 bins → 13-year bins, covering 780 years.
	if d.BinWidth != 13 || d.Axis.From != -500 || d.Axis.To != 280 {
		t.Errorf("axis %+v width %d", d.Axis, d.BinWidth)
	}
	sum := 0.0
	for k, b := range d.Bins {
		sum += b.Weight
		if k > 0 && Years(d.Bins[k-1].To, b.From) != 2 {
			t.Errorf("gap between bins %d and %d", k-1, k)
		}
		if Years(b.From, b.To) != d.BinWidth {
			t.Errorf("bin %d spans %d years", k, Years(b.From, b.To))
		}
	}
	if !near(sum, float64(d.Dated)) || d.Dated != 6 {
		t.Errorf("weights sum %v for %d intervals", sum, d.Dated)
	}
	// Two records in 79 CE make its bin the peak.
	if d.Peak == nil || d.Peak.From > 79 || d.Peak.To < 79 {
		t.Errorf("peak %+v", d.Peak)
	}
}

func TestHistogramFlatAndEmpty(t *testing.T) {
	// One century over 60 bins: 2-year bins, 50 of them carry 0.02, the
	// last 10 lie past the data; the peak is the whole century.
	d := Histogram([]Interval{{ip(-400), ip(-301)}}, 60)
	if d.BinWidth != 2 || d.Peak == nil || *d.Peak != (Span{-400, -301}) || d.Bins[50].Weight != 0 {
		t.Errorf("width %d peak %+v", d.BinWidth, d.Peak)
	}
	e := Histogram([]Interval{{nil, ip(5)}, {nil, nil}}, 60)
	if e.Bins != nil || e.Peak != nil || e.Dated != 0 || e.Open != 1 || e.Undated != 1 {
		t.Errorf("no closed intervals: %+v", e)
	}
	one := Histogram([]Interval{{ip(7), ip(7)}}, 60)
	if one.BinWidth != 1 || one.Bins[0].Weight != 1 || *one.Peak != (Span{7, 7}) {
		t.Errorf("single year: %+v", one)
	}
}

func TestHistogramIn(t *testing.T) {
	ivs := []Interval{
		{ip(-100), ip(-1)}, // half inside
		{ip(1), ip(50)},    // inside
		{ip(500), ip(600)}, // outside
		{nil, ip(10)},      // open
	}
	d := HistogramIn(ivs, 2, 50, -50) // backwards: read as -50…50
	if d.Dated != 2 || d.Outside != 1 || d.Open != 1 {
		t.Errorf("counts %+v", d)
	}
	// -50…50 is 100 years: bins -50…-1 and 1…50.
	if d.BinWidth != 50 || d.Axis != (Span{-50, 50}) {
		t.Fatalf("axis %+v", d.Axis)
	}
	if !near(d.Bins[0].Weight, 0.5) || !near(d.Bins[1].Weight, 1) {
		t.Errorf("%+v", d.Bins)
	}
	if *d.Peak != (Span{1, 50}) {
		t.Errorf("peak %+v", d.Peak)
	}
}
