package store

import (
	"fmt"
)

// ValidIdent reports whether name may be used as a table or column name:
// the only shape an identifier may have before it is quoted into SQL is
// ^[a-z][a-z0-9_]{0,62}$. Identifiers come from our own catalog, never from
// request text. (Checked by hand, not by a regular expression: every
// quoted name of every query passes here.)
func ValidIdent(name string) bool {
	if len(name) == 0 || len(name) > 63 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// quoteIdent double-quotes name; both engines accept the ANSI form. It panics
// on an identifier that failed validation: reaching here with one is a bug,
// and a panic (recovered as a 500) is safer than emitting the SQL. A valid
// identifier holds no quote to escape.
func quoteIdent(name string) string {
	if !ValidIdent(name) && !validSchemaName(name) {
		panic(fmt.Sprintf("store: refusing to quote invalid identifier %q", name))
	}
	return `"` + name + `"`
}

// validSchemaName accepts the schema names this package builds itself
// (namespace prefix + app name, or a hashed form), which follow the
// identifier rule too; kept separate so the rule can diverge safely.
func validSchemaName(name string) bool { return ValidIdent(name) }
