package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
)

// Rewinder is a transaction value (TxValue) that can go back to an
// earlier state: Checkpoint returns the function that restores the state
// it was in when Checkpoint was called.
type Rewinder interface {
	Checkpoint() (rewind func())
}

// ErrSavepoint wraps a failure of the savepoint statements themselves:
// the transaction is no longer usable.
var ErrSavepoint = errors.New("savepoint")

// Savepoint runs fn inside a savepoint of db's transaction. When fn
// returns an error, everything it did is undone, as if it had not run:
// its statements (ROLLBACK TO SAVEPOINT), the commit hooks it added, and
// the transaction values it made or changed (those that are Rewinders,
// such as the change log's entries). Without that, a refused row of an
// import or a refused mutation of a sync push would still leave, say, a
// change-log entry for a record that was never saved. Savepoint returns
// fn's error; a failure of the savepoint itself wraps ErrSavepoint.
func (db *DB) Savepoint(ctx context.Context, name string, fn func() error) error {
	if !db.tx {
		return fmt.Errorf("%w %s: not in a transaction", ErrSavepoint, name)
	}
	if !ValidIdent(name) {
		return fmt.Errorf("%w: bad name %q", ErrSavepoint, name)
	}
	if _, err := db.Exec(ctx, `SAVEPOINT `+name); err != nil {
		return fmt.Errorf("%w %s: %w", ErrSavepoint, name, err)
	}
	rewind := db.hooks.checkpoint()
	if fnErr := fn(); fnErr != nil {
		if _, err := db.Exec(ctx, `ROLLBACK TO SAVEPOINT `+name); err != nil {
			return fmt.Errorf("%w %s: %w (after %w)", ErrSavepoint, name, err, fnErr)
		}
		rewind()
		if _, err := db.Exec(ctx, `RELEASE SAVEPOINT `+name); err != nil {
			return fmt.Errorf("%w %s: %w", ErrSavepoint, name, err)
		}
		return fnErr
	}
	if _, err := db.Exec(ctx, `RELEASE SAVEPOINT `+name); err != nil {
		return fmt.Errorf("%w %s: %w", ErrSavepoint, name, err)
	}
	return nil
}

// checkpoint returns what puts h back as it is now.
func (h *txHooks) checkpoint() (rewind func()) {
	if h == nil {
		return func() {}
	}
	keys := maps.Clone(h.keys)
	if keys == nil {
		keys = map[string]bool{}
	}
	before, after := len(h.before), len(h.after)
	had := make(map[string]bool, len(h.values))
	var rewinds []func()
	for k, v := range h.values {
		had[k] = true
		if r, ok := v.(Rewinder); ok {
			rewinds = append(rewinds, r.Checkpoint())
		}
	}
	return func() {
		h.keys = keys
		h.before, h.after = h.before[:before], h.after[:after]
		for k := range h.values {
			if !had[k] {
				delete(h.values, k)
			}
		}
		for _, r := range rewinds {
			r()
		}
	}
}
