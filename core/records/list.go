package records

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Page size rules (SPEC §8): default 30, at most 200 (larger asks clamp).
const (
	DefaultPerPage = 30
	MaxPerPage     = 200
)

// ListQuery is what a list asks for.
type ListQuery struct {
	Page      int
	PerPage   int
	SortField string
	SortDir   string // asc (default) or desc
	Columns   []string
	Where     *Cond // filter and quick search, rendered by the filter language
	IDsOnly   bool
}

// FieldRef names a column of a list answer.
type FieldRef struct {
	Name  string `json:"name"`
	Label string `json:"label"`
}

// ListResult is a page of records (SPEC §2.1).
type ListResult struct {
	Total  int64            `json:"total"`
	Fields []FieldRef       `json:"fields"`
	Data   []map[string]any `json:"data"`
	IDs    []int64          `json:"ids,omitempty"`
}

// listColumns resolves the requested columns: the table's preview fields
// (all fields when none are configured) by default, always with id first.
func listColumns(t *schema.Table, asked []string) ([]FieldRef, error) {
	names := asked
	if len(names) == 0 {
		names = t.Preview
	}
	if len(names) == 0 {
		for _, f := range t.Fields {
			names = append(names, f.Name)
		}
	}
	out := []FieldRef{{Name: schema.ColID, Label: "ID"}}
	seen := map[string]bool{schema.ColID: true}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		if f, ok := t.Field(n); ok {
			out = append(out, FieldRef{Name: f.Name, Label: f.Label})
			continue
		}
		if t.IsSystemColumn(n) {
			out = append(out, FieldRef{Name: n, Label: n})
			continue
		}
		return nil, ErrInvalidField.With("field", n)
	}
	return out, nil
}

// orderBy builds a deterministic order, identical on both engines: NULLs
// after values when ascending, text in byte order, ties broken by id.
func (s *Scope) orderBy(field, dir string) (string, error) {
	dir = strings.ToLower(strings.TrimSpace(dir))
	switch dir {
	case "", "asc":
		dir = "ASC"
	case "desc":
		dir = "DESC"
	default:
		return "", ErrInvalidParameter.With("parameter", "sort_dir").With("detail", "asc or desc")
	}
	idCol := s.column(schema.ColID)
	if field == "" || field == schema.ColID {
		return idCol + " " + dir, nil
	}
	t, ok := dbTypeOf(s.Table, field)
	if !ok {
		return "", ErrInvalidField.With("field", field)
	}
	col := s.column(field)
	key := col
	if t == schema.DBText && s.DB.Engine == store.Postgres {
		key = col + ` COLLATE "C"`
	}
	nulls := "CASE WHEN " + col + " IS NULL THEN 1 ELSE 0 END"
	if dir == "DESC" {
		nulls += " DESC"
	}
	return nulls + ", " + key + " " + dir + ", " + idCol + " " + dir, nil
}

// List returns one page of the table's rows matching q and the caller's
// row restriction, with the total, in one query.
func List(ctx context.Context, s *Scope, q ListQuery) (*ListResult, error) {
	cols, err := listColumns(s.Table, q.Columns)
	if err != nil {
		return nil, err
	}
	order, err := s.orderBy(q.SortField, q.SortDir)
	if err != nil {
		return nil, err
	}
	where, args := s.where(q.Where)
	from := s.DB.Qualify(s.Table.Name)
	if q.IDsOnly {
		return listIDs(ctx, s, from, where, args, order)
	}
	if q.Page < 1 {
		q.Page = 1
	}
	if q.PerPage < 1 {
		q.PerPage = DefaultPerPage
	}
	q.PerPage = min(q.PerPage, MaxPerPage)

	sel := make([]string, 0, len(cols)+1)
	for _, c := range cols {
		sel = append(sel, s.column(c.Name))
	}
	sel = append(sel, "COUNT(*) OVER ()")
	query := `SELECT ` + strings.Join(sel, ", ") + ` FROM ` + from + ` WHERE ` + where +
		` ORDER BY ` + order + ` LIMIT ? OFFSET ?`
	rows, err := s.DB.Query(ctx, query, append(args, q.PerPage, (q.Page-1)*q.PerPage)...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", s.Table.Name, err)
	}
	defer rows.Close()
	res := &ListResult{Fields: cols, Data: []map[string]any{}}
	types := make([]schema.DBType, len(cols))
	for i, c := range cols {
		types[i], _ = dbTypeOf(s.Table, c.Name)
	}
	vals := make([]any, len(cols)+1)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("list %s: %w", s.Table.Name, err)
		}
		rec := make(map[string]any, len(cols))
		for i, c := range cols {
			rec[c.Name] = fromDB(types[i], vals[i])
		}
		res.Data = append(res.Data, rec)
		res.Total = fromDB(schema.DBInt, vals[len(cols)]).(int64)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(res.Data) == 0 && q.Page > 1 {
		// Past the last page the window count has no row to ride on.
		if err := s.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+from+` WHERE `+where, args...).Scan(&res.Total); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func listIDs(ctx context.Context, s *Scope, from, where string, args []any, order string) (*ListResult, error) {
	rows, err := s.DB.Query(ctx, `SELECT `+s.column(schema.ColID)+` FROM `+from+` WHERE `+where+` ORDER BY `+order, args...)
	if err != nil {
		return nil, fmt.Errorf("list ids of %s: %w", s.Table.Name, err)
	}
	defer rows.Close()
	res := &ListResult{IDs: []int64{}}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		res.IDs = append(res.IDs, id)
	}
	res.Total = int64(len(res.IDs))
	return res, rows.Err()
}
