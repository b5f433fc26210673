package schema

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// RenameField renames a field and its column (RENAME COLUMN on both
// engines, so data and indexes stay) and rewrites the references in the
// same transaction: the table's preview and id_field, value sources of
// other fields, relations, index definitions and backlinks.
func RenameField(ctx context.Context, db *store.DB, table, field, newName string, now time.Time) (*Field, error) {
	newName = strings.TrimSpace(newName)
	if newName == "" {
		return nil, ErrParameterMissing.With("parameter", "new_name")
	}
	if err := CheckFieldName(newName); err != nil {
		return nil, err
	}
	var out *Field
	err := change(ctx, db, func(tx *store.DB, st *state) error {
		t, ok := st.cat.Table(table)
		if !ok {
			return ErrTableNotFound
		}
		f, ok := t.Field(field)
		if !ok {
			return ErrFieldNotFound
		}
		if _, exists := t.Field(newName); exists || t.IsSystemColumn(newName) {
			return ErrFieldExists
		}
		if err := execAll(ctx, tx, "rename column "+table+"."+field,
			`ALTER TABLE `+tx.Qualify(table)+` RENAME COLUMN `+tx.Engine.Quote(field)+` TO `+tx.Engine.Quote(newName)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("fields")+` SET name = ?, updated_at = ? WHERE id = ?`, newName, now, f.ID); err != nil {
			return fmt.Errorf("rename field %s: %w", field, err)
		}
		for _, q := range []string{
			`UPDATE ` + tx.Sys("relations") + ` SET from_col = ? WHERE from_tb = ? AND from_col = ?`,
			`UPDATE ` + tx.Sys("relations") + ` SET to_col = ? WHERE to_tb = ? AND to_col = ?`,
		} {
			if _, err := tx.Exec(ctx, q, newName, table, field); err != nil {
				return fmt.Errorf("rename field %s: %w", field, err)
			}
		}
		for _, ix := range st.indexes {
			if ix.Table == table && slices.Contains(ix.Columns, field) {
				cols := slices.Clone(ix.Columns)
				cols[slices.Index(cols, field)] = newName
				if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("indexes")+` SET columns = ? WHERE id = ?`, mustJSON(cols), ix.ID); err != nil {
					return fmt.Errorf("rename field %s: %w", field, err)
				}
			}
		}
		if err := renameFieldRefs(ctx, tx, st, t, field, newName, now); err != nil {
			return err
		}
		nf := *f
		nf.Name = newName
		out = &nf
		return nil
	})
	return out, err
}

// renameFieldRefs rewrites the table settings and value sources naming
// table.field.
func renameFieldRefs(ctx context.Context, tx *store.DB, st *state, t *Table, field, newName string, now time.Time) error {
	old := t.Name + ":" + field
	for _, o := range st.cat.Tables {
		touched := false
		if o == t {
			if o.IDField == field {
				o.IDField, touched = newName, true
			}
			if i := slices.Index(o.Preview, field); i >= 0 {
				o.Preview[i], touched = newName, true
			}
		}
		for i, s := range o.Backlinks {
			if b, ok := ParseBacklink(s); ok && b.ViaTb == t.Name && b.FkCol == field {
				b.FkCol = newName
				o.Backlinks[i], touched = b.String(), true
			}
		}
		if touched {
			if err := saveTableSettings(ctx, tx, o, now); err != nil {
				return err
			}
		}
		for _, of := range o.Fields {
			if of.GetValuesFromTb == old {
				of.GetValuesFromTb = t.Name + ":" + newName
				if err := saveFieldSources(ctx, tx, of, now); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
