package records

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/wire"
)

// SaveInput is a create (ID 0) or a partial update (only the keys present
// in Core are written; null clears) with plugin child rows (CONTRACT §5).
type SaveInput struct {
	ID      int64
	Core    map[string]any
	Plugins map[string][]PluginRowInput
	// IfVersion, on an update, is the versions the client read the record
	// at (If-Match): the save goes on only if the record's version (see
	// RecordVersion) is one of them, checked under the row lock in the
	// save's transaction; else ErrStale and nothing is written. Empty: no
	// condition.
	IfVersion []int64

	forced  map[string]any // computed columns set by a plugin hook
	skipped []skip         // hooks the save goes without (unchecked.go)
	// hooked: BeforeSave hooks were given the record as stored at
	// hookVersion, and the save may write their answer only while the
	// record is still at it (ErrHooksRaced).
	hooked      bool
	hookVersion int64
}

// Clone copies in deeply enough to run its save again: the hooks patch
// Core and the child rows' Fields in place.
func (in *SaveInput) Clone() SaveInput {
	out := SaveInput{ID: in.ID, Core: maps.Clone(in.Core), IfVersion: in.IfVersion}
	if in.Plugins != nil {
		out.Plugins = make(map[string][]PluginRowInput, len(in.Plugins))
		for name, rows := range in.Plugins {
			cp := make([]PluginRowInput, len(rows))
			for i, r := range rows {
				cp[i] = PluginRowInput{ID: r.ID, IsNew: r.IsNew, Delete: r.Delete, Fields: maps.Clone(r.Fields)}
			}
			out.Plugins[name] = cp
		}
	}
	return out
}

// PluginRowInput is one child row change: insert (ID 0 or IsNew), update,
// or delete (Delete).
type PluginRowInput struct {
	ID     int64
	IsNew  bool
	Delete bool
	Fields map[string]any

	forced map[string]any // computed columns set by a plugin hook
}

// ignoredCoreKeys are echoed back by clients and never written.
var ignoredCoreKeys = map[string]bool{schema.ColID: true, schema.ColCreator: true, schema.ColIDLink: true}

// prepared is a validated set of column values for one row.
type prepared struct {
	cols []string
	vals []any
}

// prepareRow checks the keys of one row against table t and converts the
// values. Unknown keys are invalid_field (nothing is written); read-only
// fields and system columns are ignored. On insert, def_value fills absent
// fields and every required field is checked; on update only sent ones.
func prepareRow(ctx context.Context, s *Scope, t *schema.Table, in map[string]any, forced map[string]any, insert bool, selfID int64) (*prepared, []FieldError, error) {
	p := &prepared{}
	var fes []FieldError
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys) // stable column order and error order
	for _, k := range keys {
		if ignoredCoreKeys[k] {
			continue
		}
		f, ok := t.Field(k)
		if !ok {
			return nil, nil, ErrInvalidField.With("field", k).With("table", t.Name)
		}
		if _, byPlugin := forced[k]; f.Readonly || byPlugin {
			continue
		}
		v, err := toDB(s.DB.Engine, f.DBType, in[k])
		if err == nil && f.Type != schema.TypeMultiSelect {
			switch in[k].(type) {
			case []any, map[string]any:
				err = fmt.Errorf("text is expected, not %s", wire.Describe(in[k]))
			}
		}
		if err == nil {
			if sv, ok := v.(string); ok && strings.IndexByte(sv, 0) >= 0 {
				err = fmt.Errorf("text may not hold a NUL character")
			}
		}
		if err != nil {
			fes = append(fes, FieldError{Field: f.Name, Label: f.Label, Rule: typeRule(f), Message: err.Error()})
			continue
		}
		p.cols, p.vals = append(p.cols, f.Name), append(p.vals, v)
	}
	// Columns a plugin computes are written from its answer only, even
	// though they are read-only to clients.
	forcedKeys := make([]string, 0, len(forced))
	for k := range forced {
		forcedKeys = append(forcedKeys, k)
	}
	sort.Strings(forcedKeys)
	for _, k := range forcedKeys {
		f, ok := t.Field(k)
		if !ok {
			continue
		}
		v, err := toDB(s.DB.Engine, f.DBType, forced[k])
		if err != nil {
			fes = append(fes, FieldError{Field: f.Name, Label: f.Label, Rule: "type", Message: "computed by a plugin: " + err.Error()})
			continue
		}
		p.cols, p.vals = append(p.cols, f.Name), append(p.vals, v)
	}
	if insert {
		for _, f := range t.Fields {
			if _, sent := in[f.Name]; sent {
				continue
			}
			if dv, ok := defaultValue(f, s); ok {
				v, err := toDB(s.DB.Engine, f.DBType, dv)
				if err != nil {
					fes = append(fes, FieldError{Field: f.Name, Label: f.Label, Rule: "type", Message: "default value: " + err.Error()})
					continue
				}
				p.cols, p.vals = append(p.cols, f.Name), append(p.vals, v)
			} else if f.Required {
				fes = append(fes, FieldError{Field: f.Name, Label: f.Label, Rule: RuleRequired, Message: "a value is required"})
			}
		}
	}
	for i, c := range p.cols {
		f, _ := t.Field(c)
		fes = append(fes, checkValue(f, p.vals[i])...)
		more, err := s.checkRefs(ctx, t, f, p.vals[i], selfID)
		if err != nil {
			return nil, nil, err
		}
		fes = append(fes, more...)
	}
	return p, fes, nil
}

// withoutCheckedByPlugin drops the server's own errors on the values a
// plugin has refused, so the client gets one error per bad value: the
// plugin checked them and may accept shapes the column's type alone does
// not (osteo_data as an object), so its message is the one that tells the
// client what to send. Every rule is dropped, not only "type": an int
// column's type error is "integer", and a refused value the plugin left
// in place may break a length or range rule as well.
func withoutCheckedByPlugin(fes, hookErrs []FieldError) []FieldError {
	if len(hookErrs) == 0 {
		return fes
	}
	type key struct {
		table, field string
		row          int
	}
	keyOf := func(e FieldError) key {
		k := key{table: e.Table, field: e.Field, row: -1}
		if e.Row != nil {
			k.row = *e.Row
		}
		return k
	}
	checked := map[key]bool{}
	for _, e := range hookErrs {
		checked[keyOf(e)] = true
	}
	out := fes[:0:0]
	for _, e := range fes {
		if checked[keyOf(e)] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// Save creates or updates a record with its plugin child rows in one
// transaction. Every rule is checked first and all failures are reported
// together; on any failure nothing is written. An update first stores a
// version snapshot of the record as it was.
func Save(ctx context.Context, s *Scope, in SaveInput) (id int64, created bool, err error) {
	res, err := SaveVersioned(ctx, s, in)
	return res.ID, res.Created, err
}

// SaveResult is what a save did: the record, whether it was created, and
// its version once saved (0 for a new record; see RecordVersion).
type SaveResult struct {
	ID      int64
	Created bool
	Version int64
	// ChildIDs are the ids of the plugin rows the save created, in the
	// order of the input.
	ChildIDs []int64
}

// SaveVersioned is Save that also honours in.IfVersion and returns the
// record's new version, read in the save's transaction. When the record
// changes between the read its hooks were given and the save's lock
// (ErrHooksRaced), the save runs again from the input as sent, hooks
// included, up to MaxHookAttempts times; then ErrSaveConflict.
func SaveVersioned(ctx context.Context, s *Scope, in SaveInput) (SaveResult, error) {
	if s.Table.IsPlugin {
		return SaveResult{}, ErrInvalidParameter.With("detail", "plugin rows are saved with their parent record")
	}
	if in.ID == 0 && !s.CanAdd() {
		return SaveResult{}, ErrNotEnough
	}
	pristine := in.Clone()
	for attempt := 1; ; attempt++ {
		res, err := s.saveOnce(ctx, &in)
		if !errors.Is(err, ErrHooksRaced) {
			if err == nil && s.dry == nil {
				s.logUnchecked(&in)
				s.runAfterHooks(ctx, res.ID, in, s.HookLog)
			}
			return res, err
		}
		if attempt >= MaxHookAttempts {
			return SaveResult{}, ErrSaveConflict.With("attempts", attempt)
		}
		if err := WaitBeforeRetry(ctx, attempt+1); err != nil {
			return SaveResult{}, err
		}
		in = pristine.Clone()
	}
}

// saveOnce is one run of SaveVersioned: the hooks, then the transaction.
func (s *Scope) saveOnce(ctx context.Context, in *SaveInput) (SaveResult, error) {
	var res SaveResult
	insert := in.ID == 0
	unlock, err := LockHookedSaves(ctx, HookedSaveKeys(s, []*SaveInput{in}))
	if err != nil {
		return res, err
	}
	defer unlock()
	hookErrs, err := s.runBeforeHooks(ctx, in)
	if err != nil {
		return res, err
	}
	var id int64
	err = s.DB.Tx(ctx, func(tx *store.DB) error {
		ts := *s
		ts.DB = tx
		var before *State // the record as it was, for its version snapshot
		snapshot := false // the snapshot's id is (or will be) res.Version
		if !insert {
			// The row, locked (PostgreSQL: its statement is FOR UPDATE),
			// its plugin rows and (with If-Match) its version in one round
			// trip on PostgreSQL, read in this order: the rest under the
			// row's lock.
			if in.ID < 0 {
				return ErrInvalidID
			}
			p := ts.DB.Pipeline()
			ts.queueState(p, in.ID, &rowExtras{lock: true}, func(got *State) error { before = got; return nil })
			var cur int64
			if len(in.IfVersion) > 0 || in.hooked {
				ts.queueVersion(p, in.ID, &cur)
			}
			if err := p.Run(ctx); err != nil {
				return err
			}
			if before == nil {
				return ErrRecordNotFound
			}
			if !ts.CanEdit(before.Creator) {
				return ErrNotEnough.With("reason", "not_your_record")
			}
			// Under the row lock (PostgreSQL) or the single writer
			// (SQLite): no save can slip in between check and write.
			if len(in.IfVersion) > 0 && !slices.Contains(in.IfVersion, cur) {
				return ErrStale.With("version", cur)
			}
			if in.hooked && cur != in.hookVersion {
				return ErrHooksRaced
			}
		}
		core, fes, err := prepareRow(ctx, &ts, ts.Table, in.Core, in.forced, insert, in.ID)
		if err != nil {
			return err
		}
		children, childErrs, err := ts.preparePlugins(ctx, in.Plugins, in.ID)
		if err != nil {
			return err
		}
		fes = append(withoutCheckedByPlugin(append(fes, childErrs...), hookErrs), hookErrs...)
		if len(fes) > 0 {
			return ErrValidation.With("errors", fes)
		}
		if insert {
			if id, err = ts.insertRow(ctx, ts.Table, core, map[string]any{schema.ColCreator: ts.creatorValue()}); err != nil {
				return err
			}
		} else {
			id = in.ID
			// Nothing else in the save stores a version of the record: the
			// snapshot's id is its version, set once the insert has run: by
			// the commit of a transaction of the save's own, before
			// SaveVersioned returns. In a caller's transaction, which may
			// send it only later, it is read with the next statements
			// (RecordVersion).
			var version *int64
			if !s.DB.InTx() {
				version = &res.Version
			}
			if snapshot, err = ts.storeSnapshot(ctx, id, "update", before, version); err != nil {
				return err
			}
			if err := ts.updateRow(ctx, ts.Table, id, core); err != nil {
				return err
			}
		}
		if res.ChildIDs, err = ts.applyPlugins(ctx, id, children); err != nil {
			return err
		}
		if err := ts.writeUnchecked(ctx, id, in, res.ChildIDs); err != nil {
			return err
		}
		action, op := "update", changes.Update
		if insert {
			action, op = "create", changes.Create
		} else if !snapshot {
			if res.Version, err = RecordVersion(ctx, &ts, id); err != nil {
				return err
			}
		}
		if err := ts.logChange(ctx, id, op); err != nil {
			return err
		}
		return ts.touch(ctx, id, action)
	})
	if err != nil {
		return SaveResult{}, mapUniqueViolation(err)
	}
	res.ID, res.Created = id, insert
	return res, nil
}

// creatorValue is the caller's user id, or NULL for an API key.
func (s *Scope) creatorValue() any {
	if s.Actor.UserID == 0 {
		return nil
	}
	return s.Actor.UserID
}

// lockRow checks that id exists within the caller's restriction and
// returns its creator. On PostgreSQL the row stays locked until commit;
// SQLite's immediate transaction already excludes other writers.
func (s *Scope) lockRow(ctx context.Context, id int64) (*int64, error) {
	if id <= 0 {
		return nil, ErrInvalidID
	}
	where, args := s.where(&Cond{SQL: s.column(schema.ColID) + " = ?", Args: []any{id}})
	creatorCol := "NULL"
	if s.Table.HasCreator() {
		creatorCol = s.column(schema.ColCreator)
	}
	var creator *int64
	err := s.DB.QueryRow(ctx, `SELECT `+creatorCol+` FROM `+s.DB.Qualify(s.Table.Name)+` WHERE `+where+s.forUpdate(s.Table.Name), args...).Scan(&creator)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrRecordNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %d: %w", s.Table.Name, id, err)
	}
	return creator, nil
}

// forUpdate is the clause that locks the rows of table t a statement
// reads until the commit, in a PostgreSQL transaction; SQLite's write
// transaction already excludes other writers.
func (s *Scope) forUpdate(t string) string {
	if s.DB.Engine == store.Postgres && s.DB.InTx() {
		return ` FOR UPDATE OF ` + s.DB.Engine.Quote(t)
	}
	return ""
}

// insertRow inserts the prepared values plus system columns (creator of a
// record, or id_link of a plugin row).
func (s *Scope) insertRow(ctx context.Context, t *schema.Table, p *prepared, system map[string]any) (int64, error) {
	cols, vals := append([]string{}, p.cols...), append([]any{}, p.vals...)
	if id := s.explicitID(); id != 0 {
		cols, vals = append(cols, schema.ColID), append(vals, id)
	}
	sysCols, sysVals := systemValues(t, system)
	cols, vals = append(cols, sysCols...), append(vals, sysVals...)
	quoted := make([]string, len(cols))
	marks := make([]string, len(cols))
	for i, c := range cols {
		quoted[i], marks[i] = s.DB.Engine.Quote(c), "?"
	}
	q := `INSERT INTO ` + s.DB.Qualify(t.Name)
	if len(cols) == 0 {
		q += ` DEFAULT VALUES`
	} else {
		q += ` (` + strings.Join(quoted, ", ") + `) VALUES (` + strings.Join(marks, ", ") + `)`
	}
	// A pipeline, so that in a transaction the statements waiting to be
	// sent (BEGIN first) go with it.
	var id int64
	pl := s.DB.Pipeline()
	pl.QueryRow("insert into "+t.Name, q+` RETURNING "id"`, vals, &id)
	if err := pl.Run(ctx); err != nil {
		return 0, err
	}
	return id, nil
}

// systemValues are the system columns of t that system gives a value,
// in the table's order, with their values.
func systemValues(t *schema.Table, system map[string]any) (cols []string, vals []any) {
	for _, c := range t.SystemColumns() {
		if v, ok := system[c]; ok {
			cols, vals = append(cols, c), append(vals, v)
		}
	}
	return cols, vals
}

func (s *Scope) updateRow(ctx context.Context, t *schema.Table, id int64, p *prepared) error {
	if len(p.cols) == 0 {
		return nil
	}
	sets := make([]string, len(p.cols))
	for i, c := range p.cols {
		sets[i] = s.DB.Engine.Quote(c) + " = ?"
	}
	// Its answer is not needed: in a PostgreSQL transaction it goes
	// with the next statement.
	return s.DB.ExecLater(ctx, fmt.Sprintf("update %s %d", t.Name, id),
		`UPDATE `+s.DB.Qualify(t.Name)+` SET `+strings.Join(sets, ", ")+` WHERE "id" = ?`, append(p.vals, id)...)
}

// childChange is one validated plugin row operation.
type childChange struct {
	table *schema.Table
	op    string // insert, update, delete
	id    int64
	row   *prepared
}

// preparePlugins validates every child row change. A plugin table must be
// a plugin of the record's table; child rows named by id must belong to
// the record (checked in applyPlugins, under the transaction).
func (s *Scope) preparePlugins(ctx context.Context, in map[string][]PluginRowInput, parentID int64) ([]childChange, []FieldError, error) {
	names := make([]string, 0, len(in))
	for n := range in {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []childChange
	var fes []FieldError
	for _, name := range names {
		t, ok := s.Catalog.Table(name)
		if !ok || !t.IsPlugin || t.PluginOf != s.Table.Name {
			return nil, nil, ErrInvalidField.With("field", name).With("detail", "not a plugin table of "+s.Table.Name)
		}
		for i, r := range in[name] {
			switch {
			case r.Delete:
				if r.ID <= 0 {
					return nil, nil, ErrInvalidID.With("table", name)
				}
				out = append(out, childChange{table: t, op: "delete", id: r.ID})
				continue
			case r.ID > 0 && r.IsNew:
				return nil, nil, ErrInvalidParameter.With("detail", "a new plugin row has no id").With("table", name)
			case r.ID < 0:
				return nil, nil, ErrInvalidID.With("table", name)
			}
			insert := r.ID == 0
			p, rowErrs, err := prepareRow(ctx, s, t, r.Fields, r.forced, insert, r.ID)
			if err != nil {
				return nil, nil, err
			}
			for j := range rowErrs {
				idx := i
				rowErrs[j].Table, rowErrs[j].Row = name, &idx
			}
			fes = append(fes, rowErrs...)
			op := "update"
			if insert {
				op = "insert"
			}
			out = append(out, childChange{table: t, op: op, id: r.ID, row: p})
		}
	}
	return out, fes, nil
}

func (s *Scope) applyPlugins(ctx context.Context, parentID int64, changes []childChange) (created []int64, err error) {
	for _, c := range changes {
		switch c.op {
		case "insert":
			id, err := s.insertRow(ctx, c.table, c.row, map[string]any{schema.ColIDLink: parentID})
			if err != nil {
				return nil, err
			}
			created = append(created, id)
			continue
		}
		var n int
		err := s.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+s.DB.Qualify(c.table.Name)+` WHERE "id" = ? AND "id_link" = ?`, c.id, parentID).Scan(&n)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, ErrRecordNotFound.With("table", c.table.Name).With("id", c.id)
		}
		if c.op == "delete" {
			if _, err := s.DB.Exec(ctx, `DELETE FROM `+s.DB.Qualify(c.table.Name)+` WHERE "id" = ?`, c.id); err != nil {
				return nil, err
			}
			continue
		}
		if err := s.updateRow(ctx, c.table, c.id, c.row); err != nil {
			return nil, err
		}
	}
	return created, nil
}

// mapUniqueViolation turns a unique-index violation that slipped past the
// check (two concurrent saves) into the same validation answer.
func mapUniqueViolation(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if strings.Contains(msg, "UNIQUE constraint failed") || strings.Contains(msg, "SQLSTATE 23505") {
		return ErrValidation.With("errors", []FieldError{{Rule: RuleUnique, Message: "another record has this value"}}).Wrap(err)
	}
	return err
}
