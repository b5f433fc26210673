package schema

import (
	"context"
	"fmt"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// shapeless are catalog columns that shape no physical table nor index.
// A restore materializes an archive's catalog at the archive's migration
// step, which may predate them (rs_strict and rs_gen: migration 0034); the
// migrations run after the load add them.
var shapeless = []string{"rs_strict", "rs_gen"}

// Materialize creates the physical user tables the catalog in db's system
// tables describes, with their columns, the indexes fields imply and the
// indexes admins made: what a restore needs after loading a catalog into a
// new database of either engine. Search indexes are built by
// BuildSearchIndexes once the rows are in (cheaper than keeping them in
// step row by row). Run it in the transaction that loads the catalog.
func Materialize(ctx context.Context, tx *store.DB) error {
	cat, err := load(ctx, tx, shapeless...)
	if err != nil {
		return err
	}
	// Parents first: a plugin table's id_link references its parent.
	ordered := make([]*Table, 0, len(cat.Tables))
	for _, t := range cat.Tables {
		if !t.IsPlugin {
			ordered = append(ordered, t)
		}
	}
	for _, t := range cat.Tables {
		if t.IsPlugin {
			ordered = append(ordered, t)
		}
	}
	for _, t := range ordered {
		// The catalog came from elsewhere (a backup): its names meet the
		// rule of today's schema API before they reach DDL, or the restore
		// is refused with the name's code instead of failing in the engine.
		if err := CheckTableName(t.Name); err != nil {
			return err
		}
		for _, f := range t.Fields {
			if err := CheckFieldName(f.Name); err != nil {
				if e, ok := errs.As(err); ok {
					return e.With("table", t.Name)
				}
				return err
			}
		}
		var parent *Table
		if t.IsPlugin && t.PluginOf != "" {
			parent, _ = cat.Table(t.PluginOf)
		}
		stmts := createTableSQL(tx, t, parent)
		for _, f := range t.Fields {
			stmts = append(stmts, addFieldSQL(tx, t, f)...)
		}
		if err := execAll(ctx, tx, "create table "+t.Name, stmts...); err != nil {
			return err
		}
	}
	idx, err := listIndexes(ctx, tx, "")
	if err != nil {
		return err
	}
	for _, ix := range idx {
		if err := createIndex(ctx, tx, ix); err != nil {
			return fmt.Errorf("index %s of %s: %w", ix.Name, ix.Table, err)
		}
	}
	return nil
}

// BuildSearchIndexes builds the search indexes the catalog asks for (and
// fills them from the rows already there), inside tx.
func BuildSearchIndexes(ctx context.Context, tx *store.DB) error { return syncSearch(ctx, tx) }
