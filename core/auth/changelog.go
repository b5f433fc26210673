package auth

import (
	"context"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/store"
)

// privilegeChanged notes in the app's change log (core/changes), in db's
// transaction, that what user id may do or which tokens of theirs hold
// has changed: their global level, a table override or subset, their
// token version, or the account itself. Realtime ends that user's streams.
func privilegeChanged(ctx context.Context, db *store.DB, id int64) error {
	return changes.Record(ctx, db, changes.Entry{RecordID: id, Op: changes.Privilege})
}

// keyChanged notes in the change log, in db's transaction, that API key id
// no longer holds as it did (revoked or deleted): realtime ends its
// streams.
func keyChanged(ctx context.Context, db *store.DB, id int64) error {
	return changes.Record(ctx, db, changes.Entry{Table: changes.KeyTable, RecordID: id, Op: changes.Privilege})
}
