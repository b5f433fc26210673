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
// way on every request to check its caches.
//
// One scalar subquery per key rather than "key IN (...)": SQLite builds a
// temporary table for an IN list, whose page the pure-Go allocator maps
// and unmaps from the kernel on every request.
func (db *DB) Counters(ctx context.Context, keys ...string) ([]int64, error) {
	cols := make([]string, len(keys))
	args := make([]any, len(keys))
	for i, k := range keys {
		cols[i] = `(SELECT value FROM ` + db.Sys("settings") + ` WHERE key = ?)`
		args[i] = k
	}
	vals := make([]sql.NullString, len(keys))
	dest := make([]any, len(keys))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := db.QueryRow(ctx, `SELECT `+strings.Join(cols, ", "), args...).Scan(dest...); err != nil {
		return nil, fmt.Errorf("read counters: %w", err)
	}
	out := make([]int64, len(keys))
	for i, v := range vals {
		if !v.Valid {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v.String), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("counter %s is not a number: %q", keys[i], v.String)
		}
		out[i] = n
	}
	return out, nil
}
