package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"gorm.io/gorm"
)

// Group commit (SQLite). SQLite has one writer, and each write
// transaction pays for its own BEGIN, its own WAL frames (the pages of the
// indexes every save touches are written again by each) and its own
// COMMIT. Saves that arrive while another is being written therefore wait
// together, and the first of them to get the writer slot (the leader)
// runs them all in one transaction, each in a savepoint of its own:
//
//   - a transaction function that fails (or panics) is rolled back to its
//     savepoint alone, with the commit hooks and transaction values it
//     made (as Savepoint does), and gets its own error;
//   - each one's BeforeCommit hooks run at the end of its own savepoint,
//     so a failing hook undoes only its function's work;
//   - everyone learns the outcome only after the shared COMMIT: an
//     acknowledged save is as durable as before (WAL, synchronous=NORMAL),
//     and when the COMMIT fails every function of the group gets its
//     error;
//   - AfterCommit hooks run after the COMMIT, function by function in the
//     order they ran, while the leader still holds the writer slot, as
//     for a transaction on its own.
//
// Functions run in the order they queued, and each sees what those before
// it in the group wrote, exactly as if they had run one after the other.
// A function that runs in a group runs without its context's
// cancellation (its statements too: detachedTx): once a group has begun,
// one client going away must not interrupt the shared connection (SQLite
// rolls back the whole transaction when a write is interrupted) and so
// fail everyone else's save. A function whose context ends before its
// turn does not run at all.

// GroupMode says how an app's SQLite write transactions are grouped.
type GroupMode int

const (
	// GroupOn groups the transactions that queue while another is being
	// written; one that finds the writer free runs alone, as before.
	GroupOn GroupMode = iota
	// GroupOff runs every transaction on its own.
	GroupOff
	// GroupForced runs every transaction through the group path, in a
	// savepoint, even when it is alone (tests run suites this way).
	GroupForced
)

// GroupCommitEnv names the environment variable that sets the mode of
// the apps opened afterwards: "off", "on" (the default) or "force".
const GroupCommitEnv = "STRATA_GROUP_COMMIT"

// maxGroup bounds a group: the last of a group waits for the work of all
// those before it before it is acknowledged.
const maxGroup = 64

// groupModeFromEnv reads GroupCommitEnv.
func groupModeFromEnv() (GroupMode, error) { return ParseGroupMode(os.Getenv(GroupCommitEnv)) }

// ParseGroupMode reads a value of GroupCommitEnv ("" is the default).
func ParseGroupMode(v string) (GroupMode, error) {
	switch v {
	case "", "on":
		return GroupOn, nil
	case "off":
		return GroupOff, nil
	case "force":
		return GroupForced, nil
	default:
		return GroupOn, fmt.Errorf("%s=%q: want off, on or force", GroupCommitEnv, v)
	}
}

// SetGroupMode changes how the app's write transactions are grouped from
// now on (tests; the default comes from GroupCommitEnv). No effect on
// PostgreSQL.
func (db *DB) SetGroupMode(m GroupMode) {
	if db.group != nil {
		db.group.mu.Lock()
		db.group.mode = m
		db.group.mu.Unlock()
	}
}

// groupCommit is the queue of an app's waiting write transactions,
// shared by every copy of its DB.
type groupCommit struct {
	mu    sync.Mutex
	mode  GroupMode
	queue []*groupMember
	// groups and grouped count the groups of more than one function and
	// the functions they held (GroupStats).
	groups, grouped uint64
}

// groupMember is one transaction function waiting in, or run by, a group.
type groupMember struct {
	ctx   context.Context
	fn    func(tx *DB) error
	taken bool // a leader has it (under groupCommit.mu)
	done  chan groupResult
}

type groupResult struct {
	err      error
	panicked any
	hasPanic bool
}

// GroupStats says how many groups of more than one transaction the app
// committed in this process, and how many transactions they held.
func (db *DB) GroupStats() (groups, grouped uint64) {
	if db.group == nil {
		return 0, 0
	}
	db.group.mu.Lock()
	defer db.group.mu.Unlock()
	return db.group.groups, db.group.grouped
}

// sqliteTx is Tx on SQLite: the function joins the app's queue of writers
// and is run by whoever holds the writer slot next, alone or in a group.
func (db *DB) sqliteTx(ctx context.Context, fn func(tx *DB) error) error {
	// Assumed counters (no round trip to save here) are read before the
	// transaction, as PostgreSQL's read them with its first statement.
	if err := Confirm(ctx, db); err != nil {
		return err
	}
	g := db.group
	g.mu.Lock()
	mode := g.mode
	m := &groupMember{ctx: ctx, fn: fn, done: make(chan groupResult, 1)}
	if mode != GroupOff {
		g.queue = append(g.queue, m)
	}
	g.mu.Unlock()

	// Writers queued here are woken the moment the last one commits; left
	// to SQLite's busy handler they sleep and poll (up to 100 ms a time),
	// which capped concurrent saves and made their p99. One process owns
	// an app's file, so this queue sees every transaction; the busy
	// timeout still covers other processes (the CLI) and autocommit
	// writes.
	wait := time.NewTimer(sqliteBusyTimeout)
	defer wait.Stop()
	select {
	case r := <-m.done:
		return r.get()
	case db.writer <- struct{}{}:
	case <-ctx.Done():
		return db.leaveQueue(m, ctx.Err())
	case <-wait.C:
		return db.leaveQueue(m, ErrBusy)
	}
	release := func() { <-db.writer }
	if mode == GroupOff {
		defer release()
		return db.runAlone(ctx, fn)
	}
	g.mu.Lock()
	if m.taken {
		// An earlier leader ran it and let the slot go before we saw the
		// result: the result is there.
		g.mu.Unlock()
		release()
		return (<-m.done).get()
	}
	batch := g.take(m)
	g.mu.Unlock()
	if len(batch) == 1 && mode != GroupForced {
		defer release()
		return db.runAlone(ctx, fn)
	}
	var results []groupResult
	defer func() {
		// Everyone of the group hears, even when the group's own code
		// panicked (results nil): nobody waits forever.
		for i, b := range batch[1:] {
			if results == nil {
				b.done <- groupResult{err: errGroupFailed}
			} else {
				b.done <- results[i+1]
			}
		}
		release()
	}()
	results = db.runGroup(batch)
	return results[0].get()
}

// errGroupFailed is what the functions of a group hear when the group
// could not say how each ended (its leader panicked outside them).
var errGroupFailed = errors.New("store: the commit group failed")

// leaveQueue takes m out of the queue after its wait ended with err,
// unless a leader already has it: then it waits for its outcome (a
// function whose context has ended is not started; one under way
// finishes).
func (db *DB) leaveQueue(m *groupMember, err error) error {
	g := db.group
	g.mu.Lock()
	if !m.taken {
		if i := slices.Index(g.queue, m); i >= 0 {
			g.queue = slices.Delete(g.queue, i, i+1)
		}
		g.mu.Unlock()
		return err
	}
	g.mu.Unlock()
	return (<-m.done).get()
}

// take removes the leader's own function and up to maxGroup-1 of those
// queued before or after it, oldest first, from the queue.
func (g *groupCommit) take(leader *groupMember) []*groupMember {
	if i := slices.Index(g.queue, leader); i >= 0 {
		g.queue = slices.Delete(g.queue, i, i+1)
	}
	n := min(len(g.queue), maxGroup-1)
	batch := make([]*groupMember, 0, n+1)
	batch = append(batch, leader)
	batch = append(batch, g.queue[:n]...)
	g.queue = slices.Delete(g.queue, 0, n)
	for _, b := range batch {
		b.taken = true
	}
	if len(batch) > 1 {
		g.groups++
		g.grouped += uint64(len(batch))
	}
	return batch
}

// runAlone runs fn in a transaction of its own.
func (db *DB) runAlone(ctx context.Context, fn func(tx *DB) error) error {
	hooks, err := db.gormTx(ctx, onWriterConn(ctx), fn)
	if err == nil {
		db.gen.Add(1)
		hooks.runAfter(db)
	}
	return err
}

// groupSavepoint is the savepoint each function of a group runs in; the
// functions' own savepoints nest inside it.
const groupSavepoint = "strata_group"

// runGroup runs the functions of batch in one transaction, each in its
// savepoint, and returns their outcomes in the same order. The commit
// hooks of those that succeeded run after the COMMIT.
func (db *DB) runGroup(batch []*groupMember) []groupResult {
	results := make([]groupResult, len(batch))
	hooks := make([]*txHooks, len(batch))
	ran := make([]bool, len(batch))
	// BEGIN and COMMIT belong to no one member: no one's cancellation
	// may stop them.
	txCtx := onWriterConn(context.WithoutCancel(batch[0].ctx))
	err := db.Gorm.WithContext(txCtx).Transaction(func(gtx *gorm.DB) error {
		conn := gtx.Statement.ConnPool
		if ct, ok := conn.(*cachedTx); ok {
			conn = &detachedTx{ct}
		}
		for i, m := range batch {
			if err := m.ctx.Err(); err != nil {
				results[i].err = err
				continue
			}
			tx := db.bindTx(gtx, conn)
			hooks[i] = tx.hooks
			ctx := context.WithoutCancel(m.ctx)
			if _, err := tx.Exec(ctx, `SAVEPOINT `+groupSavepoint); err != nil {
				return fmt.Errorf("%w %s: %w", ErrSavepoint, groupSavepoint, err)
			}
			results[i] = runMember(ctx, tx, m.fn)
			if results[i].err != nil || results[i].hasPanic {
				if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT `+groupSavepoint); err != nil {
					// SQLite rolled the whole transaction back (an I/O
					// error, a full disk): nobody's work is left.
					return fmt.Errorf("%w %s: %w", ErrSavepoint, groupSavepoint, err)
				}
			}
			if _, err := tx.Exec(ctx, `RELEASE SAVEPOINT `+groupSavepoint); err != nil {
				return fmt.Errorf("%w %s: %w", ErrSavepoint, groupSavepoint, err)
			}
			ran[i] = results[i].err == nil && !results[i].hasPanic
		}
		return nil
	})
	if err != nil {
		for i := range results {
			if ran[i] || (results[i].err == nil && !results[i].hasPanic) {
				results[i] = groupResult{err: err}
			}
		}
		return results
	}
	db.gen.Add(1)
	for i := range batch {
		if ran[i] {
			results[i] = runAfter(db, hooks[i])
		}
	}
	return results
}

// runAfter runs a committed function's AfterCommit hooks; a panic in
// them is raised again in the function's own goroutine, as it would be
// from a transaction on its own (the work stays committed).
func runAfter(db *DB, h *txHooks) (r groupResult) {
	defer func() {
		if p := recover(); p != nil {
			r = groupResult{panicked: p, hasPanic: true}
		}
	}()
	h.runAfter(db)
	return groupResult{}
}

// runMember runs one function of a group and its BeforeCommit hooks,
// turning a panic into its result (it is raised again in the function's
// own goroutine).
func runMember(ctx context.Context, tx *DB, fn func(tx *DB) error) (r groupResult) {
	defer func() {
		if p := recover(); p != nil {
			r = groupResult{panicked: p, hasPanic: true}
		}
	}()
	if err := fn(tx); err != nil {
		return groupResult{err: err}
	}
	return groupResult{err: tx.hooks.runBefore(ctx, tx)}
}

// get returns the outcome to the function's caller, panicking again when
// the function panicked.
func (r groupResult) get() error {
	if r.hasPanic {
		panic(r.panicked)
	}
	return r.err
}
