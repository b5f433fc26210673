package records

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/strata-archaeo/strata/core/schema"
)

// TextMatch is one row whose text field contains a searched string.
type TextMatch struct {
	ID    int64
	Value string
}

// Containing lists the caller's rows of the scope's table (its row
// subset) whose text field f contains text literally and
// case-sensitively, in id order. Inside a transaction on PostgreSQL the
// rows stay locked until commit, so a change computed from these values
// (search-replace) overwrites nothing saved in between; SQLite's
// immediate transaction already excludes other writers.
func (s *Scope) Containing(ctx context.Context, f *schema.Field, text string) ([]TextMatch, error) {
	if fld, ok := s.Table.Field(f.Name); !ok || fld.DBType != schema.DBText {
		return nil, ErrInvalidField.With("field", f.Name)
	}
	col := s.column(f.Name)
	// LIKE narrows the rows with an index-friendly test; it ignores ASCII
	// case on SQLite, so each value is checked again below.
	like := `%` + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(text) + `%`
	where, args := s.where(&Cond{SQL: col + ` LIKE ? ESCAPE '\'`, Args: []any{like}})
	q := `SELECT ` + s.column(schema.ColID) + `, ` + col + ` FROM ` + s.DB.Qualify(s.Table.Name) + ` WHERE ` + where + ` ORDER BY 1` + s.forUpdate(s.Table.Name)
	rows, err := s.DB.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("search %s.%s: %w", s.Table.Name, f.Name, err)
	}
	defer rows.Close()
	var out []TextMatch
	for rows.Next() {
		var m TextMatch
		var v sql.NullString
		if err := rows.Scan(&m.ID, &v); err != nil {
			return nil, err
		}
		if v.Valid && strings.Contains(v.String, text) {
			m.Value = v.String
			out = append(out, m)
		}
	}
	return out, rows.Err()
}
