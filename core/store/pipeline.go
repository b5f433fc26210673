package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Rows is a query's result being read: what *sql.Rows and pgx.Rows share.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Pipeline queues queries, each with the function that reads its rows,
// and runs them in the order queued. A reader may queue further queries
// (those that need what it read): they run once every query queued
// before them has been read, in a next round.
//
// On PostgreSQL, outside a transaction, a round is one pgx batch: its
// queries travel to the server together and their results come back
// together, one round trip instead of one per query, on one connection.
// The batch runs in one implicit transaction, each statement with its own
// snapshot (read committed) taken in the order queued: a query queued
// before another sees the database as it was no later than that one does.
// On SQLite (no round trips), inside a transaction, and when the context
// says so (WithoutPipelining), the queries run one by one in the same
// order on the usual path: the answers are the same either way.
//
// Readers must not run queries themselves (the connection is busy with
// the batch): they queue them. A reader is called with the rows once; it
// need not read them all.
type Pipeline struct {
	db     *DB
	queue  []pipelineQuery
	rounds int
	custom bool // CustomPlans
}

type pipelineQuery struct {
	what  string
	query string
	args  []any
	read  func(Rows) error
}

// Pipeline starts an empty pipeline on db.
func (db *DB) Pipeline() *Pipeline { return &Pipeline{db: db} }

type noPipelining struct{}

// WithoutPipelining makes the pipelines run under ctx run their queries
// one by one on every engine (tests compare both ways).
func WithoutPipelining(ctx context.Context) context.Context {
	return context.WithValue(ctx, noPipelining{}, true)
}

// Unpipelined reports whether ctx asks for queries one by one
// (WithoutPipelining).
func Unpipelined(ctx context.Context) bool { return ctx.Value(noPipelining{}) != nil }

type roundCounter struct{}

// CountRounds makes the pipelines run under ctx add their rounds (round
// trips on PostgreSQL; on SQLite, queries run one by one) to n, and
// Counters its query: tests check how many round trips an operation
// takes.
func CountRounds(ctx context.Context, n *atomic.Int64) context.Context {
	return context.WithValue(ctx, roundCounter{}, n)
}

// Pipelined reports whether the pipeline's rounds are each one round trip
// (PostgreSQL, in or out of a transaction).
func (p *Pipeline) Pipelined(ctx context.Context) bool {
	if p.db.Engine != Postgres || ctx.Value(noPipelining{}) != nil {
		return false
	}
	if p.db.tx {
		return p.db.ptx != nil
	}
	return p.db.pool != nil
}

// CustomPlans makes PostgreSQL plan the pipeline's statements for their
// arguments every time they run, and returns p.
//
// pgx runs every statement as a prepared statement of its connection, and
// after five executions PostgreSQL may keep one plan for all arguments (a
// generic plan) when it looks no dearer than those made so far. For a
// list that plan is often wrong: made for an average value (or from the
// statistics of a smaller table), it fetches every match of a common
// value to show 30, or sorts what an index would give in order (issue
// 35; docs/performance.md, "Generic plans at 1,000,000 rows"). Each
// round then starts with set_config('plan_cache_mode',
// 'force_custom_plan', true): local to the round's implicit transaction
// (a pgx batch ends with one Sync), it covers the round's statements and
// no others, for the cost of one more statement in the same round trip.
// Inside a transaction it lasts until the transaction ends. Planning
// every time costs some 40 µs a statement, which is why the pool does not
// force it for every statement: reads and saves by id have one right plan.
// Nothing changes on SQLite, or when queries run one by one
// (WithoutPipelining).
func (p *Pipeline) CustomPlans() *Pipeline {
	p.custom = true
	return p
}

// customPlans is the statement CustomPlans puts first in each round.
var customPlans = pipelineQuery{what: "plan_cache_mode",
	query: `SELECT set_config('plan_cache_mode', 'force_custom_plan', true)`}

// planned is round as sent to PostgreSQL: after customPlans under
// CustomPlans.
func (p *Pipeline) planned(round []pipelineQuery) []pipelineQuery {
	if !p.custom {
		return round
	}
	return append([]pipelineQuery{customPlans}, round...)
}

// Query queues query, written with '?' markers; read is called with its
// rows. what names the query in errors ("files of finds 12").
func (p *Pipeline) Query(what, query string, args []any, read func(Rows) error) {
	p.queue = append(p.queue, pipelineQuery{what: what, query: query, args: args, read: read})
}

// QueryRow queues a query that answers one row, scanned into dest (an
// error when it answers none).
func (p *Pipeline) QueryRow(what, query string, args []any, dest ...any) {
	p.Query(what, query, args, scanOneRow(dest))
}

// scanOneRow reads a query's one row into dest (sql.ErrNoRows when it
// answers none).
func scanOneRow(dest []any) func(Rows) error {
	return func(rows Rows) error {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return sql.ErrNoRows
		}
		return rows.Scan(dest...)
	}
}

// Rounds is the number of rounds run so far: round trips on PostgreSQL.
func (p *Pipeline) Rounds() int { return p.rounds }

// Run runs every queued query, and those queued while they are read,
// stopping at the first error.
func (p *Pipeline) Run(ctx context.Context) error {
	if len(p.queue) == 0 {
		return nil
	}
	if !p.Pipelined(ctx) {
		for len(p.queue) > 0 {
			round := p.next(ctx)
			for _, q := range round {
				if err := p.runOne(ctx, q); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if t := p.db.ptx; t != nil {
		// In a transaction: each round goes with what waits to be sent.
		for len(p.queue) > 0 {
			if err := t.flush(ctx, p.planned(p.next(ctx))); err != nil {
				return err
			}
		}
		return nil
	}
	conn, err := p.db.pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		dc, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: pipeline on a %T connection", driverConn)
		}
		for len(p.queue) > 0 {
			round := p.next(ctx)
			if a := assumedFor(ctx, p.db); a != nil {
				round = a.queue(round)
			}
			if err := runBatch(ctx, dc.Conn(), p.db.Engine, p.planned(round)); err != nil {
				return err
			}
		}
		return nil
	})
}

// next takes the queued queries as the next round.
func (p *Pipeline) next(ctx context.Context) []pipelineQuery {
	round := p.queue
	p.queue = nil
	p.rounds++
	countRound(ctx)
	return round
}

// countRound adds a round trip to the counter of ctx (CountRounds).
func countRound(ctx context.Context) {
	if n, ok := ctx.Value(roundCounter{}).(*atomic.Int64); ok {
		n.Add(1)
	}
}

// runOne runs q alone on the usual path (statement cache, transaction).
func (p *Pipeline) runOne(ctx context.Context, q pipelineQuery) error {
	rows, err := p.db.Query(ctx, q.query, q.args...)
	if err != nil {
		return fmt.Errorf("%s: %w", q.what, err)
	}
	err = q.read(rows)
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = rows.Err()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", q.what, err)
	}
	return nil
}

// batchNames names the queries of a batch for an error.
func batchNames(round []pipelineQuery) string {
	if len(round) == 1 {
		return round[0].what
	}
	names := make([]string, len(round))
	for i, q := range round {
		names[i] = q.what
	}
	return "one of " + strings.Join(names, ", ")
}

// pgxRows reads pgx's rows as database/sql would give them. Typed
// destinations (int64, string, bool, float64, time.Time, pointers to
// them, sql.Null*) scan alike; a *any destination gets the value
// database/sql would (int64 for every integer, float64, string, bool,
// time.Time, []byte), not pgx's native one (int32, pgtype.Numeric, a
// decoded JSON value...).
type pgxRows struct {
	pgx.Rows
	dest []any
	anys []anyDest
}

func (r *pgxRows) Scan(dest ...any) error {
	wrapped := false
	for i, d := range dest {
		p, ok := d.(*any)
		if !ok {
			continue
		}
		if !wrapped {
			wrapped = true
			r.dest = append(r.dest[:0], dest...)
			if cap(r.anys) < len(dest) {
				r.anys = make([]anyDest, len(dest))
			}
			r.anys = r.anys[:len(dest)]
		}
		r.anys[i].p = p
		r.dest[i] = &r.anys[i]
	}
	if !wrapped {
		return r.Rows.Scan(dest...)
	}
	return r.Rows.Scan(r.dest...)
}

// anyDest receives a column's value as database/sql gives it (pgx decodes
// it with its database/sql conversion for a sql.Scanner).
type anyDest struct{ p *any }

func (d *anyDest) Scan(src any) error {
	switch v := src.(type) {
	case []byte:
		// database/sql hands a *any its own copy of the bytes (empty,
		// not nil, for an empty value).
		b := make([]byte, len(v))
		copy(b, v)
		*d.p = b
	case int32:
		*d.p = int64(v)
	case int16:
		*d.p = int64(v)
	case float32:
		*d.p = float64(v)
	default:
		*d.p = src
	}
	return nil
}

// DB is the database the pipeline runs on.
func (p *Pipeline) DB() *DB { return p.db }
