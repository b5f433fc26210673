package store

import (
	"strconv"
	"strings"
)

// Engine names one of the two supported database engines.
type Engine string

const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// Engines lists every engine Strata supports, in display order.
var Engines = []Engine{SQLite, Postgres}

// Quote returns name as a quoted identifier (see quoteIdent).
func (e Engine) Quote(name string) string { return quoteIdent(name) }

// Placeholder returns the bind marker for the n-th (1-based) argument.
func (e Engine) Placeholder(n int) string {
	if e == Postgres {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// Rebind rewrites a query written with '?' markers into the engine's form.
// Queries passed here are our own text; '?' never appears inside literals.
func (e Engine) Rebind(query string) string {
	if e != Postgres || strings.IndexByte(query, '?') < 0 {
		return query
	}
	b := make([]byte, 0, len(query)+len(query)/8+8)
	n := int64(0)
	for {
		at := strings.IndexByte(query, '?')
		if at < 0 {
			return string(append(b, query...))
		}
		n++
		b = append(append(b, query[:at]...), '$')
		b = strconv.AppendInt(b, n, 10)
		query = query[at+1:]
	}
}
