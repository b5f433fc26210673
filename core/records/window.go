package records

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Deep pages of a sorted list read their ids from an order window: the
// first ids of the result in the list's order, sorted once and kept
// exactly as the count is (count.go): only while the app's data generation
// is the one it was read at, and at most countTTL. Paging through a sorted
// result then sorts it once, not once a page: a sort no index serves
// reads every matching row.
const (
	windowChunk = 1000 // windows grow by this many ids
	windowLimit = 256  // entries; the cache is emptied when full
)

// windowMax: past this position pages are chosen directly (a var for tests).
var windowMax int64 = 10000

type windowEntry struct {
	ids      []int64
	complete bool // ids is the whole result
	read     time.Time
}

var windows = struct {
	sync.Mutex
	m map[countKey]windowEntry
}{m: map[countKey]windowEntry{}}

// windowPage returns the ids of page pg of the list (from, where, order),
// or ok false when the page lies beyond windowMax or the DB has no
// generation to key a cache by.
func (s *Scope) windowPage(ctx context.Context, from, where string, args []any, order string, pg Page) (ids []int64, ok bool, err error) {
	end := pg.Offset + pg.Limit
	gen, at := s.DB.Generation()
	if end > windowMax || gen == nil {
		return nil, false, nil
	}
	query := `SELECT ` + s.column(schema.ColID) + ` FROM ` + from + ` WHERE ` + where + ` ORDER BY ` + order
	key := countKey{gen: gen, at: at, query: cacheText(query, args)}
	windows.Lock()
	e, hit := windows.m[key]
	windows.Unlock()
	if !hit || time.Since(e.read) >= countTTL || (!e.complete && int64(len(e.ids)) < end) {
		size := min(windowMax, (end+windowChunk-1)/windowChunk*windowChunk)
		e = windowEntry{ids: make([]int64, 0, size), read: time.Now()}
		p := s.DB.Pipeline().CustomPlans() // as List's (list.go)
		p.Query("list "+s.Table.Name, query+` LIMIT ?`, append(slices.Clip(args), size), func(rows store.Rows) error {
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					return err
				}
				e.ids = append(e.ids, id)
			}
			return rows.Err()
		})
		if err := p.Run(ctx); err != nil {
			return nil, false, err
		}
		e.complete = int64(len(e.ids)) < size
		windows.Lock()
		if len(windows.m) >= windowLimit {
			clear(windows.m)
		}
		windows.m[key] = e
		windows.Unlock()
	}
	if pg.Offset >= int64(len(e.ids)) {
		return []int64{}, true, nil
	}
	return e.ids[pg.Offset:min(end, int64(len(e.ids)))], true, nil
}

// rowsByID is the query reading cols of the rows ids (in any order) and
// its arguments.
func (s *Scope) rowsByID(sel []string, from string, ids []int64) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return `SELECT ` + strings.Join(sel, ", ") + ` FROM ` + from + ` WHERE ` + s.column(schema.ColID) +
		` IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + `)`, args
}
