package store

import (
	"context"
	"database/sql"
	"strings"
	"sync"

	"gorm.io/gorm"
)

// stmtCache keeps prepared statements of the pool by query text. SQLite
// compiles a statement into a program before running it, which was a
// quarter of the CPU of a record read when done every time; a prepared
// sql.Stmt is compiled once per connection and reused, inside transactions
// too (sql.Tx.StmtContext reuses the connection's program). PostgreSQL's
// driver caches statements itself. Schema changes need nothing here:
// SQLite recompiles a statement whose tables changed on its next step.
type stmtCache struct {
	pool *sql.DB
	// writer is the connection kept for write transactions
	// (writerconn.go), closed with the cache.
	writer *writerConn
	mu     sync.RWMutex
	m      map[string]*sql.Stmt
}

// maxCachedStmts bounds the cache: queries are built from a bounded set of
// shapes (filters bind their values), but a client can still vary shapes;
// past the bound queries run unprepared.
const maxCachedStmts = 1024

func newStmtCache(pool *sql.DB) *stmtCache {
	return &stmtCache{pool: pool, writer: &writerConn{}, m: map[string]*sql.Stmt{}}
}

// cacheable says whether query is worth keeping: data statements are run
// again and again; schema changes and transaction control are not.
func cacheable(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	if len(q) < 6 {
		return false
	}
	switch strings.ToUpper(q[:6]) {
	case "SELECT", "INSERT", "UPDATE", "DELETE":
		return true
	}
	return strings.EqualFold(q[:5], "WITH ")
}

// lookup returns the prepared statement of query if there is one.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[query]
}

// get returns the prepared statement of query, or nil when it is not
// cacheable, the cache is full or preparing fails (the caller then runs
// the query directly, which reports any error itself). Preparing takes a
// connection of the pool: never call it while holding one (in a
// transaction), or a full pool waits on itself.
func (c *stmtCache) get(ctx context.Context, query string) *sql.Stmt {
	if !cacheable(query) {
		return nil
	}
	c.mu.RLock()
	st, ok := c.m[query]
	full := len(c.m) >= maxCachedStmts
	c.mu.RUnlock()
	if ok || full {
		return st
	}
	st, err := c.pool.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.m[query]; ok {
		st.Close()
		return prev
	}
	c.m[query] = st
	return st
}

func (c *stmtCache) close() {
	c.writer.close()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	clear(c.m)
}

// cachedConn runs every statement, gorm's and our own SQL's, through the
// cache: on the pool, or inside one transaction (tx set). Its pool form is
// the ConnPool gorm is given on SQLite, so system-table queries,
// user-table queries and saves all share one set of compiled statements.
type cachedConn struct {
	cache *stmtCache
	pool  *sql.DB
	tx    *sql.Tx
	// missed are the cacheable statements the transaction ran without a
	// cached one: they are prepared once it has ended (see get).
	missed []string
}

// stmt is query's cached statement, bound to the transaction when there
// is one (closed by the transaction's end), or nil.
func (c *cachedConn) stmt(ctx context.Context, query string) *sql.Stmt {
	if c.tx == nil {
		return c.cache.get(ctx, query)
	}
	st := c.cache.lookup(query)
	if st == nil {
		if cacheable(query) {
			c.missed = append(c.missed, query)
		}
		return nil
	}
	return c.tx.StmtContext(ctx, st)
}

// learn prepares on the pool what the ended transaction ran unprepared.
func (c *cachedConn) learn() {
	for _, q := range c.missed {
		c.cache.get(context.Background(), q)
	}
	c.missed = nil
}

func (c *cachedConn) conn() interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
} {
	if c.tx != nil {
		return c.tx
	}
	return c.pool
}

func (c *cachedConn) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return c.conn().PrepareContext(ctx, query)
}

func (c *cachedConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := c.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return c.conn().ExecContext(ctx, query, args...)
}

func (c *cachedConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return c.conn().QueryContext(ctx, query, args...)
}

func (c *cachedConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return c.conn().QueryRowContext(ctx, query, args...)
}

// cachedPool is cachedConn on the pool: what gorm is given on SQLite.
type cachedPool struct{ cachedConn }

// BeginTx starts a transaction whose statements use the cache (gorm's
// ConnPoolBeginner): a write transaction on the writer's connection
// (writerconn.go), others on the pool.
func (c *cachedPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	if ctx.Value(writerConnKey{}) != nil {
		if tx, release, ok := c.cache.writer.begin(ctx, c.pool, opts); ok {
			return &cachedTx{cachedConn: cachedConn{cache: c.cache, pool: c.pool, tx: tx}, release: release}, nil
		}
	}
	tx, err := c.pool.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &cachedTx{cachedConn: cachedConn{cache: c.cache, pool: c.pool, tx: tx}}, nil
}

// GetDBConn is the pool under the cache (gorm's DB()).
func (c *cachedPool) GetDBConn() (*sql.DB, error) { return c.pool, nil }

// cachedTx is cachedConn in a transaction. Only it commits: gorm takes a
// ConnPool that can commit for a transaction already begun (and would nest
// a savepoint in it).
type cachedTx struct {
	cachedConn
	release func() // gives the writer's connection back, when on it
}

// Commit and Rollback end the transaction (gorm's TxCommitter).
func (c *cachedTx) Commit() error {
	defer c.ended()
	return c.tx.Commit()
}

func (c *cachedTx) Rollback() error {
	defer c.ended()
	return c.tx.Rollback()
}

// ended gives the writer's connection back and prepares what the
// transaction missed (on the pool: never while holding the writer's
// connection, which the pool does not have).
func (c *cachedTx) ended() {
	if c.release != nil {
		c.release()
	}
	c.learn()
}

// detachedTx is a transaction's connection on which no statement can be
// interrupted by its context's end: the functions of a commit group share
// one transaction, and SQLite rolls the whole of it back when a write in
// it is interrupted (groupcommit.go). Deadlines go with cancellation.
type detachedTx struct{ tx *cachedTx }

func (d *detachedTx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return d.tx.PrepareContext(context.WithoutCancel(ctx), query)
}

func (d *detachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return d.tx.ExecContext(context.WithoutCancel(ctx), query, args...)
}

func (d *detachedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return d.tx.QueryContext(context.WithoutCancel(ctx), query, args...)
}

func (d *detachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return d.tx.QueryRowContext(context.WithoutCancel(ctx), query, args...)
}

// Commit and Rollback make it a TxCommitter for gorm, so that a
// transaction nested in a group's function takes a savepoint.
func (d *detachedTx) Commit() error   { return d.tx.Commit() }
func (d *detachedTx) Rollback() error { return d.tx.Rollback() }
