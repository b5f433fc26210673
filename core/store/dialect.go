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
	if e != Postgres || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}
