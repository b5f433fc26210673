package schema

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// FeatureSpec is what a plugin feature adds to a table when activated:
// columns on the table and/or a child table <table>_<suffix>.
type FeatureSpec struct {
	Plugin   string
	Name     string
	Columns  []FieldDef
	Child    *ChildSpec
	Computed []string // columns the plugin computes: read-only to clients
}

// ChildSpec is a feature's child table.
type ChildSpec struct {
	Suffix  string
	Label   string
	Columns []FieldDef
}

var (
	ErrFeatureConflict = errs.New(errs.Conflict, "feature_conflict",
		"the table already has a column or child table of that name that belongs to something else")
	ErrFeatureNotFound = errs.New(errs.NotFound, "feature_not_active", "the feature was never activated on this table")
)

// ActivateFeature adds the feature's columns and child table to table (or
// finds them from an earlier activation: deactivation keeps them, with
// their data) and marks the feature active, in one transaction.
func ActivateFeature(ctx context.Context, db *store.DB, table string, spec FeatureSpec, now time.Time) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		cat, err := Load(ctx, tx)
		if err != nil {
			return err
		}
		t, ok := cat.Table(table)
		if !ok {
			return ErrTableNotFound.With("table", table)
		}
		if t.IsPlugin {
			return ErrInvalidParameter.With("detail", "features are activated on normal tables, not on plugin tables")
		}
		computed := map[string]bool{}
		for _, c := range spec.Computed {
			computed[c] = true
		}
		if err := addFeatureColumns(ctx, tx, t, spec.Name, spec.Columns, computed, now); err != nil {
			return err
		}
		child := ""
		if spec.Child != nil {
			child = t.Name + "_" + spec.Child.Suffix
			existing, exists := cat.Table(child)
			switch {
			case exists && (existing.Feature != spec.Name || existing.PluginOf != t.Name):
				return ErrFeatureConflict.With("table", child)
			case !exists:
				label := spec.Child.Label
				if label == "" {
					label = child
				}
				created, err := CreateTable(ctx, tx, TableDef{Name: child, Label: label, PluginOf: t.Name, Feature: spec.Name}, now)
				if err != nil {
					return fmt.Errorf("feature %s: child table: %w", spec.Name, err)
				}
				existing = created
			}
			if err := addFeatureColumns(ctx, tx, existing, spec.Name, spec.Child.Columns, computed, now); err != nil {
				return err
			}
		}
		var childCol any
		if child != "" {
			childCol = child
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("table_features")+` (table_name, feature, plugin, active, child_table, changed_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (table_name, feature) DO UPDATE SET active = excluded.active,
			plugin = excluded.plugin, child_table = excluded.child_table, changed_at = excluded.changed_at`,
			t.Name, spec.Name, spec.Plugin, true, childCol, now); err != nil {
			return fmt.Errorf("record feature %s on %s: %w", spec.Name, t.Name, err)
		}
		return bumpVersion(ctx, tx)
	})
}

// addFeatureColumns adds the columns t does not have yet; a column of the
// same name that belongs to something else is a conflict.
func addFeatureColumns(ctx context.Context, tx *store.DB, t *Table, feature string, cols []FieldDef, computed map[string]bool, now time.Time) error {
	for _, def := range cols {
		if f, exists := t.Field(def.Name); exists {
			if f.Feature != feature {
				return ErrFeatureConflict.With("field", def.Name).With("table", t.Name)
			}
			continue // from an earlier activation, data kept
		}
		def.Feature = feature
		def.Readonly = def.Readonly || computed[def.Name]
		if _, err := AddField(ctx, tx, t.Name, def, now); err != nil {
			return fmt.Errorf("feature %s: column %s: %w", feature, def.Name, err)
		}
	}
	return nil
}

// DeactivateFeature marks the feature inactive on table: its columns,
// child table and data stay, hidden from records until reactivation.
func DeactivateFeature(ctx context.Context, db *store.DB, table, feature string, now time.Time) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		r, err := tx.Exec(ctx, `UPDATE `+tx.Sys("table_features")+` SET active = ?, changed_at = ? WHERE table_name = ? AND feature = ?`,
			false, now, table, feature)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return ErrFeatureNotFound.With("table", table).With("feature", feature)
		}
		return bumpVersion(ctx, tx)
	})
}

// Active reports whether feature is active on t.
func (t *Table) Active(feature string) bool { return t.Features[feature].Active }

// Visible returns the catalog as records see it: fields and child tables
// of features that are inactive on their table are left out, so they are
// neither listed, read, written nor filtered on (CONTRACT §8). The view is
// built once per catalog.
func (c *Catalog) Visible() *Catalog {
	c.visibleOnce.Do(func() {
		hidden := func(t *Table) bool {
			if t.Feature == "" || !t.IsPlugin {
				return false
			}
			parent, ok := c.byName[t.PluginOf]
			return !ok || !parent.Active(t.Feature)
		}
		tables := make([]*Table, 0, len(c.Tables))
		for _, t := range c.Tables {
			if hidden(t) {
				continue
			}
			owner := t
			if t.IsPlugin {
				owner = c.byName[t.PluginOf]
			}
			v := *t
			v.Fields = make([]*Field, 0, len(t.Fields))
			for _, f := range t.Fields {
				if f.Feature != "" && (owner == nil || !owner.Active(f.Feature)) {
					continue
				}
				v.Fields = append(v.Fields, f)
			}
			tables = append(tables, &v)
		}
		c.visible = newCatalog(c.Version, tables)
	})
	return c.visible
}
