package ratelimit

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/store"
)

// Shared keeps limiters' state in PostgreSQL, so that a limit holds across
// every node of an instance instead of per node.
//
// A limiter sharing its state still checks its own node's memory first
// (ShareThrough): an event the node's own counter refuses never reaches the
// database, so a flood from one address costs each node at most its limit
// in writes per window, never one write per request. Only events the node
// would allow are taken from the shared budget, in one statement that is
// the same cell-rate step as the memory limiter's (an upsert that moves the
// key's theoretical arrival time only when the event fits). Keys are stored
// as SHA-256 hashes: the table holds no address or email.
//
// When the database cannot be reached the limiter falls back to the node's
// own counter (fail open to the per-node limit, Errors counts it): a
// database outage must not lock every user out, and the account lock still
// applies once the database answers.
type Shared struct {
	db    *sql.DB
	table string

	sweepMu   sync.Mutex
	nextSweep time.Time
	errors    atomic.Int64
}

// NewShared makes (if needed) the state table in schema on db and returns
// the shared store. schema must be a safe identifier chosen by the server
// (the PostgreSQL backend's service schema), never client input.
func NewShared(ctx context.Context, db *sql.DB, schema string) (*Shared, error) {
	q := `"` + schema + `"`
	table := q + `."rate_limits"`
	for _, stmt := range []string{
		`CREATE SCHEMA IF NOT EXISTS ` + q,
		`CREATE TABLE IF NOT EXISTS ` + table + ` (k text PRIMARY KEY, tat timestamptz NOT NULL)`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return nil, fmt.Errorf("ratelimit: %w", err)
		}
	}
	return &Shared{db: db, table: table}, nil
}

// Errors counts the database failures the limiters fell back on.
func (s *Shared) Errors() int64 { return s.errors.Load() }

func hashKey(name, key string) string {
	h := sha256.Sum256([]byte(name + "\x00" + key))
	return hex.EncodeToString(h[:])
}

// take is one cell-rate step of key: record true consumes an event when
// it fits; false only reports whether one would. now comes from the
// server's clock, so tests can drive it.
func (s *Shared) take(ctx context.Context, name, key string, interval, window time.Duration, now time.Time, record bool) (bool, time.Duration, error) {
	k := hashKey(name, key)
	s.sweep(ctx, now, window)
	iv, win := interval.Microseconds(), window.Microseconds()
	if record {
		var tat time.Time
		err := s.db.QueryRowContext(ctx, `INSERT INTO `+s.table+` AS r (k, tat) VALUES ($1, $2::timestamptz + $3 * interval '1 microsecond')
ON CONFLICT (k) DO UPDATE SET tat = greatest(r.tat, $2::timestamptz) + $3 * interval '1 microsecond'
 WHERE greatest(r.tat, $2::timestamptz) + $3 * interval '1 microsecond' <= $2::timestamptz + $4 * interval '1 microsecond'
RETURNING tat`, k, now, iv, win).Scan(&tat)
		if err == nil {
			return true, 0, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return false, 0, err
		}
	}
	var tat time.Time
	err := s.db.QueryRowContext(ctx, `SELECT tat FROM `+s.table+` WHERE k = $1`, k).Scan(&tat)
	if errors.Is(err, sql.ErrNoRows) {
		return true, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	if tat.Before(now) {
		tat = now
	}
	if over := tat.Add(interval).Sub(now) - window; over > 0 {
		return false, over, nil
	}
	return true, 0, nil
}

// sweep drops the keys whose every event has left its window, at most
// once a window per node.
func (s *Shared) sweep(ctx context.Context, now time.Time, window time.Duration) {
	s.sweepMu.Lock()
	due := !now.Before(s.nextSweep)
	if due {
		s.nextSweep = now.Add(window)
	}
	s.sweepMu.Unlock()
	if due {
		if _, err := s.db.ExecContext(ctx, `DELETE FROM `+s.table+` WHERE tat < $1`, now); err != nil {
			s.errors.Add(1)
		}
	}
}

// SharedFor is the store that makes limits r hold across the nodes of
// backend b: on PostgreSQL a table in the instance's service schema
// `<ns>__limits`; nil on SQLite (one node) or when no limit is on.
func SharedFor(b store.Backend, r config.RateLimits) (*Shared, error) {
	pg, ok := b.(*store.PostgresBackend)
	if !ok || r == (config.RateLimits{}) {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return NewShared(ctx, pg.Pool(), pg.ServiceSchema("limits"))
}
