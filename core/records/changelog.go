package records

import (
	"context"
	"strconv"

	"github.com/strata-archaeo/strata/core/changes"
)

// logChange notes a change of record id of the scope's table in the app's
// change log (core/changes), written in the transaction's commit: every
// write path of this package calls it once per record it changed. A dry
// run's transaction rolls back, and its entry with it.
func (s *Scope) logChange(ctx context.Context, id int64, op changes.Op) error {
	return changes.Record(ctx, s.DB, changes.Entry{Table: s.Table.Name, RecordID: id, Op: op,
		UserID: s.actorUserID(), Actor: s.actorName()})
}

func (s *Scope) actorUserID() int64 {
	if s.Actor == nil {
		return 0
	}
	return s.Actor.UserID
}

// actorName names who made a change when no user did: a plugin's system
// save, or an API key.
func (s *Scope) actorName() string {
	switch {
	case s.SystemActor != "":
		return s.SystemActor
	case s.Actor != nil && s.Actor.KeyID != 0:
		return "key:" + strconv.FormatInt(s.Actor.KeyID, 10)
	}
	return ""
}

// LogChange notes, in tx's transaction, a change of record id of table
// made by actor outside this package's save paths (a file link, geodata
// saved on its own): it is an update of the record.
func LogChange(ctx context.Context, s *Scope, id int64) error {
	return s.logChange(ctx, id, changes.Update)
}
