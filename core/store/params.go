package store

// MaxParams is the most bound values one statement may carry on the
// engine: SQLite's SQLITE_MAX_VARIABLE_NUMBER (32766 since 3.32), and
// PostgreSQL's wire protocol, which counts parameters in 16 bits.
func (e Engine) MaxParams() int {
	if e == Postgres {
		return 65535
	}
	return 32766
}

// sqliteParamsPerStatement is where a multi-row statement on SQLite is cut,
// well below MaxParams: the driver (modernc.org/sqlite) binds each marker
// by scanning the argument list for its ordinal, so binding n values costs
// n²/2 steps. At 9,000 values (a change log of 1,000 records in one
// statement) binding took longer than running the statement; at a few
// hundred it is lost in the noise, while a statement still writes a hundred
// rows or so.
const sqliteParamsPerStatement = 256

// RowsPerStatement is how many rows of perRow bound values each a
// multi-row statement (INSERT ... VALUES (...), (...)) should hold: the
// engine's limit on PostgreSQL, where binding is linear and each statement
// is a round trip, and a few hundred values on SQLite (see
// sqliteParamsPerStatement). Always at least 1.
func (e Engine) RowsPerStatement(perRow int) int {
	limit := e.MaxParams()
	if e != Postgres {
		limit = sqliteParamsPerStatement
	}
	if perRow <= 0 {
		return limit
	}
	return max(1, limit/perRow)
}
