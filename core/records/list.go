package records

import (
	"context"
	"math"
	"slices"
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

// deepPage is the offset from which a page's ids are chosen before its
// rows are read (List).
var deepPage int64 = 300

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
	NoTotal   bool // total=false: skip the count (CONTRACT §10)
}

// FieldRef names a column of a list answer.
type FieldRef struct {
	Name  string `json:"name"`
	Label string `json:"label"`
}

// ListResult is a page of records (SPEC §2.1).
type ListResult struct {
	Total   int64            `json:"total"`
	NoTotal bool             `json:"-"` // not counted: answered as null
	Fields  []FieldRef       `json:"fields"`
	Data    []map[string]any `json:"data"`
	IDs     []int64          `json:"ids,omitempty"`
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
	if s.DB.Engine == store.Postgres {
		// PostgreSQL puts NULLs last ascending and first descending by
		// itself, so the plain order is the one wanted and an index on
		// the column can serve it.
		key := col
		if t == schema.DBText {
			key = col + ` COLLATE "C"`
		}
		return key + " " + dir + ", " + idCol + " " + dir, nil
	}
	// SQLite puts NULLs first ascending: NULLS LAST (and FIRST when
	// descending) gives PostgreSQL's order, and its planner still walks an
	// index on the column for it (in two passes) instead of sorting.
	nulls := " NULLS LAST"
	if dir == "DESC" {
		nulls = " NULLS FIRST"
	}
	return col + " " + dir + nulls + ", " + idCol + " " + dir, nil
}

// List returns one page of the table's rows matching q and the caller's
// row restriction, with the total (count.go).
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
		return listIDs(ctx, s, q, from, where, args, order, pg)
	}
	pg, err := PageOf(q.Page, q.PerPage, DefaultPerPage, MaxPerPage)
	if err != nil {
		return nil, err
	}

	sel := make([]string, 0, len(cols)+1)
	for _, c := range cols {
		sel = append(sel, s.column(c.Name))
	}
	query := `SELECT ` + strings.Join(sel, ", ") + ` FROM ` + from + ` WHERE ` + where +
		` ORDER BY ` + order + ` LIMIT ? OFFSET ?`
	qargs := append(slices.Clip(args), pg.Limit, pg.Offset)
	var pageIDs []int64 // the page's ids in order, when chosen from a window
	if pg.Offset >= deepPage {
		ids, ok, err := s.windowPage(ctx, from, where, args, order, pg)
		switch {
		case err != nil:
			return nil, err
		case ok:
			pageIDs = ids
			query, qargs = s.rowsByID(append([]string{s.column(schema.ColID)}, sel...), from, ids)
		default:
			// A deep page beyond the window: its ids are chosen first,
			// sorting only the sort key and the id, and only those rows
			// are read whole, instead of sorting whole rows to throw
			// most of them away.
			query = `SELECT ` + strings.Join(sel, ", ") + ` FROM ` + from + ` WHERE ` + s.column(schema.ColID) +
				` IN (SELECT ` + s.column(schema.ColID) + ` FROM ` + from + ` WHERE ` + where +
				` ORDER BY ` + order + ` LIMIT ? OFFSET ?) ORDER BY ` + order
		}
	}
	// On SQLite, the request's assumed versions (if any) are read with
	// the page's first row rather than by a statement of their own: each
	// uncorrelated subquery runs once per statement. Not where a batch
	// reads them first (PostgreSQL): an empty page would then cost a round
	// trip to check them.
	var assumed *store.AssumedColumns
	if pg.Offset < deepPage && !s.DB.Pipeline().Pipelined(ctx) {
		if assumed = store.AssumedIn(ctx, s.DB); assumed != nil {
			query = `SELECT ` + strings.Join(append(sel, assumed.Exprs...), ", ") + ` FROM ` + from + ` WHERE ` + where +
				` ORDER BY ` + order + ` LIMIT ? OFFSET ?`
			qargs = append(append(slices.Clip(assumed.Args), args...), pg.Limit, pg.Offset)
		}
	}
	res := &ListResult{Fields: cols, Data: []map[string]any{}}
	// A list's best plan depends on its values (a common or a rare one,
	// the page's depth): never a generic plan (store.Pipeline.CustomPlans).
	p := s.DB.Pipeline().CustomPlans()
	if pageIDs == nil || len(pageIDs) > 0 {
		s.queuePage(p, res, cols, query, qargs, pageIDs, assumed)
	}
	counted := s.queueTotal(ctx, p, q, from, where, args)
	if err := p.Run(ctx); err != nil {
		return nil, err
	}
	return res, s.total(ctx, res, q, pg, len(res.Data), from, where, args, counted)
}

// queueTotal queues the count of a list with its page when the count is
// not cached and one round trip brings both (PostgreSQL): it returns the
// count once the pipeline has run, or nil (total counts as usual). A
// first page needs no count when it is not full (it is the whole
// result), which is only known once it is read: the count goes with it
// anyway, as a round trip after it costs more than counting a result
// that fits in a page.
func (s *Scope) queueTotal(ctx context.Context, p *store.Pipeline, q ListQuery, from, where string, args []any) *counted {
	if q.NoTotal || !p.Pipelined(ctx) {
		return nil
	}
	query := countQuery(from, where)
	key, _, ok := s.cachedCount(query, args)
	if ok {
		return nil
	}
	c := &counted{key: key}
	p.QueryRow("count "+s.Table.Name, query, args, &c.n)
	return c
}

// counted is a count read with the page, and where the cache keeps it.
type counted struct {
	key countKey
	n   int64
}

// queuePage queues the page query; its rows are appended to res. With
// byID, the query's first column is the id and rows are put in byID's
// order. With assumed, its columns follow the fields'.
func (s *Scope) queuePage(p *store.Pipeline, res *ListResult, cols []FieldRef, query string, args []any, byID []int64, assumed *store.AssumedColumns) {
	p.Query("list "+s.Table.Name, query, args, func(rows store.Rows) error {
		return s.readPage(rows, res, cols, byID, assumed)
	})
}

// readPage appends the rows of a page query to res (see queuePage).
func (s *Scope) readPage(rows store.Rows, res *ListResult, cols []FieldRef, byID []int64, assumed *store.AssumedColumns) error {
	types := make([]schema.DBType, len(cols))
	for i, c := range cols {
		types[i], _ = dbTypeOf(s.Table, c.Name)
	}
	var id int64
	vals := make([]any, len(cols))
	ptrs := make([]any, 0, len(vals)+1)
	if byID != nil {
		ptrs = append(ptrs, &id)
	}
	for i := range vals {
		ptrs = append(ptrs, &vals[i])
	}
	if assumed != nil {
		ptrs = append(ptrs, assumed.Dest...)
	}
	found := map[int64]map[string]any{}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if assumed != nil {
			if err := assumed.Scanned(); err != nil {
				return err
			}
			assumed = nil
		}
		rec := make(map[string]any, len(cols))
		for i, c := range cols {
			rec[c.Name] = fromDB(types[i], vals[i])
		}
		if byID != nil {
			found[id] = rec
			continue
		}
		res.Data = append(res.Data, rec)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range byID {
		// A row deleted since the window was read (by another node) is
		// left out rather than shown empty.
		if rec, ok := found[id]; ok {
			res.Data = append(res.Data, rec)
		}
	}
	return nil
}

// total fills res.Total: none with total=false; without a count when the
// page shows it all (a first page not full is the whole result); else
// pre, the count read with the page (queueTotal), or counted (count).
func (s *Scope) total(ctx context.Context, res *ListResult, q ListQuery, pg Page, got int, from, where string, args []any, pre *counted) error {
	if pre != nil {
		s.keepCount(pre.key, pre.n)
	}
	switch {
	case q.NoTotal:
		res.NoTotal = true
		return nil
	case pg.Offset == 0 && int64(got) < pg.Limit:
		res.Total = int64(got)
		return nil
	case pre != nil:
		res.Total = pre.n
		return nil
	}
	n, err := s.count(ctx, from, where, args)
	res.Total = n
	return err
}

// listIDs is one page of the matching ids, in the list's order, with the
// total.
func listIDs(ctx context.Context, s *Scope, q ListQuery, from, where string, args []any, order string, pg Page) (*ListResult, error) {
	res := &ListResult{IDs: []int64{}}
	p := s.DB.Pipeline().CustomPlans()
	p.Query("list ids of "+s.Table.Name, `SELECT `+s.column(schema.ColID)+` FROM `+from+` WHERE `+where+
		` ORDER BY `+order+` LIMIT ? OFFSET ?`, append(slices.Clip(args), pg.Limit, pg.Offset), func(rows store.Rows) error {
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			res.IDs = append(res.IDs, id)
		}
		return rows.Err()
	})
	counted := s.queueTotal(ctx, p, q, from, where, args)
	if err := p.Run(ctx); err != nil {
		return nil, err
	}
	return res, s.total(ctx, res, q, pg, len(res.IDs), from, where, args, counted)
}
