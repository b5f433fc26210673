package records

import (
	"context"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// The functions below are the pieces of Save and Delete that a batch of
// record changes (core/batch) puts together itself: the plugin hooks of
// many saves in one call per feature, and the writes inside one
// transaction the caller holds, under exactly the single requests' rules.

// BeforeSaveMany runs the BeforeSave hooks of several saves on the scope's
// table with one call per feature for all of them, before any transaction
// opens. It returns the plugins' field errors per input (patched values
// are written into the inputs). On failure, failed is the position in ins
// of the first input the failing call covered.
func BeforeSaveMany(ctx context.Context, s *Scope, ins []*SaveInput) (fes [][]FieldError, failed int, err error) {
	fes = make([][]FieldError, len(ins))
	for _, f := range s.Features {
		if !f.Before && !f.Required {
			continue
		}
		call := HookCall{Feature: f.Name, Table: s.Table.Name, Actor: s.hookActor()}
		// Which input and row each call row stands for, so results go back.
		type target struct {
			in  int
			row *PluginRowInput // nil: the record's own columns
			idx int
		}
		var targets []target
		for i, in := range ins {
			if len(f.Columns) > 0 {
				// Only saves that touch the feature's columns need the plugin.
				if vals := pickValues(in.Core, f.Columns, f.Computed); len(vals) > 0 {
					call.RowTable = s.Table.Name
					call.Rows = append(call.Rows, HookRow{ID: in.ID, Values: vals})
					targets = append(targets, target{in: i})
				}
			}
			if f.ChildTable != "" {
				for j := range in.Plugins[f.ChildTable] {
					r := &in.Plugins[f.ChildTable][j]
					if r.Delete {
						continue
					}
					call.RowTable = f.ChildTable
					call.Rows = append(call.Rows, HookRow{ID: r.ID, ParentID: in.ID, Values: withoutKeys(r.Fields, f.Computed)})
					targets = append(targets, target{in: i, row: r, idx: j})
				}
			}
		}
		if len(call.Rows) == 0 {
			continue
		}
		first := targets[0].in
		if f.Hook == nil {
			if f.Required {
				return nil, first, errSaveNeedsPlugin.With("feature", f.Name)
			}
			continue
		}
		if !f.Before {
			continue
		}
		if len(f.Columns) > 0 && f.ChildTable != "" {
			return nil, first, errs.New(errs.Internal, "internal_error", "a feature with both columns and a child table hooks one of them")
		}
		results, err := f.Hook.BeforeSave(ctx, call)
		if err != nil {
			if f.Required {
				return nil, first, errSaveNeedsPlugin.With("feature", f.Name).Wrap(err)
			}
			continue
		}
		if len(results) != len(call.Rows) {
			return nil, first, errs.New(errs.Internal, "internal_error", "a plugin answered for a different number of rows").With("feature", f.Name)
		}
		allowed := append(append([]string{}, f.Columns...), f.Computed...)
		for k, res := range results {
			t := targets[k]
			in := ins[t.in]
			for _, fe := range res.Errors {
				rowTable := s.Table
				if t.row != nil {
					fe.Table = call.RowTable
					idx := t.idx
					fe.Row = &idx
					rowTable, _ = s.Catalog.Table(call.RowTable)
				}
				if rowTable != nil && fe.Label == "" {
					if fld, ok := rowTable.Field(fe.Field); ok {
						fe.Label = fld.Label
					}
				}
				fes[t.in] = append(fes[t.in], fe)
			}
			if t.row == nil {
				for key, v := range pickValues(res.Values, allowed, nil) {
					in.Core[key] = v
				}
				in.forced = mergeForced(in.forced, res.Values, f.Computed)
				continue
			}
			if t.row.Fields == nil {
				t.row.Fields = map[string]any{}
			}
			for key, v := range res.Values {
				t.row.Fields[key] = v
			}
			t.row.forced = mergeForced(t.row.forced, res.Values, f.Computed)
		}
	}
	return fes, 0, nil
}

// SaveTx is Save inside the caller's transaction tx, without hooks:
// hookErrs are the field errors BeforeSaveMany gave for in. Validation
// failures come back as fes with a nil error, so a batch can report every
// failing row; the row is then not written (the caller rolls back).
func SaveTx(ctx context.Context, tx *store.DB, s *Scope, in *SaveInput, hookErrs []FieldError) (id int64, fes []FieldError, err error) {
	if s.Table.IsPlugin {
		return 0, nil, ErrInvalidParameter.With("detail", "plugin rows are saved with their parent record")
	}
	insert := in.ID == 0
	if insert && !s.CanAdd() {
		return 0, nil, ErrNotEnough.With("required", auth.AddNew.String())
	}
	if !insert && !auth.Edit.Allows(s.Level) {
		return 0, nil, ErrNotEnough.With("required", auth.Edit.String())
	}
	ts := *s
	ts.DB = tx
	if !insert {
		creator, err := ts.lockRow(ctx, in.ID)
		if err != nil {
			return 0, nil, err
		}
		if !ts.CanEdit(creator) {
			return 0, nil, ErrNotEnough.With("reason", "not_your_record")
		}
	}
	core, fes, err := prepareRow(ctx, &ts, ts.Table, in.Core, in.forced, insert, in.ID)
	if err != nil {
		return 0, nil, err
	}
	children, childErrs, err := ts.preparePlugins(ctx, in.Plugins, in.ID)
	if err != nil {
		return 0, nil, err
	}
	fes = append(withoutCheckedByPlugin(append(fes, childErrs...), hookErrs), hookErrs...)
	if len(fes) > 0 {
		return 0, fes, nil
	}
	action := "update"
	if insert {
		action = "create"
		if id, err = ts.insertRow(ctx, ts.Table, core, map[string]any{schema.ColCreator: ts.creatorValue()}); err != nil {
			return 0, nil, mapUniqueViolation(err)
		}
	} else {
		id = in.ID
		if err := ts.snapshot(ctx, id, "update"); err != nil {
			return 0, nil, err
		}
		if err := ts.updateRow(ctx, ts.Table, id, core); err != nil {
			return 0, nil, mapUniqueViolation(err)
		}
	}
	if err := ts.applyPlugins(ctx, id, children); err != nil {
		return 0, nil, mapUniqueViolation(err)
	}
	return id, nil, ts.touch(ctx, id, action)
}

// DeleteTx deletes one record inside the caller's transaction tx, with
// Delete's rules: its version snapshot first, its plugin rows with it;
// absent or outside the caller's rows → ErrRecordNotFound, another's
// record for a self_writer → not_your_record, protected by a relation →
// record_in_use.
func DeleteTx(ctx context.Context, tx *store.DB, s *Scope, id int64) error {
	if s.Table.IsPlugin {
		return ErrInvalidParameter.With("detail", "plugin rows are deleted through their parent record")
	}
	if !auth.Edit.Allows(s.Level) {
		return ErrNotEnough.With("required", auth.Edit.String())
	}
	ts := *s
	ts.DB = tx
	creator, err := ts.lockRow(ctx, id)
	if err != nil {
		return err
	}
	if !ts.CanEdit(creator) {
		return ErrNotEnough.With("reason", "not_your_record")
	}
	if err := ts.snapshot(ctx, id, "delete"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Qualify(s.Table.Name)+` WHERE "id" = ?`, id); err != nil {
		return mapForeignKeyViolation(err)
	}
	return nil
}

// AfterSaveMany tells plugins about records written by a committed batch,
// one call per feature for all of them: ids[i] is the id of ins[i].
// Failures go to the scope's HookLog; the save already happened.
func AfterSaveMany(ctx context.Context, s *Scope, ids []int64, ins []*SaveInput) {
	for _, f := range s.Features {
		if !f.After || f.Hook == nil {
			continue
		}
		call := HookCall{Feature: f.Name, Table: s.Table.Name, Actor: s.hookActor()}
		for i, in := range ins {
			if len(f.Columns) > 0 {
				call.RowTable = s.Table.Name
				call.Rows = append(call.Rows, HookRow{ID: ids[i], Values: pickValues(in.Core, f.Columns, nil)})
			} else if f.ChildTable != "" {
				call.RowTable = f.ChildTable
				for _, r := range in.Plugins[f.ChildTable] {
					if !r.Delete {
						call.Rows = append(call.Rows, HookRow{ID: r.ID, ParentID: ids[i], Values: r.Fields})
					}
				}
			}
		}
		if len(call.Rows) == 0 {
			continue
		}
		if err := f.Hook.AfterSave(ctx, call); err != nil && s.HookLog != nil {
			s.HookLog(f.Name, err)
		}
	}
}
