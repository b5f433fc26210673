package records

import (
	"context"
	"errors"
	"fmt"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// DeleteResult reports a (bulk) delete: ids are evaluated one by one, so a
// self_writer's mixed batch deletes only its own records.
type DeleteResult struct {
	Requested int     `json:"requested"`
	Deleted   []int64 `json:"deleted_ids"`
	Denied    []int64 `json:"denied_ids"`    // found, but not the caller's to delete
	NotFound  []int64 `json:"not_found_ids"` // absent, or outside the caller's rows
}

// Delete removes the records ids in one transaction, storing a version
// snapshot of each first; plugin child rows go with them.
func Delete(ctx context.Context, s *Scope, ids []int64) (*DeleteResult, error) {
	res := &DeleteResult{Requested: len(ids), Deleted: []int64{}, Denied: []int64{}, NotFound: []int64{}}
	if s.Table.IsPlugin {
		return nil, ErrInvalidParameter.With("detail", "plugin rows are deleted through their parent record")
	}
	err := s.DB.Tx(ctx, func(tx *store.DB) error {
		ts := *s
		ts.DB = tx
		for _, id := range ids {
			creator, err := ts.lockRow(ctx, id)
			if errors.Is(err, ErrRecordNotFound) {
				res.NotFound = append(res.NotFound, id)
				continue
			}
			if err != nil {
				return err
			}
			if !ts.CanEdit(creator) {
				res.Denied = append(res.Denied, id)
				continue
			}
			if err := ts.snapshot(ctx, id, "delete"); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Qualify(s.Table.Name)+` WHERE "id" = ?`, id); err != nil {
				return fmt.Errorf("delete %s %d: %w", s.Table.Name, id, err)
			}
			// Its file links go with it; the files stay (SPEC §4.4).
			if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Sys("file_links")+` WHERE tb = ? AND record_id = ?`, s.Table.Name, id); err != nil {
				return fmt.Errorf("delete file links of %s %d: %w", s.Table.Name, id, err)
			}
			// Its features go too; the version just written keeps them.
			if err := ts.deleteGeodata(ctx, id); err != nil {
				return err
			}
			if err := clearUncheckedOf(ctx, tx, s.Table.Name, id); err != nil {
				return err
			}
			if err := ts.logChange(ctx, id, changes.Delete); err != nil {
				return err
			}
			res.Deleted = append(res.Deleted, id)
		}
		return nil
	})
	if err != nil {
		return nil, mapForeignKeyViolation(err)
	}
	return res, nil
}

// DeletePlugins removes every plugin child row of a record (after a
// snapshot) and returns how many went.
func DeletePlugins(ctx context.Context, s *Scope, id int64) (int64, error) {
	var total int64
	err := s.DB.Tx(ctx, func(tx *store.DB) error {
		ts := *s
		ts.DB = tx
		creator, err := ts.lockRow(ctx, id)
		if err != nil {
			return err
		}
		if !ts.CanEdit(creator) {
			return ErrNotEnough.With("reason", "not_your_record")
		}
		if err := ts.snapshot(ctx, id, "delete_plugins"); err != nil {
			return err
		}
		if err := ts.logChange(ctx, id, changes.Update); err != nil {
			return err
		}
		for _, pt := range s.Catalog.PluginTables(s.Table.Name) {
			r, err := tx.Exec(ctx, `DELETE FROM `+tx.Qualify(pt.Name)+` WHERE "id_link" = ?`, id)
			if err != nil {
				return fmt.Errorf("delete rows of %s: %w", pt.Name, err)
			}
			n, _ := r.RowsAffected()
			total += n
		}
		return nil
	})
	return total, err
}

// PluginCount is how many rows one plugin table holds for a record.
type PluginCount struct {
	Table string `json:"tb"`
	Label string `json:"label"`
	Count int64  `json:"count"`
}

// PluginCounts tells, before a delete, which plugin tables hold rows of
// the record and how many (tables without rows are left out), in the
// catalog's order. The record must exist within the caller's rows.
func PluginCounts(ctx context.Context, s *Scope, id int64) ([]PluginCount, error) {
	if _, err := s.lockRow(ctx, id); err != nil {
		return nil, err
	}
	out := []PluginCount{}
	for _, pt := range s.Catalog.PluginTables(s.Table.Name) {
		var n int64
		if err := s.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+s.DB.Qualify(pt.Name)+` WHERE "id_link" = ?`, id).Scan(&n); err != nil {
			return nil, fmt.Errorf("count rows of %s: %w", pt.Name, err)
		}
		if n > 0 {
			out = append(out, PluginCount{Table: pt.Name, Label: pt.Label, Count: n})
		}
	}
	return out, nil
}

// Duplicate copies a record's fields into a new record created by the
// caller, with overrides (field → value) applied. Unique fields are left
// empty unless overridden (a copy would collide); plugin rows are not
// copied.
func Duplicate(ctx context.Context, s *Scope, id int64, overrides map[string]any) (int64, error) {
	for k := range overrides {
		if _, ok := s.Table.Field(k); !ok {
			return 0, ErrInvalidField.With("field", k)
		}
	}
	if !s.CanAdd() {
		return 0, ErrNotEnough
	}
	var newID int64
	err := s.DB.Tx(ctx, func(tx *store.DB) error {
		ts := *s
		ts.DB = tx
		st, err := ts.readState(ctx, id)
		if err != nil {
			return err
		}
		p := &prepared{}
		var fes []FieldError
		for _, f := range s.Table.Fields {
			v := st.Core[f.Name]
			if f.Unique {
				v = nil // a copy cannot keep a unique value: send a new one in core
			}
			if o, ok := overrides[f.Name]; ok {
				v = o
			}
			dbv, err := toDB(tx.Engine, f.DBType, v)
			if err != nil {
				return err
			}
			fes = append(fes, checkValue(f, dbv)...)
			p.cols, p.vals = append(p.cols, f.Name), append(p.vals, dbv)
		}
		if len(fes) > 0 {
			return ErrValidation.With("errors", fes)
		}
		if newID, err = ts.insertRow(ctx, s.Table, p, map[string]any{schema.ColCreator: ts.creatorValue()}); err != nil {
			return err
		}
		if err := ts.logChange(ctx, newID, changes.Create); err != nil {
			return err
		}
		return ts.touch(ctx, newID, "create")
	})
	return newID, err
}

// mapForeignKeyViolation explains a delete refused by a relation.
func mapForeignKeyViolation(err error) error {
	msg := err.Error()
	if containsAny(msg, "FOREIGN KEY constraint failed", "SQLSTATE 23503") {
		return errRecordReferenced.Wrap(err)
	}
	return err
}
