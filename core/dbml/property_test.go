package dbml

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// gen makes random schemas that exercise the printer's quoting: names
// with spaces, quotes, backslashes, keywords and non-ASCII letters; notes
// over several lines and with three quotes inside.
type gen struct{ r *rand.Rand }

var (
	genNames = []string{"id", "label", "Note", "indexes", "Table", "as", "ref", "a b", `qu"ote`, `back\slash`, "città",
		"x1", "_u", "1st", "tab\tbed", "new\nline", "dot.ted", "é", "ünïcode name", "[br]", "c:d", "1.5", "'s'", "x"}
	genStrings = []string{"", "plain", "it's", `a\b`, "two\nlines", "'''", "carriage\rreturn", "bdus:label=Finds bdus:preview=a,b",
		"ünï", "tab\there", `\'`, "end\\", "quote\"d", "' ", "multi\nline with 'quotes' and ''' and \\"}
	genTypes = []string{"integer", "varchar", "text", "character varying", "decimal", "timestamp with time zone", "int8", "my enum"}
	genArgs  = []string{"255", "10", "2", "max", "x_y"}
	genExprs = []string{"now()", "lower(name)", "a || b", "'x'", `"q"`}
)

func (g gen) pick(from []string) string { return from[g.r.IntN(len(from))] }

func (g gen) name(used map[string]bool) string {
	for {
		n := g.pick(genNames)
		if g.r.IntN(3) == 0 {
			n += fmt.Sprint(g.r.IntN(100))
		}
		if !used[n] {
			used[n] = true
			return n
		}
	}
}

func (g gen) note() string {
	if g.r.IntN(2) == 0 {
		return ""
	}
	s := g.pick(genStrings)
	for s == "" {
		s = g.pick(genStrings)
	}
	return s
}

func (g gen) endpoint(n int) Endpoint {
	e := Endpoint{Table: g.name(map[string]bool{})}
	if g.r.IntN(4) == 0 {
		e.Schema = g.name(map[string]bool{})
	}
	used := map[string]bool{}
	for range n {
		e.Columns = append(e.Columns, g.name(used))
	}
	return e
}

func (g gen) value() *Value {
	switch g.r.IntN(6) {
	case 0:
		return nil
	case 1:
		return &Value{Kind: KindString, Text: g.pick(genStrings)}
	case 2:
		return &Value{Kind: KindNumber, Text: g.pick([]string{"0", "12", "-1.5", "3.25", "-7"})}
	case 3:
		return &Value{Kind: KindExpr, Text: g.pick(genExprs)}
	case 4:
		return &Value{Kind: KindBool, Text: g.pick([]string{"true", "false"})}
	}
	return &Value{Kind: KindNull, Text: "null"}
}

func (g gen) schema() *Schema {
	s := &Schema{}
	enums := map[string]bool{}
	for range g.r.IntN(3) {
		e := &Enum{Name: g.name(enums), Note: g.note(), Vocabulary: g.r.IntN(2) == 0}
		if g.r.IntN(4) == 0 {
			e.Schema = g.name(map[string]bool{})
		}
		vals := map[string]bool{}
		for range 1 + g.r.IntN(4) {
			e.Values = append(e.Values, &EnumValue{Name: g.name(vals), Note: g.note()})
		}
		s.Enums = append(s.Enums, e)
	}
	tables := map[string]bool{}
	for range g.r.IntN(4) {
		t := &Table{Name: g.name(tables), Note: g.note()}
		if g.r.IntN(5) == 0 {
			t.Schema = g.name(map[string]bool{})
		}
		if g.r.IntN(5) == 0 {
			t.Alias = g.name(map[string]bool{})
		}
		cols := map[string]bool{}
		for range g.r.IntN(5) {
			c := &Column{Name: g.name(cols), Type: TypeRef{Name: g.pick(genTypes)},
				PK: g.r.IntN(4) == 0, Increment: g.r.IntN(4) == 0, NotNull: g.r.IntN(3) == 0, Unique: g.r.IntN(4) == 0,
				Default: g.value(), Note: g.note()}
			if g.r.IntN(4) == 0 {
				c.Type.Schema = g.name(map[string]bool{})
			}
			for range g.r.IntN(3) {
				c.Type.Args = append(c.Type.Args, g.pick(genArgs))
			}
			if g.r.IntN(3) == 0 {
				c.Ref = &InlineRef{Rel: g.pick([]string{">", "<", "-", "<>"}), To: g.endpoint(1)}
			}
			t.Columns = append(t.Columns, c)
		}
		for range g.r.IntN(3) {
			ix := &Index{PK: g.r.IntN(5) == 0, Unique: g.r.IntN(2) == 0, Note: g.note()}
			if g.r.IntN(2) == 0 {
				ix.Name = g.pick(genNames)
			}
			if g.r.IntN(3) == 0 {
				ix.Type = g.pick([]string{"hash", "btree", "gin index"})
			}
			for range 1 + g.r.IntN(3) {
				if g.r.IntN(3) == 0 {
					ix.Columns = append(ix.Columns, IndexColumn{Name: g.pick(genExprs), Expr: true})
				} else {
					ix.Columns = append(ix.Columns, IndexColumn{Name: g.pick(genNames)})
				}
			}
			t.Indexes = append(t.Indexes, ix)
		}
		s.Tables = append(s.Tables, t)
	}
	for range g.r.IntN(4) {
		n := 1 + g.r.IntN(2)
		r := &Ref{From: g.endpoint(n), Rel: g.pick([]string{">", "<", "-", "<>"}), To: g.endpoint(n)}
		if g.r.IntN(2) == 0 {
			r.Name = g.pick(genNames)
		}
		if g.r.IntN(2) == 0 {
			r.OnDelete = g.pick(RefActions)
		}
		if g.r.IntN(2) == 0 {
			r.OnUpdate = g.pick(RefActions)
		}
		s.Refs = append(s.Refs, r)
	}
	return s
}

// TestPrintParseProperty: for random schemas, Parse(Print(s)) is s.
func TestPrintParseProperty(t *testing.T) {
	runs := 2000
	if testing.Short() {
		runs = 200
	}
	for seed := range uint64(runs) {
		g := gen{rand.New(rand.NewPCG(seed, 19))}
		s := g.schema()
		text := Print(s, "generated")
		back, err := Parse(text)
		if err != nil {
			t.Fatalf("seed %d: the printed schema does not parse: %v\n%s", seed, err, text)
		}
		if !reflect.DeepEqual(bare(back), bare(s)) {
			t.Fatalf("seed %d: the printed schema parses to another one\nprinted:\n%s\nre-printed:\n%s", seed, text, Print(back, "generated"))
		}
	}
}

// checkRoundTrip: src either fails with a positioned *Error, or parses to
// a schema whose printed form parses to the same schema and prints the
// same text (print(parse(x)) is a fixed point).
func checkRoundTrip(t *testing.T, src string) {
	s, err := Parse(src)
	if err != nil {
		var pe *Error
		if !errors.As(err, &pe) {
			t.Fatalf("%q: error %v is not a positioned *Error", src, err)
		}
		if pe.Line < 1 || pe.Column < 1 || pe.Line > strings.Count(src, "\n")+1 || pe.Message == "" {
			t.Fatalf("%q: error at %d:%d (%q) is outside the text", src, pe.Line, pe.Column, pe.Message)
		}
		return
	}
	text := Print(s)
	back, err := Parse(text)
	if err != nil {
		t.Fatalf("%q parsed, but its printed form does not: %v\n%s", src, err, text)
	}
	if !reflect.DeepEqual(bare(back), bare(s)) {
		t.Fatalf("%q: print and parse changed the schema\nfirst:\n%s\nsecond:\n%s", src, text, Print(back))
	}
	if again := Print(back); again != text {
		t.Fatalf("%q: printing is not stable\n%s\n---\n%s", src, text, again)
	}
}

var fuzzSeeds = []string{
	"Table t {\n id integer [pk, increment]\n name varchar [not null, note: 'bdus:label=Name']\n Note: 'bdus:label=T bdus:preview=id,name'\n}",
	"Enum hurl_status {\n  active\n  archived\n  // bdus:vocabulary\n}\n\nTable with_voc_tbl {\n  id integer [pk, increment]\n  status varchar [note: 'bdus:voc=hurl_status']\n}",
	"Ref: a.b > c.d [delete: cascade]\nRef n { a.(b, c) <> d.(e, f) }",
	"Table \"q\\\"n\" as Q [note: '''multi\nline'''] {\n  \"a b\" \"character varying\"(12, x) [default: `now()`, unique, ref: - s.t.c]\n  indexes {\n    (a, `lower(b)`) [name: 'n', type: hash]\n  }\n}",
	"Project p { database_type: 'PostgreSQL' }\nTableGroup g {\n a\n}\n/* c */ Table a { x int [default: -2.5] }",
	"Table t {\n a int [default: 'x\\ny']\n}",
	"Enum e { 'a' [note: 'n'] \"b\" c }",
}

func TestRoundTripSeeds(t *testing.T) {
	for _, s := range fuzzSeeds {
		checkRoundTrip(t, s)
	}
}

// FuzzParse: any text is parsed or refused with a positioned error, and
// what parses survives print and parse unchanged.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 1<<16 {
			return
		}
		checkRoundTrip(t, src)
	})
}
