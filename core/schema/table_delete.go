package schema

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// TableDeletion reports what DeleteTable removed.
type TableDeletion struct {
	Dropped []string `json:"dropped"` // the table and its plugin tables
	Removed []Usage  `json:"removed"` // references removed by cascade
}

// DeleteTable drops a table. While anything else refers to it (lookups,
// value sources, relations, plugin tables, backlinks, chronology paths) it
// is refused with table_in_use listing them, unless cascade is asked: then
// the references are removed (lookups and value sources are cleared, the
// fields and their data stay), plugin tables are dropped with it, and the
// answer lists what went. The table's own indexes, relations and table
// privileges always go with it.
func DeleteTable(ctx context.Context, db *store.DB, table string, cascade bool, now time.Time) (*TableDeletion, error) {
	var out *TableDeletion
	err := change(ctx, db, func(tx *store.DB, st *state) error {
		gone, uses, err := deletionPlan(st, table)
		if err != nil {
			return err
		}
		if len(uses) > 0 && !cascade {
			return ErrTableInUse.With("used_by", uses)
		}
		changed := map[int64]*Table{}
		for _, u := range uses {
			if err := removeTableUsage(ctx, tx, st, u, gone, changed, now); err != nil {
				return err
			}
		}
		for _, ct := range changed {
			if err := saveTableSettings(ctx, tx, ct, now); err != nil {
				return err
			}
		}
		for _, r := range relationsOf(st, gone) {
			if slices.ContainsFunc(uses, func(u Usage) bool { return u.Relation == r.ID }) {
				continue // removed above
			}
			if err := removeRelation(ctx, tx, r); err != nil {
				return err
			}
		}
		for _, name := range gone {
			if err := dropTable(ctx, tx, st, name); err != nil {
				return err
			}
		}
		out = &TableDeletion{Dropped: gone, Removed: []Usage{}}
		if len(uses) > 0 {
			out.Removed = uses
		}
		return nil
	})
	return out, err
}

// deletionPlan is what deleting table drops (its plugin tables, children
// first, then the table) and the references to them that need cascade.
func deletionPlan(st *state, table string) (gone []string, uses []Usage, err error) {
	t, ok := st.cat.Table(table)
	if !ok {
		return nil, nil, ErrTableNotFound
	}
	gone = []string{}
	for _, c := range st.cat.PluginTables(table) {
		// A plugin feature's child table belongs to the feature of
		// this table and goes with it; a plugin table an admin made
		// holds data of its own and needs cascade.
		if c.Feature == "" {
			uses = append(uses, Usage{Kind: UsePluginTable, Table: c.Name})
		}
		gone = append(gone, c.Name)
	}
	gone = append(gone, t.Name) // children first: they reference it
	uses = append(uses, tableUsages(st, gone)...)
	return gone, uses, nil
}

// removeTableUsage removes one reference to a table that is going.
func removeTableUsage(ctx context.Context, tx *store.DB, st *state, u Usage, gone []string, changed map[int64]*Table, now time.Time) error {
	switch u.Kind {
	case UseLookup, UseValuesFrom:
		t, _ := st.cat.Table(u.Table)
		f, _ := t.Field(u.Field)
		if u.Kind == UseLookup {
			before := f.indexKind()
			f.IDFromTb = ""
			if err := setFieldIndex(ctx, tx, f, t, before, f.indexKind()); err != nil {
				return err
			}
		} else {
			f.GetValuesFromTb = ""
		}
		return saveFieldSources(ctx, tx, f, now)
	case UseBacklink:
		t, _ := st.cat.Table(u.Table)
		t.Backlinks = slices.DeleteFunc(t.Backlinks, func(s string) bool { return s == u.Value })
		changed[t.ID] = t
	case UseChronoPath:
		// The path is a chain: it stops before the first table that goes.
		t, _ := st.cat.Table(u.Table)
		if i := slices.IndexFunc(t.ChronoDensityPath, func(s string) bool { return slices.Contains(gone, s) }); i >= 0 {
			t.ChronoDensityPath = t.ChronoDensityPath[:i]
		}
		changed[t.ID] = t
	case UseRelation:
		if r, ok := st.relation(u.Relation); ok {
			return removeRelation(ctx, tx, r)
		}
	}
	return nil // plugin tables are dropped by the caller
}

// dropTable removes a table's catalog rows, the rows of system tables that
// name it, and the table itself.
func dropTable(ctx context.Context, tx *store.DB, st *state, name string) error {
	t, _ := st.cat.Table(name)
	for _, c := range tableNameColumns {
		if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Sys(c.sys)+` WHERE `+tx.Engine.Quote(c.col)+` = ?`, name); err != nil {
			return fmt.Errorf("drop table %s: %w", name, err)
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Sys("fields")+` WHERE table_id = ?`, t.ID); err != nil {
		return fmt.Errorf("drop table %s: %w", name, err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Sys("tables")+` WHERE id = ?`, t.ID); err != nil {
		return fmt.Errorf("drop table %s: %w", name, err)
	}
	// On SQLite (foreign keys on) DROP TABLE first deletes the rows, which
	// would cascade into child tables: plugin tables are dropped before
	// their parent, and no other table has a constraint on a user table.
	return execAll(ctx, tx, "drop table "+name, `DROP TABLE `+tx.Qualify(name))
}
