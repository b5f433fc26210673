package records

import (
	"context"
	"slices"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// FeatureHook is a running plugin's side of a table feature. The plugin
// host implements it; records never knows about processes.
type FeatureHook interface {
	BeforeSave(ctx context.Context, call HookCall) ([]HookResult, error)
	AfterSave(ctx context.Context, call HookCall) error
}

// HookCall is a batch of rows of one feature: the table's feature columns
// (RowTable = Table) or rows of the feature's child table.
type HookCall struct {
	Feature  string
	Table    string
	RowTable string
	Rows     []HookRow
	Actor    *Actor
}

// Actor is who caused the call, as plugins see it.
type Actor struct {
	App       string
	UserID    int64
	APIKeyID  int64
	Privilege int
	Name      string
	Email     string
}

// HookRow is one row: its id (0 when new), its parent record (child rows)
// and the feature's values.
type HookRow struct {
	ID       int64
	ParentID int64
	Values   map[string]any
	// Record (BeforeSave) is the row as it will be after the save: the
	// stored row (a columns feature: its columns and DependsOn fields, with
	// id; a child row: the stored child row) overlaid with what was sent;
	// for a new row, what was sent and the defaults. The save writes the
	// hook's answer only if the record's version is still the one this
	// was read at (see BeforeSaveMany).
	Record map[string]any
}

// HookResult is a row as the plugin wants it written, or its field errors.
type HookResult struct {
	Values map[string]any
	Errors []FieldError
}

// ActiveFeature is a plugin feature active on the scope's table.
type ActiveFeature struct {
	Name       string
	Plugin     string   // the plugin offering it ("" when not loaded)
	Columns    []string // on the table
	ChildTable string   // "" when none
	Computed   []string // written only by the plugin
	Before     bool
	After      bool
	Required   bool        // saves are refused while the plugin is down
	Hook       FeatureHook // nil: the plugin is not running
	// DependsOn are fields of the table outside the feature whose change
	// calls the hooks too; Record holds them.
	DependsOn []string
}

// Section is a plugin section of the full record.
type Section struct {
	Name   string
	Source SectionSource // nil: the plugin is not running (the section is null)
	// Probe, when set, tells within the read's own round trip whether the
	// record has anything for the section; a record without gets
	// Probe.Empty() and Source is not called.
	Probe SectionProbe
}

// SectionProbe looks for a record's rows of a section made of rows.
type SectionProbe interface {
	// Has is a boolean SQL expression (with its bound values) telling
	// whether record id of table has rows: a query of the read's round
	// trip on PostgreSQL, a value of the record's own statement on SQLite.
	Has(ctx context.Context, db *store.DB, table string, id int64) (expr string, args []any, err error)
	// Empty is the section's value for a record without rows.
	Empty() (any, error)
}

// FilesSource gives the `files` section of a full record (the files area
// provides it; records does not know how files are stored).
type FilesSource interface {
	RecordFiles(ctx context.Context, db *store.DB, app, table string, id int64) (any, error)
}

// FilesQueuer is a FilesSource that queues its query in the record's
// pipeline (one round trip with the record's own on PostgreSQL); done
// gets the section as RecordFiles gives it.
type FilesQueuer interface {
	FilesSource
	QueueRecordFiles(ctx context.Context, p *store.Pipeline, app, table string, id int64, done func(any))
}

// FilesProber is a FilesQueuer that can tell, as a scalar subquery of the
// record's own statement, whether the record has files at all: where each
// statement costs (SQLite), a record without files then costs no query
// for them (Read). args are the expression's bound values.
type FilesProber interface {
	FilesQueuer
	RecordFilesExist(db *store.DB, table string, id int64) (expr string, args []any)
}

// SectionSource gives a section's value for records, batched by ids.
type SectionSource interface {
	Enrich(ctx context.Context, section, table string, ids []int64, actor *Actor) (map[int64]any, error)
}

// ErrPluginUnavailable answers a request that needs a plugin that is down:
// a route of the plugin, a filter with its operator, its activation. Its
// message speaks of no save, since most such requests only read.
var ErrPluginUnavailable = errs.New(errs.Unavailable, "plugin_unavailable",
	"a plugin this request needs is not running; try again shortly")

// errSaveNeedsPlugin refuses a save whose required plugin is down: the
// same code, with a message that says nothing was written.
var errSaveNeedsPlugin = errs.New(errs.Unavailable, ErrPluginUnavailable.Code,
	"a plugin this table needs is not running; nothing was saved, try again shortly")

func (s *Scope) hookActor() *Actor {
	a := &Actor{App: s.App, Privilege: s.Level}
	if s.Actor != nil {
		a.UserID, a.APIKeyID, a.Name, a.Email = s.Actor.UserID, s.Actor.KeyID, s.Actor.Name, s.Actor.Email
	}
	return a
}

// pickValues returns the entries of m whose keys are in keys and not in
// skip.
func pickValues(m map[string]any, keys, skip []string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok && !slices.Contains(skip, k) {
			out[k] = v
		}
	}
	return out
}

// runBeforeHooks calls each active feature's BeforeSave with the values
// the client sent for it, before any transaction opens (a plugin call must
// never hold a write lock). Patched values replace the client's, computed
// columns included; field errors are returned for the validation answer.
// A single save is a batch of one (BeforeSaveMany).
func (s *Scope) runBeforeHooks(ctx context.Context, in *SaveInput) ([]FieldError, error) {
	fes, _, err := BeforeSaveMany(ctx, s, []*SaveInput{in})
	if err != nil {
		return nil, err
	}
	return fes[0], nil
}

func withoutKeys(m map[string]any, skip []string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !slices.Contains(skip, k) {
			out[k] = v
		}
	}
	return out
}

// mergeForced collects the computed columns a plugin returned: they are
// written although clients may not write them.
func mergeForced(dst, values map[string]any, computed []string) map[string]any {
	for _, c := range computed {
		if v, ok := values[c]; ok {
			if dst == nil {
				dst = map[string]any{}
			}
			dst[c] = v
		}
	}
	return dst
}

// runAfterHooks tells plugins about rows that were written; failures are
// the plugin's to report, the save already happened.
func (s *Scope) runAfterHooks(ctx context.Context, id int64, in SaveInput, log func(feature string, err error)) {
	for _, f := range s.Features {
		if !f.After || f.Hook == nil {
			continue
		}
		call := HookCall{Feature: f.Name, Table: s.Table.Name, Actor: s.hookActor()}
		if len(f.Columns) > 0 {
			call.RowTable = s.Table.Name
			call.Rows = []HookRow{{ID: id, Values: pickValues(in.Core, f.Columns, nil)}}
		} else if f.ChildTable != "" {
			call.RowTable = f.ChildTable
			for _, r := range in.Plugins[f.ChildTable] {
				if !r.Delete {
					call.Rows = append(call.Rows, HookRow{ID: r.ID, ParentID: id, Values: r.Fields})
				}
			}
		}
		if len(call.Rows) == 0 {
			continue
		}
		if err := f.Hook.AfterSave(ctx, call); err != nil && log != nil {
			log(f.Name, err)
		}
	}
}
