package records

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	for _, in := range ins {
		in.skipped = nil // a save run again notes only this run's skips
	}
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
			for _, t := range targets {
				ins[t.in].noteSkip(f, call.RowTable, t.row != nil, t.idx, ReasonNotRunning)
			}
			continue
		}
		if !f.Before {
			continue
		}
		if len(f.Columns) > 0 && f.ChildTable != "" {
			return nil, first, errs.New(errs.Internal, "internal_error", "a feature with both columns and a child table hooks one of them")
		}
		// A save on assumed versions may be run again: its plugin is
		// called only once they are known to hold (store.Confirm).
		if err := store.Confirm(ctx, s.DB); err != nil {
			return nil, first, err
		}
		results, err := f.Hook.BeforeSave(ctx, call)
		if err != nil {
			if f.Required {
				return nil, first, errSaveNeedsPlugin.With("feature", f.Name).Wrap(err)
			}
			for _, t := range targets {
				ins[t.in].noteSkip(f, call.RowTable, t.row != nil, t.idx, skipReason(err))
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
				// Reported like the server's own errors: with the field's
				// label (CONTRACT §5), and table/row only for child rows
				// (docs/api.md), so a client does not look for a child row
				// where the record's own field is meant.
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

// Batch writes the records of one batch inside the caller's transaction,
// with Save's and Delete's rules but without hooks (see BeforeSaveMany and
// AfterSaveMany). What the rows share is done once: a lookup target found
// for one row is not looked up again (until a delete in the batch), and
// the history entries are written together by Finish.
type Batch struct {
	tx      *store.DB
	found   map[lookupKey]bool
	history map[historyKey]historyEntry
	order   []historyKey
}

type lookupKey struct{ table, id string }

type historyKey struct {
	user  int64
	table string
	id    int64
}

type historyEntry struct {
	action string
	at     time.Time
}

// NewBatch starts the writes of a batch in tx, a transaction the caller
// commits after Finish, or rolls back.
func NewBatch(tx *store.DB) *Batch {
	return &Batch{tx: tx, found: map[lookupKey]bool{}, history: map[historyKey]historyEntry{}}
}

// scope is s bound to the batch's transaction.
func (b *Batch) scope(s *Scope) *Scope {
	ts := *s
	ts.DB, ts.batch = b.tx, b
	return &ts
}

// Save creates or updates one record: hookErrs are the field errors
// BeforeSaveMany gave for in. Validation failures come back as fes with a
// nil error, so a batch can report every failing row; the row is then not
// written (and the caller rolls back).
func (b *Batch) Save(ctx context.Context, s *Scope, in *SaveInput, hookErrs []FieldError) (id int64, fes []FieldError, err error) {
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
	ts := b.scope(s)
	if !insert {
		creator, err := ts.lockRow(ctx, in.ID)
		if err != nil {
			return 0, nil, err
		}
		if !ts.CanEdit(creator) {
			return 0, nil, ErrNotEnough.With("reason", "not_your_record")
		}
	}
	core, fes, err := prepareRow(ctx, ts, ts.Table, in.Core, in.forced, insert, in.ID)
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
	created, err := ts.applyPlugins(ctx, id, children)
	if err != nil {
		return 0, nil, mapUniqueViolation(err)
	}
	if err := ts.writeUnchecked(ctx, id, in, created); err != nil {
		return 0, nil, err
	}
	b.touch(ts, id, action)
	return id, nil, nil
}

// Delete deletes one record with Delete's rules: its version snapshot
// first, its plugin rows with it; absent or outside the caller's rows →
// ErrRecordNotFound, another's record for a self_writer →
// not_your_record, protected by a relation → record_in_use.
func (b *Batch) Delete(ctx context.Context, s *Scope, id int64) error {
	if s.Table.IsPlugin {
		return ErrInvalidParameter.With("detail", "plugin rows are deleted through their parent record")
	}
	if !auth.Edit.Allows(s.Level) {
		return ErrNotEnough.With("required", auth.Edit.String())
	}
	ts := b.scope(s)
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
	if _, err := b.tx.Exec(ctx, `DELETE FROM `+b.tx.Qualify(s.Table.Name)+` WHERE "id" = ?`, id); err != nil {
		return mapForeignKeyViolation(err)
	}
	if err := clearUncheckedOf(ctx, b.tx, s.Table.Name, id); err != nil {
		return err
	}
	clear(b.found) // a lookup target may be gone
	return nil
}

// touch notes a history entry (the last action on a record wins, as with
// single saves); Finish writes them.
func (b *Batch) touch(s *Scope, id int64, action string) {
	if s.Actor.UserID == 0 {
		return
	}
	k := historyKey{user: s.Actor.UserID, table: s.Table.Name, id: id}
	if _, ok := b.history[k]; !ok {
		b.order = append(b.order, k)
	}
	b.history[k] = historyEntry{action: action, at: s.now().Truncate(time.Microsecond)}
}

// historyChunk bounds the rows of one history statement (5 values each).
const historyChunk = 500

// Finish writes the batch's history entries, a few hundred per statement.
func (b *Batch) Finish(ctx context.Context) error {
	for start := 0; start < len(b.order); start += historyChunk {
		keys := b.order[start:min(start+historyChunk, len(b.order))]
		marks := make([]string, len(keys))
		args := make([]any, 0, 5*len(keys))
		for i, k := range keys {
			e := b.history[k]
			marks[i] = "(?, ?, ?, ?, ?)"
			args = append(args, k.user, k.table, k.id, e.action, e.at)
		}
		_, err := b.tx.Exec(ctx, `INSERT INTO `+b.tx.Sys("history")+` (user_id, tb, record_id, action, at) VALUES `+
			strings.Join(marks, ", ")+` ON CONFLICT (user_id, tb, record_id) DO UPDATE SET action = excluded.action, at = excluded.at`, args...)
		if err != nil {
			return fmt.Errorf("record history: %w", err)
		}
	}
	return nil
}

// checkRefs is checkInDB, except that within a Batch a lookup target
// already found (and choosable by the caller) is not looked up again.
func (s *Scope) checkRefs(ctx context.Context, t *schema.Table, f *schema.Field, v any, selfID int64) ([]FieldError, error) {
	if s.batch == nil || f.IDFromTb == "" || f.Unique || v == nil || v == "" {
		return s.checkInDB(ctx, t, f, v, selfID)
	}
	k := lookupKey{table: f.IDFromTb, id: fmt.Sprint(v)}
	if s.batch.found[k] {
		return nil, nil
	}
	fes, err := s.checkInDB(ctx, t, f, v, selfID)
	if err == nil && len(fes) == 0 {
		s.batch.found[k] = true
	}
	return fes, err
}

// AfterSaveMany tells plugins about records written by a committed batch,
// one call per feature for all of them: ids[i] is the id of ins[i].
// Failures go to the scope's HookLog; the save already happened.
func AfterSaveMany(ctx context.Context, s *Scope, ids []int64, ins []*SaveInput) {
	for _, in := range ins {
		s.logUnchecked(in)
	}
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
