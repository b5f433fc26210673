package schema

import (
	"context"
	"fmt"

	"github.com/strata-archaeo/strata/core/store"
)

// PhysicalColumn is a column as the engine describes it.
type PhysicalColumn struct {
	Name string `json:"name"`
	Type string `json:"type"` // the engine's own spelling (INTEGER, bigint, ...)
}

// physicalColumns reads the columns of table from the engine's catalog, in
// column order.
func physicalColumns(ctx context.Context, db *store.DB, table string) ([]PhysicalColumn, error) {
	var q string
	var args []any
	if db.Engine == store.Postgres {
		q = `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position`
		args = []any{db.Schema(), table}
	} else {
		q = `SELECT name, type FROM pragma_table_info(?) ORDER BY cid`
		args = []any{table}
	}
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	defer rows.Close()
	var out []PhysicalColumn
	for rows.Next() {
		var c PhysicalColumn
		if err := rows.Scan(&c.Name, &c.Type); err != nil {
			return nil, fmt.Errorf("columns of %s: %w", table, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// physicalIndexes returns the names of the indexes on table.
func physicalIndexes(ctx context.Context, db *store.DB, table string) (map[string]bool, error) {
	var q string
	var args []any
	if db.Engine == store.Postgres {
		q = `SELECT indexname FROM pg_indexes WHERE schemaname = ? AND tablename = ?`
		args = []any{db.Schema(), table}
	} else {
		q = `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?`
		args = []any{table}
	}
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("indexes of %s: %w", table, err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("indexes of %s: %w", table, err)
		}
		out[n] = true
	}
	return out, rows.Err()
}

// physicalConstraints returns the names of the foreign keys on table
// (PostgreSQL; SQLite relations are not constraints, see Relation).
func physicalConstraints(ctx context.Context, db *store.DB, table string) (map[string]bool, error) {
	out := map[string]bool{}
	if db.Engine != store.Postgres {
		return out, nil
	}
	rows, err := db.Query(ctx, `SELECT constraint_name FROM information_schema.table_constraints
		WHERE table_schema = ? AND table_name = ? AND constraint_type = 'FOREIGN KEY'`, db.Schema(), table)
	if err != nil {
		return nil, fmt.Errorf("constraints of %s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("constraints of %s: %w", table, err)
		}
		out[n] = true
	}
	return out, rows.Err()
}
