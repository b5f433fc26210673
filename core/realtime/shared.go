package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/store"
)

// What the streams of a process share, so that the work one change costs
// is done once per distinct reader rather than once per stream (issue 31's
// benchmark: 500 streams, 200 writes/s, on 2 cores):
//
//   - the log: the pumps woken by a commit read the new rows with one
//     query, not one each (logCache);
//   - the scope: a user's streams share one records scope per table while
//     neither the catalog nor that user's privileges changed since it was
//     built (a scope built later would be the same); then, per change,
//     whether the row matches each filter those streams hold is one
//     statement (records.MatchesEach), and the record as GET /record
//     answers that user one records.Read, encoded once (scopeEntry).
//
// Each subscriber still gets exactly its own events: the same match and
// the same record a stream of its own would have computed with its scope.

// Bounds of what is kept.
const (
	logCacheRows     = 4096 // log rows kept per app
	sharedScopesMax  = 1024 // (user, table) scopes offered for reuse
	filtersPerScope  = 64   // filters matched together, per shared scope
	memoChangesKept  = 256  // changes whose results a shared scope keeps
	condKeysMost     = 4096 // filter keys remembered per shared scope
	matchColumnsMost = 64   // conditions in one MatchesEach statement
)

// shared is the hub's state of the above (its zero value is ready).
type shared struct {
	mu     sync.Mutex
	logs   map[string]*logCache
	scopes map[string]*scopeEntry // by user and table, for reuse
	order  []string               // keys of scopes, oldest first
	// held are the entries each open stream's subscriptions use: when
	// the last stream using one ends, it is forgotten with its results.
	held map[*client]map[*scopeEntry]bool
}

// logCache holds the newest rows of an app's log: every row with
// lo < id <= hi. Ids commit in order (core/changes), so once a read
// answered rows up to hi, no row at or below hi can appear later.
type logCache struct {
	mu     sync.Mutex // held while the log is read: one read per wake
	valid  bool
	lo, hi int64
	rows   []changes.Change
}

// since is changes.Since for a pump: from memory when the cache covers
// after; past it, the log is read (one pump at a time: the others woken
// by the same commit then find the rows in memory).
func (h *Hub) since(ctx context.Context, db *store.DB, after int64, limit int) ([]changes.Change, error) {
	sh := &h.shared
	sh.mu.Lock()
	if sh.logs == nil {
		sh.logs = map[string]*logCache{}
	}
	lc := sh.logs[db.Key()]
	if lc == nil {
		lc = &logCache{}
		sh.logs[db.Key()] = lc
	}
	sh.mu.Unlock()

	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.valid && after < lc.lo {
		// A stream replaying older rows than the cache holds.
		return changes.Since(ctx, db, after, limit)
	}
	var out []changes.Change
	if lc.valid && after < lc.hi {
		if out = lc.from(after, limit); len(out) == limit {
			return out, nil
		}
		after = lc.hi // the cache is exhausted: what follows is read
	}
	n := limit - len(out)
	rows, err := changes.Since(ctx, db, after, n)
	if err != nil {
		lc.valid = false // the next pump starts the cache again
		return nil, err
	}
	if !lc.valid || after > lc.hi {
		lc.valid, lc.lo, lc.hi, lc.rows = true, after, after, lc.rows[:0]
	}
	lc.rows = append(lc.rows, rows...)
	if len(rows) > 0 {
		lc.hi = rows[len(rows)-1].ID
	}
	if k := len(lc.rows) - logCacheRows; k > 0 {
		lc.lo = lc.rows[k-1].ID
		lc.rows = append(lc.rows[:0:0], lc.rows[k:]...)
	}
	return append(out, rows...), nil
}

// from is up to limit cached rows after id after, in a slice of its own.
func (lc *logCache) from(after int64, limit int) []changes.Change {
	i := sort.Search(len(lc.rows), func(i int) bool { return lc.rows[i].ID > after })
	j := min(len(lc.rows), i+limit)
	return append([]changes.Change(nil), lc.rows[i:j]...)
}

// scopeEntry is a scope shared by a user's subscriptions on one table,
// with what was computed with it per change: each result is computed once
// (inflight), and results of different changes at the same time. The
// scope's grants render each table's row subset once, into a map of their
// own: warm renders them all before the scope is shared, so that its
// concurrent uses only read it.
type scopeEntry struct {
	mu    sync.Mutex
	scope *records.Scope
	user  int64
	head  int64 // the log's newest id before the scope was built
	fp    string
	key   string // in shared.scopes
	refs  int    // streams holding it (shared.held; under shared.mu)

	filters map[string]*records.Cond // the filters of its subscriptions
	fkeys   []string                 // in the order they came
	keyOf   map[*records.Cond]string // filterKey of each, computed once

	matches  map[int64]map[string]bool // change → filter key → match
	reads    map[int64]json.RawMessage // change → record (nil: not found)
	changes  []int64                   // memo's changes, oldest first
	inflight map[flight]chan struct{}  // closed when computed (or failed)
}

// flight is one computation of an entry: change id's matches or read.
type flight struct {
	change int64
	read   bool
}

// warm has the scope's grants render the row subset of every table the
// scope may show (its lookups, links, plugin rows): later uses only read
// them, from any stream's goroutine.
func warm(ctx context.Context, sc *records.Scope) {
	if sc.Access == nil || sc.Catalog == nil {
		return
	}
	for _, t := range sc.Catalog.Tables {
		_, _ = sc.Access(ctx, t) // an error is answered again, rendering nothing
	}
}

// begin is the caller's turn to compute f (true), or, when another
// stream is computing it, the channel closed once it is done (the caller
// then looks again). Called with e.mu held.
func (e *scopeEntry) begin(f flight) (chan struct{}, bool) {
	if w, ok := e.inflight[f]; ok {
		return w, false
	}
	w := make(chan struct{})
	e.inflight[f] = w
	return w, true
}

// end closes f's computation. Called with e.mu held.
func (e *scopeEntry) end(f flight) {
	close(e.inflight[f])
	delete(e.inflight, f)
}

// filterKey tells conditions apart: same SQL, same arguments of the same
// types.
func filterKey(c *records.Cond) string {
	if c == nil {
		return ""
	}
	return c.SQL + "\x00" + fmt.Sprintf("%#v", c.Args)
}

// fingerprint is what of a scope can be compared: a scope differing in
// any of it is never shared.
func fingerprint(sc *records.Scope) string {
	return fmt.Sprintf("%p|%p|%s|%d|%s|%d|%d", sc.Catalog, sc.Table, sc.Table.Name, sc.Level, filterKey(sc.Restrict), len(sc.Features), len(sc.Sections))
}

// shareScope is the scope a user's new subscription on sc's table uses
// for its events: one built for the same user and table that is still
// what sc is (no catalog or privilege change of theirs in the log since
// head, read before it was built, and the same fingerprint), or sc, then
// offered to the next. API keys keep their own (their changes are not in
// the log). head is the log's newest id read before sc was built.
func (h *Hub) shareScope(ctx context.Context, cl *client, sc *records.Scope, head int64) (*scopeEntry, error) {
	if cl.actor.KeyID != 0 || cl.actor.UserID == 0 {
		return nil, nil
	}
	key := cl.app.Name + "\x00" + strconv.FormatInt(cl.actor.UserID, 10) + "\x00" + sc.Table.Name
	fp := fingerprint(sc)
	sh := &h.shared
	sh.mu.Lock()
	e := sh.scopes[key]
	sh.mu.Unlock()
	if e != nil && e.fp == fp {
		changed, err := changes.AccessChanged(ctx, cl.app.DB, e.head, cl.actor.UserID)
		if err != nil {
			return nil, err
		}
		if !changed {
			return e, nil
		}
	}
	e = &scopeEntry{scope: sc, user: cl.actor.UserID, head: head, fp: fp, key: key,
		filters: map[string]*records.Cond{}, keyOf: map[*records.Cond]string{}, matches: map[int64]map[string]bool{}, reads: map[int64]json.RawMessage{},
		inflight: map[flight]chan struct{}{}}
	warm(ctx, sc)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.scopes == nil {
		sh.scopes = map[string]*scopeEntry{}
	}
	if _, ok := sh.scopes[key]; !ok {
		sh.order = append(sh.order, key)
	}
	sh.scopes[key] = e
	// Past the bound the oldest offer goes; its subscriptions keep it.
	for len(sh.order) > sharedScopesMax {
		delete(sh.scopes, sh.order[0])
		sh.order = sh.order[1:]
	}
	return e, nil
}

// addFilter notes a filter subscription's condition, matched with the
// others of the entry in one statement per change.
func (e *scopeEntry) addFilter(c *records.Cond) {
	k := filterKey(c)
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.keyOf) < condKeysMost {
		e.keyOf[c] = k
	}
	if _, ok := e.filters[k]; ok || len(e.filters) >= filtersPerScope {
		return
	}
	e.filters[k] = c
	e.fkeys = append(e.fkeys, k)
}

// remember makes room for change id in the memo.
func (e *scopeEntry) remember(id int64) {
	if _, ok := e.matches[id]; ok {
		return
	}
	if _, ok := e.reads[id]; ok {
		return
	}
	e.changes = append(e.changes, id)
	for len(e.changes) > memoChangesKept {
		delete(e.matches, e.changes[0])
		delete(e.reads, e.changes[0])
		e.changes = e.changes[1:]
	}
}

// matches is records.Matches(s.scope, ch.RecordID, s.filter()), computed
// for all of a shared scope's filters at once, once per change.
func (h *Hub) matches(ctx context.Context, s *subscription, ch changes.Change) (bool, error) {
	e := s.shared
	if e == nil || s.Record != 0 {
		return records.Matches(ctx, s.scope, ch.RecordID, s.filter())
	}
	f := flight{change: ch.ID}
	for {
		e.mu.Lock()
		k, ok := e.keyOf[s.cond]
		if !ok {
			k = filterKey(s.cond)
		}
		if m, ok := e.matches[ch.ID]; ok {
			if v, ok := m[k]; ok {
				e.mu.Unlock()
				return v, nil
			}
		}
		if _, ok := e.filters[k]; !ok {
			e.mu.Unlock()
			return records.Matches(ctx, e.scope, ch.RecordID, s.cond)
		}
		w, mine := e.begin(f)
		if !mine {
			e.mu.Unlock()
			select {
			case <-w:
				continue
			case <-ctx.Done():
				return false, ctx.Err()
			}
		}
		keys := append([]string(nil), e.fkeys...)
		conds := make([]*records.Cond, len(keys))
		for j, fk := range keys {
			conds[j] = e.filters[fk]
		}
		e.mu.Unlock()
		m := map[string]bool{}
		var err error
		for i := 0; i < len(keys) && err == nil; i += matchColumnsMost {
			var got []bool
			got, err = records.MatchesEach(ctx, e.scope, ch.RecordID, conds[i:min(len(keys), i+matchColumnsMost)])
			for j, v := range got {
				m[keys[i+j]] = v
			}
		}
		e.mu.Lock()
		if err == nil {
			e.remember(ch.ID)
			e.matches[ch.ID] = m
		}
		e.end(f)
		e.mu.Unlock()
		return m[k], err
	}
}

// read is the record of change ch as GET /record answers the scope's
// user (records.Read), encoded; nil when it is not found (deleted or moved
// out since). A shared scope reads it once per change.
func (h *Hub) read(ctx context.Context, sc *records.Scope, e *scopeEntry, ch changes.Change) (json.RawMessage, error) {
	if e == nil {
		return readEncoded(ctx, sc, ch.RecordID)
	}
	f := flight{change: ch.ID, read: true}
	for {
		e.mu.Lock()
		if raw, ok := e.reads[ch.ID]; ok {
			e.mu.Unlock()
			return raw, nil
		}
		w, mine := e.begin(f)
		e.mu.Unlock()
		if !mine {
			select {
			case <-w:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		raw, err := readEncoded(ctx, e.scope, ch.RecordID)
		e.mu.Lock()
		if err == nil {
			e.remember(ch.ID)
			e.reads[ch.ID] = raw
		}
		e.end(f)
		e.mu.Unlock()
		return raw, err
	}
}

// readEncoded is records.Read, encoded; nil when not found.
func readEncoded(ctx context.Context, sc *records.Scope, id int64) (json.RawMessage, error) {
	rec, err := records.Read(ctx, sc, id)
	switch {
	case errors.Is(err, records.ErrRecordNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return json.Marshal(rec)
}

// logHead is the log's newest id, read before a subscription's scopes
// are built (shareScope).
func logHead(ctx context.Context, cl *client) (int64, error) {
	_, newest, err := changes.Bounds(ctx, cl.app.DB)
	return newest, err
}

// share gives subscription s, validated with its own scope, the shared
// scope of its user and table when there is one (shareScope), and notes
// its filter there.
func (h *Hub) share(ctx context.Context, cl *client, s *subscription, head int64) error {
	e, err := h.shareScope(ctx, cl, s.scope, head)
	if err != nil || e == nil {
		return err
	}
	s.shared, s.scope = e, e.scope
	if s.Record == 0 {
		e.addFilter(s.cond)
	}
	sh := &h.shared
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if h.client(cl.id) == nil {
		return nil // its stream ended (release ran or runs after leave)
	}
	if sh.held == nil {
		sh.held = map[*client]map[*scopeEntry]bool{}
	}
	if sh.held[cl] == nil {
		sh.held[cl] = map[*scopeEntry]bool{}
	}
	if !sh.held[cl][e] {
		sh.held[cl][e] = true
		e.refs++
	}
	return nil
}

// release lets go of what stream cl's subscriptions shared: an entry no
// open stream uses any more is forgotten, with its results, so that
// memory goes back to what it was once the clients leave.
func (h *Hub) release(cl *client) {
	sh := &h.shared
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for e := range sh.held[cl] {
		if e.refs--; e.refs > 0 {
			continue
		}
		if sh.scopes[e.key] == e {
			delete(sh.scopes, e.key)
			for i, k := range sh.order {
				if k == e.key {
					sh.order = append(sh.order[:i], sh.order[i+1:]...)
					break
				}
			}
		}
	}
	delete(sh.held, cl)
}

// encoded is an event's data already encoded as JSON (encodeFrame writes
// it as it is).
type encoded []byte

// recordTail is recordEvent after its record: the same fields, in the same
// order, with the same tags.
type recordTail struct {
	Version       int64     `json:"version"`
	UserID        *int64    `json:"user_id"`
	Actor         string    `json:"actor,omitempty"`
	At            time.Time `json:"at"`
	Subscriptions []string  `json:"subscriptions"`
}

// encode is json.Marshal(ev), byte for byte, without going over the
// record again: it was encoded once for every stream it goes to (read),
// and Marshal would check and copy it anew for each.
func (ev recordEvent) encode() encoded {
	table, err1 := json.Marshal(ev.Table)
	tail, err2 := json.Marshal(recordTail{Version: ev.Version, UserID: ev.UserID, Actor: ev.Actor, At: ev.At, Subscriptions: ev.Subscriptions})
	if err1 != nil || err2 != nil || ev.Record == nil {
		b, _ := json.Marshal(ev)
		return b
	}
	b := make([]byte, 0, len(table)+len(ev.Record)+len(tail)+48)
	b = append(b, `{"table":`...)
	b = append(b, table...)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, ev.ID, 10)
	b = append(b, `,"record":`...)
	b = append(b, ev.Record...)
	b = append(b, ',')
	return append(b, tail[1:]...)
}

// writeQueued writes f and the frames already queued behind it, then
// flushes once: a client behind by many events costs one write, not one
// each. It stops at a final frame, at an error (true: the stream ends),
// and as soon as the client is dropped (its resync goes first).
func writeQueued(w gin.ResponseWriter, cl *client, f frame) (end bool) {
	defer w.Flush()
	for {
		if encodeFrame(w, f) != nil || f.final {
			return true
		}
		select {
		case <-cl.overflow:
			return false
		default:
		}
		select {
		case f = <-cl.out:
		default:
			return false
		}
	}
}
