package pluginhost

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// What another part of the server (the BraDypUS major upgrade) needs to
// bring existing data into a plugin's own storage without the plugin's
// round trips: the plugin's sealing, and its system tables written inside
// the caller's transaction, so that a failure rolls back with the rest.

// Seal seals clear for plugin, app and purpose exactly as the plugin's
// Host.Seal does, so the plugin opens it with Host.Open. The plugin must
// be loaded; the app is the caller's to name rightly.
func (m *Manager) Seal(plugin, app, purpose, clear string) (string, error) {
	if _, ok := m.plugin(plugin); !ok {
		return "", ErrNotFound.With("plugin", plugin)
	}
	if app == "" || purpose == "" {
		return "", errSealArgs
	}
	if m.opts.Apps == nil || m.opts.Apps.Keyring() == nil {
		return "", errNoKeyring
	}
	return m.opts.Apps.Keyring().Seal(clear, sealPlace(plugin, app, purpose))
}

// InsertSystemRows creates plugin's system tables in tx (as on the
// plugin's first use) and inserts rows into its table, ids kept when a
// row has one (a row without id gets the next). On PostgreSQL the table's
// id sequence is moved past the ids inserted, so the plugin's later rows
// follow them. Values are read as Host.WriteSystemRows reads them.
func (m *Manager) InsertSystemRows(ctx context.Context, tx *store.DB, plugin, table string, rows []map[string]any) error {
	p, ok := m.plugin(plugin)
	if !ok {
		return ErrNotFound.With("plugin", plugin)
	}
	st, err := p.systemTable(table)
	if err != nil {
		return err
	}
	for _, t := range p.manifest().GetSystemTables() {
		if err := createSystemTable(ctx, tx, p.name, t); err != nil {
			return err
		}
	}
	q := tx.Qualify(st.name)
	// PostgreSQL's sequence does not see ids given: it is moved past them
	// before a row that takes the next, and at the end.
	kept := false
	moveOn := func() error {
		if tx.Engine != store.Postgres || !kept {
			return nil
		}
		kept = false
		if _, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence(?, 'id'), COALESCE((SELECT MAX("id") FROM `+q+`), 0) + 1, false)`,
			tx.Schema()+"."+st.name); err != nil {
			return fmt.Errorf("sequence of %s: %w", st.name, err)
		}
		return nil
	}
	for i, row := range rows {
		id, cols, vals, err := systemRowValues(tx.Engine, st, i, row)
		if err != nil {
			return err
		}
		if id > 0 {
			cols, vals = append([]string{schema.ColID}, cols...), append([]any{id}, vals...)
			kept = true
		} else if err := moveOn(); err != nil {
			return err
		}
		quoted := make([]string, len(cols))
		for j, c := range cols {
			quoted[j] = tx.Engine.Quote(c)
		}
		stmt := `INSERT INTO ` + q + ` DEFAULT VALUES`
		if len(cols) > 0 {
			stmt = `INSERT INTO ` + q + ` (` + strings.Join(quoted, ", ") + `) VALUES (?` + strings.Repeat(", ?", len(cols)-1) + `)`
		}
		if _, err := tx.Exec(ctx, stmt, vals...); err != nil {
			return fmt.Errorf("insert into %s (row %d): %w", st.name, i, err)
		}
	}
	return moveOn()
}

// systemRowValues reads row i of an upsert or insert into st: its id (0
// for none) and its columns with their values as stored, columns in name
// order so the same columns make the same statement.
func systemRowValues(e store.Engine, st *systemTable, i int, row map[string]any) (int64, []string, []any, error) {
	var id int64
	keys := make([]string, 0, len(row))
	for k := range row {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var cols []string
	var vals []any
	for _, k := range keys {
		v := row[k]
		if k == schema.ColID {
			n, err := records.ToDB(e, schema.DBInt, v)
			if err != nil || n == nil || n.(int64) <= 0 {
				return 0, nil, nil, errSystemValue.With("row", i).With("detail", "id is a positive integer")
			}
			id = n.(int64)
			continue
		}
		typ, ok := st.types[k]
		if !ok {
			return 0, nil, nil, errSystemValue.With("row", i).With("detail", strconv.Quote(k)+" is not a column of "+st.name)
		}
		dv, err := records.ToDB(e, typ, v)
		if err != nil {
			return 0, nil, nil, errSystemValue.With("row", i).With("column", k).With("detail", err.Error())
		}
		cols, vals = append(cols, k), append(vals, dv)
	}
	return id, cols, vals, nil
}
