package records

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
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
// (Table) or of the tables Readable allows (nil: every table).
type UncheckedQuery struct {
	Plugin   string
	Table    string
	Readable func(table string) bool
	Page     int
	PerPage  int
}

// ListUnchecked lists one page of a plugin's markers, oldest first, with
// their total. Tables the caller may not read are left out of both.
func ListUnchecked(ctx context.Context, db *store.DB, q UncheckedQuery) ([]Unchecked, int64, error) {
	pg, err := PageOf(q.Page, q.PerPage, DefaultPerPage, MaxPerPage)
	if err != nil {
		return nil, 0, err
	}
	where, args := `plugin = ?`, []any{q.Plugin}
	if q.Table != "" {
		where, args = where+` AND tb = ?`, append(args, q.Table)
	}
	if q.Readable != nil {
		tables, err := uncheckedTables(ctx, db, q.Plugin)
		if err != nil {
			return nil, 0, err
		}
		hidden := []any{}
		for _, t := range tables {
			if !q.Readable(t) {
				hidden = append(hidden, t)
			}
		}
		if len(hidden) > 0 {
			where += ` AND tb NOT IN (?` + stringsRepeat(", ?", len(hidden)-1) + `)`
			args = append(args, hidden...)
		}
	}
	var total int64
	if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Sys("plugin_unchecked")+` WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count unchecked rows: %w", err)
	}
	out := []Unchecked{}
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

func stringsRepeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

// ClearUnchecked deletes one marker, if it still is the one read at (a
// save that skipped the hook again meanwhile renewed at: it stays).
func ClearUnchecked(ctx context.Context, db *store.DB, id int64, at time.Time) error {
	_, err := db.Exec(ctx, `DELETE FROM `+db.Sys("plugin_unchecked")+` WHERE id = ? AND at = ?`, id, at)
	return err
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
	ts := *s
	ts.Features = slices.DeleteFunc(slices.Clone(s.Features), func(f ActiveFeature) bool { return f.Plugin == plugin })
	ts.SystemActor = "plugin:" + plugin
	ts.Actor = &auth.Actor{Name: ts.SystemActor, Privilege: auth.SuperAdmin}
	ts.Level, ts.Restrict = auth.SuperAdmin, nil
	return SaveVersioned(ctx, &ts, SaveInput{ID: id, Core: core, forced: forced})
}
