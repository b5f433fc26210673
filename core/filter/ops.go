package filter

import (
	"strings"
	"unicode/utf8"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// bind adds a value and returns its marker. A date is bound as its ISO
// text; on PostgreSQL the explicit cast makes the server, not the driver,
// turn it into a date.
func (r *renderer) bind(t schema.DBType, v any) string {
	r.args = append(r.args, v)
	if t == schema.DBDate && r.db.Engine == store.Postgres {
		return "CAST(? AS date)"
	}
	return "?"
}

func (r *renderer) cond(s scope, c Cond) (string, error) {
	spec, builtin := opInfo[c.Op]
	if !builtin {
		return r.custom(s, c)
	}
	col, typ, err := r.column(s, c.Field)
	if err != nil {
		return "", err
	}
	if err := checkArgs(c, spec); err != nil {
		return "", err
	}
	if typ == schema.DBBool && !spec.onBool {
		return "", invalidf("%s is true or false: it takes _eq, _neq, _in, _nin, _null, _nnull, _empty, _nempty, not %s", c.Field, c.Op)
	}
	if typ == schema.DBFloat && spec.kind == kindPattern {
		// The text form of a float differs between engines (2 vs 2.0).
		return "", invalidf("%s is a decimal number: text operators such as %s do not apply", c.Field, c.Op)
	}
	switch spec.kind {
	case kindPresence:
		return presence(c.Op, col, typ), nil
	case kindPattern:
		if f, ok := s.t.Field(c.Field); ok && f.SearchIndexed && typ == schema.DBText {
			if sql, ok := r.indexedPattern(s, f, c, col); ok {
				return sql, nil
			}
		}
		return r.pattern(c, col, typ), nil
	}
	marks := make([]string, len(c.Args))
	for i, a := range c.Args {
		v, ok := bindValue(r.db.Engine, typ, a)
		if !ok {
			return "", invalidf("%s.%s: %q is not %s", c.Field, c.Op, clip(a), typeWord(typ))
		}
		marks[i] = r.bind(typ, v)
	}
	ordered := col
	if typ == schema.DBText && r.db.Engine == store.Postgres {
		// Code point order, as SQLite's BINARY collation, whatever the
		// database locale.
		ordered = col + ` COLLATE "C"`
	}
	switch c.Op {
	case "_eq":
		return col + " = " + marks[0], nil
	case "_neq":
		return "(" + col + " IS NULL OR " + col + " <> " + marks[0] + ")", nil
	case "_gt":
		return ordered + " > " + marks[0], nil
	case "_lt":
		return ordered + " < " + marks[0], nil
	case "_gte":
		return ordered + " >= " + marks[0], nil
	case "_lte":
		return ordered + " <= " + marks[0], nil
	case "_between":
		return ordered + " BETWEEN " + marks[0] + " AND " + marks[1], nil
	case "_in":
		if len(marks) == 0 {
			return "1 = 0", nil
		}
		return col + " IN (" + strings.Join(marks, ", ") + ")", nil
	case "_nin":
		if len(marks) == 0 {
			return "1 = 1", nil
		}
		return "(" + col + " IS NULL OR " + col + " NOT IN (" + strings.Join(marks, ", ") + "))", nil
	}
	return "", invalidf("unknown operator %q", c.Op)
}

// checkArgs re-checks operand counts and sizes, for nodes built in Go
// (quick search, plugin resolutions) that did not come through a parser.
func checkArgs(c Cond, spec opSpec) error {
	n := len(c.Args)
	switch {
	case spec.arity == arityOne && n != 1:
		return invalidf("%s.%s takes one value", c.Field, c.Op)
	case spec.arity == arityTwo && n != 2:
		return invalidf("%s.%s takes exactly two values", c.Field, c.Op)
	case spec.arity == arityFlag && n != 0:
		return invalidf("%s.%s takes true or no value", c.Field, c.Op)
	case spec.arity == arityList && n > MaxList:
		return invalidf("%s.%s: more than %d values", c.Field, c.Op, MaxList)
	}
	for _, a := range c.Args {
		if err := checkText(c.Field, c.Op, a); err != nil {
			return err
		}
	}
	return nil
}

func presence(op, col string, typ schema.DBType) string {
	text := typ == schema.DBText
	switch {
	case op == "_null", op == "_empty" && !text:
		return col + " IS NULL"
	case op == "_nnull", op == "_nempty" && !text:
		return col + " IS NOT NULL"
	case op == "_empty":
		return "(" + col + " IS NULL OR " + col + " = '')"
	}
	return "(" + col + " IS NOT NULL AND " + col + " <> '')"
}

// pattern renders the text operators. _contains is case-sensitive (an
// exact substring search); the others compare folded text, with the
// operand's %, _ and \ escaped so they match themselves.
func (r *renderer) pattern(c Cond, col string, typ schema.DBType) string {
	text := col
	switch {
	case typ == schema.DBInt:
		text = "CAST(" + col + " AS TEXT)"
	case typ == schema.DBDate && r.db.Engine == store.Postgres:
		// Not CAST: its output follows the DateStyle setting.
		text = "to_char(" + col + ", 'YYYY-MM-DD')"
	}
	v := c.Args[0]
	if c.Op == "_contains" {
		r.args = append(r.args, v)
		if r.db.Engine == store.Postgres {
			return "strpos(" + text + ", ?) > 0"
		}
		return "instr(" + text + ", ?) > 0"
	}
	if typ == schema.DBText {
		text = r.db.FoldSQL(text)
	}
	if c.Op == "_icontains" || c.Op == "_ncontains" {
		// A plain substring search of the folded needle: no LIKE pattern
		// to escape, and several times cheaper per row than LIKE '%x%'.
		r.args = append(r.args, store.Fold(v))
		find := "instr(" + text + ", ?)"
		if r.db.Engine == store.Postgres {
			find = "strpos(" + text + ", ?)"
		}
		if c.Op == "_ncontains" {
			return "(" + col + " IS NULL OR " + find + " = 0)"
		}
		return find + " > 0"
	}
	esc := escapeLike(store.Fold(v))
	var pat string
	switch c.Op {
	case "_starts_with", "_nstarts_with":
		pat = esc + "%"
	default: // _ends_with, _nends_with
		pat = "%" + esc
	}
	r.args = append(r.args, pat)
	if opInfo[c.Op].negative {
		return "(" + col + " IS NULL OR " + text + ` NOT LIKE ? ESCAPE '\')`
	}
	return text + ` LIKE ? ESCAPE '\'`
}

// indexedPattern renders a text operator on a field with a search index
// (schema.SearchIndexName) so that the index chooses the candidate rows
// and the condition of pattern, unchanged, decides: the results are those
// of the plain scan. ok is false where the index cannot help: operands
// shorter than three characters (a trigram index has nothing to look up),
// text that is not valid UTF-8, and on PostgreSQL the negations (a GIN
// index cannot list the rows that lack a trigram).
func (r *renderer) indexedPattern(s scope, f *schema.Field, c Cond, col string) (string, bool) {
	folded := store.Fold(c.Args[0])
	if !utf8.ValidString(folded) || utf8.RuneCountInString(folded) < 3 {
		return "", false
	}
	neg := opInfo[c.Op].negative
	switch c.Op {
	case "_contains", "_icontains", "_ncontains", "_starts_with", "_nstarts_with":
	default:
		return "", false // _ends_with: rare enough to scan
	}
	if r.db.Engine == store.Postgres {
		if neg {
			return "", false
		}
		// pg_trgm serves LIKE on the indexed expression; PostgreSQL's
		// LIKE escapes with a backslash by default (an ESCAPE clause
		// would hide the pattern from the planner).
		pat := "%" + escapeLike(folded) + "%"
		if c.Op == "_starts_with" {
			pat = escapeLike(folded) + "%"
		}
		r.args = append(r.args, pat)
		like := r.db.FoldSQL(col) + " LIKE ?"
		if c.Op == "_contains" {
			return "(" + like + " AND " + r.pattern(c, col, schema.DBText) + ")", true
		}
		return like, true
	}
	// SQLite: the rows whose folded text holds the folded operand, by the
	// FTS5 trigram table (a phrase is a substring); then the exact test.
	fts := r.db.Engine.Quote(schema.SearchIndexName(f))
	r.args = append(r.args, `"`+strings.ReplaceAll(folded, `"`, `""`)+`"`)
	cand := s.ref + "." + r.db.Engine.Quote(schema.ColID) + " IN (SELECT rowid FROM " + fts + " WHERE " + fts + " MATCH ?)"
	if !neg {
		return "(" + cand + " AND " + r.pattern(c, col, schema.DBText) + ")", true
	}
	pos := c
	pos.Op = map[string]string{"_ncontains": "_icontains", "_nstarts_with": "_starts_with"}[c.Op]
	return "(" + col + " IS NULL OR NOT (" + cand + " AND " + r.pattern(pos, col, schema.DBText) + "))", true
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

func escapeLike(s string) string { return likeEscaper.Replace(s) }
