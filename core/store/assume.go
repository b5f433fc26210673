package store

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// Assumed is what a request assumed of some counters (sys_settings, as
// Counters reads them) instead of reading them before its work: the
// server's caches of catalogs and accounts are valid for given values of
// the catalog and access versions, and reading them first is a round
// trip of its own on PostgreSQL.
//
// Under a context carrying it (WithAssumed), the first pipelined round on
// its database reads the counters as the round's first statement, in the
// same batch: the round's other statements take their snapshots after it,
// so what they read is as of a moment when the counters (monotonic, moved
// by every change the caches depend on) still held the assumed values, or
// later. When they moved, Run stops with ErrAssumptionFailed. A PostgreSQL
// transaction on the database reads them the same way, as its first
// statement, sent with BEGIN and the statements after it: when they moved
// the transaction fails and nothing it wrote is committed. Check tells
// the caller, at the end of its work, whether the assumption held,
// reading the counters then if no round did; Confirm, before something
// that a run done again must not have done twice leaves the process.
type Assumed struct {
	db      *DB
	keys    []string
	assumed []int64

	mu   sync.Mutex
	got  []int64 // nil until read
	read bool
	// claimed: a statement reads the counters as columns (AssumedIn), so
	// no pipelined round reads them by itself.
	claimed bool
}

// ErrAssumptionFailed: the counters a pipeline read with its first round
// are not those the request assumed; its work is to be done again.
var ErrAssumptionFailed = errors.New("store: the assumed counters have moved")

// Assume makes an assumption that the counters keys have values.
func (db *DB) Assume(keys []string, values []int64) *Assumed {
	return &Assumed{db: db, keys: keys, assumed: slices.Clone(values)}
}

type assumedKey struct{}

// WithAssumed makes the pipelines run under ctx check a (see Assumed).
func WithAssumed(ctx context.Context, a *Assumed) context.Context {
	return context.WithValue(ctx, assumedKey{}, a)
}

// assumedFor is the assumption of ctx still to check on db, or nil.
func assumedFor(ctx context.Context, db *DB) *Assumed {
	a, _ := ctx.Value(assumedKey{}).(*Assumed)
	if a == nil || a.db != db {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.read || a.claimed {
		return nil
	}
	return a
}

// Confirm makes sure the assumption ctx carries on db (or on the database
// of db's transaction) held, reading the counters now if nothing has read
// them yet: ErrAssumptionFailed when they moved. A request that may be
// run again calls it before anything leaves the process that the second
// run would do again (a plugin's hook, a write outside a transaction).
func Confirm(ctx context.Context, db *DB) error {
	if db.ptx != nil {
		db = db.ptx.owner
	}
	a := assumedFor(ctx, db)
	if a == nil {
		return nil
	}
	held, _, err := a.Check(ctx)
	if err != nil {
		return err
	}
	if !held {
		return ErrAssumptionFailed
	}
	return nil
}

// queue puts the reading of the counters first in round.
func (a *Assumed) queue(round []pipelineQuery) []pipelineQuery {
	query, args := a.db.countersQuery(a.keys)
	c := newCounterRow(a.keys)
	check := pipelineQuery{what: "counters", query: query, args: args, read: func(rows Rows) error {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return errors.New("no row")
		}
		if err := rows.Scan(c.dest...); err != nil {
			return err
		}
		got, err := c.values()
		if err != nil {
			return err
		}
		if !a.found(got) {
			return ErrAssumptionFailed
		}
		return nil
	}}
	return append([]pipelineQuery{check}, round...)
}

// found records the counters as read; whether they are the assumed ones.
func (a *Assumed) found(got []int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got, a.read = got, true
	return slices.Equal(got, a.assumed)
}

// Check reports whether the counters hold the assumed values, with the
// values found: as a pipeline read them, or read now (a round trip) when
// none did.
func (a *Assumed) Check(ctx context.Context) (held bool, got []int64, err error) {
	a.mu.Lock()
	read, got := a.read, a.got
	a.mu.Unlock()
	if !read {
		if got, err = a.db.Counters(ctx, a.keys...); err != nil {
			return false, nil, err
		}
		a.found(got)
	}
	return slices.Equal(got, a.assumed), got, nil
}

// AssumedColumns are the counters of an assumption still to check, as
// scalar subqueries a caller adds to the select list of its next
// statement (AssumedIn): each statement costs the server, and the check
// then costs none of its own. The statement's snapshot is the check's,
// as the first statement of a PostgreSQL batch is.
type AssumedColumns struct {
	Exprs []string // one per counter, each with one bound value
	Args  []any
	Dest  []any // where the statement scans them
	a     *Assumed
	row   *counterRow
}

// AssumedIn is the assumption of ctx still to check on db as columns of
// a statement, or nil when there is none. The caller's statement then
// checks it: no pipelined round reads the counters by itself (a statement
// fewer in the batch on PostgreSQL). A statement that returns no row
// leaves the check to Check, a round trip of its own.
func AssumedIn(ctx context.Context, db *DB) *AssumedColumns {
	a := assumedFor(ctx, db)
	if a == nil {
		return nil
	}
	a.mu.Lock()
	a.claimed = true
	a.mu.Unlock()
	c := newCounterRow(a.keys)
	ac := &AssumedColumns{Dest: c.dest, a: a, row: c}
	for _, k := range a.keys {
		ac.Exprs = append(ac.Exprs, db.counterColumn())
		ac.Args = append(ac.Args, k)
	}
	return ac
}

// Scanned records the counters as the statement read them, once it has
// scanned a row: ErrAssumptionFailed when they moved. A statement that
// returned no row leaves them to Check.
func (ac *AssumedColumns) Scanned() error {
	got, err := ac.row.values()
	if err != nil {
		return err
	}
	if !ac.a.found(got) {
		return ErrAssumptionFailed
	}
	return nil
}
