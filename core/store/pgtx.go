package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"
)

// pgTx is a PostgreSQL transaction on one connection of the pool, run by
// Strata rather than by database/sql, so that its statements can travel
// together: BEGIN waits for the transaction's first statement, and the
// writes whose answers are not needed (ExecLater) wait for the next
// statement, a pipeline's round, or COMMIT, and go with it in one pgx
// batch. A save that used to cost a round trip per statement costs one per
// point where it needs an answer.
//
// Every statement goes through the transaction (it is the DB's Execer and
// gorm's connection), which sends what waits first, so statements reach
// the server in the order they were made. A waiting statement that fails
// fails the transaction: the error is the one of the next statement, of
// Run, or of the commit, and everything is rolled back.
type pgTx struct {
	owner   *DB // the app's DB the transaction runs on (not bound to it)
	conn    *sql.Conn
	waiting []pipelineQuery // BEGIN until sent, then ExecLater's writes
	begun   bool            // BEGIN has been sent
	err     error           // a batch failed: the transaction is lost
}

// pgTxFor is db's transaction when its statements go through it (not, for
// instance, through a statement cache put in front of it), else nil.
func (db *DB) pgTxFor() *pgTx {
	if db.ptx == nil || db.SQL != Execer(db.ptx) {
		return nil
	}
	return db.ptx
}

// runPgTx is Tx on PostgreSQL.
func (db *DB) runPgTx(ctx context.Context, fn func(tx *DB) error) (err error) {
	conn, err := db.pool.Conn(ctx)
	if err != nil {
		return err
	}
	t := &pgTx{owner: db, conn: conn, waiting: []pipelineQuery{{what: "begin", query: "BEGIN"}}}
	committed := false
	defer func() {
		if !committed {
			t.rollback(ctx)
		}
		_ = conn.Close()
	}()
	g := db.Gorm.Session(&gorm.Session{Context: ctx, NewDB: true})
	tx := db.bindTx(g, t)
	tx.ptx = t
	err = fn(tx)
	if err == nil {
		err = tx.hooks.runBefore(ctx, tx)
	}
	if err != nil {
		if t.err != nil && !errors.Is(err, t.err) {
			// What fn saw (a transaction aborted) came from this.
			return t.err
		}
		return err
	}
	if !t.begun && len(t.waiting) == 1 {
		// Nothing was sent: nothing to commit.
		committed = true
		return nil
	}
	t.waiting = append(t.waiting, pipelineQuery{what: "commit", query: "COMMIT"})
	if err := t.flush(ctx, nil); err != nil {
		return err
	}
	committed = true
	tx.hooks.runAfter(db)
	return nil
}

// rollback ends a transaction that will not commit. A connection whose
// state is unknown afterwards is closed rather than put back in the pool.
func (t *pgTx) rollback(ctx context.Context) {
	if !t.begun {
		return
	}
	if _, err := t.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
		_ = t.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}

// flush sends what waits, then round (a pipeline's queries, may be nil),
// as one batch.
func (t *pgTx) flush(ctx context.Context, round []pipelineQuery) error {
	if t.err != nil {
		return t.err
	}
	if len(t.waiting) == 0 && len(round) == 0 {
		return nil
	}
	batch := append(t.waiting, round...)
	t.waiting = nil
	if batch[0].query == "BEGIN" {
		t.begun = true
		if a := assumedFor(ctx, t.owner); a != nil {
			// A request on assumed versions (Assumed) checks them as the
			// transaction's first statement: what it writes is written
			// on versions still those assumed, or not at all (the check
			// fails the transaction, which rolls back).
			batch = append(batch[:1:1], a.queue(batch[1:])...)
		}
	}
	t.err = t.conn.Raw(func(driverConn any) error {
		dc, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: transaction on a %T connection", driverConn)
		}
		return runBatch(ctx, dc.Conn(), Postgres, batch)
	})
	return t.err
}

// execLater queues a write whose answer is not needed.
func (t *pgTx) execLater(what, query string, args []any) {
	t.waiting = append(t.waiting, pipelineQuery{what: what, query: query, args: args})
}

// ExecContext, QueryContext, QueryRowContext and PrepareContext make the
// transaction the DB's Execer and gorm's connection: what waits is sent
// first (query is already in PostgreSQL's $n form).

func (t *pgTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := t.flush(ctx, nil); err != nil {
		return nil, err
	}
	return t.conn.ExecContext(ctx, query, args...)
}

func (t *pgTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := t.flush(ctx, nil); err != nil {
		return nil, err
	}
	return t.conn.QueryContext(ctx, query, args...)
}

// QueryRowContext cannot return the error of what waited: the query then
// runs in the failed transaction, which answers it with an error, and the
// transaction returns the first one.
func (t *pgTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	_ = t.flush(ctx, nil)
	return t.conn.QueryRowContext(ctx, query, args...)
}

func (t *pgTx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	if err := t.flush(ctx, nil); err != nil {
		return nil, err
	}
	return t.conn.PrepareContext(ctx, query)
}

var _ gorm.ConnPool = (*pgTx)(nil)

// ExecLater runs a write whose answer is not needed. In a PostgreSQL
// transaction it waits for the transaction's next statement (or its
// commit) and goes with it in one round trip; an error comes from there
// and fails the transaction. Elsewhere it is Exec.
func (db *DB) ExecLater(ctx context.Context, what, query string, args ...any) error {
	if t := db.pgTxFor(); t != nil {
		t.execLater(what, query, args)
		return nil
	}
	if _, err := db.Exec(ctx, query, args...); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// runBatch sends round as one pgx batch and reads its results in order
// (a query without a reader is a statement whose answer is not read).
func runBatch(ctx context.Context, conn *pgx.Conn, e Engine, round []pipelineQuery) (err error) {
	b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(round))}
	for _, q := range round {
		b.Queue(e.Rebind(q.query), q.args...)
	}
	res := conn.SendBatch(ctx, b)
	defer func() {
		if cerr := res.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	scan := &pgxRows{}
	for _, q := range round {
		if q.read == nil {
			if _, err := res.Exec(); err != nil {
				return fmt.Errorf("%s: %w", q.what, err)
			}
			continue
		}
		rows, err := res.Query()
		if err != nil {
			// pgx prepares the batch's new statements together: the
			// failing one may be any of them.
			return fmt.Errorf("%s: %w", batchNames(round), err)
		}
		scan.Rows = rows
		err = q.read(scan)
		rows.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", q.what, err)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("%s: %w", batchNames(round), err)
		}
	}
	return nil
}

// QueryRowLater runs a write that answers one row (its RETURNING) whose
// values are needed only once the transaction has committed. In a
// PostgreSQL transaction it waits, as ExecLater's writes do, for the
// transaction's next statement or its commit, and dest is filled when it
// has run: read it after Tx returns without error. Elsewhere it runs at
// once.
func (db *DB) QueryRowLater(ctx context.Context, what, query string, args []any, dest ...any) error {
	if t := db.pgTxFor(); t != nil {
		t.waiting = append(t.waiting, pipelineQuery{what: what, query: query, args: args, read: scanOneRow(dest)})
		return nil
	}
	if err := db.QueryRow(ctx, query, args...).Scan(dest...); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
