package store

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps prepared statements of the pool by query text. The pure
// Go SQLite driver parses every query anew (a third of a record read was
// spent in sqlite3_prepare); a prepared sql.Stmt is parsed once per
// connection and reused. PostgreSQL's driver caches statements itself.
// Schema changes need nothing here: SQLite re-prepares a statement whose
// tables changed on its next step.
type stmtCache struct {
	pool *sql.DB
	mu   sync.RWMutex
	m    map[string]*sql.Stmt
}

// maxCachedStmts bounds the cache: queries are built from a bounded set of
// shapes (filters bind their values), but a client can still vary shapes;
// past the bound queries run unprepared.
const maxCachedStmts = 1024

func newStmtCache(pool *sql.DB) *stmtCache {
	return &stmtCache{pool: pool, m: map[string]*sql.Stmt{}}
}

// get returns the prepared statement of query, or nil when the cache is
// full or preparing fails (the caller then runs the query directly, which
// reports any error itself).
func (c *stmtCache) get(ctx context.Context, query string) *sql.Stmt {
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
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	clear(c.m)
}
