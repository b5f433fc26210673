package batch

import (
	"context"
	"database/sql"

	"github.com/strata-archaeo/strata/core/store"
)

// maxStatements bounds the statements one batch keeps prepared; queries
// past it run unprepared.
const maxStatements = 256

// preparer is what *sql.Tx and *sql.Conn offer besides store.Execer.
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// stmtCache prepares each distinct query of a batch once on the
// transaction's connection and reuses it for every row: the records code
// builds the same SQL text for the rows of a table with the same columns,
// so a batch of a thousand creations parses its INSERT once, not a
// thousand times.
type stmtCache struct {
	store.Execer
	prep  preparer
	stmts map[string]*sql.Stmt
}

// cached returns tx with its raw SQL going through a statement cache, and
// the function that closes the statements (before the transaction ends).
func cached(ctx context.Context, tx *store.DB) (*store.DB, func()) {
	p, ok := tx.SQL.(preparer)
	if !ok {
		return tx, func() {}
	}
	c := &stmtCache{Execer: tx.SQL, prep: p, stmts: map[string]*sql.Stmt{}}
	db := *tx
	db.SQL = c
	return &db, c.close
}

func (c *stmtCache) stmt(ctx context.Context, query string) *sql.Stmt {
	if st, ok := c.stmts[query]; ok {
		return st
	}
	if len(c.stmts) >= maxStatements {
		return nil
	}
	st, err := c.prep.PrepareContext(ctx, query)
	if err != nil {
		return nil // run unprepared: the error, if any, comes from there
	}
	c.stmts[query] = st
	return st
}

func (c *stmtCache) close() {
	for _, st := range c.stmts {
		_ = st.Close()
	}
}

func (c *stmtCache) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := c.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return c.Execer.ExecContext(ctx, query, args...)
}

func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return c.Execer.QueryContext(ctx, query, args...)
}

func (c *stmtCache) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return c.Execer.QueryRowContext(ctx, query, args...)
}
