package schema

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// TableRename is one table renamed by RenameTable.
type TableRename struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// tableNameColumns are the system-table columns, besides the catalog's own
// (sys_tables, sys_fields, sys_relations and the table settings, handled
// in code), that hold a user table's name: a rename rewrites them and a
// delete removes their rows. A system table that starts naming user
// tables adds its row here.
var tableNameColumns = []struct{ sys, col string }{
	{"indexes", "table_name"},
	{"table_privileges", "table_name"},
	{"versions", "tb"},         // record history: follows its table, goes with it
	{"versions_pruned", "tb"},  // what retention pruned of its records' versions
	{"rs", "tb"},               // stratigraphic relations between its records
	{"manual_links", "tb_one"}, // links from or to its records
	{"manual_links", "tb_two"},
	{"history", "tb"},    // users' recent records
	{"file_links", "tb"}, // files linked to its records (the files stay)
	{"geodata", "tb"},    // its records' features
	{"table_features", "table_name"},
	{"plugin_unchecked", "tb"}, // rows saved without a plugin's check
	{"plugin_unchecked", "row_table"},
}

// RenameTable renames a table (ALTER TABLE ... RENAME, so data, ids and
// indexes stay) and rewrites every catalog reference to it in the same
// transaction: plugin parents, lookups, value sources, relations, indexes,
// backlinks, chronology paths and table privileges. Plugin tables named
// <old>_<suffix> follow as <new>_<suffix>, keeping the naming plugins rely
// on (SPEC §2.8: <tb>_radiocarbon).
func RenameTable(ctx context.Context, db *store.DB, table, newName string, now time.Time) ([]TableRename, error) {
	newName = strings.TrimSpace(newName)
	if newName == "" {
		return nil, ErrParameterMissing.With("parameter", "new_name")
	}
	if err := CheckTableName(newName); err != nil {
		return nil, err
	}
	var out []TableRename
	err := change(ctx, db, func(tx *store.DB, st *state) error {
		if _, ok := st.cat.Table(table); !ok {
			return ErrTableNotFound
		}
		renames := []TableRename{{table, newName}}
		for _, c := range st.cat.PluginTables(table) {
			if suffix, ok := strings.CutPrefix(c.Name, table+"_"); ok {
				renames = append(renames, TableRename{c.Name, newName + "_" + suffix})
			}
		}
		for _, r := range renames {
			if !ValidTableName(r.To) {
				return ErrInvalidTableName.With("table", r.To).With("detail", "plugin table "+r.From+" would be renamed "+r.To)
			}
			if _, exists := st.cat.Table(r.To); exists {
				return ErrTableExists.With("table", r.To)
			}
			if exists, err := physicalTableExists(ctx, tx, r.To); err != nil {
				return err
			} else if exists {
				return ErrTableExists.With("table", r.To).With("detail", "a table of that name exists outside the catalog")
			}
		}
		changed := map[int64]*Table{}
		for _, r := range renames {
			if err := renameOneTable(ctx, tx, st, r, changed, now); err != nil {
				return err
			}
		}
		for _, ct := range changed {
			if err := saveTableSettings(ctx, tx, ct, now); err != nil {
				return err
			}
		}
		out = renames
		return nil
	})
	return out, err
}

// renameOneTable renames r.From and the references to it. List settings
// are rewritten in memory (a list may name several renamed tables) and
// marked in changed for the caller to save once.
func renameOneTable(ctx context.Context, tx *store.DB, st *state, r TableRename, changed map[int64]*Table, now time.Time) error {
	if err := execAll(ctx, tx, "rename table "+r.From,
		`ALTER TABLE `+tx.Qualify(r.From)+` RENAME TO `+tx.Engine.Quote(r.To)); err != nil {
		return err
	}
	type stmt struct {
		sql  string
		args []any
	}
	tp := tx.Sys("table_privileges")
	updates := []stmt{
		// Overrides may be granted before a table exists, so a user may
		// hold one on the new name already: the renamed table's own wins
		// (and the pair (user, table) stays unique).
		{`DELETE FROM ` + tp + ` WHERE table_name = ? AND user_id IN (SELECT user_id FROM ` + tp + ` WHERE table_name = ?)`, []any{r.To, r.From}},
		{`UPDATE ` + tx.Sys("tables") + ` SET name = ?, updated_at = ? WHERE name = ?`, []any{r.To, now, r.From}},
		{`UPDATE ` + tx.Sys("tables") + ` SET plugin_of = ? WHERE plugin_of = ?`, []any{r.To, r.From}},
		{`UPDATE ` + tx.Sys("relations") + ` SET from_tb = ? WHERE from_tb = ?`, []any{r.To, r.From}},
		{`UPDATE ` + tx.Sys("relations") + ` SET to_tb = ? WHERE to_tb = ?`, []any{r.To, r.From}},
	}
	for _, c := range tableNameColumns {
		col := tx.Engine.Quote(c.col)
		updates = append(updates, stmt{`UPDATE ` + tx.Sys(c.sys) + ` SET ` + col + ` = ? WHERE ` + col + ` = ?`, []any{r.To, r.From}})
	}
	for _, u := range updates {
		if _, err := tx.Exec(ctx, u.sql, u.args...); err != nil {
			return fmt.Errorf("rename table %s: %w", r.From, err)
		}
	}
	for _, t := range st.cat.Tables {
		for _, f := range t.Fields {
			moved := false
			if f.IDFromTb == r.From {
				f.IDFromTb, moved = r.To, true
			}
			if tb, fld := valuesSource(f.GetValuesFromTb); f.GetValuesFromTb != "" && tb == r.From {
				f.GetValuesFromTb, moved = r.To+":"+fld, true
			}
			if moved {
				if err := saveFieldSources(ctx, tx, f, now); err != nil {
					return err
				}
			}
		}
		for i, s := range t.Backlinks {
			if b, ok := ParseBacklink(s); ok && (b.RefTb == r.From || b.ViaTb == r.From) {
				if b.RefTb == r.From {
					b.RefTb = r.To
				}
				if b.ViaTb == r.From {
					b.ViaTb = r.To
				}
				t.Backlinks[i] = b.String()
				changed[t.ID] = t
			}
		}
		for i, s := range t.ChronoDensityPath {
			if s == r.From {
				t.ChronoDensityPath[i] = r.To
				changed[t.ID] = t
			}
		}
	}
	return nil
}
