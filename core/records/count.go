package records

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Totals of lists are counted apart from the page (a window count over
// the page query makes the engine read and sort every matching row before
// LIMIT) and kept briefly, so that paging through a result does not count
// it again. A cached total is used only while the app's data generation
// is the one it was counted at (every write transaction of this process
// moves it) and at most countTTL after counting (writes by other nodes
// do not move it).
const (
	countTTL        = 5 * time.Second
	countCacheLimit = 4096 // entries; the cache is emptied when full
)

type countKey struct {
	gen   *atomic.Uint64 // the app's DB
	at    uint64         // its generation when counted
	query string         // the count query with its arguments
}

type countEntry struct {
	total   int64
	counted time.Time
}

var counts = struct {
	sync.Mutex
	m map[countKey]countEntry
}{m: map[countKey]countEntry{}}

// countCall is a count under way, which requests wanting the same one
// wait for instead of counting again.
type countCall struct {
	done    chan struct{}
	n       int64
	err     error
	waiters int // under counting's lock
}

// countHold, when set (tests), is called by the request that counts
// before it counts.
var countHold func(*countCall)

// counting are the counts under way, by cache key: entries leave when
// their count ends, so it holds at most one per request under way.
var counting = struct {
	sync.Mutex
	m map[countKey]*countCall
}{m: map[countKey]*countCall{}}

// count is SELECT COUNT(*) over from and where, from the cache when fresh.
// Requests that miss the cache together (the first page of a popular
// search as its cached total expires, under load) share one count: a
// large total is work in proportion to the rows matched, and sixteen of
// them at once would hold every core for as long.
func (s *Scope) count(ctx context.Context, from, where string, args []any) (int64, error) {
	query := countQuery(from, where)
	key, n, ok := s.cachedCount(query, args)
	if ok {
		return n, nil
	}
	if key.gen == nil {
		return s.countNow(ctx, query, args)
	}
	counting.Lock()
	if c, ok := counting.m[key]; ok {
		c.waiters++
		counting.Unlock()
		select {
		case <-c.done:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		if c.err == nil {
			return c.n, nil
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		// The counting request failed (its client went away): count.
		return s.countNow(ctx, query, args)
	}
	c := &countCall{done: make(chan struct{}), err: errCountUnfinished}
	counting.m[key] = c
	counting.Unlock()
	defer func() {
		// Even on a panic: no request waits for a count nobody makes.
		counting.Lock()
		delete(counting.m, key)
		counting.Unlock()
		close(c.done)
	}()
	if countHold != nil {
		countHold(c)
	}
	c.n, c.err = s.countNow(ctx, query, args)
	if c.err == nil {
		s.keepCount(key, c.n)
	}
	return c.n, c.err
}

// errCountUnfinished is what those waiting for a count get when the
// request counting panicked.
var errCountUnfinished = errors.New("records: the shared count did not finish")

// countsRun is how many counts this process has run (tests).
var countsRun atomic.Int64

// countNow counts, not looking at the cache.
func (s *Scope) countNow(ctx context.Context, query string, args []any) (int64, error) {
	countsRun.Add(1)
	var n int64
	p := s.DB.Pipeline().CustomPlans() // as List's (list.go)
	p.QueryRow("count "+s.Table.Name, query, args, &n)
	if err := p.Run(ctx); err != nil {
		return 0, err
	}
	return n, nil
}

// countQuery counts the rows of from matching where.
func countQuery(from, where string) string { return `SELECT COUNT(*) FROM ` + from + ` WHERE ` + where }

// cachedCount is the cached total of query with args when fresh, and its
// key in the cache (zero when the app's DB keeps no generation).
func (s *Scope) cachedCount(query string, args []any) (key countKey, n int64, ok bool) {
	gen, at := s.DB.Generation()
	if gen == nil {
		return key, 0, false
	}
	key = countKey{gen: gen, at: at, query: cacheText(query, args)}
	counts.Lock()
	e, hit := counts.m[key]
	counts.Unlock()
	if hit && time.Since(e.counted) < countTTL {
		return key, e.total, true
	}
	return key, 0, false
}

// keepCount caches n, the total counted under key (see cachedCount).
func (s *Scope) keepCount(key countKey, n int64) {
	if key.gen == nil {
		return
	}
	counts.Lock()
	if len(counts.m) >= countCacheLimit {
		clear(counts.m)
	}
	counts.m[key] = countEntry{total: n, counted: time.Now()}
	counts.Unlock()
}

// cacheText is the query and its bound values as one key (values typed,
// so 1 and "1" differ).
func cacheText(query string, args []any) string {
	var b strings.Builder
	b.WriteString(query)
	for _, a := range args {
		fmt.Fprintf(&b, "\x00%T:%v", a, a)
	}
	return b.String()
}
