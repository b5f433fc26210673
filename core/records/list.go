package records

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Page size rules (SPEC §8): default 30, at most 200 (larger asks clamp).
// An ids_only list pages the same way with its own size, at most
// MaxIDsPerPage ids per page (also its default).
const (
	DefaultPerPage = 30
	MaxPerPage     = 200
	MaxIDsPerPage  = 10000
)

// Page is a resolved page: LIMIT and OFFSET.
type Page struct {
	Limit, Offset int64
}

// PageOf resolves page and perPage (0: not given) into a window: page 1
// and def rows by default, at most max rows (larger asks clamp). A page
// below 0, or one whose offset would not fit a 64-bit integer, is
// invalid_parameter (never a negative OFFSET, never a silent first page).
func PageOf(page, perPage, def, max int) (Page, error) {
	if page < 0 {
		return Page{}, ErrInvalidParameter.With("parameter", "page").With("detail", "a positive integer")
	}
	if perPage < 0 {
		return Page{}, ErrInvalidParameter.With("parameter", "per_page").With("detail", "a positive integer")
	}
	if page == 0 {
		page = 1
	}
	if perPage == 0 {
		perPage = def
	}
	perPage = min(perPage, max)
	if int64(page-1) > math.MaxInt64/int64(perPage) {
		return Page{}, ErrInvalidParameter.With("parameter", "page").With("detail", "too far: the page's first row does not exist")
	}
	return Page{Limit: int64(perPage), Offset: int64(page-1) * int64(perPage)}, nil
}

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
		pg, err := PageOf(q.Page, q.PerPage, MaxIDsPerPage, MaxIDsPerPage)
		if err != nil {
			return nil, err
		}
		return listIDs(ctx, s, from, where, args, order, pg)
	}
	pg, err := PageOf(q.Page, q.PerPage, DefaultPerPage, MaxPerPage)
	if err != nil {
		return nil, err
	}

	sel := make([]string, 0, len(cols)+1)
	for _, c := range cols {
		sel = append(sel, s.column(c.Name))
	}
	sel = append(sel, "COUNT(*) OVER ()")
	query := `SELECT ` + strings.Join(sel, ", ") + ` FROM ` + from + ` WHERE ` + where +
		` ORDER BY ` + order + ` LIMIT ? OFFSET ?`
	rows, err := s.DB.Query(ctx, query, append(args, pg.Limit, pg.Offset)...)
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
	if len(res.Data) == 0 && pg.Offset > 0 {
		// Past the last page the window count has no row to ride on.
		if err := s.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+from+` WHERE `+where, args...).Scan(&res.Total); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// listIDs is one page of the matching ids, in the list's order, with the
// total (in the same query, or a count past the last page).
func listIDs(ctx context.Context, s *Scope, from, where string, args []any, order string, pg Page) (*ListResult, error) {
	rows, err := s.DB.Query(ctx, `SELECT `+s.column(schema.ColID)+`, COUNT(*) OVER () FROM `+from+` WHERE `+where+
		` ORDER BY `+order+` LIMIT ? OFFSET ?`, append(args, pg.Limit, pg.Offset)...)
	if err != nil {
		return nil, fmt.Errorf("list ids of %s: %w", s.Table.Name, err)
	}
	defer rows.Close()
	res := &ListResult{IDs: []int64{}}
	for rows.Next() {
		var id, total int64
		if err := rows.Scan(&id, &total); err != nil {
			return nil, err
		}
		res.IDs = append(res.IDs, id)
		res.Total = total
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(res.IDs) == 0 && pg.Offset > 0 {
		if err := s.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+from+` WHERE `+where, args...).Scan(&res.Total); err != nil {
			return nil, err
		}
	}
	return res, nil
}
