package chrono

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// MaxYear bounds |year| in labels and checks. It is far beyond any
// archaeological date and keeps span arithmetic trivially safe.
const MaxYear = 10_000_000

// Kind says which form a label took.
type Kind string

const (
	Undated  Kind = "undated"   // "?"
	Single   Kind = "single"    // one token: its own start and end
	Range    Kind = "range"     // T1/T2
	AnteQuem Kind = "ante_quem" // ?/T: before T's end, start unknown
	PostQuem Kind = "post_quem" // T/?: after T's start, end unknown
)

// Dating is what a label means: signed years (negative BCE, no year 0),
// nil for an open or unknown bound. From ≤ To when both are set.
type Dating struct {
	From *int `json:"from"`
	To   *int `json:"to"`
	Kind Kind `json:"kind"`
}

// ParseError explains why a label or token was refused.
type ParseError struct {
	Label string
	Msg   string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("chronology label %q: %s", Clip(e.Label), e.Msg)
}

// clipRunes is how much of a client's input an error message repeats.
const clipRunes = 60

// Clip shortens input repeated in a message to its first characters: an
// answer never echoes a large body back.
func Clip(s string) string {
	r := []rune(s)
	if len(r) <= clipRunes {
		return s
	}
	return string(r[:clipRunes]) + "…"
}

// Parse reads a chronology label (CONTRACT.md §8 "Chronology labels"):
//
//	?            undated
//	T            a single token: from = T's start, to = T's end
//	T1/T2        a range: from = T1's start, to = T2's end, from ≤ to
//	?/T          ante quem: to = T's end, from open (nil)
//	T/?          post quem: from = T's start, to open (nil)
//
// Tokens are described at ParseToken. Case and spaces are free ("C4L bce",
// " c1 CE / c2 CE "), except inside "c<N>". "?/?" is accepted as undated. An empty label is an
// error: a caller treats "no label" before calling Parse.
func Parse(label string) (Dating, error) {
	s := strings.TrimSpace(label)
	if s == "" {
		return Dating{}, &ParseError{label, "empty label (use ? for undated)"}
	}
	parts := strings.Split(s, "/")
	if len(parts) > 2 {
		return Dating{}, &ParseError{label, "more than one '/': a range is T1/T2"}
	}
	if len(parts) == 1 {
		if s == "?" {
			return Dating{Kind: Undated}, nil
		}
		a, b, err := ParseToken(s)
		if err != nil {
			return Dating{}, relabel(err, label)
		}
		return Dating{From: &a, To: &b, Kind: Single}, nil
	}
	l, r := strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])
	if l == "" || r == "" {
		return Dating{}, &ParseError{label, "a range needs both sides; write ? for an open end (?/T ante quem, T/? post quem)"}
	}
	switch {
	case l == "?" && r == "?":
		return Dating{Kind: Undated}, nil
	case l == "?":
		_, b, err := ParseToken(r)
		if err != nil {
			return Dating{}, relabel(err, label)
		}
		return Dating{To: &b, Kind: AnteQuem}, nil
	case r == "?":
		a, _, err := ParseToken(l)
		if err != nil {
			return Dating{}, relabel(err, label)
		}
		return Dating{From: &a, Kind: PostQuem}, nil
	}
	a, _, err := ParseToken(l)
	if err != nil {
		return Dating{}, relabel(err, label)
	}
	_, b, err := ParseToken(r)
	if err != nil {
		return Dating{}, relabel(err, label)
	}
	if a > b {
		return Dating{}, &ParseError{label, fmt.Sprintf("starts in %s, after it ends in %s", FormatYear(a), FormatYear(b))}
	}
	return Dating{From: &a, To: &b, Kind: Range}, nil
}

// relabel reports a token error against the whole label.
func relabel(err error, label string) error {
	if pe, ok := err.(*ParseError); ok {
		return &ParseError{label, pe.Msg}
	}
	return err
}

var (
	reYear   = regexp.MustCompile(`^([+-]?)\s*(\d+)\s*([a-z.\s]*)$`)
	reYearAD = regexp.MustCompile(`^(?:ad|a\.\s*d\.)\s*(\d+)$`)
	// No space between c and N: "c 50 BCE" or "c. 50" reads as circa,
	// and guessing a century there would date it 5,000 years off.
	reCentury = regexp.MustCompile(`^c(\d+)\s*(.*)$`)
	reCirca   = regexp.MustCompile(`^(c|ca|circa)\.?\s+\S|^(c|ca)\.\S`)
)

// Qualifier offsets inside a century's 100 years, from its first year.
var qualifiers = map[string][2]int{
	"":   {0, 99},
	"e":  {0, 24},
	"m":  {25, 74},
	"l":  {75, 99},
	"h1": {0, 49},
	"h2": {50, 99},
	"q1": {0, 24},
	"q2": {25, 49},
	"q3": {50, 74},
	"q4": {75, 99},
}

// qualifierNames in the order they are tried against the text after N.
var qualifierNames = []string{"h1", "h2", "q1", "q2", "q3", "q4", "e", "m", "l"}

// era normalises an era word: -1 BCE, +1 CE, 0 none. Dots and spaces are
// ignored ("B.C.", "a. C."); Italian a.C./d.C. (avanti/dopo Cristo) are
// accepted beside BCE/BC and CE/AD.
func era(s string) (int, bool) {
	s = strings.NewReplacer(".", "", " ", "", "\t", "").Replace(s)
	switch s {
	case "":
		return 0, true
	case "bce", "bc", "ac":
		return -1, true
	case "ce", "ad", "dc":
		return 1, true
	}
	return 0, false
}

// ParseToken reads one token and returns the first and last year it
// covers (signed, negative BCE, no year 0):
//
//   - a year: "-250", "250", "+250", "500 BCE", "250 CE" (also BC/AD,
//     "AD 250", Italian a.C./d.C.); start = end = that year. A signed
//     year cannot also carry an era; year 0 does not exist.
//   - a century "c<N>[q] BCE|CE", N 1–99, the era required. Century N
//     BCE is −100·N … −100·N+99, century N CE is 100·(N−1)+1 … 100·N; a
//     qualifier picks part of it, counted forward in time from its first
//     year: e 0–24, m 25–74, l 75–99, h1 0–49, h2 50–99, q1 0–24,
//     q2 25–49, q3 50–74, q4 75–99. So c4l BCE = −325 … −301.
func ParseToken(tok string) (start, end int, err error) {
	s := strings.ToLower(strings.Join(strings.Fields(tok), " "))
	fail := func(format string, a ...any) (int, int, error) {
		return 0, 0, &ParseError{tok, fmt.Sprintf(format, a...)}
	}
	if s == "" {
		return fail("empty token")
	}
	if m := reCentury.FindStringSubmatch(s); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n < 1 || n > 99 {
			return fail("century %s: N must be 1 to 99", m[1])
		}
		q, rest := "", m[2]
		for _, name := range qualifierNames {
			if strings.HasPrefix(rest, name) {
				// Only when an era (or nothing) follows, so that "c4 late
				// BCE" is reported whole rather than as era "ate BCE".
				// (Qualifiers and eras share no first letter.)
				if _, ok := era(rest[len(name):]); ok {
					q, rest = name, rest[len(name):]
				}
				break
			}
		}
		e, ok := era(rest)
		if !ok {
			return fail("unknown qualifier or era %q (qualifiers e, m, l, h1, h2, q1–q4; era BCE or CE)", Clip(strings.TrimSpace(rest)))
		}
		if e == 0 {
			return fail("a century needs BCE or CE (c%d BCE, c%d CE)", n, n)
		}
		first := 100*(n-1) + 1 // CE
		if e < 0 {
			first = -100 * n
		}
		off := qualifiers[q]
		// Offsets count years, and a BCE century never reaches year 0
		// (its last year is −100·N+99 ≤ −1), so plain addition is right.
		return first + off[0], first + off[1], nil
	}
	if m := reYearAD.FindStringSubmatch(s); m != nil {
		return yearOf(tok, "", m[1], 1)
	}
	if m := reYear.FindStringSubmatch(s); m != nil {
		e, ok := era(m[3])
		if !ok {
			return fail("unknown era %q (BCE or CE)", Clip(strings.TrimSpace(m[3])))
		}
		if m[1] != "" && e != 0 {
			return fail("a signed year cannot also have an era: write -250 or 250 BCE")
		}
		return yearOf(tok, m[1], m[2], e)
	}
	if reCirca.MatchString(s) {
		return fail("circa is not a dating; a century is written without a space (c4 BCE), a year alone (250 BCE)")
	}
	if strings.Contains(s, "-") && !strings.HasPrefix(s, "-") {
		return fail("not a year or century; a range is written T1/T2, not with '-'")
	}
	return fail("not a year (-250, 250, 500 BCE, 250 CE) or a century (c4 BCE, c4l BCE, c1 CE)")
}

func yearOf(tok, sign, digits string, era int) (int, int, error) {
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > 8 {
		return 0, 0, &ParseError{tok, fmt.Sprintf("year beyond ±%d", MaxYear)}
	}
	y, _ := strconv.Atoi(digits)
	if y == 0 {
		return 0, 0, &ParseError{tok, "there is no year 0 (1 BCE is followed by 1 CE)"}
	}
	if y > MaxYear {
		return 0, 0, &ParseError{tok, fmt.Sprintf("year beyond ±%d", MaxYear)}
	}
	if sign == "-" || era < 0 {
		y = -y
	}
	return y, y, nil
}

// FormatYear writes a signed year for messages: -250 → "250 BCE", 250 →
// "250 CE".
func FormatYear(y int) string {
	if y < 0 {
		return strconv.Itoa(-y) + " BCE"
	}
	return strconv.Itoa(y) + " CE"
}

// Certainty levels of chrono_certainty.
const (
	Certain   = 1
	Probable  = 2
	Uncertain = 3
)

// ParseCertainty accepts 1–3 or a word, in any case: certain/certa/certo →
// 1, probable/probabile → 2, uncertain/incerta/incerto/possible/
// possibile → 3 (the Italian words are legacy data).
func ParseCertainty(s string) (int, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "certain", "certa", "certo":
		return Certain, nil
	case "2", "probable", "probabile":
		return Probable, nil
	case "3", "uncertain", "incerta", "incerto", "possible", "possibile":
		return Uncertain, nil
	}
	return 0, fmt.Errorf("chronology certainty %q: use 1 (certain), 2 (probable) or 3 (uncertain)", Clip(s))
}

// CertaintyName is the English word for a level, "" when out of range.
func CertaintyName(n int) string {
	switch n {
	case Certain:
		return "certain"
	case Probable:
		return "probable"
	case Uncertain:
		return "uncertain"
	}
	return ""
}
