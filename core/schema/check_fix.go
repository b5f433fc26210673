package schema

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// The fixes of FixConfiguration, each run inside change (one transaction,
// catalog locked and read in it). Every table and column name that
// reaches SQL is the catalog's or the engine's own, matched against the
// request and checked against the identifier rule before it is quoted.

// physicalColumnSet is the set of t's physical column names (nil when the
// table does not exist).
func physicalColumnSet(ctx context.Context, tx *store.DB, table string) (map[string]PhysicalColumn, error) {
	cols, err := physicalColumns(ctx, tx, table)
	if err != nil || len(cols) == 0 {
		return nil, err
	}
	out := make(map[string]PhysicalColumn, len(cols))
	for _, c := range cols {
		out[c.Name] = c
	}
	return out, nil
}

// checkCatalogNames refuses a table whose catalog names do not meet the
// identifier rule (a catalog edited outside Strata) before any is quoted.
func checkCatalogNames(t *Table) error {
	if err := CheckTableName(t.Name); err != nil {
		return err
	}
	for _, f := range t.Fields {
		if err := CheckFieldName(f.Name); err != nil {
			return err
		}
	}
	return nil
}

// fixCreate creates a configured table missing from the database (with
// its fields, their indexes and the table's user indexes), or adds a
// configured field's missing column (with its index).
func fixCreate(ctx context.Context, tx *store.DB, st *state, table, column string) (*FixResult, error) {
	t, ok := st.cat.Table(table)
	if !ok {
		return nil, ErrTableNotFound
	}
	if err := checkCatalogNames(t); err != nil {
		return nil, err
	}
	cols, err := physicalColumnSet(ctx, tx, t.Name)
	if err != nil {
		return nil, err
	}
	if column == "" {
		if cols != nil {
			return nil, ErrNothingToFix.With("detail", "table "+t.Name+" exists in the database")
		}
		// The parent's reference is made only if the parent is there;
		// otherwise the check reports the plugin table's parent.
		var parent *Table
		if p, ok := st.cat.Table(t.PluginOf); ok && t.IsPlugin {
			if exists, err := physicalTableExists(ctx, tx, p.Name); err != nil {
				return nil, err
			} else if exists {
				parent = p
			}
		}
		stmts := createTableSQL(tx, t, parent)
		for _, f := range t.Fields {
			stmts = append(stmts, addFieldSQL(tx, t, f)...)
		}
		if err := execAll(ctx, tx, "create table "+t.Name, stmts...); err != nil {
			return nil, err
		}
		for _, ix := range st.indexes {
			if ix.Table == t.Name {
				if err := createIndex(ctx, tx, ix); err != nil {
					return nil, err
				}
			}
		}
		return &FixResult{Code: "ok_creating_table"}, nil
	}
	f, ok := t.Field(column)
	if !ok {
		return nil, ErrFieldNotFound
	}
	if cols == nil {
		return nil, ErrNothingToFix.With("detail", "table "+t.Name+" does not exist in the database: create it (action create without col)")
	}
	if _, ok := cols[f.Name]; ok {
		return nil, ErrNothingToFix.With("detail", "column "+t.Name+"."+f.Name+" exists in the database")
	}
	if _, err := tx.Exec(ctx, `ALTER TABLE `+tx.Qualify(t.Name)+` ADD COLUMN `+tx.Engine.Quote(f.Name)+` `+sqlType(tx.Engine, f.DBType)); err != nil {
		return nil, fmt.Errorf("add column %s.%s: %w", t.Name, f.Name, err)
	}
	// The column is new and empty: its implied index cannot meet a
	// duplicate. Its search index follows with the version bump.
	idx, err := physicalIndexes(ctx, tx, t.Name)
	if err != nil {
		return nil, err
	}
	if !idx[fieldIndexRawName(f)] {
		if err := setFieldIndex(ctx, tx, f, t, noIndex, f.indexKind()); err != nil {
			return nil, err
		}
	}
	return &FixResult{Code: "ok_adding_column"}, nil
}

// orphanColumn finds column of table in the database where the catalog
// has no field or system column of that name; nothing_to_fix otherwise.
func orphanColumn(ctx context.Context, tx *store.DB, st *state, table, column string) (*Table, PhysicalColumn, error) {
	t, ok := st.cat.Table(table)
	if !ok {
		return nil, PhysicalColumn{}, ErrTableNotFound
	}
	cols, err := physicalColumnSet(ctx, tx, t.Name)
	if err != nil {
		return nil, PhysicalColumn{}, err
	}
	col, ok := cols[column]
	switch {
	case !ok:
		return nil, col, ErrNothingToFix.With("detail", "table "+t.Name+" has no column "+column+" in the database")
	case t.IsSystemColumn(column):
		return nil, col, ErrNothingToFix.With("detail", column+" is a system column")
	}
	if _, ok := t.Field(column); ok {
		return nil, col, ErrNothingToFix.With("detail", "column "+t.Name+"."+column+" is in the configuration")
	}
	if err := CheckTableName(t.Name); err != nil {
		return nil, col, err
	}
	// A name outside the field rule is never quoted here; it is reported
	// without a fix.
	if err := CheckFieldName(col.Name); err != nil {
		return nil, col, err
	}
	return t, col, nil
}

// fixDelete drops a column the configuration does not know, with the
// indexes SQLite would not drop it under (PostgreSQL drops them with it).
func fixDelete(ctx context.Context, tx *store.DB, st *state, table, column string) (*FixResult, error) {
	t, col, err := orphanColumn(ctx, tx, st, table, column)
	if err != nil {
		return nil, err
	}
	var stmts []string
	if tx.Engine == store.SQLite {
		names, err := sqliteColumnIndexes(ctx, tx, t.Name, col.Name)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if !store.ValidIdent(n) {
				return nil, ErrNothingToFix.With("detail", "index "+n+" on the column has a name Strata does not quote: drop it first")
			}
			stmts = append(stmts, dropIndexSQL(tx, n))
		}
	}
	stmts = append(stmts, `ALTER TABLE `+tx.Qualify(t.Name)+` DROP COLUMN `+tx.Engine.Quote(col.Name))
	if err := execAll(ctx, tx, "drop column "+t.Name+"."+col.Name, stmts...); err != nil {
		return nil, err
	}
	return &FixResult{Code: "ok_deleting_column"}, nil
}

// sqliteColumnIndexes names the indexes of table that use column (not the
// automatic ones of constraints, which cannot be dropped).
func sqliteColumnIndexes(ctx context.Context, tx *store.DB, table, column string) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT DISTINCT il.name FROM pragma_index_list(?) AS il, pragma_index_info(il.name) AS ii
		WHERE ii.name = ? AND il.origin = 'c' ORDER BY il.name`, table, column)
	if err != nil {
		return nil, fmt.Errorf("indexes of %s.%s: %w", table, column, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// adoptType is the storage type whose column type the engine reports for
// col, if any (SQLite INTEGER reads as int, TEXT as text).
func adoptType(e store.Engine, col PhysicalColumn) (DBType, bool) {
	for _, t := range DBTypes {
		if strings.EqualFold(sqlType(e, t), col.Type) {
			return t, true
		}
	}
	return "", false
}

// fixAdopt adds a column the configuration does not know to it as a field
// of the column's type (a text field; boolean and date for those types),
// labelled with its name, last in the table's order.
func fixAdopt(ctx context.Context, tx *store.DB, st *state, table, column string, now time.Time) (*FixResult, error) {
	t, col, err := orphanColumn(ctx, tx, st, table, column)
	if err != nil {
		return nil, err
	}
	dbt, ok := adoptType(tx.Engine, col)
	if !ok {
		return nil, ErrColumnTypeUnknown.With("table", t.Name).With("column", col.Name).With("type", col.Type)
	}
	ft := TypeText
	switch dbt {
	case DBBool:
		ft = TypeBoolean
	case DBDate:
		ft = TypeDate
	}
	f := &Field{TableID: t.ID, Name: col.Name, Label: col.Name, Type: ft, DBType: dbt, Sort: len(t.Fields), Extra: map[string]any{}}
	row := fieldToRow(f, now)
	if err := tx.Gorm.WithContext(ctx).Table(tx.GormSys("fields")).Create(row).Error; err != nil {
		return nil, fmt.Errorf("insert field %s.%s: %w", t.Name, f.Name, err)
	}
	return &FixResult{Code: "ok_cfg_data_updated"}, nil
}

// fixUnlink removes the broken references of a field (column set: its
// lookup, value source or vocabulary, and broken relations from it) or of
// a table (column empty: its plugin parent and its settings).
func fixUnlink(ctx context.Context, tx *store.DB, st *state, table, column string, now time.Time) (*FixResult, error) {
	var removed []string
	t, ok := st.cat.Table(table)
	if column == "" {
		if !ok {
			return nil, ErrTableNotFound
		}
		problems := brokenTableRefs(st.cat, t)
		if len(problems) == 0 {
			return nil, ErrNothingToFix.With("detail", "table "+t.Name+" has no broken settings")
		}
		isCol := func(name string) bool { _, ok := t.Field(name); return ok || t.IsSystemColumn(name) }
		for _, p := range problems {
			removed = append(removed, p.kind)
		}
		if slices.ContainsFunc(problems, func(p problem) bool { return p.kind == "plugin_of" }) {
			// Detached, as a BraDypUS client leaves a new plugin table:
			// PUT /config/table/{tb} with plugin_of attaches it again.
			if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("tables")+` SET plugin_of = NULL, updated_at = ? WHERE id = ?`, now, t.ID); err != nil {
				return nil, fmt.Errorf("detach %s: %w", t.Name, err)
			}
		}
		if t.IDField != "" && !isCol(t.IDField) {
			t.IDField = ""
		}
		t.Preview = slices.DeleteFunc(slices.Clone(t.Preview), func(s string) bool { return !isCol(s) })
		if t.SortField != "" && !isCol(t.SortField) {
			t.SortField = ""
		}
		if t.RSField != "" && !isCol(t.RSField) {
			t.RSField = ""
		}
		t.Backlinks = slices.DeleteFunc(slices.Clone(t.Backlinks), func(s string) bool { return !backlinkValid(st.cat, s) })
		t.ChronoDensityPath = slices.DeleteFunc(slices.Clone(t.ChronoDensityPath), func(s string) bool { _, ok := st.cat.Table(s); return !ok })
		if err := saveTableSettings(ctx, tx, t, now); err != nil {
			return nil, err
		}
		return &FixResult{Code: "ok_cfg_data_updated", Removed: removed}, nil
	}
	if ok {
		if f, ok := t.Field(column); ok {
			vocabs, err := vocabularySet(ctx, tx)
			if err != nil {
				return nil, err
			}
			problems := brokenFieldRefs(st.cat, vocabs, f)
			if len(problems) > 0 {
				before := f.indexKind()
				for _, p := range problems {
					removed = append(removed, p.kind)
					switch p.kind {
					case "id_from_tb":
						f.IDFromTb = ""
					case "get_values_from_tb":
						f.GetValuesFromTb = ""
					case "vocabulary_set":
						f.VocabularySet = ""
					}
				}
				if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("fields")+` SET id_from_tb = ?, get_values_from_tb = ?, vocabulary_set = ?, updated_at = ? WHERE id = ?`,
					nullable(f.IDFromTb), nullable(f.GetValuesFromTb), nullable(f.VocabularySet), now, f.ID); err != nil {
					return nil, fmt.Errorf("update field %s.%s: %w", t.Name, f.Name, err)
				}
				// A lookup no more: its implied index goes (kept if unique).
				if err := checkCatalogNames(t); err != nil {
					return nil, err
				}
				if err := setFieldIndex(ctx, tx, f, t, before, f.indexKind()); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, r := range st.relations {
		if r.FromTb == table && r.FromCol == column && brokenRelation(st.cat, r) != "" {
			if err := removeRelation(ctx, tx, r); err != nil {
				return nil, err
			}
			removed = append(removed, fmt.Sprintf("relation %d", r.ID))
		}
	}
	if len(removed) == 0 {
		if !ok {
			return nil, ErrTableNotFound
		}
		return nil, ErrNothingToFix.With("detail", table+"."+column+" has no broken reference")
	}
	return &FixResult{Code: "ok_cfg_data_updated", Removed: removed}, nil
}

// fixReindex builds the field indexes and user indexes t lacks (over
// columns that exist) and brings the search indexes in step (the version
// bump does that for the whole catalog).
func fixReindex(ctx context.Context, tx *store.DB, st *state, table string) (*FixResult, error) {
	t, ok := st.cat.Table(table)
	if !ok {
		return nil, ErrTableNotFound
	}
	todo, err := reindexWork(ctx, tx, st, t)
	if err != nil {
		return nil, err
	}
	if len(todo) == 0 {
		return nil, ErrNothingToFix.With("detail", "the indexes of "+t.Name+" are as the configuration asks")
	}
	if err := checkCatalogNames(t); err != nil {
		return nil, err
	}
	for _, d := range todo {
		if d.Kind != "index_missing" {
			continue // search indexes: the version bump syncs them
		}
		if d.Column != "" {
			f, _ := t.Field(d.Column)
			if err := setFieldIndex(ctx, tx, f, t, noIndex, f.indexKind()); err != nil {
				return nil, err
			}
			continue
		}
		for _, ix := range st.indexes {
			if ix.Table == t.Name && ix.Name == d.Index {
				if err := createIndex(ctx, tx, ix); err != nil {
					return nil, err
				}
			}
		}
	}
	return &FixResult{Code: "ok_cfg_data_updated"}, nil
}

// reindexWork is the index differences of t that reindex can mend: those
// over columns that exist (a missing column gets its index with it).
func reindexWork(ctx context.Context, db *store.DB, st *state, t *Table) ([]Difference, error) {
	cols, err := physicalColumnSet(ctx, db, t.Name)
	if err != nil || cols == nil {
		return nil, err
	}
	diffs, err := validateTable(ctx, db, st, t)
	if err != nil {
		return nil, err
	}
	return reindexable(st, t, cols, diffs), nil
}

// reindexable picks from t's differences those reindex can mend, given
// t's physical columns.
func reindexable(st *state, t *Table, cols map[string]PhysicalColumn, diffs []Difference) []Difference {
	var out []Difference
	for _, d := range diffs {
		switch d.Kind {
		case "index_missing":
			if d.Column != "" {
				if _, ok := cols[d.Column]; !ok {
					continue
				}
			} else if ix := userIndex(st, t.Name, d.Index); ix == nil || slices.ContainsFunc(ix.Columns, func(c string) bool { _, ok := cols[c]; return !ok }) {
				continue
			}
		case "search_index_missing":
			if _, ok := cols[d.Column]; !ok {
				continue
			}
		case "search_index_extra":
		default:
			continue
		}
		out = append(out, d)
	}
	return out
}

func userIndex(st *state, table, name string) *Index {
	for _, ix := range st.indexes {
		if ix.Table == table && ix.Name == name {
			return ix
		}
	}
	return nil
}
