package store

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Statements records what is sent to PostgreSQL under a context made by
// TraceStatements: each statement, each batch (one round trip whatever it
// holds) and each statement prepared apart. Tests use it to count the
// round trips of an operation and to show them when there are more than
// expected.
type Statements struct {
	mu      sync.Mutex
	sent    []string
	queries []Query
}

// Query is one statement sent to PostgreSQL with its arguments, as the
// server received it ($n markers): tests explain exactly what ran.
type Query struct {
	SQL  string
	Args []any
}

type statementsKey struct{}

// TraceStatements makes what is sent to PostgreSQL under ctx recorded in
// st (nothing on SQLite).
func TraceStatements(ctx context.Context, st *Statements) context.Context {
	return context.WithValue(ctx, statementsKey{}, st)
}

// Sent is what was sent, in order: a statement's SQL, "batch: " and the
// statements of a batch, or "prepare: " and a statement prepared apart.
func (st *Statements) Sent() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]string(nil), st.sent...)
}

// Queries is every statement sent, alone or in a batch, in order, with
// its arguments (statements prepared apart are left out: they run later).
func (st *Statements) Queries() []Query {
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]Query(nil), st.queries...)
}

func (st *Statements) query(sql string, args []any) {
	st.mu.Lock()
	st.queries = append(st.queries, Query{SQL: sql, Args: append([]any(nil), args...)})
	st.mu.Unlock()
}

func (st *Statements) add(s string) {
	st.mu.Lock()
	st.sent = append(st.sent, s)
	st.mu.Unlock()
}

// tracer is every PostgreSQL connection's pgx tracer: it costs a context
// lookup per statement, and records only under TraceStatements.
type tracer struct{}

func statementsOf(ctx context.Context) *Statements {
	st, _ := ctx.Value(statementsKey{}).(*Statements)
	return st
}

func (tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if st := statementsOf(ctx); st != nil {
		st.add(d.SQL)
		st.query(d.SQL, d.Args)
	}
	return ctx
}

func (tracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (tracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	if st := statementsOf(ctx); st != nil {
		s := "batch:"
		for _, q := range d.Batch.QueuedQueries {
			s += " " + q.SQL + ";"
			st.query(q.SQL, q.Arguments)
		}
		st.add(s)
	}
	return ctx
}

func (tracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (tracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (tracer) TracePrepareStart(ctx context.Context, _ *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	if st := statementsOf(ctx); st != nil {
		st.add("prepare: " + d.SQL)
	}
	return ctx
}

func (tracer) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}
