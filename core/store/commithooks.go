package store

import (
	"context"
	"path/filepath"
)

// txHooks are what a transaction runs around its commit, shared by every
// copy of the transaction's DB (bindTx copies it; nested Tx joins it).
type txHooks struct {
	keys   map[string]bool
	values map[string]any
	before []func(ctx context.Context, tx *DB) error
	after  []func(base *DB)
}

// BeforeCommit runs fn in the transaction after its work and just before
// COMMIT, once per key however often it is asked for (an area collects
// what the transaction did and writes it once, last: the change log takes
// its lock there, after every row lock, so that it holds it only for the
// commit and never waits on a row lock while holding it). Outside a
// transaction fn runs at once in a transaction of its own.
func (db *DB) BeforeCommit(ctx context.Context, key string, fn func(ctx context.Context, tx *DB) error) error {
	if !db.tx {
		return db.Tx(ctx, func(tx *DB) error { return tx.BeforeCommit(ctx, key, fn) })
	}
	if db.hooks == nil {
		// A transaction not made by Tx: nothing runs at its commit.
		return fn(ctx, db)
	}
	if db.hooks.keys[key] {
		return nil
	}
	db.hooks.keys[key] = true
	db.hooks.before = append(db.hooks.before, fn)
	return nil
}

// AfterCommit runs fn once the transaction has committed (never when it
// rolls back), with the app's DB outside the transaction. fn must not
// block nor write through base synchronously: it runs while the
// transaction's connection (PostgreSQL) or the app's writer slot (SQLite)
// is still held.
func (db *DB) AfterCommit(fn func(base *DB)) {
	if !db.tx || db.hooks == nil {
		fn(db)
		return
	}
	db.hooks.after = append(db.hooks.after, fn)
}

// TxValue is the transaction's value under key, made by init the first
// time it is asked for: what an area collects over one transaction (the
// change log's entries). Outside a transaction it is nil.
func (db *DB) TxValue(key string, init func() any) any {
	if !db.tx || db.hooks == nil {
		return nil
	}
	if v, ok := db.hooks.values[key]; ok {
		return v
	}
	if db.hooks.values == nil {
		db.hooks.values = map[string]any{}
	}
	v := init()
	db.hooks.values[key] = v
	return v
}

// runBefore runs the BeforeCommit hooks, including those a hook adds.
func (h *txHooks) runBefore(ctx context.Context, tx *DB) error {
	for i := 0; i < len(h.before); i++ {
		if err := h.before[i](ctx, tx); err != nil {
			return err
		}
	}
	return nil
}

func (h *txHooks) runAfter(base *DB) {
	for _, fn := range h.after {
		fn(base)
	}
}

// Key names the app's database in this process and across nodes: its
// PostgreSQL schema, or its SQLite file.
func (db *DB) Key() string {
	if db.schema != "" {
		return "pg:" + db.schema
	}
	return "sqlite:" + filepath.Clean(db.file)
}
