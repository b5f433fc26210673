package store

import (
	"fmt"
	"regexp"
	"strings"
)

// identPattern is the only shape an identifier may have before it is quoted
// into SQL. Identifiers come from our own catalog, never from request text.
var identPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// ValidIdent reports whether name may be used as a table or column name.
func ValidIdent(name string) bool { return identPattern.MatchString(name) }

// quoteIdent double-quotes name; both engines accept the ANSI form. It panics
// on an identifier that failed validation: reaching here with one is a bug,
// and a panic (recovered as a 500) is safer than emitting the SQL.
func quoteIdent(name string) string {
	if !ValidIdent(name) && !validSchemaName(name) {
		panic(fmt.Sprintf("store: refusing to quote invalid identifier %q", name))
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// validSchemaName accepts the schema names this package builds itself
// (namespace prefix + app name, or a hashed form), which follow the
// identifier rule too; kept separate so the rule can diverge safely.
func validSchemaName(name string) bool { return ValidIdent(name) }
