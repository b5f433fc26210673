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
// far below MaxParams: the driver (modernc.org/sqlite) binds each marker
// by searching the argument list for its ordinal, and allocates for each
// text, so a value costs more the bigger its statement. At 9,000 values
// (a change log of 1,000 records in one statement) binding took longer
// than running the statement. Measured with BenchmarkBatchCreate's
// plain_batch_1000 (core/server): 100 to 300 values per statement gave the
// same rows/s, 800 a fifth less, 2,000 a third less.
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
