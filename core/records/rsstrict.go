package records

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/matrix"
	"github.com/strata-archaeo/strata/core/store"
)

// ErrRSCycle refuses, on a strict table (schema.Table.RSStrict), a
// relation that would close a cycle of above/below: its details carry the
// closed path ("path", "path_text").
var ErrRSCycle = errs.New(errs.Conflict, "rs_cycle", "this relation would close a cycle: a unit would lie above itself")

// The strict check asks core/matrix whether the new relation closes a
// path. Loading a table's relations for every save is too slow at the
// sizes of a large excavation (60,000 relations), so each process keeps
// the table's graph in memory, keyed by the app's DB handle and the
// table, and trusts it only when it was built at the table's rs_gen read
// under the table's lock in the save's transaction. rs_gen is a random
// token that triggers move on every write of sys_rs (migration 0034), so a
// relation written by anything else (a delete, a rename, another node, a
// restore) makes the graph stale and the next check loads it again.

// rsGraph is one table's graph as of token gen.
type rsGraph struct {
	mu      sync.Mutex // held while the graph is read or changed (matrix.Graph compresses paths on reads)
	gen     int64
	g       *matrix.Graph
	lastUse uint64
}

type rsKey struct {
	db      *atomic.Uint64 // the app's DB handle in this process (store.DB.Generation's id)
	tableID int64
	table   string
}

// rsCacheMax bounds the graphs kept: a 20,000-unit table's graph is a few
// MiB; the least recently used goes first.
const rsCacheMax = 32

var rsCache = struct {
	sync.Mutex
	m   map[rsKey]*rsGraph
	use uint64
}{m: map[rsKey]*rsGraph{}}

// rsGraphFor is the cache entry for the scope's table (nil when the DB
// handle has no identity to key it by: then every check loads).
func rsGraphFor(s *Scope) *rsGraph {
	id, _ := s.DB.Generation()
	if id == nil {
		return nil
	}
	k := rsKey{id, s.Table.ID, s.Table.Name}
	rsCache.Lock()
	defer rsCache.Unlock()
	rsCache.use++
	e, ok := rsCache.m[k]
	if !ok {
		if len(rsCache.m) >= rsCacheMax {
			var oldest rsKey
			var oldestUse uint64
			first := true
			for key, v := range rsCache.m {
				if first || v.lastUse < oldestUse {
					oldest, oldestUse, first = key, v.lastUse, false
				}
			}
			delete(rsCache.m, oldest)
		}
		e = &rsGraph{}
		rsCache.m[k] = e
	}
	e.lastUse = rsCache.use
	return e
}

// lockRelations takes the table's relation lock for the transaction and
// returns the table's rs_gen. On PostgreSQL it is the table's catalog row
// (FOR UPDATE), which the triggers of sys_rs also update: two strict
// saves on one table, from any node, run their checks one after the
// other, and a relation written by a non-strict path waits for (or is
// waited on by) the check. On SQLite the transaction already holds the
// database's write lock (BEGIN IMMEDIATE, store.DB.Tx), taken before any
// read of the save.
func lockRelations(ctx context.Context, tx *store.DB, table string) (int64, error) {
	q := `SELECT rs_gen FROM ` + tx.Sys("tables") + ` WHERE name = ?`
	if tx.Engine == store.Postgres {
		q += ` FOR UPDATE`
	}
	var gen int64
	if err := tx.QueryRow(ctx, q, table).Scan(&gen); err != nil {
		return 0, fmt.Errorf("lock relations of %s: %w", table, err)
	}
	return gen, nil
}

// loadRelations builds the table's graph from sys_rs: every stored
// relation, also one to a record deleted since (deleting a record keeps
// its relations, as BraDypUS does; the matrix report lists them), so the
// graph is exactly what rs_gen names.
func loadRelations(ctx context.Context, tx *store.DB, table string) (*matrix.Graph, error) {
	rows, err := tx.Query(ctx, `SELECT first, second, relation FROM `+tx.Sys("rs")+` WHERE tb = ?`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	g := matrix.New()
	for rows.Next() {
		var a, b int64
		var r int
		if err := rows.Scan(&a, &b, &r); err != nil {
			return nil, err
		}
		g.Relate(a, r, b) // an unknown code (none is stored: AddRelation checks) relates nothing
	}
	return g, rows.Err()
}

// strictCheck refuses relation (a, r, b) when it would close a cycle. It
// runs in the save's transaction after the rows are locked; it takes the
// table's relation lock, and returns what the save must do once it has
// written the relation (wrote: read the new token and, after commit,
// bring the cached graph forward without reloading it).
func (s *Scope) strictCheck(ctx context.Context, tx *store.DB, a int64, r int, b int64) (wrote func() error, err error) {
	gen, err := lockRelations(ctx, tx, s.Table.Name)
	if err != nil {
		return nil, err
	}
	e := rsGraphFor(s)
	var path []int64
	var closes bool
	check := func(g *matrix.Graph) {
		switch {
		case r >= 1 && r <= 4: // a below b
			path, closes = g.PathCloses(b, a)
		case r >= 5 && r <= 8: // a above b
			path, closes = g.PathCloses(a, b)
		default: // 9, 10: one unit
			path, closes = g.SameCloses(a, b)
		}
	}
	if e == nil {
		g, err := loadRelations(ctx, tx, s.Table.Name)
		if err != nil {
			return nil, err
		}
		check(g)
	} else {
		e.mu.Lock()
		if e.g == nil || e.gen != gen {
			g, err := loadRelations(ctx, tx, s.Table.Name)
			if err != nil {
				e.mu.Unlock()
				return nil, err
			}
			e.g, e.gen = g, gen
		}
		check(e.g)
		e.mu.Unlock()
	}
	if closes {
		return nil, s.cycleError(ctx, path)
	}
	return func() error {
		if e == nil {
			return nil
		}
		var next int64
		if err := tx.QueryRow(ctx, `SELECT rs_gen FROM `+tx.Sys("tables")+` WHERE name = ?`, s.Table.Name).Scan(&next); err != nil {
			return err
		}
		tx.AfterCommit(func(*store.DB) {
			e.mu.Lock()
			defer e.mu.Unlock()
			// Only from the state the check saw: had anything moved the
			// graph since (it cannot while the lock is held, but a reload
			// may have raced the commit), the next check reloads instead.
			if e.g != nil && e.gen == gen {
				e.g.Relate(a, r, b)
				e.gen = next
			}
		})
		return nil
	}, nil
}

// cycleError is ErrRSCycle with the closed path. A record on it the
// caller may not read (outside its row subset, deleted since) shows as a
// placeholder without id or label: the refusal says that a hidden unit
// closes the way, nothing about which.
func (s *Scope) cycleError(ctx context.Context, path []int64) error {
	labels, err := s.labels(ctx, s.Table, path)
	if err != nil {
		return err
	}
	steps := make([]obj, len(path))
	text := make([]string, len(path))
	for i, id := range path {
		if l, ok := labels[id]; ok {
			steps[i] = obj{"id": id, "label": l}
			if text[i] = l; l == "" {
				text[i] = fmt.Sprintf("#%d", id)
			}
		} else {
			steps[i] = obj{"hidden": true}
			text[i] = "…"
		}
	}
	return ErrRSCycle.With("path", steps).With("path_text", strings.Join(text, " → "))
}
