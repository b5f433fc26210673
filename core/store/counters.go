package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// Counters reads integer settings (sys_settings) in one round trip: a
// missing key is 0. The server reads the catalog and access versions this
// way on every request to check its caches (or assumes them: Assume).
func (db *DB) Counters(ctx context.Context, keys ...string) ([]int64, error) {
	query, args := db.countersQuery(keys)
	c := newCounterRow(keys)
	countRound(ctx)
	if err := db.QueryRow(ctx, query, args...).Scan(c.dest...); err != nil {
		return nil, fmt.Errorf("read counters: %w", err)
	}
	return c.values()
}

// countersQuery selects the settings keys as one row.
//
// One scalar subquery per key rather than "key IN (...)": SQLite builds a
// temporary table for an IN list, whose page the pure-Go allocator maps
// and unmaps from the kernel on every request.
func (db *DB) countersQuery(keys []string) (string, []any) {
	cols := make([]string, len(keys))
	args := make([]any, len(keys))
	for i, k := range keys {
		cols[i] = db.counterColumn()
		args[i] = k
	}
	return `SELECT ` + strings.Join(cols, ", "), args
}

// counterColumn selects one counter, its key bound.
func (db *DB) counterColumn() string {
	return `(SELECT value FROM ` + db.Sys("settings") + ` WHERE key = ?)`
}

// counterRow scans the row of countersQuery.
type counterRow struct {
	keys []string
	vals []sql.NullString
	dest []any
}

func newCounterRow(keys []string) *counterRow {
	c := &counterRow{keys: keys, vals: make([]sql.NullString, len(keys)), dest: make([]any, len(keys))}
	for i := range c.vals {
		c.dest[i] = &c.vals[i]
	}
	return c
}

// values are the scanned settings as integers (0 when missing).
func (c *counterRow) values() ([]int64, error) {
	out := make([]int64, len(c.keys))
	for i, v := range c.vals {
		if !v.Valid {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v.String), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("counter %s is not a number: %q", c.keys[i], v.String)
		}
		out[i] = n
	}
	return out, nil
}
