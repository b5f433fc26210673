package dbml

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Parse reads a DBML text. The first problem is an *Error with its line
// and column; nothing is returned with it.
func Parse(src string) (*Schema, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, s: &Schema{}}
	if err := p.file(); err != nil {
		return nil, err
	}
	return p.s, nil
}

type parser struct {
	toks []token
	i    int
	s    *Schema
	// enum is the Enum whose body is being read: a comment in it may
	// carry BraDypUS's vocabulary mark.
	enum *Enum
}

// vocabularyMark is BraDypUS's comment inside an Enum that is a vocabulary.
var vocabularyMark = regexp.MustCompile(`(^|\s)bdus:vocabulary\b`)

// skipComments moves over comment tokens, noting the vocabulary mark.
func (p *parser) skipComments() {
	for p.toks[p.i].kind == tComment {
		if p.enum != nil && vocabularyMark.MatchString(p.toks[p.i].text) {
			p.enum.Vocabulary = true
		}
		p.i++
	}
}

func (p *parser) peek() token {
	p.skipComments()
	return p.toks[p.i]
}

func (p *parser) next() token {
	p.skipComments()
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

// skipNewlines moves over line ends (inside brackets, parentheses and
// note blocks a line end means nothing).
func (p *parser) skipNewlines() {
	for p.peek().kind == tNewline {
		p.next()
	}
}

func errAt(t token, format string, args ...any) error {
	return &Error{Pos: t.pos, Message: fmt.Sprintf(format, args...)}
}

func (p *parser) warn(t token, format string, args ...any) {
	p.s.Warnings = append(p.s.Warnings, Diag{Pos: t.pos, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) expect(punct, context string) (token, error) {
	t := p.next()
	if !t.is(punct) {
		return t, errAt(t, "expected %q %s, found %s", punct, context, t.describe())
	}
	return t, nil
}

// endOfEntry requires the end of a line after a column, index, value or
// Ref; a closing brace may follow on the same line (it is left unread).
func (p *parser) endOfEntry(what string) error {
	t := p.peek()
	switch {
	case t.kind == tNewline:
		p.next()
		return nil
	case t.is("}"), t.kind == tEOF:
		return nil
	}
	return errAt(t, "unexpected %s after %s: expected the end of the line", t.describe(), what)
}

// name reads a bare or quoted name.
func (p *parser) name(what string) (token, error) {
	t := p.next()
	if t.kind != tWord && t.kind != tQuoted {
		return t, errAt(t, "expected %s, found %s", what, t.describe())
	}
	if t.kind == tQuoted && t.text == "" {
		return t, errAt(t, "%s is empty", what)
	}
	return t, nil
}

// qualified reads name or schema.name.
func (p *parser) qualified(what string) (schema, name string, t token, err error) {
	t, err = p.name(what)
	if err != nil {
		return "", "", t, err
	}
	if p.peek().is(".") {
		p.next()
		n, err := p.name(what)
		if err != nil {
			return "", "", n, err
		}
		return t.text, n.text, t, nil
	}
	return "", t.text, t, nil
}

func (p *parser) file() error {
	for {
		t := p.next()
		switch {
		case t.kind == tEOF:
			return nil
		case t.kind == tNewline:
		case t.keyword("Table"):
			if err := p.table(t); err != nil {
				return err
			}
		case t.keyword("Enum"):
			if err := p.enumBlock(t); err != nil {
				return err
			}
		case t.keyword("Ref"):
			if err := p.ref(t); err != nil {
				return err
			}
		case t.keyword("Project"), t.keyword("TableGroup"), t.keyword("TablePartial"), t.keyword("Note"), t.keyword("Records"):
			p.warn(t, "%s is not read (only Table, Enum and Ref are)", t.text)
			if err := p.skipElement(t); err != nil {
				return err
			}
		default:
			return errAt(t, "expected Table, Enum or Ref, found %s", t.describe())
		}
	}
}

// skipElement passes over an element this package does not model: up to
// the end of its line, or its whole { } block.
func (p *parser) skipElement(start token) error {
	for {
		t := p.next()
		switch {
		case t.kind == tEOF, t.kind == tNewline:
			return nil
		case t.is("{"):
			depth := 1
			for depth > 0 {
				t := p.next()
				switch {
				case t.kind == tEOF:
					return errAt(start, "%s block has no closing }", start.text)
				case t.is("{"):
					depth++
				case t.is("}"):
					depth--
				}
			}
			return nil
		}
	}
}

func (p *parser) table(kw token) error {
	schema, name, nt, err := p.qualified("a table name")
	if err != nil {
		return err
	}
	for _, o := range p.s.Tables {
		if o.Name == name && o.Schema == schema {
			return errAt(nt, "table %s is defined twice (first on line %d)", name, o.Line)
		}
	}
	t := &Table{Pos: kw.pos, Schema: schema, Name: name}
	if p.peek().keyword("as") {
		p.next()
		a, err := p.name("an alias")
		if err != nil {
			return err
		}
		t.Alias = a.text
	}
	if p.peek().is("[") {
		sets, err := p.settings()
		if err != nil {
			return err
		}
		for _, s := range sets {
			switch s.name {
			case "note":
				if t.Note, err = s.str(); err != nil {
					return err
				}
			default: // headercolor and the like: drawing only
				p.warnSetting(s, "table")
			}
		}
	}
	p.skipNewlines()
	if _, err := p.expect("{", "to open the table"); err != nil {
		return err
	}
	for {
		e := p.next()
		switch {
		case e.kind == tNewline:
			continue
		case e.is("}"):
			p.s.Tables = append(p.s.Tables, t)
			return p.endOfEntry("the table")
		case e.kind == tEOF:
			return errAt(kw, "table %s has no closing }", name)
		case e.keyword("note") && (p.peek().is(":") || p.peek().is("{")):
			if t.Note, err = p.noteBody(); err != nil {
				return err
			}
		case e.keyword("indexes") && p.peek().is("{"):
			if err := p.indexes(t); err != nil {
				return err
			}
		default:
			if err := p.column(t, e); err != nil {
				return err
			}
		}
	}
}

// noteBody reads the rest of a Note: ": 'text'" or "{ 'text' }".
func (p *parser) noteBody() (string, error) {
	if p.peek().is(":") {
		p.next()
		s := p.next()
		if s.kind != tString {
			return "", errAt(s, "expected a string after Note:, found %s", s.describe())
		}
		return s.text, p.endOfEntry("the note")
	}
	p.next() // {
	p.skipNewlines()
	s := p.next()
	if s.kind != tString {
		return "", errAt(s, "expected a string in the Note block, found %s", s.describe())
	}
	p.skipNewlines()
	if _, err := p.expect("}", "to close the Note block"); err != nil {
		return "", err
	}
	return s.text, p.endOfEntry("the note")
}

func (p *parser) column(t *Table, nt token) error {
	if nt.kind != tWord && nt.kind != tQuoted {
		return errAt(nt, "expected a column, Note or indexes, found %s", nt.describe())
	}
	if nt.kind == tQuoted && nt.text == "" {
		return errAt(nt, "a column name is empty")
	}
	if o := t.ColumnNamed(nt.text); o != nil {
		return errAt(nt, "column %s is defined twice in table %s (first on line %d)", nt.text, t.Name, o.Line)
	}
	c := &Column{Pos: nt.pos, Name: nt.text}
	var err error
	if c.Type, err = p.typeRef(nt); err != nil {
		return err
	}
	if p.peek().is("[") {
		sets, err := p.settings()
		if err != nil {
			return err
		}
		for _, s := range sets {
			if err := p.columnSetting(c, s); err != nil {
				return err
			}
		}
	}
	t.Columns = append(t.Columns, c)
	return p.endOfEntry("the column")
}

func (p *parser) typeRef(col token) (TypeRef, error) {
	var tr TypeRef
	t := p.next()
	if t.kind != tWord && t.kind != tQuoted {
		return tr, errAt(t, "expected the type of column %s, found %s", col.text, t.describe())
	}
	tr.Name = t.text
	if p.peek().is(".") {
		p.next()
		n, err := p.name("a type name")
		if err != nil {
			return tr, err
		}
		tr.Schema, tr.Name = tr.Name, n.text
	}
	if tr.Name == "" {
		return tr, errAt(t, "the type of column %s is empty", col.text)
	}
	if !p.peek().is("(") {
		return tr, nil
	}
	p.next()
	for {
		p.skipNewlines()
		a := p.next()
		if a.kind != tWord {
			return tr, errAt(a, "expected a type argument (a number or a word), found %s", a.describe())
		}
		tr.Args = append(tr.Args, a.text)
		p.skipNewlines()
		sep := p.next()
		if sep.is(")") {
			return tr, nil
		}
		if !sep.is(",") {
			return tr, errAt(sep, "expected , or ) in the type's arguments, found %s", sep.describe())
		}
	}
}

func (p *parser) warnSetting(s setting, where string) {
	p.s.Warnings = append(p.s.Warnings, Diag{Pos: s.pos, Message: fmt.Sprintf("%s setting %q is not read", where, s.name)})
}

func (p *parser) columnSetting(c *Column, s setting) error {
	switch s.name {
	case "pk", "primary key":
		c.PK = true
	case "increment":
		c.Increment = true
	case "not null":
		c.NotNull = true
	case "null":
		c.NotNull = false
	case "unique":
		c.Unique = true
	case "note":
		n, err := s.str()
		c.Note = n
		return err
	case "default":
		v, err := s.defaultValue()
		c.Default = v
		return err
	case "ref":
		if s.ref == nil {
			return errAt(token{pos: s.pos}, "ref takes a relation and a column, as in ref: > table.id")
		}
		if c.Ref != nil {
			return errAt(token{pos: s.pos}, "column %s has more than one ref", c.Name)
		}
		c.Ref = s.ref
	default:
		p.warnSetting(s, "column")
		return nil
	}
	if s.val != nil && s.name != "ref" {
		return errAt(token{pos: s.pos}, "%s takes no value", s.name)
	}
	return nil
}

func (p *parser) indexes(t *Table) error {
	open := p.next() // {
	for {
		e := p.next()
		switch {
		case e.kind == tNewline:
			continue
		case e.is("}"):
			return p.endOfEntry("the indexes block")
		case e.kind == tEOF:
			return errAt(open, "indexes block has no closing }")
		}
		ix := &Index{Pos: e.pos}
		switch {
		case e.is("("):
			for {
				p.skipNewlines()
				c := p.next()
				ic, err := indexColumn(c)
				if err != nil {
					return err
				}
				ix.Columns = append(ix.Columns, ic)
				p.skipNewlines()
				sep := p.next()
				if sep.is(")") {
					break
				}
				if !sep.is(",") {
					return errAt(sep, "expected , or ) in the index's columns, found %s", sep.describe())
				}
			}
		default:
			ic, err := indexColumn(e)
			if err != nil {
				return err
			}
			ix.Columns = []IndexColumn{ic}
		}
		if p.peek().is("[") {
			sets, err := p.settings()
			if err != nil {
				return err
			}
			for _, s := range sets {
				if err := p.indexSetting(ix, s); err != nil {
					return err
				}
			}
		}
		t.Indexes = append(t.Indexes, ix)
		if err := p.endOfEntry("the index"); err != nil {
			return err
		}
	}
}

func indexColumn(t token) (IndexColumn, error) {
	switch {
	case t.kind == tExpr && t.text != "":
		return IndexColumn{Name: t.text, Expr: true}, nil
	case t.kind == tWord, t.kind == tQuoted && t.text != "":
		return IndexColumn{Name: t.text}, nil
	}
	return IndexColumn{}, errAt(t, "expected a column name or an `expression` in the index, found %s", t.describe())
}

func (p *parser) indexSetting(ix *Index, s setting) error {
	var err error
	switch s.name {
	case "pk", "primary key":
		ix.PK = true
	case "unique":
		ix.Unique = true
	case "name":
		ix.Name, err = s.str()
		return err
	case "note":
		ix.Note, err = s.str()
		return err
	case "type":
		if s.val == nil || (s.val.kind != tWord && s.val.kind != tString) || s.val.text == "" {
			return errAt(token{pos: s.pos}, "type takes a word, as in type: hash")
		}
		ix.Type = s.val.text
		return nil
	default:
		p.warnSetting(s, "index")
		return nil
	}
	if s.val != nil {
		return errAt(token{pos: s.pos}, "%s takes no value", s.name)
	}
	return nil
}

func (p *parser) enumBlock(kw token) error {
	schema, name, nt, err := p.qualified("an enum name")
	if err != nil {
		return err
	}
	for _, o := range p.s.Enums {
		if o.Name == name && o.Schema == schema {
			return errAt(nt, "enum %s is defined twice (first on line %d)", name, o.Line)
		}
	}
	e := &Enum{Pos: kw.pos, Schema: schema, Name: name}
	p.skipNewlines()
	if _, err := p.expect("{", "to open the enum"); err != nil {
		return err
	}
	p.enum = e
	defer func() { p.enum = nil }()
	for {
		v := p.next()
		switch {
		case v.kind == tNewline:
			continue
		case v.is("}"):
			p.s.Enums = append(p.s.Enums, e)
			p.enum = nil
			return p.endOfEntry("the enum")
		case v.kind == tEOF:
			return errAt(kw, "enum %s has no closing }", name)
		case v.keyword("note") && (p.peek().is(":") || p.peek().is("{")):
			if e.Note, err = p.noteBody(); err != nil {
				return err
			}
			continue
		case v.kind != tWord && v.kind != tQuoted && v.kind != tString:
			return errAt(v, "expected an enum value, found %s", v.describe())
		}
		if v.text == "" {
			return errAt(v, "an enum value is empty")
		}
		for _, o := range e.Values {
			if o.Name == v.text {
				return errAt(v, "value %q is listed twice in enum %s", v.text, name)
			}
		}
		ev := &EnumValue{Pos: v.pos, Name: v.text}
		if p.peek().is("[") {
			sets, err := p.settings()
			if err != nil {
				return err
			}
			for _, s := range sets {
				if s.name != "note" {
					p.warnSetting(s, "enum value")
					continue
				}
				if ev.Note, err = s.str(); err != nil {
					return err
				}
			}
		}
		e.Values = append(e.Values, ev)
		if err := p.endOfEntry("the enum value"); err != nil {
			return err
		}
	}
}

func (p *parser) ref(kw token) error {
	r := &Ref{Pos: kw.pos}
	if t := p.peek(); t.kind == tWord || t.kind == tQuoted {
		n, _ := p.name("a ref name")
		r.Name = n.text
	}
	sep := p.next()
	switch {
	case sep.is(":"):
		if err := p.refBody(r); err != nil {
			return err
		}
	case sep.is("{"):
		p.skipNewlines()
		if err := p.refBody(r); err != nil {
			return err
		}
		p.skipNewlines()
		if _, err := p.expect("}", "to close the Ref block"); err != nil {
			return err
		}
	default:
		return errAt(sep, "expected : or { after Ref, found %s", sep.describe())
	}
	p.s.Refs = append(p.s.Refs, r)
	return p.endOfEntry("the Ref")
}

func (p *parser) refBody(r *Ref) error {
	var err error
	if r.From, err = p.endpoint(); err != nil {
		return err
	}
	if r.Rel, err = p.relOp(); err != nil {
		return err
	}
	if r.To, err = p.endpoint(); err != nil {
		return err
	}
	if len(r.From.Columns) != len(r.To.Columns) {
		return errAt(token{pos: r.Pos}, "the two sides of the Ref have %d and %d columns", len(r.From.Columns), len(r.To.Columns))
	}
	if !p.peek().is("[") {
		return nil
	}
	sets, err := p.settings()
	if err != nil {
		return err
	}
	for _, s := range sets {
		switch s.name {
		case "delete", "update":
			if s.val == nil || s.val.kind != tWord || !slices.Contains(RefActions, strings.ToLower(s.val.text)) {
				return errAt(token{pos: s.pos}, "%s is one of %s", s.name, strings.Join(RefActions, ", "))
			}
			if s.name == "delete" {
				r.OnDelete = strings.ToLower(s.val.text)
			} else {
				r.OnUpdate = strings.ToLower(s.val.text)
			}
		default:
			p.warnSetting(s, "ref")
		}
	}
	return nil
}

func (p *parser) relOp() (string, error) {
	t := p.next()
	if t.kind == tPunct {
		switch t.text {
		case ">", "<", "-", "<>":
			return t.text, nil
		}
	}
	return "", errAt(t, "expected a relation (>, <, - or <>), found %s", t.describe())
}

// endpoint reads [schema.]table.column or [schema.]table.(col, col).
func (p *parser) endpoint() (Endpoint, error) {
	var parts []string
	first, err := p.name("a table name")
	if err != nil {
		return Endpoint{}, err
	}
	parts = append(parts, first.text)
	var cols []string
	for p.peek().is(".") {
		p.next()
		if p.peek().is("(") {
			p.next()
			for {
				p.skipNewlines()
				c, err := p.name("a column name")
				if err != nil {
					return Endpoint{}, err
				}
				cols = append(cols, c.text)
				p.skipNewlines()
				sep := p.next()
				if sep.is(")") {
					break
				}
				if !sep.is(",") {
					return Endpoint{}, errAt(sep, "expected , or ) in the columns, found %s", sep.describe())
				}
			}
			break
		}
		n, err := p.name("a name")
		if err != nil {
			return Endpoint{}, err
		}
		parts = append(parts, n.text)
	}
	if cols == nil {
		if len(parts) < 2 {
			return Endpoint{}, errAt(first, "expected table.column, found %s alone", first.text)
		}
		cols, parts = parts[len(parts)-1:], parts[:len(parts)-1]
	}
	switch len(parts) {
	case 1:
		return Endpoint{Table: parts[0], Columns: cols}, nil
	case 2:
		return Endpoint{Schema: parts[0], Table: parts[1], Columns: cols}, nil
	}
	return Endpoint{}, errAt(first, "expected [schema.]table.column, found %d names", len(parts)+len(cols))
}

// setting is one entry of a [ ... ] list: words (lower case, single
// spaces) and the value after a colon, if any.
type setting struct {
	pos  Pos
	name string
	val  *token // nil: no value; numbers with a sign are one word token
	ref  *InlineRef
}

func (s setting) str() (string, error) {
	if s.val == nil || s.val.kind != tString {
		return "", errAt(token{pos: s.pos}, "%s takes a string, as in %s: 'text'", s.name, s.name)
	}
	return s.val.text, nil
}

var numberRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

func (s setting) defaultValue() (*Value, error) {
	v := s.val
	switch {
	case v == nil:
	case v.kind == tString:
		return &Value{Kind: KindString, Text: v.text}, nil
	case v.kind == tExpr:
		return &Value{Kind: KindExpr, Text: v.text}, nil
	case v.kind == tWord && numberRE.MatchString(v.text):
		return &Value{Kind: KindNumber, Text: v.text}, nil
	case v.kind == tWord && (strings.EqualFold(v.text, "true") || strings.EqualFold(v.text, "false")):
		return &Value{Kind: KindBool, Text: strings.ToLower(v.text)}, nil
	case v.kind == tWord && strings.EqualFold(v.text, "null"):
		return &Value{Kind: KindNull, Text: "null"}, nil
	}
	return nil, errAt(token{pos: s.pos}, "default is a 'string', a number, an `expression`, true, false or null")
}

// settings reads [a, b: value, ...]; line ends inside mean nothing.
func (p *parser) settings() ([]setting, error) {
	open := p.next() // [
	var out []setting
	for {
		p.skipNewlines()
		first := p.peek()
		if first.is("]") && len(out) == 0 {
			p.next()
			return out, nil
		}
		s := setting{pos: first.pos}
		var words []string
		for p.peek().kind == tWord {
			words = append(words, strings.ToLower(p.next().text))
		}
		if len(words) == 0 {
			return nil, errAt(first, "expected a setting, found %s", first.describe())
		}
		s.name = strings.Join(words, " ")
		if p.peek().is(":") {
			p.next()
			p.skipNewlines()
			if err := p.settingValue(&s); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
		p.skipNewlines()
		sep := p.next()
		if sep.is("]") {
			return out, nil
		}
		if sep.kind == tEOF {
			return nil, errAt(open, "[ has no closing ]")
		}
		if !sep.is(",") {
			return nil, errAt(sep, "expected , or ] after setting %s, found %s", s.name, sep.describe())
		}
	}
}

func (p *parser) settingValue(s *setting) error {
	if s.name == "ref" {
		at := p.peek()
		rel, err := p.relOp()
		if err != nil {
			return err
		}
		to, err := p.endpoint()
		if err != nil {
			return err
		}
		if len(to.Columns) != 1 {
			return errAt(at, "an inline ref names one column")
		}
		s.ref = &InlineRef{Pos: at.pos, Rel: rel, To: to}
		s.val = &token{kind: tPunct, text: rel, pos: at.pos}
		return nil
	}
	t := p.next()
	switch t.kind {
	case tString, tExpr, tColor:
		s.val = &t
		return nil
	case tQuoted:
		t.kind = tString
		s.val = &t
		return nil
	case tWord:
		if numberRE.MatchString(t.text) {
			s.val = &t
			return nil
		}
		// Several words are one value: no action, set null.
		words := []string{t.text}
		for p.peek().kind == tWord {
			words = append(words, p.next().text)
		}
		t.text = strings.Join(words, " ")
		s.val = &t
		return nil
	case tPunct:
		if t.text == "-" {
			n := p.next()
			if n.kind == tWord && numberRE.MatchString(n.text) {
				v := token{kind: tWord, text: "-" + n.text, pos: t.pos}
				s.val = &v
				return nil
			}
		}
	}
	return errAt(t, "expected the value of %s, found %s", s.name, t.describe())
}
