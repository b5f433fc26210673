package store

import (
	"context"
	"database/sql"
	"sync"
)

// The writer's own connection (SQLite).
//
// SQLite keeps a page cache per connection, and in WAL mode a connection
// that finds the database changed by another connection since its last
// transaction throws its whole cache away. Write transactions used to run
// on whichever connection of the pool was free, so each began after some
// other connection's write: it read every B-tree page it needed (the
// table, its indexes, the versions, the history, the change log) from the
// file again, while holding the app's only writer slot, and every save
// queued behind it waited for those reads. Write transactions now run on
// one connection kept apart from the pool for them: the only connection
// that writes never finds the database changed by another (within this
// process), so its cache stays warm from one save to the next. Under 16
// writing clients a save read 2.4 times fewer pages from the file and
// updates went up by about a tenth (docs/performance.md).
//
// Only write transactions (DB.Tx, which holds the writer slot: one at a
// time) ask for it; should it be taken anyway, or broken, a transaction
// runs on the pool as before.

// writerConnKey marks the context of a write transaction that may run on
// the writer's connection.
type writerConnKey struct{}

// onWriterConn marks ctx: the transaction begun under it may take the
// writer's connection.
func onWriterConn(ctx context.Context) context.Context {
	return context.WithValue(ctx, writerConnKey{}, true)
}

// writerConn is the pool's connection kept for write transactions.
type writerConn struct {
	mu     sync.Mutex // held by the transaction running on conn
	conn   *sql.Conn  // taken from the pool at the first write
	closed bool
	// txs counts the transactions run on conn (tests).
	txs uint64
}

// begin starts a transaction on the writer's connection, and returns it
// with what gives the connection back when the transaction ends; ok is
// false when the connection is taken or cannot be had (the caller uses
// the pool).
func (w *writerConn) begin(ctx context.Context, pool *sql.DB, opts *sql.TxOptions) (tx *sql.Tx, release func(), ok bool) {
	if !w.mu.TryLock() {
		return nil, nil, false
	}
	if w.closed {
		w.mu.Unlock()
		return nil, nil, false
	}
	if w.conn == nil {
		// Not under ctx: the connection outlives this transaction.
		c, err := pool.Conn(context.WithoutCancel(ctx))
		if err != nil {
			w.mu.Unlock()
			return nil, nil, false
		}
		w.conn = c
	}
	tx, err := w.conn.BeginTx(ctx, opts)
	if err != nil {
		// A broken connection goes back to the pool, which drops it;
		// the next write takes a fresh one.
		w.conn.Close()
		w.conn = nil
		w.mu.Unlock()
		return nil, nil, false
	}
	w.txs++
	return tx, sync.OnceFunc(w.mu.Unlock), true
}

// close gives the connection back to the pool, after the transaction
// running on it, if any.
func (w *writerConn) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.conn != nil {
		w.conn.Close()
		w.conn = nil
	}
}

// WriterConnTxs is how many write transactions ran on the app's writer
// connection in this process (SQLite; zero on PostgreSQL).
func (db *DB) WriterConnTxs() uint64 {
	if db.stmts == nil || db.stmts.writer == nil {
		return 0
	}
	w := db.stmts.writer
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.txs
}
