package records

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/changes"
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
//
// Each row the hooks get carries its Record, the row as it will be after
// the save, built from the record's state read here with its version
// (RecordVersion). No write lock is held across a plugin call (SQLite has
// a single writer), so the save checks instead, under the row lock in its
// transaction, that the version is still the one the hooks saw; if another
// save slipped in, it fails with ErrHooksRaced and its caller runs the
// hooks again on a fresh read (from a pristine copy of the input, see
// SaveInput.Clone). A hooked input remembers the version it was read at.
func BeforeSaveMany(ctx context.Context, s *Scope, ins []*SaveInput) (fes [][]FieldError, failed int, err error) {
	fes = make([][]FieldError, len(ins))
	for _, in := range ins {
		in.skipped = nil // a save run again notes only this run's skips
	}
	bases, err := s.readHookBases(ctx, ins)
	if err != nil {
		return nil, 0, err
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
			if len(f.Columns) > 0 && concerns(f, in) {
				call.RowTable = s.Table.Name
				call.Rows = append(call.Rows, HookRow{ID: in.ID, Values: pickValues(in.Core, f.Columns, f.Computed),
					Record: s.columnsRecord(f, in, bases[i])})
				targets = append(targets, target{in: i})
			}
			if f.ChildTable != "" {
				for j := range in.Plugins[f.ChildTable] {
					r := &in.Plugins[f.ChildTable][j]
					if r.Delete {
						continue
					}
					call.RowTable = f.ChildTable
					vals := withoutKeys(r.Fields, f.Computed)
					call.Rows = append(call.Rows, HookRow{ID: r.ID, ParentID: in.ID, Values: vals,
						Record: s.childRecord(f, r, vals, bases[i])})
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
			if b := bases[t.in]; b != nil {
				// The hook's answer holds only while the record stays at
				// the version its Record was read at.
				in.hooked, in.hookVersion = true, b.version
			}
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

// ErrHooksRaced is a save's answer when the record changed between the
// read its BeforeSave hooks were given (HookRow.Record) and the save's
// transaction: nothing was written, and the save is to be run again from
// its input as the client sent it (SaveInput.Clone), hooks included. It is
// not an answer for clients: after MaxHookAttempts the save answers
// ErrSaveConflict.
var ErrHooksRaced = errors.New("the record changed while the plugin hooks ran")

// ErrSaveConflict answers a save whose record kept changing while its
// plugin hooks ran: MaxHookAttempts reads in a row were outdated by the
// time the save could be written.
var ErrSaveConflict = errs.New(errs.Conflict, "save_conflict",
	"the record kept changing while this save was checked; nothing was saved, try again")

// MaxHookAttempts is how often a save runs its hooks (a caller of
// BeforeSaveMany runs it again on ErrHooksRaced) before answering
// ErrSaveConflict.
const MaxHookAttempts = 10

// WaitBeforeRetry pauses before attempt (2, 3, …) of a save that lost
// the race with another save of its record (ErrHooksRaced): a random
// wait, growing with the attempts, so that two clients saving one record
// in a loop do not keep landing their commits in each other's hook calls.
func WaitBeforeRetry(ctx context.Context, attempt int) error {
	d := time.Duration(rand.Int64N(int64(attempt) * int64(2*time.Millisecond)))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// hookBase is a record as its hooks were given it: its version and its
// state, read in that order (a save between the two reads moves the
// version past the one kept, so the check fails rather than passing on a
// newer state).
type hookBase struct {
	version int64
	state   *State // nil: not found or not the caller's; the save answers for it
}

// readHookBases reads, in one round, the version and state of every
// updated record that a running BeforeSave hook will be called for; nil
// for the others.
func (s *Scope) readHookBases(ctx context.Context, ins []*SaveInput) ([]*hookBase, error) {
	bases := make([]*hookBase, len(ins))
	p := s.DB.Pipeline()
	queued := false
	for i, in := range ins {
		if in.ID <= 0 || !s.hooksConcern(in) {
			continue
		}
		b := &hookBase{}
		bases[i] = b
		s.queueVersion(p, in.ID, &b.version)
		s.queueState(p, in.ID, nil, func(st *State) error { b.state = st; return nil })
		queued = true
	}
	if !queued {
		return bases, nil
	}
	if err := p.Run(ctx); err != nil {
		return nil, err
	}
	return bases, nil
}

// hooksConcern reports whether a running BeforeSave hook is called for in.
func (s *Scope) hooksConcern(in *SaveInput) bool {
	for _, f := range s.Features {
		if !f.Before || f.Hook == nil {
			continue
		}
		if len(f.Columns) > 0 && concerns(f, in) {
			return true
		}
		for _, r := range in.Plugins[f.ChildTable] {
			if f.ChildTable != "" && !r.Delete {
				return true
			}
		}
	}
	return false
}

// concerns reports whether a save calls the hook of columns feature f:
// every create while the hook runs (a plugin that is down refuses only the
// saves sending its columns), and the saves sending one of its columns
// (computed ones aside) or of its DependsOn fields.
func concerns(f ActiveFeature, in *SaveInput) bool {
	if len(pickValues(in.Core, f.Columns, f.Computed)) > 0 {
		return true
	}
	for _, d := range f.DependsOn {
		if _, sent := in.Core[d]; sent {
			return true
		}
	}
	return in.ID == 0 && f.Before && f.Hook != nil
}

// columnsRecord is HookRow.Record of a columns feature: id, the feature's
// columns and DependsOn fields as stored (the defaults for a create),
// overlaid with what the client sent for them (computed and read-only
// fields aside: the save does not write them from the client).
func (s *Scope) columnsRecord(f ActiveFeature, in *SaveInput, b *hookBase) map[string]any {
	keys := append(append([]string{}, f.Columns...), f.DependsOn...)
	rec := map[string]any{}
	if in.ID != 0 {
		rec[schema.ColID] = in.ID
		if b != nil && b.state != nil {
			for _, k := range keys {
				if v, ok := b.state.Core[k]; ok {
					rec[k] = v
				}
			}
		}
	} else {
		s.putDefaults(s.Table, rec, keys)
	}
	for k, v := range pickValues(in.Core, keys, f.Computed) {
		if fld, ok := s.Table.Field(k); ok && !fld.Readonly {
			rec[k] = v
		}
	}
	return rec
}

// childRecord is HookRow.Record of a child row: the stored child row (the
// defaults for a new one) overlaid with vals, what was sent.
func (s *Scope) childRecord(f ActiveFeature, r *PluginRowInput, vals map[string]any, b *hookBase) map[string]any {
	rec := map[string]any{}
	if r.ID != 0 {
		if b != nil && b.state != nil {
			for _, row := range b.state.Plugins[f.ChildTable] {
				if id, err := IDOf(row[schema.ColID]); err == nil && id == r.ID {
					maps.Copy(rec, row)
					break
				}
			}
		}
	} else if t, ok := s.Catalog.Table(f.ChildTable); ok {
		keys := make([]string, 0, len(t.Fields))
		for _, fld := range t.Fields {
			keys = append(keys, fld.Name)
		}
		s.putDefaults(t, rec, keys)
	}
	maps.Copy(rec, vals)
	return rec
}

// putDefaults puts in rec the default values of t's fields among keys.
func (s *Scope) putDefaults(t *schema.Table, rec map[string]any, keys []string) {
	for _, k := range keys {
		if fld, ok := t.Field(k); ok {
			if dv, ok := defaultValue(fld, s); ok {
				rec[k] = dv
			}
		}
	}
}

// Batch writes the records of one batch inside the caller's transaction,
// with Save's and Delete's rules but without hooks (see BeforeSaveMany and
// AfterSaveMany). What the rows share is done once: a lookup target found
// for one row is not looked up again (until a delete in the batch), and
// the history entries are written together by Finish.
type Batch struct {
	tx      *store.DB
	found   map[lookupKey]bool
	vocabs  map[string]map[string]bool // vocabulary items read once per batch
	history map[historyKey]historyEntry
	order   []historyKey
	// written are the records the batch has saved or deleted: their
	// version moved in the batch itself, so a later save of one in the
	// batch is not checked against the version its hooks saw.
	written map[lookupKey]bool
	// uniqueLater: CreateMany checks the unique fields of its rows in one
	// query per field (checkUnique), not checkInDB one row at a time.
	uniqueLater bool
	grouped     int // rows CreateMany wrote with multi-row statements (tests)
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
	return &Batch{tx: tx, found: map[lookupKey]bool{}, vocabs: map[string]map[string]bool{}, history: map[historyKey]historyEntry{}, written: map[lookupKey]bool{}}
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
		// Under the row lock: the hooks' answer holds only for the
		// version their Record was read at (ErrHooksRaced: the caller
		// runs the batch again).
		if k := (lookupKey{table: s.Table.Name, id: fmt.Sprint(in.ID)}); in.hooked && !b.written[k] {
			cur, err := RecordVersion(ctx, ts, in.ID)
			if err != nil {
				return 0, nil, err
			}
			if cur != in.hookVersion {
				return 0, nil, ErrHooksRaced
			}
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
	op := changes.Update
	if insert {
		op = changes.Create
	}
	if err := ts.logChange(ctx, id, op); err != nil {
		return 0, nil, err
	}
	b.touch(ts, id, action)
	b.written[lookupKey{table: s.Table.Name, id: fmt.Sprint(id)}] = true
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
	if err := ts.logChange(ctx, id, changes.Delete); err != nil {
		return err
	}
	clear(b.found) // a lookup target may be gone
	b.written[lookupKey{table: s.Table.Name, id: fmt.Sprint(id)}] = true
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

// Finish writes the batch's history entries, many per statement
// (store.RowsPerStatement: 5 values each).
func (b *Batch) Finish(ctx context.Context) error {
	per := b.tx.Engine.RowsPerStatement(5)
	for start := 0; start < len(b.order); start += per {
		keys := b.order[start:min(start+per, len(b.order))]
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
