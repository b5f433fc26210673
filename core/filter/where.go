package filter

import (
	"strings"
	"unicode/utf8"
)

// ParseWhere reads a row subset written as an SQL WHERE clause (CONTRACT
// §4) into the filter AST, which is then validated and rendered like any
// filter: the text itself never reaches the database. The grammar is a
// small, safe part of SQL:
//
//	expr      := term { OR term }
//	term      := factor { AND factor }
//	factor    := NOT factor | '(' expr ')' | predicate
//	predicate := column ( op literal
//	                    | [NOT] IN '(' literal { ',' literal } ')'
//	                    | IS [NOT] NULL
//	                    | [NOT] LIKE 'pattern' [ESCAPE 'c']
//	                    | [NOT] BETWEEN literal AND literal )
//	op        := = | <> | != | < | <= | > | >=
//	literal   := 'text' ('' inside is ') | [-+]number | TRUE | FALSE
//	column    := name | "name"   (unqualified; bare names are lower-cased)
//
// A LIKE pattern must be 'x', '%x', 'x%' or '%x%' (x without wildcards;
// escape % and _ with an ESCAPE character): it maps to _eq, _ends_with,
// _starts_with and _icontains, so apart from the exact form it is
// case-insensitive, as the filter operators are. SQL's three-valued logic
// is kept: NOT and <> never match NULL, as in the database.
//
// Anything else (subqueries, functions, ';', comments, qualified names,
// other operators) is 400 invalid_subset with a detail.
func ParseWhere(s string) (Node, error) {
	if len(s) > MaxInput {
		return nil, subsetf("the subset is longer than %d bytes", MaxInput)
	}
	if !utf8.ValidString(s) {
		return nil, subsetf("the subset is not valid UTF-8")
	}
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &whereParser{toks: toks}
	if p.peek().kind == tEOF {
		return nil, subsetf("the subset is empty")
	}
	e, err := p.expr(1)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.unexpected(t)
	}
	return e.truth(true), nil
}

type whereParser struct {
	toks  []token
	i     int
	preds int
}

func (p *whereParser) peek() token { return p.toks[p.i] }
func (p *whereParser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *whereParser) unexpected(t token) error {
	if t.kind == tEOF {
		return subsetf("the condition ends too early")
	}
	return subsetf("unexpected %q at %d", clip(t.text), t.pos)
}

// keyword reports whether the next token is the bare word kw, and takes it.
func (p *whereParser) keyword(kw string) bool {
	if t := p.peek(); t.kind == tIdent && t.text == kw {
		p.i++
		return true
	}
	return false
}

var reserved = map[string]bool{"and": true, "or": true, "not": true, "in": true, "is": true, "null": true,
	"like": true, "between": true, "true": true, "false": true, "escape": true}

func (p *whereParser) expr(depth int) (sqlExpr, error) {
	if depth > MaxDepth {
		return nil, subsetf("parentheses nest deeper than %d", MaxDepth)
	}
	left, err := p.term(depth)
	if err != nil {
		return nil, err
	}
	for p.keyword("or") {
		right, err := p.term(depth)
		if err != nil {
			return nil, err
		}
		left = sqlOr{left, right}
	}
	return left, nil
}

func (p *whereParser) term(depth int) (sqlExpr, error) {
	left, err := p.factor(depth)
	if err != nil {
		return nil, err
	}
	for p.keyword("and") {
		right, err := p.factor(depth)
		if err != nil {
			return nil, err
		}
		left = sqlAnd{left, right}
	}
	return left, nil
}

func (p *whereParser) factor(depth int) (sqlExpr, error) {
	if p.keyword("not") {
		if depth > MaxDepth {
			return nil, subsetf("NOT nests deeper than %d", MaxDepth)
		}
		e, err := p.factor(depth + 1)
		if err != nil {
			return nil, err
		}
		return sqlNot{e}, nil
	}
	if p.peek().kind == tLParen {
		p.next()
		e, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		if t := p.next(); t.kind != tRParen {
			return nil, p.unexpected(t)
		}
		return e, nil
	}
	return p.predicate()
}

func (p *whereParser) predicate() (sqlExpr, error) {
	p.preds++
	if p.preds > MaxNodes {
		return nil, subsetf("more than %d conditions", MaxNodes)
	}
	t := p.next()
	var col string
	switch {
	case t.kind == tQuotedIdent:
		col = t.text
	case t.kind == tIdent && !reserved[t.text]:
		col = t.text
	default:
		return nil, p.unexpected(t)
	}
	if p.peek().kind == tLParen {
		return nil, subsetf("functions are not allowed: %s( at %d", clip(col), t.pos)
	}
	pred := sqlPred{col: col}
	switch nt := p.peek(); {
	case nt.kind == tOp:
		p.next()
		pred.op = nt.text
		lit, err := p.literal()
		if err != nil {
			return nil, err
		}
		pred.lits = []string{lit}
		return pred, nil
	case p.keyword("is"):
		pred.op = "is null"
		if p.keyword("not") {
			pred.neg = true
		}
		if !p.keyword("null") {
			return nil, p.unexpected(p.peek())
		}
		return pred, nil
	}
	if p.keyword("not") {
		pred.neg = true
	}
	switch {
	case p.keyword("in"):
		pred.op = "in"
		if t := p.next(); t.kind != tLParen {
			return nil, p.unexpected(t)
		}
		for {
			lit, err := p.literal()
			if err != nil {
				return nil, err
			}
			pred.lits = append(pred.lits, lit)
			if len(pred.lits) > MaxList {
				return nil, subsetf("an IN list has more than %d values", MaxList)
			}
			t := p.next()
			if t.kind == tRParen {
				return pred, nil
			}
			if t.kind != tComma {
				return nil, p.unexpected(t)
			}
		}
	case p.keyword("like"):
		pred.op = "like"
		t := p.next()
		if t.kind != tString {
			return nil, subsetf("LIKE takes a quoted pattern (at %d)", t.pos)
		}
		escape := ""
		if p.keyword("escape") {
			e := p.next()
			if e.kind != tString || utf8.RuneCountInString(e.text) != 1 {
				return nil, subsetf("ESCAPE takes one quoted character (at %d)", e.pos)
			}
			escape = e.text
		}
		op, arg, err := likeToOp(t.text, escape)
		if err != nil {
			return nil, err
		}
		pred.likeOp, pred.lits = op, []string{arg}
		return pred, nil
	case p.keyword("between"):
		pred.op = "between"
		lo, err := p.literal()
		if err != nil {
			return nil, err
		}
		if !p.keyword("and") {
			return nil, p.unexpected(p.peek())
		}
		hi, err := p.literal()
		if err != nil {
			return nil, err
		}
		pred.lits = []string{lo, hi}
		return pred, nil
	}
	return nil, p.unexpected(p.peek())
}

// literal reads a quoted string, a signed number, TRUE or FALSE, in the
// text form filter operands have.
func (p *whereParser) literal() (string, error) {
	t := p.next()
	switch {
	case t.kind == tString:
		if len(t.text) > MaxText {
			return "", subsetf("a value is longer than %d bytes (at %d)", MaxText, t.pos)
		}
		if strings.IndexByte(t.text, 0) >= 0 {
			return "", subsetf("a value contains a NUL character (at %d)", t.pos)
		}
		return t.text, nil
	case t.kind == tNumber:
		return t.text, nil
	case t.kind == tSign:
		n := p.next()
		if n.kind != tNumber {
			return "", p.unexpected(n)
		}
		if t.text == "-" {
			return "-" + n.text, nil
		}
		return n.text, nil
	case t.kind == tIdent && (t.text == "true" || t.text == "false"):
		return t.text, nil
	case t.kind == tIdent && t.text == "null":
		return "", subsetf("NULL is not a value here (at %d): use IS NULL or IS NOT NULL", t.pos)
	case t.kind == tIdent && t.text == "select":
		return "", subsetf("subqueries are not allowed (at %d)", t.pos)
	}
	if t.kind == tEOF {
		return "", p.unexpected(t)
	}
	return "", subsetf("expected a literal value at %d, found %q", t.pos, clip(t.text))
}

// likeToOp maps a LIKE pattern to an operator and its operand.
func likeToOp(pat, escape string) (string, string, error) {
	type unit struct {
		r    rune
		wild bool // an unescaped % or _
	}
	var units []unit
	esc, _ := utf8.DecodeRuneInString(escape)
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if escape != "" && r == esc {
			if i+1 == len(rs) {
				return "", "", subsetf("LIKE pattern %q ends with its escape character", clip(pat))
			}
			i++
			units = append(units, unit{rs[i], false})
			continue
		}
		units = append(units, unit{r, r == '%' || r == '_'})
	}
	lead := 0
	for lead < len(units) && units[lead].wild && units[lead].r == '%' {
		lead++
	}
	trail := len(units)
	for trail > lead && units[trail-1].wild && units[trail-1].r == '%' {
		trail--
	}
	var mid strings.Builder
	for _, u := range units[lead:trail] {
		if u.wild {
			return "", "", subsetf("LIKE pattern %q: only %%x%%, x%%, %%x or x are supported (escape %% and _ with ESCAPE)", clip(pat))
		}
		mid.WriteRune(u.r)
	}
	x := mid.String()
	switch {
	case lead > 0 && x == "":
		return "_nnull", "", nil // '%' matches every value
	case lead > 0 && trail < len(units):
		return "_icontains", x, nil
	case lead > 0:
		return "_ends_with", x, nil
	case trail < len(units):
		return "_starts_with", x, nil
	}
	return "_eq", x, nil
}
