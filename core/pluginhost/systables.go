package pluginhost

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// Bounds of a system table read.
const (
	defaultSystemLimit = 1000
	maxSystemLimit     = 10000
)

var (
	errSystemTable = errs.New(errs.NotFound, "system_table_not_found", "the plugin declares no system table of that name")
	errSystemRow   = errs.New(errs.NotFound, "system_row_not_found", "no row with that id")
	errSystemValue = errs.New(errs.Invalid, "invalid_value", "a value does not fit its column")
)

// sysKey marks a plugin's system tables as present in one open database.
type sysKey struct {
	db     *store.DB
	plugin string
}

// ensureAllSystemTables creates the loaded plugins' system tables in every
// existing application (new applications get them on first use).
func (m *Manager) ensureAllSystemTables(ctx context.Context) {
	if m.opts.Apps == nil {
		return
	}
	plugins := m.loaded()
	if !slices.ContainsFunc(plugins, func(p *plugin) bool { return len(p.manifest().GetSystemTables()) > 0 }) {
		return
	}
	names, err := m.opts.Apps.List(ctx)
	if err != nil {
		m.log.Error("plugin system tables: cannot list applications", "err", err)
		return
	}
	for _, name := range names {
		a, err := m.opts.Apps.Get(ctx, name)
		if err != nil {
			m.log.Error("plugin system tables: cannot open application", "app", name, "err", err)
			continue
		}
		for _, p := range plugins {
			if err := m.ensureSystemTables(ctx, a.DB, p); err != nil {
				m.log.Error("plugin system tables not created", "app", name, "plugin", p.name, "err", err)
			}
		}
	}
}

// ensureSystemTables creates p's system tables in db (once per open
// database), and adds columns and indexes a newer manifest declares.
func (m *Manager) ensureSystemTables(ctx context.Context, db *store.DB, p *plugin) error {
	key := sysKey{db, p.name}
	if _, ok := m.sysReady.Load(key); ok {
		return nil
	}
	m.sysMaking.Lock()
	defer m.sysMaking.Unlock()
	if _, ok := m.sysReady.Load(key); ok {
		return nil // made while this call waited
	}
	for _, t := range p.manifest().GetSystemTables() {
		if err := createSystemTable(ctx, db, p.name, t); err != nil {
			return err
		}
	}
	if !db.InTx() {
		// A transaction's copy of the DB is not kept: its creations may
		// roll back, and the app's own handle is the key to remember.
		m.sysReady.Store(key, struct{}{})
	}
	return nil
}

// columnType is a declared column's storage: db_type, else the field
// type's default, else text.
func columnType(c *pluginv1.Column) schema.DBType {
	if c.GetDbType() != "" {
		return schema.DBType(c.GetDbType())
	}
	if c.GetType() != "" {
		return schema.DefaultDBType(schema.FieldType(c.GetType()), false)
	}
	return schema.DBText
}

// sqlType is a storage type's column type, as for user tables.
func sqlType(e store.Engine, t schema.DBType) string {
	if e == store.Postgres {
		switch t {
		case schema.DBInt:
			return "bigint"
		case schema.DBFloat:
			return "double precision"
		case schema.DBDate:
			return "date"
		case schema.DBBool:
			return "boolean"
		}
		return "text"
	}
	switch t {
	case schema.DBInt, schema.DBBool:
		return "INTEGER"
	case schema.DBFloat:
		return "REAL"
	}
	return "TEXT"
}

func createSystemTable(ctx context.Context, db *store.DB, plugin string, t *pluginv1.SystemTable) error {
	name := systemTableName(plugin, t.GetName())
	if !store.ValidIdent(name) {
		return fmt.Errorf("system table %s: not an identifier", name)
	}
	q := db.Qualify(name)
	id := `"id" INTEGER PRIMARY KEY AUTOINCREMENT`
	if db.Engine == store.Postgres {
		id = `"id" bigserial PRIMARY KEY`
	}
	defs := []string{id}
	for _, c := range t.GetColumns() {
		defs = append(defs, db.Engine.Quote(c.GetName())+" "+sqlType(db.Engine, columnType(c)))
	}
	if _, err := db.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+q+` (`+strings.Join(defs, ", ")+`)`); err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	// A table from an older version of the plugin gets the new columns.
	rows, err := db.Query(ctx, `SELECT * FROM `+q+` WHERE 1 = 0`)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	have, err := rows.Columns()
	rows.Close()
	if err != nil {
		return err
	}
	for _, c := range t.GetColumns() {
		if slices.Contains(have, c.GetName()) {
			continue
		}
		if _, err := db.Exec(ctx, `ALTER TABLE `+q+` ADD COLUMN `+db.Engine.Quote(c.GetName())+` `+
			sqlType(db.Engine, columnType(c))); err != nil {
			return fmt.Errorf("add %s.%s: %w", name, c.GetName(), err)
		}
	}
	// Declared indexes, made with the table or added to one an older
	// version of the plugin made (IF NOT EXISTS on both engines). The
	// name follows from the columns, so a manifest that reorders its
	// indexes names the same ones.
	for _, ix := range t.GetIndexes() {
		cols := make([]string, len(ix.GetColumns()))
		for i, c := range ix.GetColumns() {
			cols[i] = db.Engine.Quote(c)
		}
		if _, err := db.Exec(ctx, `CREATE INDEX IF NOT EXISTS `+db.Engine.Quote(systemIndexName(name, ix.GetColumns()))+
			` ON `+q+` (`+strings.Join(cols, ", ")+`)`); err != nil {
			return fmt.Errorf("index %s (%s): %w", name, strings.Join(ix.GetColumns(), ", "), err)
		}
	}
	return nil
}

// systemIndexName names a system table's index on cols: <table>_<cols>_idx
// when that fits an identifier, else the table's name cut short and a hash
// of the columns.
func systemIndexName(table string, cols []string) string {
	name := table + "_" + strings.Join(cols, "_") + "_idx"
	if store.ValidIdent(name) {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(strings.Join(cols, ",")))
	return fmt.Sprintf("%.50s_%08x_idx", table, h.Sum32())
}

// systemTable is a declared system table ready for queries.
type systemTable struct {
	name  string // physical
	cols  []string
	types map[string]schema.DBType
	table *schema.Table // for the filter language
	// sectionOf, when the table holds the rows of a record section (the
	// manifest's Section.Rows), names the columns that say whose: a write
	// of such a row is an update of that record (core/changes).
	sectionOf *sectionColumns
	plugin    string
}

type sectionColumns struct{ table, id string }

func (p *plugin) systemTable(name string) (*systemTable, error) {
	for _, t := range p.manifest().GetSystemTables() {
		if t.GetName() != name {
			continue
		}
		st := &systemTable{name: systemTableName(p.name, name), types: map[string]schema.DBType{}, plugin: p.name}
		st.table = &schema.Table{Name: st.name, Features: map[string]schema.FeatureState{}}
		for _, sec := range p.manifest().GetSections() {
			if r := sec.GetRows(); r != nil && r.GetTable() == name {
				st.sectionOf = &sectionColumns{table: r.GetTableColumn(), id: r.GetIdColumn()}
			}
		}
		for _, c := range t.GetColumns() {
			typ := columnType(c)
			st.cols = append(st.cols, c.GetName())
			st.types[c.GetName()] = typ
			st.table.Fields = append(st.table.Fields, &schema.Field{Name: c.GetName(), Label: c.GetName(),
				Type: schema.FieldType(c.GetType()), DBType: typ})
		}
		return st, nil
	}
	return nil, errSystemTable.With("table", name).With("plugin", p.name)
}

// readSystemRows returns rows of st matching the filter, by id.
func readSystemRows(ctx context.Context, db *store.DB, st *systemTable, rawFilter []byte, limit int) ([]map[string]any, error) {
	where, args := "1 = 1", []any(nil)
	node, err := filter.ParseJSON(rawFilter)
	if err != nil {
		return nil, err
	}
	if node != nil {
		cat := schema.NewCatalog(0, []*schema.Table{st.table})
		where, args, err = filter.RenderWith(ctx, db, cat, st.name, node, filter.Options{
			// Only the table's own columns: no creator, no other table.
			Readable: func(_ *schema.Table, column string) bool {
				return column == schema.ColID || slices.Contains(st.cols, column)
			},
		})
		if err != nil {
			return nil, err
		}
	}
	switch {
	case limit <= 0:
		limit = defaultSystemLimit
	case limit > maxSystemLimit:
		limit = maxSystemLimit
	}
	sel := []string{db.Engine.Quote(schema.ColID)}
	for _, c := range st.cols {
		sel = append(sel, db.Engine.Quote(c))
	}
	q := db.Qualify(st.name)
	rows, err := db.Query(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM `+q+` WHERE `+where+
		` ORDER BY `+db.Engine.Quote(schema.ColID)+` LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", st.name, err)
	}
	defer rows.Close()
	out := []map[string]any{}
	vals := make([]any, len(sel))
	ptrs := make([]any, len(sel))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := map[string]any{schema.ColID: records.FromDB(schema.DBInt, vals[0])}
		for i, c := range st.cols {
			row[c] = records.FromDB(st.types[c], vals[i+1])
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// writeSystemRows upserts and deletes rows of st in one transaction; the
// ids of the upserted rows come back in order.
func writeSystemRows(ctx context.Context, db *store.DB, st *systemTable, rawUpsert []byte, deleteIDs []int64) ([]int64, error) {
	var upsert []map[string]any
	if len(bytes.TrimSpace(rawUpsert)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(rawUpsert))
		dec.UseNumber()
		if err := dec.Decode(&upsert); err != nil {
			return nil, errSystemValue.With("detail", "upsert is a JSON array of objects")
		}
	}
	q := db.Qualify(st.name)
	idCol := db.Engine.Quote(schema.ColID)
	ids := make([]int64, 0, len(upsert))
	err := db.Tx(ctx, func(tx *store.DB) error {
		for i, row := range upsert {
			id, cols, vals, err := systemRowValues(tx.Engine, st, i, row)
			if err != nil {
				return err
			}
			if id != 0 {
				// The record the row belonged to (an update may move it).
				if err := sectionChanged(ctx, tx, st, id); err != nil {
					return err
				}
			}
			if id == 0 {
				stmt := `INSERT INTO ` + q + ` DEFAULT VALUES`
				if len(cols) > 0 {
					quoted := make([]string, len(cols))
					for j, c := range cols {
						quoted[j] = tx.Engine.Quote(c)
					}
					stmt = `INSERT INTO ` + q + ` (` + strings.Join(quoted, ", ") + `) VALUES (` +
						strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + `)`
				}
				if err := tx.QueryRow(ctx, stmt+` RETURNING `+idCol, vals...).Scan(&id); err != nil {
					return fmt.Errorf("insert into %s: %w", st.name, err)
				}
				ids = append(ids, id)
				if err := sectionChanged(ctx, tx, st, id); err != nil {
					return err
				}
				continue
			}
			var res sql.Result
			if len(cols) == 0 {
				res, err = tx.Exec(ctx, `UPDATE `+q+` SET `+idCol+` = `+idCol+` WHERE `+idCol+` = ?`, id)
			} else {
				sets := make([]string, len(cols))
				for j, c := range cols {
					sets[j] = tx.Engine.Quote(c) + ` = ?`
				}
				res, err = tx.Exec(ctx, `UPDATE `+q+` SET `+strings.Join(sets, ", ")+` WHERE `+idCol+` = ?`, append(vals, id)...)
			}
			if err != nil {
				return fmt.Errorf("update %s: %w", st.name, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return errSystemRow.With("row", i).With("id", id)
			}
			ids = append(ids, id)
			if err := sectionChanged(ctx, tx, st, id); err != nil {
				return err
			}
		}
		for _, id := range deleteIDs {
			if err := sectionChanged(ctx, tx, st, id); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM `+q+` WHERE `+idCol+` = ?`, id); err != nil {
				return fmt.Errorf("delete from %s: %w", st.name, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// sectionChanged notes, when st holds a record section's rows, an update
// of the record row id of st belongs to (nothing for a row that is not
// there, or names no record): a plugin's write of a reference link, say,
// changes what GET /record shows of that record.
func sectionChanged(ctx context.Context, tx *store.DB, st *systemTable, id int64) error {
	if st.sectionOf == nil {
		return nil
	}
	// Read as any: the manifest does not fix the two columns' types.
	var tb, rec any
	err := tx.QueryRow(ctx, `SELECT `+tx.Engine.Quote(st.sectionOf.table)+`, `+tx.Engine.Quote(st.sectionOf.id)+
		` FROM `+tx.Qualify(st.name)+` WHERE `+tx.Engine.Quote(schema.ColID)+` = ?`, id).Scan(&tb, &rec)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s %d: %w", st.name, id, err)
	}
	table, recID := sqlText(tb), sqlText(rec)
	n, perr := strconv.ParseInt(recID, 10, 64)
	if tb == nil || rec == nil || table == "" || perr != nil || n <= 0 {
		return nil // names no record
	}
	return changes.Record(ctx, tx, changes.Entry{Table: table, RecordID: n, Op: changes.Update, Actor: "plugin:" + st.plugin})
}

// sqlText is a scanned value as text ([]byte as its bytes).
func sqlText(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return strings.TrimSpace(fmt.Sprint(v))
}
