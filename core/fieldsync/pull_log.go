package fieldsync

import (
	"context"
	"fmt"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/store"
)

// changed is one record of a table as an incremental pull finds it in the
// change log: its first change after the checkpoint (what the device's
// copy was made before) and the last log id that named it.
type changed struct {
	recordID int64
	// first is the op of the record's first change after the checkpoint;
	// version the record's version after it, i.e. the id of the snapshot
	// of its state before it (the state the device holds).
	first   changes.Op
	version int64
}

// tableChanges reads the log's rows of table after id after, up to id
// upTo, at most limit rows in id order: the records they name, each once
// (by its first change), in the order they first appear, and the id of
// the last row read (after when none).
func tableChanges(ctx context.Context, db *store.DB, table string, after, upTo int64, limit int) ([]changed, int64, int, error) {
	rows, err := db.Query(ctx, `SELECT id, record_id, op, version FROM `+db.Sys("changes")+
		` WHERE tb = ? AND id > ? AND id <= ? AND op IN (?, ?, ?) ORDER BY id LIMIT ?`,
		table, after, upTo, string(changes.Create), string(changes.Update), string(changes.Delete), limit)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("read change log: %w", err)
	}
	defer rows.Close()
	var out []changed
	seen := map[int64]bool{}
	last, n := after, 0
	for rows.Next() {
		var id, record, version int64
		var op string
		if err := rows.Scan(&id, &record, &op, &version); err != nil {
			return nil, 0, 0, fmt.Errorf("read change log: %w", err)
		}
		last, n = id, n+1
		if !seen[record] {
			seen[record] = true
			out = append(out, changed{recordID: record, first: changes.Op(op), version: version})
		}
	}
	return out, last, n, rows.Err()
}

// accessChanged reports whether, between log ids after and upTo, the
// caller's privileges changed (a user's: Table "" and RecordID the user;
// an API key's: Table changes.KeyTable) or the schema of table (or of the
// whole catalog): what the device holds may then be more than the caller
// may now see, or shaped otherwise, and the pull starts again.
func accessChanged(ctx context.Context, db *store.DB, actor *auth.Actor, table string, after, upTo int64) (bool, error) {
	who, whoTable := actor.UserID, ""
	if actor.KeyID != 0 {
		who, whoTable = actor.KeyID, changes.KeyTable
	}
	var n int
	err := db.QueryRow(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM `+db.Sys("changes")+
		` WHERE id > ? AND id <= ? AND ((op = ? AND tb = ? AND record_id = ?) OR (op = ? AND (tb = ? OR tb = ''))) LIMIT 1) x`,
		after, upTo, string(changes.Privilege), whoTable, who, string(changes.Schema), table).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read change log: %w", err)
	}
	return n > 0, nil
}
