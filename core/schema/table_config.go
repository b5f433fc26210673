package schema

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// MaxChronoDensityPath is the depth limit of a chronology density path
// (SPEC §8).
const MaxChronoDensityPath = 8

// TableConfig is the body of PUT /config/table/{tb}: only keys present
// change. The name is changed by RenameTable, never here.
type TableConfig struct {
	Label             Patch[string]   `json:"label"`
	Order             Patch[int]      `json:"order"`
	IDField           Patch[string]   `json:"id_field"`
	Preview           Patch[[]string] `json:"preview"`
	RS                Patch[bool]     `json:"rs"`
	Geodata           Patch[bool]     `json:"geodata"`
	RefMgr            Patch[bool]     `json:"refmgr"`
	ChronoDensityPath Patch[[]string] `json:"chrono_density_path"`
	Backlinks         Patch[[]string] `json:"backlinks"`
}

// PutTable changes the settings of a table. Each key sent is validated
// against the catalog; keys not sent keep their value.
func PutTable(ctx context.Context, db *store.DB, table string, in TableConfig, now time.Time) (*Table, error) {
	var out *Table
	err := change(ctx, db, func(tx *store.DB, st *state) error {
		t, ok := st.cat.Table(table)
		if !ok {
			return ErrTableNotFound
		}
		if err := checkTableConfig(st, t, &in); err != nil {
			return err
		}
		nt := *t
		in.Label.apply(&nt.Label)
		if strings.TrimSpace(nt.Label) == "" {
			nt.Label = nt.Name
		}
		in.Order.apply(&nt.Sort)
		in.IDField.apply(&nt.IDField)
		in.Preview.apply(&nt.Preview)
		in.RS.apply(&nt.RS)
		in.Geodata.apply(&nt.Geodata)
		in.RefMgr.apply(&nt.RefMgr)
		in.ChronoDensityPath.apply(&nt.ChronoDensityPath)
		in.Backlinks.apply(&nt.Backlinks)
		nt.UpdatedAt = now
		_, err := tx.Exec(ctx, `UPDATE `+tx.Sys("tables")+` SET label = ?, sort = ?, rs = ?, geodata = ?, refmgr = ?
			WHERE id = ?`, nt.Label, nt.Sort, nt.RS, nt.Geodata, nt.RefMgr, nt.ID)
		if err != nil {
			return fmt.Errorf("update table %s: %w", table, err)
		}
		if err := saveTableSettings(ctx, tx, &nt, now); err != nil {
			return err
		}
		out = &nt
		return nil
	})
	return out, err
}

func badConfig(param, detail string) error {
	return ErrInvalidTableConfig.With("parameter", param).With("detail", detail)
}

// checkTableConfig validates the keys of in that were sent.
func checkTableConfig(st *state, t *Table, in *TableConfig) error {
	if t.IsPlugin {
		// A plugin table is shown inside its parent's record: these
		// settings belong to the parent.
		for _, p := range []struct {
			name string
			on   bool
		}{{"rs", in.RS.Value}, {"geodata", in.Geodata.Value}, {"refmgr", in.RefMgr.Value},
			{"chrono_density_path", len(in.ChronoDensityPath.Value) > 0}, {"backlinks", len(in.Backlinks.Value) > 0}} {
			if p.on {
				return badConfig(p.name, "a plugin table takes no "+p.name)
			}
		}
	}
	if in.IDField.Set && in.IDField.Value != "" {
		if _, ok := t.Field(in.IDField.Value); !ok {
			return badConfig("id_field", "id_field must name a field of the table")
		}
	}
	if in.Preview.Set {
		for i, name := range in.Preview.Value {
			if _, ok := t.Field(name); !ok {
				return badConfig("preview", fmt.Sprintf("%q is not a field of the table", name))
			}
			if slices.Contains(in.Preview.Value[:i], name) {
				return badConfig("preview", fmt.Sprintf("%q is listed twice", name))
			}
		}
	}
	if in.ChronoDensityPath.Set {
		if err := checkChronoPath(st, t, in.ChronoDensityPath.Value); err != nil {
			return err
		}
	}
	if in.Backlinks.Set {
		for i, s := range in.Backlinks.Value {
			if err := checkBacklink(st, t, s); err != nil {
				return err
			}
			if slices.Contains(in.Backlinks.Value[:i], s) {
				return badConfig("backlinks", fmt.Sprintf("%q is listed twice", s))
			}
		}
	}
	return nil
}

// checkChronoPath validates a chronology density path of root: at most
// MaxChronoDensityPath tables, root itself absent, each a foreign-key child
// of the one before (the first of root), and the last one with the
// chronology feature active (SPEC §4.6; intermediates need not have it).
func checkChronoPath(st *state, root *Table, path []string) error {
	if len(path) > MaxChronoDensityPath {
		return badConfig("chrono_density_path", fmt.Sprintf("at most %d tables", MaxChronoDensityPath))
	}
	parent := root.Name
	for i, name := range path {
		if name == root.Name {
			return badConfig("chrono_density_path", "the path starts after the table itself; leave it out")
		}
		if _, ok := st.cat.Table(name); !ok {
			return badConfig("chrono_density_path", fmt.Sprintf("%q names no table", name))
		}
		if slices.Contains(path[:i], name) {
			return badConfig("chrono_density_path", fmt.Sprintf("%q is listed twice", name))
		}
		if !isChildTable(st, name, parent) {
			return badConfig("chrono_density_path", fmt.Sprintf("%q is not a child of %q (no relation or plugin link to it)", name, parent))
		}
		parent = name
	}
	if n := len(path); n > 0 {
		if last, _ := st.cat.Table(path[n-1]); !last.Active(ChronologyFeature) {
			return badConfig("chrono_density_path", fmt.Sprintf("the last table, %q, must have chronology active", path[n-1]))
		}
	}
	return nil
}

// ChronologyFeature is the feature a chronology density path must end in.
const ChronologyFeature = "chronology"

// isChildTable reports whether child's rows point at parent's rows: a
// relation from child to parent, or child is a plugin table of parent.
func isChildTable(st *state, child, parent string) bool {
	if c, ok := st.cat.Table(child); ok && c.IsPlugin && c.PluginOf == parent {
		return true
	}
	for _, r := range st.relations {
		if r.FromTb == child && r.ToTb == parent {
			return true
		}
	}
	return false
}

// checkBacklink validates "refTb:viaTb:fkCol" for table t: both tables
// exist and viaTb.fkCol references t, through a relation or a lookup.
func checkBacklink(st *state, t *Table, s string) error {
	b, ok := ParseBacklink(s)
	if !ok {
		return badConfig("backlinks", fmt.Sprintf("%q is not refTb:viaTb:fkCol", s))
	}
	if _, ok := st.cat.Table(b.RefTb); !ok {
		return badConfig("backlinks", fmt.Sprintf("%q: %q names no table", s, b.RefTb))
	}
	via, ok := st.cat.Table(b.ViaTb)
	if !ok {
		return badConfig("backlinks", fmt.Sprintf("%q: %q names no table", s, b.ViaTb))
	}
	f, ok := via.Field(b.FkCol)
	if !ok {
		return badConfig("backlinks", fmt.Sprintf("%q: %q is not a field of %q", s, b.FkCol, b.ViaTb))
	}
	if !referencesTable(st, via, f, t.Name) {
		return badConfig("backlinks", fmt.Sprintf("%q: %s.%s does not reference %q", s, b.ViaTb, b.FkCol, t.Name))
	}
	return nil
}

// referencesTable reports whether field f of table via points at target,
// by a lookup or a relation.
func referencesTable(st *state, via *Table, f *Field, target string) bool {
	if f.IDFromTb == target {
		return true
	}
	for _, r := range st.relations {
		if r.FromTb == via.Name && r.FromCol == f.Name && r.ToTb == target {
			return true
		}
	}
	return false
}

// SortTables sets the display order: names must list every table once.
func SortTables(ctx context.Context, db *store.DB, names []string, now time.Time) error {
	return change(ctx, db, func(tx *store.DB, st *state) error {
		all := make([]string, len(st.cat.Tables))
		for i, t := range st.cat.Tables {
			all[i] = t.Name
		}
		if err := checkPermutation(all, names); err != nil {
			return err
		}
		for i, name := range names {
			t, _ := st.cat.Table(name)
			if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("tables")+` SET sort = ?, updated_at = ? WHERE id = ?`, i, now, t.ID); err != nil {
				return fmt.Errorf("sort tables: %w", err)
			}
		}
		return nil
	})
}

// checkPermutation refuses a sort list that is not exactly all, reordered,
// naming what is missing, unknown or repeated.
func checkPermutation(all, names []string) error {
	var missing, unknown, twice []string
	for i, n := range names {
		if !slices.Contains(all, n) {
			unknown = append(unknown, n)
		} else if slices.Contains(names[:i], n) {
			twice = append(twice, n)
		}
	}
	for _, n := range all {
		if !slices.Contains(names, n) {
			missing = append(missing, n)
		}
	}
	if len(missing)+len(unknown)+len(twice) == 0 {
		return nil
	}
	err := ErrInvalidSort
	for _, p := range []struct {
		key  string
		list []string
	}{{"missing", missing}, {"unknown", unknown}, {"repeated", twice}} {
		if len(p.list) > 0 {
			err = err.With(p.key, p.list)
		}
	}
	return err
}
