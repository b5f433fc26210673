package schema

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// state is what a configuration change sees: the whole catalog with its
// relations and indexes, read inside the changing transaction.
type state struct {
	cat       *Catalog
	relations []*Relation
	indexes   []*Index
}

// change runs fn in one transaction with the catalog locked and loaded,
// and bumps the catalog version when fn succeeds. Any error rolls back the
// catalog rows and the DDL together (both engines run DDL transactionally).
func change(ctx context.Context, db *store.DB, fn func(tx *store.DB, st *state) error) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		if err := lockCatalog(ctx, tx); err != nil {
			return err
		}
		st, err := loadState(ctx, tx)
		if err != nil {
			return err
		}
		if err := fn(tx, st); err != nil {
			return err
		}
		return bumpVersion(ctx, tx)
	})
}

func loadState(ctx context.Context, db *store.DB) (*state, error) {
	cat, err := Load(ctx, db)
	if err != nil {
		return nil, err
	}
	rels, err := listRecorded(ctx, db)
	if err != nil {
		return nil, err
	}
	idx, err := listIndexes(ctx, db, "")
	if err != nil {
		return nil, err
	}
	return &state{cat: cat, relations: rels, indexes: idx}, nil
}

// lockCatalog serialises configuration changes. SQLite needs nothing: the
// transaction is BEGIN IMMEDIATE and already holds the write lock. On
// PostgreSQL two changes could otherwise both validate against the same
// catalog and then both write (say, a rename racing a lookup on the old
// name); SHARE ROW EXCLUSIVE conflicts with itself and with plain row
// writes, but not with the reads every request makes.
func lockCatalog(ctx context.Context, tx *store.DB) error {
	if tx.Engine != store.Postgres {
		return nil
	}
	_, err := tx.Exec(ctx, `LOCK TABLE `+tx.Sys("tables")+`, `+tx.Sys("fields")+`, `+tx.Sys("relations")+`, `+
		tx.Sys("indexes")+` IN SHARE ROW EXCLUSIVE MODE`)
	if err != nil {
		return fmt.Errorf("lock catalog: %w", err)
	}
	return nil
}

// saveTableSettings writes the list settings and id_field of t, which
// renames and cascades rewrite.
func saveTableSettings(ctx context.Context, tx *store.DB, t *Table, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE `+tx.Sys("tables")+` SET id_field = ?, preview = ?, chrono_density_path = ?,
		backlinks = ?, extra = ?, updated_at = ? WHERE id = ?`, nullable(t.IDField), mustJSON(nonNil(t.Preview)),
		mustJSON(nonNil(t.ChronoDensityPath)), mustJSON(nonNil(t.Backlinks)), t.extraJSON(), now, t.ID)
	if err != nil {
		return fmt.Errorf("update table %s: %w", t.Name, err)
	}
	return nil
}

// saveFieldSources writes the value sources of f (lookup and values table).
func saveFieldSources(ctx context.Context, tx *store.DB, f *Field, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE `+tx.Sys("fields")+` SET id_from_tb = ?, get_values_from_tb = ?, updated_at = ? WHERE id = ?`,
		nullable(f.IDFromTb), nullable(f.GetValuesFromTb), now, f.ID)
	if err != nil {
		return fmt.Errorf("update field %s: %w", f.Name, err)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// execAll runs DDL statements in order, wrapping the first failure with what.
func execAll(ctx context.Context, tx *store.DB, what string, stmts ...string) error {
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}
