package schema

import (
	"context"
	"strings"

	"github.com/strata-archaeo/strata/core/store"
)

// Difference is one way a physical table departs from its catalog entry.
type Difference struct {
	// Kind is table_missing, column_missing, column_extra, type_mismatch,
	// index_missing, constraint_missing, or search_index_missing and
	// search_index_extra (a search index the catalog asks for is absent,
	// or one it no longer asks for is still there; see search_index.go).
	Kind       string `json:"kind"`
	Column     string `json:"column,omitempty"`
	Index      string `json:"index,omitempty"`
	Constraint string `json:"constraint,omitempty"`
	Expected   string `json:"expected,omitempty"`
	Actual     string `json:"actual,omitempty"`
}

// ValidateTable compares a table's catalog entry with the engine's own
// description of it: columns and their types, the indexes fields imply
// and user indexes, and (PostgreSQL) relation constraints. The list is
// empty when they agree.
func ValidateTable(ctx context.Context, db *store.DB, table string) ([]Difference, error) {
	st, err := loadState(ctx, db)
	if err != nil {
		return nil, err
	}
	t, ok := st.cat.Table(table)
	if !ok {
		return nil, ErrTableNotFound
	}
	return validateTable(ctx, db, st, t)
}

// validateTable is ValidateTable against a catalog state already read.
func validateTable(ctx context.Context, db *store.DB, st *state, t *Table) ([]Difference, error) {
	table := t.Name
	out := []Difference{}
	cols, err := physicalColumns(ctx, db, table)
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return append(out, Difference{Kind: "table_missing"}), nil
	}
	actual := map[string]string{}
	for _, c := range cols {
		actual[c.Name] = c.Type
	}
	idType := sqlType(db.Engine, DBInt)
	expected := map[string]string{}
	var order []string
	for _, c := range t.SystemColumns() {
		expected[c], order = idType, append(order, c)
	}
	for _, f := range t.Fields {
		expected[f.Name], order = sqlType(db.Engine, f.DBType), append(order, f.Name)
	}
	for _, name := range order {
		got, ok := actual[name]
		switch {
		case !ok:
			out = append(out, Difference{Kind: "column_missing", Column: name, Expected: expected[name]})
		case !strings.EqualFold(got, expected[name]):
			out = append(out, Difference{Kind: "type_mismatch", Column: name, Expected: expected[name], Actual: got})
		}
	}
	for _, c := range cols {
		if _, ok := expected[c.Name]; !ok {
			out = append(out, Difference{Kind: "column_extra", Column: c.Name, Actual: c.Type})
		}
	}
	idx, err := physicalIndexes(ctx, db, table)
	if err != nil {
		return nil, err
	}
	for _, f := range t.Fields {
		if f.indexKind() != noIndex && !idx[fieldIndexRawName(f)] {
			out = append(out, Difference{Kind: "index_missing", Column: f.Name, Index: fieldIndexRawName(f)})
		}
	}
	for _, ix := range st.indexes {
		if ix.Table == table && !idx[ix.Name] {
			out = append(out, Difference{Kind: "index_missing", Index: ix.Name, Expected: strings.Join(ix.Columns, ",")})
		}
	}
	cons, err := physicalConstraints(ctx, db, table)
	if err != nil {
		return nil, err
	}
	for _, r := range st.relations {
		if r.FromTb == table && enforceable(db, st.cat, r) && !cons[constraintName(r)] {
			out = append(out, Difference{Kind: "constraint_missing", Column: r.FromCol, Constraint: constraintName(r)})
		}
	}
	search, err := searchIndexDifferences(ctx, db, t)
	if err != nil {
		return nil, err
	}
	return append(out, search...), nil
}
