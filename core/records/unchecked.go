package records

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// A save whose non-required feature's BeforeSave did not run (its plugin
// down, or the call failed) goes on, but not silently: the rows the hook
// would have checked get a marker in sys_plugin_unchecked, written in the
// save's transaction (so a rolled-back save leaves none), and a warning is
// logged once the save committed. The plugin's revalidation job
// (pluginhost) re-runs the hook over them and clears the markers.

// Reasons a hook was skipped, besides a failed call's error code.
const (
	ReasonNotRunning = "plugin_not_running"
	ReasonCallFailed = "plugin_call_failed"
)

// skip is one row of a save that went without a feature's BeforeSave.
type skip struct {
	feature, plugin string
	rowTable        string
	child           bool // a row of the feature's child table, else the record's own columns
	idx             int  // its position in SaveInput.Plugins[rowTable]
	reason          string
	rowID           int64 // set once written
	written         bool
}

// Unchecked is a row saved without a feature's BeforeSave: the record
// (Table, RecordID) and the row the hook would have checked (the record
// itself, or a child row of RowTable).
type Unchecked struct {
	ID       int64     `json:"id"`
	Plugin   string    `json:"plugin"`
	Feature  string    `json:"feature"`
	Table    string    `json:"tb"`
	RecordID int64     `json:"record_id"`
	RowTable string    `json:"row_table"`
	RowID    int64     `json:"row_id"`
	Reason   string    `json:"reason"`
	At       time.Time `json:"at"`
}

// noteSkip records that f's BeforeSave was not run for one row of in.
func (in *SaveInput) noteSkip(f ActiveFeature, rowTable string, child bool, idx int, reason string) {
	in.skipped = append(in.skipped, skip{feature: f.Name, plugin: f.Plugin, rowTable: rowTable, child: child, idx: idx, reason: reason})
}

// skipReason is what a marker says of a failed hook call: its code.
func skipReason(err error) string {
	if e, ok := errs.As(err); ok && e.Code != "" {
		return e.Code
	}
	return ReasonCallFailed
}

// childID is the id of child row idx of table in in.Plugins once written:
// its own id for an update, else its place among the created rows, which
// applyPlugins inserts in preparePlugins's order (tables by name, rows in
// input order).
func childID(in *SaveInput, table string, idx int, created []int64) int64 {
	if r := in.Plugins[table][idx]; r.ID > 0 {
		return r.ID
	}
	names := make([]string, 0, len(in.Plugins))
	for n := range in.Plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	k := 0
	for _, n := range names {
		for j, r := range in.Plugins[n] {
			if r.Delete || r.ID != 0 {
				continue
			}
			if n == table && j == idx {
				if k < len(created) {
					return created[k]
				}
				return 0
			}
			k++
		}
	}
	return 0
}

// writeUnchecked writes the markers of in's skipped hooks for record id
// (known only now for a create) inside the save's transaction. A dry run
// writes none.
func (s *Scope) writeUnchecked(ctx context.Context, id int64, in *SaveInput, created []int64) error {
	if len(in.skipped) == 0 || s.dry != nil {
		return nil
	}
	at := s.now().Truncate(time.Microsecond)
	for i := range in.skipped {
		sk := &in.skipped[i]
		sk.rowID = id
		if sk.child {
			if sk.rowID = childID(in, sk.rowTable, sk.idx, created); sk.rowID == 0 {
				continue
			}
		}
		err := s.DB.ExecLater(ctx, fmt.Sprintf("mark %s %d unchecked", s.Table.Name, id),
			`INSERT INTO `+s.DB.Sys("plugin_unchecked")+` (plugin, feature, tb, record_id, row_table, row_id, reason, at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (plugin, feature, tb, record_id, row_table, row_id)
			DO UPDATE SET reason = excluded.reason, at = excluded.at`,
			sk.plugin, sk.feature, s.Table.Name, id, sk.rowTable, sk.rowID, sk.reason, at)
		if err != nil {
			return fmt.Errorf("mark unchecked rows: %w", err)
		}
		sk.written = true
	}
	return nil
}

// logUnchecked reports in's markers once its save committed.
func (s *Scope) logUnchecked(in *SaveInput) {
	if s.UncheckedLog == nil {
		return
	}
	for _, sk := range in.skipped {
		if !sk.written {
			continue
		}
		recordID := sk.rowID
		if sk.child {
			recordID = in.ID
		}
		s.UncheckedLog(Unchecked{Plugin: sk.plugin, Feature: sk.feature, Table: s.Table.Name, RecordID: recordID,
			RowTable: sk.rowTable, RowID: sk.rowID, Reason: sk.reason})
	}
}

// UncheckedQuery selects markers: of one plugin, optionally of one table
// (Table). Scope, when set, is the caller's scope on a table (the records
// gate): markers of tables it refuses are left out, and of a table with a
// row subset only those of records in it. Nil: every marker.
type UncheckedQuery struct {
	Plugin  string
	Table   string
	Scope   func(table string) (*Scope, error)
	AfterID int64 // only markers past this id (a job walking them all)
	Page    int
	PerPage int
}

// ListUnchecked lists one page of a plugin's markers, oldest first, with
// their total, within what q.Scope lets the caller read.
func ListUnchecked(ctx context.Context, db *store.DB, q UncheckedQuery) ([]Unchecked, int64, error) {
	pg, err := PageOf(q.Page, q.PerPage, DefaultPerPage, MaxPerPage)
	if err != nil {
		return nil, 0, err
	}
	out := []Unchecked{}
	where, args := `plugin = ?`, []any{q.Plugin}
	if q.Table != "" {
		where, args = where+` AND tb = ?`, append(args, q.Table)
	}
	if q.AfterID > 0 {
		where, args = where+` AND id > ?`, append(args, q.AfterID)
	}
	if q.Scope != nil {
		tables, err := uncheckedTables(ctx, db, q.Plugin)
		if err != nil {
			return nil, 0, err
		}
		var parts []string
		for _, t := range tables {
			sc, err := q.Scope(t)
			if errors.Is(err, ErrNotEnough) || errors.Is(err, ErrSubsetBroken) || errors.Is(err, schema.ErrTableNotFound) {
				continue // fails closed, as the lists do
			}
			if err != nil {
				return nil, 0, err
			}
			if sc.Restrict == nil {
				parts, args = append(parts, `tb = ?`), append(args, t)
				continue
			}
			rw, rargs := sc.Where(nil)
			parts = append(parts, `(tb = ? AND record_id IN (SELECT `+sc.column(schema.ColID)+` FROM `+db.Qualify(t)+` WHERE `+rw+`))`)
			args = append(append(args, t), rargs...)
		}
		if len(parts) == 0 {
			return out, 0, nil
		}
		where += ` AND (` + strings.Join(parts, " OR ") + `)`
	}
	var total int64
	if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Sys("plugin_unchecked")+` WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count unchecked rows: %w", err)
	}
	if total == 0 {
		return out, 0, nil
	}
	rows, err := db.Query(ctx, `SELECT id, plugin, feature, tb, record_id, row_table, row_id, reason, at FROM `+
		db.Sys("plugin_unchecked")+` WHERE `+where+` ORDER BY id LIMIT ? OFFSET ?`, append(args, pg.Limit, pg.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("read unchecked rows: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var u Unchecked
		if err := rows.Scan(&u.ID, &u.Plugin, &u.Feature, &u.Table, &u.RecordID, &u.RowTable, &u.RowID, &u.Reason, &u.At); err != nil {
			return nil, 0, err
		}
		out = append(out, u)
	}
	return out, total, rows.Err()
}

func uncheckedTables(ctx context.Context, db *store.DB, plugin string) ([]string, error) {
	rows, err := db.Query(ctx, `SELECT DISTINCT tb FROM `+db.Sys("plugin_unchecked")+` WHERE plugin = ?`, plugin)
	if err != nil {
		return nil, fmt.Errorf("read unchecked tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// ClearUnchecked deletes one marker, if it still is the one read at (a
// save that skipped the hook again meanwhile renewed at: it stays).
func ClearUnchecked(ctx context.Context, db *store.DB, id int64, at time.Time) error {
	_, err := db.Exec(ctx, `DELETE FROM `+db.Sys("plugin_unchecked")+` WHERE id = ? AND at = ?`, id, at)
	return err
}

// clearUncheckedOf deletes a deleted record's markers, in its delete's
// transaction: nothing of it is left to check.
func clearUncheckedOf(ctx context.Context, tx *store.DB, table string, id int64) error {
	if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Sys("plugin_unchecked")+` WHERE tb = ? AND record_id = ?`, table, id); err != nil {
		return fmt.Errorf("clear unchecked rows of %s %d: %w", table, id, err)
	}
	return nil
}

// ErrNotPluginField refuses a system save of a column that is not one of
// the plugin's active features' on the table.
var ErrNotPluginField = errs.New(errs.Invalid, "not_plugin_field",
	"a plugin may update only the columns of its own features active on the table")

// PluginColumns are the record columns of plugin's features active on
// s's table, computed ones included.
func PluginColumns(s *Scope, plugin string) (cols, computed []string) {
	for _, f := range s.Features {
		if f.Plugin != plugin {
			continue
		}
		cols = append(cols, f.Columns...)
		computed = append(computed, f.Computed...)
	}
	return cols, computed
}

// SaveAsPlugin updates record id's columns of plugin's own features
// (computed ones included) as the system actor "plugin:<name>", through
// Save's path: the row's lock, validation, a version snapshot storing
// that actor. The plugin's own hooks are not called (the values come from
// it); other features' are, as for any save. Any other key is
// ErrNotPluginField; an absent record ErrRecordNotFound.
func SaveAsPlugin(ctx context.Context, s *Scope, plugin string, id int64, values map[string]any) (SaveResult, error) {
	cols, computed := PluginColumns(s, plugin)
	core := map[string]any{}
	var forced map[string]any
	for k, v := range values {
		if !slices.Contains(cols, k) && !slices.Contains(computed, k) {
			return SaveResult{}, ErrNotPluginField.With("field", k).With("table", s.Table.Name).With("plugin", plugin)
		}
		if slices.Contains(computed, k) {
			if forced == nil {
				forced = map[string]any{}
			}
			forced[k] = v
			continue
		}
		core[k] = v
	}
	if id <= 0 {
		return SaveResult{}, ErrInvalidID
	}
	return saveAsPlugin(ctx, s, plugin, SaveInput{ID: id, Core: core, forced: forced})
}

// saveAsPlugin saves in as the system actor "plugin:<name>", without the
// plugin's own hooks.
func saveAsPlugin(ctx context.Context, s *Scope, plugin string, in SaveInput) (SaveResult, error) {
	ts := SystemScope(s, plugin)
	ts.Features = slices.DeleteFunc(slices.Clone(s.Features), func(f ActiveFeature) bool { return f.Plugin == plugin })
	return SaveVersioned(ctx, ts, in)
}

// SystemScope is s acting as the system actor "plugin:<name>": every row,
// at super admin level, with no user (versions store the actor's name).
func SystemScope(s *Scope, plugin string) *Scope {
	ts := *s
	ts.SystemActor = "plugin:" + plugin
	ts.Actor = &auth.Actor{Name: ts.SystemActor, Privilege: auth.SuperAdmin}
	ts.Level, ts.Restrict = auth.SuperAdmin, nil
	return &ts
}

// ErrFeatureInactive: a marker's feature is no longer active on its table;
// the marker stays (its values are unchecked still, should it come back).
var ErrFeatureInactive = errs.New(errs.Conflict, "feature_inactive", "the feature is not active on this table")

// Recheck is what revalidating one marker did.
type Recheck struct {
	// Written: the plugin's values differed from the stored ones and were
	// saved by the system actor.
	Written bool
	// Gone: the record or row no longer exists.
	Gone bool
	// Errors are the plugin's field errors: it refuses the stored row, the
	// marker stays.
	Errors []FieldError
}

// RecheckUnchecked re-runs u's feature's BeforeSave on the stored row, as
// an update sending the feature's stored values, with s a scope on u's
// table holding its active features. If the plugin accepts, the values it
// patches or computes that differ from the stored ones are saved by the
// system actor (SaveAsPlugin's path) and the marker is cleared; if it
// refuses, its field errors come back and the marker stays. A plugin that
// is down is ErrPluginUnavailable; a failed call its error.
func RecheckUnchecked(ctx context.Context, s *Scope, u Unchecked) (Recheck, error) {
	var res Recheck
	i := slices.IndexFunc(s.Features, func(f ActiveFeature) bool { return f.Name == u.Feature })
	if i < 0 {
		return res, ErrFeatureInactive.With("feature", u.Feature).With("table", u.Table)
	}
	f := s.Features[i]
	if f.Hook == nil || !f.Before {
		return res, ErrPluginUnavailable.With("feature", f.Name).With("plugin", f.Plugin)
	}
	sys := SystemScope(s, f.Plugin)
	st, err := sys.readState(ctx, u.RecordID)
	if errors.Is(err, ErrRecordNotFound) {
		res.Gone = true
		return res, ClearUnchecked(ctx, s.DB, u.ID, u.At)
	}
	if err != nil {
		return res, err
	}
	child := u.RowTable != s.Table.Name
	stored := st.Core
	row := HookRow{ID: u.RecordID}
	if child {
		stored = nil
		for _, r := range st.Plugins[u.RowTable] {
			if id, _ := r[schema.ColID].(int64); id == u.RowID {
				stored = r
			}
		}
		if stored == nil {
			res.Gone = true
			return res, ClearUnchecked(ctx, s.DB, u.ID, u.At)
		}
		row = HookRow{ID: u.RowID, ParentID: u.RecordID,
			Values: withoutKeys(stored, append([]string{schema.ColID, schema.ColIDLink}, f.Computed...))}
	} else {
		row.Values = pickValues(stored, f.Columns, f.Computed)
	}
	results, err := f.Hook.BeforeSave(ctx, HookCall{Feature: f.Name, Table: s.Table.Name, RowTable: u.RowTable,
		Rows: []HookRow{row}, Actor: sys.hookActor()})
	if err != nil {
		return res, err
	}
	if len(results) != 1 {
		return res, errs.New(errs.Internal, "internal_error", "a plugin answered for a different number of rows").With("feature", f.Name)
	}
	if len(results[0].Errors) > 0 {
		rowTable, _ := s.Catalog.Table(u.RowTable)
		for _, fe := range results[0].Errors {
			if rowTable != nil && fe.Label == "" {
				if fld, ok := rowTable.Field(fe.Field); ok {
					fe.Label = fld.Label
				}
			}
			if child {
				fe.Table = u.RowTable
			}
			res.Errors = append(res.Errors, fe)
		}
		return res, nil
	}
	// Only what differs from the stored row is written: an accepted row
	// the plugin leaves as it is gets no new version.
	diff := map[string]any{}
	for k, v := range results[0].Values {
		if k == schema.ColID || k == schema.ColIDLink {
			continue
		}
		if !child && !slices.Contains(f.Columns, k) && !slices.Contains(f.Computed, k) {
			continue
		}
		if cur, ok := stored[k]; !ok || !sameJSON(cur, v) {
			diff[k] = v
		}
	}
	if len(diff) > 0 {
		in := SaveInput{ID: u.RecordID}
		if child {
			r := PluginRowInput{ID: u.RowID, Fields: withoutKeys(diff, f.Computed)}
			r.forced = mergeForced(nil, diff, f.Computed)
			in.Plugins = map[string][]PluginRowInput{u.RowTable: {r}}
		} else {
			in.Core = withoutKeys(diff, f.Computed)
			in.forced = mergeForced(nil, diff, f.Computed)
		}
		if _, err := saveAsPlugin(ctx, s, f.Plugin, in); err != nil {
			return res, err
		}
		res.Written = true
	}
	return res, ClearUnchecked(ctx, s.DB, u.ID, u.At)
}
