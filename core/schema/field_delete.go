package schema

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// DeleteField drops a field and its column. While a relation, an index, a
// value source of another field, a backlink or the table's id_field uses
// it, it is refused with field_in_use listing them, unless cascade is
// asked: then those go too (relations and indexes dropped, value sources
// and id_field cleared, backlinks removed). The preview list forgets the
// field either way. It returns the references removed.
func DeleteField(ctx context.Context, db *store.DB, table, field string, cascade bool, now time.Time) ([]Usage, error) {
	var out []Usage
	err := change(ctx, db, func(tx *store.DB, st *state) error {
		t, ok := st.cat.Table(table)
		if !ok {
			return ErrTableNotFound
		}
		f, ok := t.Field(field)
		if !ok {
			return ErrFieldNotFound
		}
		uses := fieldUsages(st, t, f)
		if len(uses) > 0 && !cascade {
			return ErrFieldInUse.With("used_by", uses)
		}
		for _, u := range uses {
			if err := removeFieldUsage(ctx, tx, st, t, f, u, now); err != nil {
				return err
			}
		}
		if i := slices.Index(t.Preview, field); i >= 0 {
			t.Preview = slices.Delete(t.Preview, i, i+1)
			if err := saveTableSettings(ctx, tx, t, now); err != nil {
				return err
			}
		}
		// SQLite refuses to drop an indexed column: the field's own index
		// goes first (user indexes on it went with the usages above).
		stmts := dropSearchIndexSQL(tx, SearchIndexName(f))
		if f.indexKind() != noIndex {
			stmts = append(stmts, dropIndexSQL(tx, fieldIndexRawName(f)))
		}
		stmts = append(stmts, `ALTER TABLE `+tx.Qualify(table)+` DROP COLUMN `+tx.Engine.Quote(field))
		if err := execAll(ctx, tx, "drop column "+table+"."+field, stmts...); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Sys("fields")+` WHERE id = ?`, f.ID); err != nil {
			return fmt.Errorf("delete field %s: %w", field, err)
		}
		out = uses
		if out == nil {
			out = []Usage{}
		}
		return nil
	})
	return out, err
}

// removeFieldUsage removes one reference to field f of t.
func removeFieldUsage(ctx context.Context, tx *store.DB, st *state, t *Table, f *Field, u Usage, now time.Time) error {
	switch u.Kind {
	case UseRelation:
		if r, ok := st.relation(u.Relation); ok {
			return removeRelation(ctx, tx, r)
		}
	case UseIndex:
		for _, ix := range st.indexes {
			if ix.Table == t.Name && ix.Name == u.Index {
				return removeIndex(ctx, tx, ix)
			}
		}
	case UseValuesFrom:
		o, _ := st.cat.Table(u.Table)
		of, _ := o.Field(u.Field)
		of.GetValuesFromTb = ""
		return saveFieldSources(ctx, tx, of, now)
	case UseIDField:
		t.IDField = ""
		return saveTableSettings(ctx, tx, t, now)
	case UseBacklink:
		o, _ := st.cat.Table(u.Table)
		o.Backlinks = slices.DeleteFunc(o.Backlinks, func(s string) bool { return s == u.Value })
		return saveTableSettings(ctx, tx, o, now)
	}
	return nil
}

// SortFields sets the display order of a table's fields: names must list
// every field once.
func SortFields(ctx context.Context, db *store.DB, table string, names []string, now time.Time) error {
	return change(ctx, db, func(tx *store.DB, st *state) error {
		t, ok := st.cat.Table(table)
		if !ok {
			return ErrTableNotFound
		}
		all := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			all[i] = f.Name
		}
		if err := checkPermutation(all, names); err != nil {
			return err
		}
		for i, name := range names {
			f, _ := t.Field(name)
			if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("fields")+` SET sort = ?, updated_at = ? WHERE id = ?`, i, now, f.ID); err != nil {
				return fmt.Errorf("sort fields: %w", err)
			}
		}
		return nil
	})
}
