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
}

// HookResult is a row as the plugin wants it written, or its field errors.
type HookResult struct {
	Values map[string]any
	Errors []FieldError
}

// ActiveFeature is a plugin feature active on the scope's table.
type ActiveFeature struct {
	Name       string
	Columns    []string // on the table
	ChildTable string   // "" when none
	Computed   []string // written only by the plugin
	Before     bool
	After      bool
	Required   bool        // saves are refused while the plugin is down
	Hook       FeatureHook // nil: the plugin is not running
}

// Section is a plugin section of the full record.
type Section struct {
	Name   string
	Source SectionSource // nil: the plugin is not running (the section is null)
}

// FilesSource gives the `files` section of a full record (the files area
// provides it; records does not know how files are stored).
type FilesSource interface {
	RecordFiles(ctx context.Context, db *store.DB, app, table string, id int64) (any, error)
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
func (s *Scope) runBeforeHooks(ctx context.Context, in *SaveInput) ([]FieldError, error) {
	var fes []FieldError
	for _, f := range s.Features {
		if !f.Before && !f.Required {
			continue
		}
		call := HookCall{Feature: f.Name, Table: s.Table.Name, Actor: s.hookActor()}
		// Which input rows the call covers, so results can be put back.
		type target struct {
			core bool
			row  *PluginRowInput
			idx  int
		}
		var targets []target
		if len(f.Columns) > 0 {
			vals := pickValues(in.Core, f.Columns, f.Computed)
			// Only a save that touches the feature's columns needs the plugin:
			// with it down, records that leave them empty can still be made.
			if len(vals) > 0 {
				call.RowTable = s.Table.Name
				call.Rows = append(call.Rows, HookRow{ID: in.ID, Values: vals})
				targets = append(targets, target{core: true})
			}
		}
		if f.ChildTable != "" {
			for i := range in.Plugins[f.ChildTable] {
				r := &in.Plugins[f.ChildTable][i]
				if r.Delete {
					continue
				}
				call.RowTable = f.ChildTable
				call.Rows = append(call.Rows, HookRow{ID: r.ID, ParentID: in.ID, Values: withoutKeys(r.Fields, f.Computed)})
				targets = append(targets, target{row: r, idx: i})
			}
		}
		if len(call.Rows) == 0 {
			continue
		}
		if f.Hook == nil {
			if f.Required {
				return nil, errSaveNeedsPlugin.With("feature", f.Name)
			}
			continue
		}
		if !f.Before {
			continue
		}
		if len(f.Columns) > 0 && f.ChildTable != "" {
			// One call per row table keeps RowTable meaningful.
			return nil, errs.New(errs.Internal, "internal_error", "a feature with both columns and a child table hooks one of them")
		}
		results, err := f.Hook.BeforeSave(ctx, call)
		if err != nil {
			if f.Required {
				return nil, errSaveNeedsPlugin.With("feature", f.Name).Wrap(err)
			}
			continue
		}
		if len(results) != len(call.Rows) {
			return nil, errs.New(errs.Internal, "internal_error", "a plugin answered for a different number of rows").With("feature", f.Name)
		}
		for i, res := range results {
			t := targets[i]
			for _, fe := range res.Errors {
				// Reported like the server's own errors: with the field's
				// label (CONTRACT §5), and table/row only for child rows
				// (docs/api.md), so a client does not look for a child row
				// where the record's own field is meant.
				rowTable := s.Table
				if !t.core {
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
				fes = append(fes, fe)
			}
			allowed := append(append([]string{}, f.Columns...), f.Computed...)
			if t.core {
				for k, v := range pickValues(res.Values, allowed, nil) {
					in.Core[k] = v
				}
				in.forced = mergeForced(in.forced, res.Values, f.Computed)
				continue
			}
			if t.row.Fields == nil {
				t.row.Fields = map[string]any{}
			}
			for k, v := range res.Values {
				t.row.Fields[k] = v
			}
			t.row.forced = mergeForced(t.row.forced, res.Values, f.Computed)
		}
	}
	return fes, nil
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
