package store

import (
	"database/sql/driver"
	"strings"
	"unicode"
	"unicode/utf8"

	sqlite "modernc.org/sqlite"
)

// FoldFunction is the SQL name of the case-folding function. Case-insensitive
// filters compare strata_fold(column) with an operand folded by Fold, so
// both sides go through one mapping whatever the engine or its locale.
const FoldFunction = "strata_fold"

// Fold maps every character of s through unicode.ToLower (the simple,
// one-to-one mapping: 'ẞ' becomes 'ß', never "ss"). Bytes that are not
// valid UTF-8 are kept as they are, so folding never invents characters.
//
// PostgreSQL gets the same mapping from migration 0005_fold, a translate()
// generated from the same tables (see core/filter/internal/foldsql); a test
// keeps the two in step.
func Fold(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			break
		}
		i++
	}
	if i == len(s) {
		return s // plain lower-case ASCII: the common case, no allocation
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteRune(unicode.ToLower(r))
		i += size
	}
	return b.String()
}

// FoldSQL returns the SQL that folds the text expression expr. On
// PostgreSQL the function lives in the app's schema and queries run with
// search_path = pg_catalog, so the call is schema-qualified.
//
// On SQLite, ASCII text (as many characters as bytes) folds the same with
// the built-in lower() (unicode.ToLower maps A-Z to a-z and leaves the rest
// of ASCII alone), and a call into the Go function costs about a
// microsecond a row; so only values holding other characters take it.
func (db *DB) FoldSQL(expr string) string {
	if db.schema == "" {
		if strings.Contains(expr, "?") {
			// A bound value: evaluated once, through the function.
			return FoldFunction + "(" + expr + ")"
		}
		return "(CASE WHEN length(" + expr + ") = length(CAST(" + expr + " AS BLOB)) THEN lower(" + expr + ") ELSE " + FoldFunction + "(" + expr + ") END)"
	}
	return quoteIdent(db.schema) + "." + FoldFunction + "(" + expr + ")"
}

// The SQLite function is registered once per process, before any
// connection opens (the driver adds it to every new connection). NULL in,
// NULL out, like the PostgreSQL function (STRICT).
func init() {
	sqlite.MustRegisterDeterministicScalarFunction(FoldFunction, 1, foldValue)
}

func foldValue(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	switch v := args[0].(type) {
	case string:
		return Fold(v), nil
	case []byte:
		return Fold(string(v)), nil
	default:
		// NULL and numbers have no letters to fold; returned unchanged.
		return v, nil
	}
}
