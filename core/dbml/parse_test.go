package dbml

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// bare is s without positions and warnings, for comparing models.
func bare(s *Schema) *Schema {
	out := &Schema{}
	for _, e := range s.Enums {
		c := *e
		c.Pos = Pos{}
		c.Values = nil
		for _, v := range e.Values {
			vv := *v
			vv.Pos = Pos{}
			c.Values = append(c.Values, &vv)
		}
		out.Enums = append(out.Enums, &c)
	}
	for _, t := range s.Tables {
		c := *t
		c.Pos = Pos{}
		c.Columns, c.Indexes = nil, nil
		for _, col := range t.Columns {
			cc := *col
			cc.Pos = Pos{}
			if col.Ref != nil {
				r := *col.Ref
				r.Pos = Pos{}
				cc.Ref = &r
			}
			c.Columns = append(c.Columns, &cc)
		}
		for _, ix := range t.Indexes {
			ii := *ix
			ii.Pos = Pos{}
			c.Indexes = append(c.Indexes, &ii)
		}
		out.Tables = append(out.Tables, &c)
	}
	for _, r := range s.Refs {
		c := *r
		c.Pos = Pos{}
		out.Refs = append(out.Refs, &c)
	}
	return out
}

func mustParse(t *testing.T, src string) *Schema {
	t.Helper()
	s, err := Parse(src)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	return s
}

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want *Schema
	}{
		{"empty", "", &Schema{}},
		{"comments only", "// nothing\n/* still\nnothing */\n", &Schema{}},
		{"table with settings", `
Table finds as F [headercolor: #3498DB, note: 'Finds'] {
  id integer [pk, increment]
  label varchar(255) [not null, unique, note: 'Inventory label']
  "weight (g)" decimal(10, 2) [default: -1.5]
  found_on date [default: ` + "`now()`" + `]
  complete boolean [default: FALSE, null]
  site integer [ref: > sites.id]
  period varchar [default: 'it''s'] // a comment
}`, &Schema{Tables: []*Table{{Name: "finds", Alias: "F", Note: "Finds", Columns: []*Column{
			{Name: "id", Type: TypeRef{Name: "integer"}, PK: true, Increment: true},
			{Name: "label", Type: TypeRef{Name: "varchar", Args: []string{"255"}}, NotNull: true, Unique: true, Note: "Inventory label"},
			{Name: "weight (g)", Type: TypeRef{Name: "decimal", Args: []string{"10", "2"}}, Default: &Value{Kind: KindNumber, Text: "-1.5"}},
			{Name: "found_on", Type: TypeRef{Name: "date"}, Default: &Value{Kind: KindExpr, Text: "now()"}},
			{Name: "complete", Type: TypeRef{Name: "boolean"}, Default: &Value{Kind: KindBool, Text: "false"}},
			{Name: "site", Type: TypeRef{Name: "integer"}, Ref: &InlineRef{Rel: ">", To: Endpoint{Table: "sites", Columns: []string{"id"}}}},
			{Name: "period", Type: TypeRef{Name: "varchar"}, Default: &Value{Kind: KindString, Text: "it"}},
		}}}}},
		{"notes and indexes", `Table "my table" {
  Note {
    '''first
second'''
  }
  a int
  b "character varying"
  c public.status
  indexes {
    a
    (a, b) [unique, name: 'ab_ix', type: hash]
    ` + "`lower(b)`" + ` [note: 'ci']
    (a, ` + "`b || c`" + `) [pk]
  }
}`, &Schema{Tables: []*Table{{Name: "my table", Note: "first\nsecond", Columns: []*Column{
			{Name: "a", Type: TypeRef{Name: "int"}},
			{Name: "b", Type: TypeRef{Name: "character varying"}},
			{Name: "c", Type: TypeRef{Schema: "public", Name: "status"}},
		}, Indexes: []*Index{
			{Columns: []IndexColumn{{Name: "a"}}},
			{Columns: []IndexColumn{{Name: "a"}, {Name: "b"}}, Unique: true, Name: "ab_ix", Type: "hash"},
			{Columns: []IndexColumn{{Name: "lower(b)", Expr: true}}, Note: "ci"},
			{Columns: []IndexColumn{{Name: "a"}, {Name: "b || c", Expr: true}}, PK: true},
		}}}}},
		{"enums", `Enum status {
  active
  "on hold" [note: 'paused']
  'archived'
  // bdus:vocabulary
}
enum public.plain { x }`, &Schema{Enums: []*Enum{
			{Name: "status", Vocabulary: true, Values: []*EnumValue{{Name: "active"}, {Name: "on hold", Note: "paused"}, {Name: "archived"}}},
			{Schema: "public", Name: "plain", Values: []*EnumValue{{Name: "x"}}},
		}}},
		{"enum note marks nothing by itself", "Enum v {\n a\n Note: 'bdus:vocabulary'\n}", &Schema{Enums: []*Enum{
			{Name: "v", Note: "bdus:vocabulary", Values: []*EnumValue{{Name: "a"}}},
		}}},
		{"refs", `Ref: finds.site > sites.id [delete: CASCADE, update: no action]
Ref named: a.b - c.d
Ref {
  s.t.(x, y) <> u.(v, w)
}
Ref "q n": a.b < c.d [color: #fff]`, &Schema{Refs: []*Ref{
			{From: Endpoint{Table: "finds", Columns: []string{"site"}}, Rel: ">", To: Endpoint{Table: "sites", Columns: []string{"id"}}, OnDelete: "cascade", OnUpdate: "no action"},
			{Name: "named", From: Endpoint{Table: "a", Columns: []string{"b"}}, Rel: "-", To: Endpoint{Table: "c", Columns: []string{"d"}}},
			{From: Endpoint{Schema: "s", Table: "t", Columns: []string{"x", "y"}}, Rel: "<>", To: Endpoint{Table: "u", Columns: []string{"v", "w"}}},
			{Name: "q n", From: Endpoint{Table: "a", Columns: []string{"b"}}, Rel: "<", To: Endpoint{Table: "c", Columns: []string{"d"}}},
		}}},
		{"project and groups are skipped", "Project p {\n database_type: 'PostgreSQL'\n Note: 'x'\n}\nTableGroup g { a\n b }\nTable a { id int }",
			&Schema{Tables: []*Table{{Name: "a", Columns: []*Column{{Name: "id", Type: TypeRef{Name: "int"}}}}}}},
		{"keywords as column names", "Table t {\n note varchar\n indexes int\n Note: 'n'\n}", &Schema{Tables: []*Table{{Name: "t", Note: "n",
			Columns: []*Column{{Name: "note", Type: TypeRef{Name: "varchar"}}, {Name: "indexes", Type: TypeRef{Name: "int"}}}}}}},
		{"closing brace on the column's line", "Table t { id int }\nTable u {\n x int }", &Schema{Tables: []*Table{
			{Name: "t", Columns: []*Column{{Name: "id", Type: TypeRef{Name: "int"}}}},
			{Name: "u", Columns: []*Column{{Name: "x", Type: TypeRef{Name: "int"}}}}}}},
		{"settings across lines, CRLF", "Table t {\r\n  a int [\r\n    pk,\r\n    note: 'x'\r\n  ]\r\n}\r\n", &Schema{Tables: []*Table{
			{Name: "t", Columns: []*Column{{Name: "a", Type: TypeRef{Name: "int"}, PK: true, Note: "x"}}}}}},
		{"escapes", `Table t { a int [note: 'it\'s \\ \n'] }`, &Schema{Tables: []*Table{
			{Name: "t", Columns: []*Column{{Name: "a", Type: TypeRef{Name: "int"}, Note: "it's \\ \n"}}}}}},
	}
	// 'it''s' is two strings in DBML ('it' then 's'): the second is an
	// error, so that case is checked in TestParseErrors instead.
	cases[2].src = strings.Replace(cases[2].src, "'it''s'", "'it'", 1)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := bare(mustParse(t, c.src))
			if !reflect.DeepEqual(got, bare(c.want)) {
				t.Fatalf("got\n%s\nwant\n%s", Print(got), Print(c.want))
			}
		})
	}
}

func TestParseWarnings(t *testing.T) {
	s := mustParse(t, "Project x { }\nTable t [headercolor: #abc] {\n  a int [check: `a > 0`]\n}")
	var msgs []string
	for _, w := range s.Warnings {
		msgs = append(msgs, w.Message)
		if w.Line == 0 || w.Column == 0 {
			t.Errorf("warning without a position: %+v", w)
		}
	}
	want := []string{"Project is not read", `table setting "headercolor"`, `column setting "check"`}
	if len(msgs) != len(want) {
		t.Fatalf("warnings %q, want %d", msgs, len(want))
	}
	for i, w := range want {
		if !strings.Contains(msgs[i], w) {
			t.Errorf("warning %d = %q, want it to mention %q", i, msgs[i], w)
		}
	}
}

func TestPositions(t *testing.T) {
	s := mustParse(t, "// head\nEnum e {\n  a\n}\n\nTable t {\n    id int [ref: > u.id]\n  indexes {\n\t(id) [unique]\n  }\n}\nRef: t.id > u.id")
	checks := []struct {
		what string
		got  Pos
		want Pos
	}{
		{"enum", s.Enums[0].Pos, Pos{2, 1}},
		{"enum value", s.Enums[0].Values[0].Pos, Pos{3, 3}},
		{"table", s.Tables[0].Pos, Pos{6, 1}},
		{"column", s.Tables[0].Columns[0].Pos, Pos{7, 5}},
		{"inline ref", s.Tables[0].Columns[0].Ref.Pos, Pos{7, 18}},
		{"index", s.Tables[0].Indexes[0].Pos, Pos{9, 2}},
		{"ref", s.Refs[0].Pos, Pos{12, 1}},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s at %+v, want %+v", c.what, c.got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		src       string
		line, col int
		msg       string
	}{
		{"Tabel t {}", 1, 1, `expected Table, Enum or Ref, found "Tabel"`},
		{"Table {", 1, 7, "expected a table name"},
		{"Table t {\n  id int\n", 1, 1, "table t has no closing }"},
		{"Table t {\n  id\n}", 2, 5, "expected the type of column id"},
		{"Table t {\n  id int pk\n}", 2, 10, `unexpected "pk" after the column`},
		{"Table t {\n  id int [pk\n}", 3, 1, "expected , or ] after setting pk"},
		{"Table t {\n  id int [pk: 1]\n}", 2, 11, "pk takes no value"},
		{"Table t {\n  id int [note: x]\n}", 2, 11, "note takes a string"},
		{"Table t {\n  id int [default: abc]\n}", 2, 11, "default is a 'string'"},
		{"Table t {\n  id int [ref: t]\n}", 2, 16, "expected a relation"},
		{"Table t {\n  id int [ref: > t]\n}", 2, 18, "expected table.column"},
		{"Table t {\n  id int [ref: > a.b, ref: > c.d]\n}", 2, 23, "more than one ref"},
		{"Table t {\n  a int\n  a text\n}", 3, 3, "column a is defined twice in table t (first on line 2)"},
		{"Table t { a int }\nTable t { b int }", 2, 7, "table t is defined twice"},
		{"Table t {\n  a varchar(\n}", 3, 1, "expected a type argument"},
		{"Table t {\n  a 'x'\n}", 2, 5, "expected the type of column a"},
		{"Table t {\n  a int [note: 'open\n}", 2, 16, "unterminated string"},
		{"Table t {\n  \"a int\n}", 2, 3, "unterminated quoted name"},
		{"Table t {\n  a int [note: '''never closed]\n}", 2, 16, "unterminated string: '''"},
		{"/* open", 1, 1, "unterminated comment"},
		{"Table t {\n  a int [default: `now()]\n}", 2, 19, "unterminated expression"},
		{"Table t {\n  a int ; \n}", 2, 9, `unexpected character ';'`},
		{"Table t {\n  a int [headercolor: #]\n}", 2, 23, "a color is #"},
		{"Table t {\n  indexes {\n    (a b)\n  }\n}", 3, 8, "expected , or ) in the index's columns"},
		{"Table t {\n  indexes {\n    [pk]\n  }\n}", 3, 5, "expected a column name"},
		{"Table t {\n  indexes {\n    a [type: #fff]\n  }\n}", 3, 8, "type takes a word"},
		{"Enum e {\n  a\n  a\n}", 3, 3, `value "a" is listed twice in enum e`},
		{"Enum e {\n  [x]\n}", 2, 3, "expected an enum value"},
		{"Enum e {\n  \"\"\n}", 2, 3, "an enum value is empty"},
		{"Enum e { a }\nEnum e { b }", 2, 6, "enum e is defined twice"},
		{"Ref: a.b >> c.d", 1, 11, "expected a table name"},
		{"Ref: a.b = c.d", 1, 10, "unexpected character '='"},
		{"Ref: a.b > c.d [delete: explode]", 1, 17, "delete is one of cascade"},
		{"Ref: a.(b, c) > d.e", 1, 1, "the two sides of the Ref have 2 and 1 columns"},
		{"Ref x a.b > c.d", 1, 7, "expected : or { after Ref"},
		{"Ref: a.b > c.d.e.f", 1, 12, "expected [schema.]table.column"},
		{"Project p {\n x", 1, 1, "Project block has no closing }"},
		{"Table t {\n  a int\n}}", 3, 2, `expected Table, Enum or Ref, found "}"`},
		{"Table \"\" { a int }", 1, 7, "a table name is empty"},
		{"Table t { a int [default: 'it''s'] }", 1, 31, `expected , or ] after setting default, found a string`},
		{"Table t { a int }\n\xff", 2, 1, "invalid character (not UTF-8)"},
	}
	for _, c := range cases {
		_, err := Parse(c.src)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%q: got %v, want a syntax error", c.src, err)
			continue
		}
		if pe.Line != c.line || pe.Column != c.col || !strings.Contains(pe.Message, c.msg) {
			t.Errorf("%q:\n got  %d:%d %s\n want %d:%d …%s…", c.src, pe.Line, pe.Column, pe.Message, c.line, c.col, c.msg)
		}
	}
}
