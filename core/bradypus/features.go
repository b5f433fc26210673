package bradypus

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Plugins is what the upgrade needs of the plugin host: what activating a
// feature applies (as POST /config/table/{tb}/{feature} does), and the
// features' save hooks, through which the plugin data is written.
// *pluginhost.Manager is one (a nil one has no plugins).
type Plugins interface {
	RunningSpec(nameOrAlias string) (schema.FeatureSpec, bool)
	ForTable(t *schema.Table) pluginhost.Extras
	// State, Seal and InsertSystemRows bring BraDypUS's Zotero data into
	// the refmgr plugin's system tables (refmgr.go).
	State(name string) pluginhost.State
	Seal(plugin, app, purpose, clear string) (string, error)
	InsertSystemRows(ctx context.Context, tx *store.DB, plugin, table string, rows []map[string]any) error
}

// ErrPluginMissing refuses an application with plugin data whose Strata
// plugin is not installed and running: converting it without would drop
// that data.
var ErrPluginMissing = errs.New(errs.Unavailable, "plugin_not_installed",
	"the BraDypUS application has plugin data, and the Strata plugin that keeps it is not installed or not running: install it and retry")

// featureSpecs finds the running plugin feature of every feature la
// needs, and checks that the refmgr plugin runs when la has Zotero data.
func featureSpecs(p Plugins, la *legacyApp) (map[string]schema.FeatureSpec, error) {
	specs := map[string]schema.FeatureSpec{}
	var missing []string
	for _, name := range la.featureNames() {
		var spec schema.FeatureSpec
		ok := false
		if p != nil {
			spec, ok = p.RunningSpec(name)
		}
		if !ok {
			missing = append(missing, name)
			continue
		}
		specs[name] = spec
	}
	// Reference libraries and links are the refmgr plugin's (no feature:
	// its system tables).
	if la.zotero && (p == nil || p.State(refmgrPlugin) != pluginhost.StateRunning) {
		missing = append(missing, refmgrPlugin)
	}
	if len(missing) > 0 {
		return nil, ErrPluginMissing.With("plugins", missing).With("detail", "missing: "+strings.Join(missing, ", "))
	}
	return specs, nil
}

// featureColumns are the columns the features of t add to it (so the
// upgrade does not add them as plain fields first), or, for a radiocarbon
// table, the columns the feature adds to its child table.
func featureColumns(t *legacyTable, specs map[string]schema.FeatureSpec) map[string]bool {
	cols := map[string]bool{}
	for _, f := range t.Features {
		for _, c := range specs[f].Columns {
			cols[c.Name] = true
		}
	}
	if t.Child != "" {
		if ch := specs[t.Child].Child; ch != nil {
			for _, c := range ch.Columns {
				cols[c.Name] = true
			}
		}
	}
	return cols
}

// activateFeatures activates each table's features (columns, child table)
// and then adds the fields of a radiocarbon table that the feature does
// not declare (a user's own additions), in la's order.
func activateFeatures(ctx context.Context, tx *store.DB, la *legacyApp, specs map[string]schema.FeatureSpec, rep *Report, now time.Time) error {
	for _, t := range la.Tables {
		for _, f := range t.Features {
			if err := schema.ActivateFeature(ctx, tx, t.Name, specs[f], now); err != nil {
				return fmt.Errorf("feature %s on %s: %w", f, t.Name, err)
			}
			rep.logf("feature %s activated on %s", f, t.Name)
		}
	}
	for _, t := range la.Tables {
		if t.Child == "" {
			continue
		}
		if want := childName(t, specs); want != t.Name {
			return fmt.Errorf("the radiocarbon table %s is not named %s, as the feature's child table of %s is", t.Name, want, t.PluginOf)
		}
		cols := featureColumns(t, specs)
		for _, lf := range t.Fields {
			if cols[lf.Name] {
				continue
			}
			fd, err := fieldDef(t, lf)
			if err != nil {
				return err
			}
			if _, err := schema.AddField(ctx, tx, t.Name, fd, now); err != nil {
				return fmt.Errorf("field %s.%s: %w", t.Name, lf.Name, err)
			}
		}
	}
	return nil
}

// childName is the name the feature gives the child table of t's parent.
func childName(t *legacyTable, specs map[string]schema.FeatureSpec) string {
	if ch := specs[t.Child].Child; ch != nil {
		return t.PluginOf + "_" + ch.Suffix
	}
	return ""
}

// hookBatch is how many rows one hook call carries: small enough that a
// plugin answers well within its hook deadline (about 2 s).
const hookBatch = 200

// featureHook is an active feature's save hook as it applies to the rows
// of one table being copied: its own columns, or its child table's.
type featureHook struct {
	name     string
	parent   string // the table the feature is active on
	rowTable string
	child    bool
	columns  []string // sent (not computed)
	allowed  []string // taken back (columns and computed)
	hook     records.FeatureHook
}

// hooksFor are the BeforeSave hooks that check and complete the rows of
// table t: those of the features active on it and, for a feature's child
// table, that feature's.
func hooksFor(p Plugins, cat *schema.Catalog, t *schema.Table) []featureHook {
	if p == nil {
		return nil
	}
	owner := t
	if t.Feature != "" && t.PluginOf != "" {
		if parent, ok := cat.Table(t.PluginOf); ok {
			owner = parent
		}
	}
	var out []featureHook
	for _, f := range p.ForTable(owner).Features {
		if f.Hook == nil || !f.Before {
			continue
		}
		h := featureHook{name: f.Name, parent: owner.Name, hook: f.Hook}
		var cols []string
		switch {
		case owner == t && len(f.Columns) > 0:
			h.rowTable, cols = t.Name, f.Columns
		case owner != t && f.ChildTable == t.Name:
			h.rowTable, h.child = t.Name, true
			for _, fld := range t.Fields {
				if fld.Feature == f.Name {
					cols = append(cols, fld.Name)
				}
			}
		default:
			continue
		}
		for _, c := range cols {
			if !slices.Contains(f.Computed, c) {
				h.columns = append(h.columns, c)
			}
		}
		h.allowed = append(slices.Clone(h.columns), f.Computed...)
		out = append(out, h)
	}
	return out
}

// runHooks passes a batch of rows (cols, as the insert takes them) through
// the features' BeforeSave hooks, as a save through the API would: the
// plugin checks and normalises its values and computes its columns. A row
// with no value for the feature is not sent. A row the plugin objects to
// keeps the values BraDypUS had, and the objection becomes a warning: the
// upgrade moves data, it does not judge it.
func runHooks(ctx context.Context, app string, hooks []featureHook, t *schema.Table, cols []string, batch [][]any, rep *Report) error {
	idx := map[string]int{}
	for i, c := range cols {
		idx[c] = i
	}
	actor := &records.Actor{App: app, Privilege: auth.SuperAdmin, Name: "BraDypUS major upgrade"}
	for _, h := range hooks {
		call := records.HookCall{Feature: h.name, Table: h.parent, RowTable: h.rowTable, Actor: actor}
		var which []int
		for i, row := range batch {
			vals := map[string]any{}
			empty := true
			for _, c := range h.columns {
				v := row[idx[c]]
				vals[c] = v
				if v != nil && v != "" {
					empty = false
				}
			}
			if empty {
				continue
			}
			hr := records.HookRow{Values: vals}
			if h.child {
				if n, ok := asInt(row[idx[schema.ColIDLink]]); ok {
					hr.ParentID = n
				}
			}
			call.Rows = append(call.Rows, hr)
			which = append(which, i)
		}
		if len(call.Rows) == 0 {
			continue
		}
		results, err := h.hook.BeforeSave(ctx, call)
		if err != nil {
			return fmt.Errorf("the %s plugin did not take the rows of %s: %w", h.name, t.Name, err)
		}
		if len(results) != len(call.Rows) {
			return fmt.Errorf("the %s plugin answered for %d rows of %s, not %d", h.name, len(results), t.Name, len(call.Rows))
		}
		for k, res := range results {
			row := batch[which[k]]
			if len(res.Errors) > 0 {
				var msgs []string
				for _, fe := range res.Errors {
					msgs = append(msgs, fe.Field+": "+fe.Rule)
				}
				rep.warnf("%s %v: the %s plugin objects (%s); the BraDypUS values are kept", t.Name, row[0], h.name, strings.Join(msgs, ", "))
				continue
			}
			for _, c := range h.allowed {
				v, ok := res.Values[c]
				if !ok {
					continue
				}
				f, _ := t.Field(c)
				sv, err := storageValue(f.DBType, v)
				if err != nil {
					return fmt.Errorf("the %s plugin's %s of %s %v: %w", h.name, c, t.Name, row[0], err)
				}
				row[idx[c]] = sv
			}
		}
	}
	return nil
}
