package files

import (
	"context"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/store"
)

// Caller is who asks, as the files rules see it: whether an administrator
// (who sees every file, orphans included) and the caller's records scope
// on a table (level and row subset), the one the records routes use.
type Caller struct {
	Admin bool
	Scope func(ctx context.Context, table string) (*records.Scope, error)
	// Tables lists the caller's scopes on every table that may hold files
	// and that the caller may read, for the files list (the records gate
	// gives no scope on the others).
	Tables func(ctx context.Context) ([]*records.Scope, error)
}

// CheckEdit checks that the caller may change the record: it exists within
// the caller's rows, with edit on its table (a self_writer only its own).
func (c Caller) CheckEdit(ctx context.Context, to Target) error {
	sc, err := c.Scope(ctx, to.Table)
	if err != nil {
		return err
	}
	return sc.Editable(ctx, to.ID)
}

// CheckRead checks that the caller may read the file: read on a record it
// is linked to, within the caller's rows; orphans are for administrators.
// A file the caller may not see is not found.
func (c Caller) CheckRead(ctx context.Context, db *store.DB, fileID int64) error {
	if c.Admin {
		return nil
	}
	links, err := LinksOf(ctx, db, []int64{fileID})
	if err != nil {
		return err
	}
	for _, l := range links[fileID] {
		sc, err := c.Scope(ctx, l.Table)
		if err != nil {
			if e, ok := errs.As(err); ok && e.Kind != errs.Internal {
				continue // a table gone or out of reach
			}
			return err
		}
		ok, err := sc.Holds(ctx, l.RecordID)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	return ErrFileNotFound
}

// CheckChange checks that the caller may change a file's bytes or
// metadata (PATCH, replace): edit on a record it is linked to; for a
// delete (all true), on every record it is linked to. Orphans are for
// administrators. A file the caller may not read is not found.
func (c Caller) CheckChange(ctx context.Context, db *store.DB, fileID int64, all bool) error {
	if err := c.CheckRead(ctx, db, fileID); err != nil {
		return err
	}
	if c.Admin {
		return nil
	}
	links, err := LinksOf(ctx, db, []int64{fileID})
	if err != nil {
		return err
	}
	var last error = records.ErrNotEnough.With("required", auth.Edit.String())
	for _, l := range links[fileID] {
		err := c.CheckEdit(ctx, Target{Table: l.Table, ID: l.RecordID})
		if err == nil && !all {
			return nil
		}
		if err != nil {
			if all {
				return err
			}
			last = err
		}
	}
	if all && len(links[fileID]) > 0 {
		return nil
	}
	return last
}
