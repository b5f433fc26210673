package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// groupTestDB is a fresh SQLite app with a table t(id, v UNIQUE) and a
// log table, in the given group mode.
func groupTestDB(t *testing.T, mode GroupMode) *DB {
	t.Helper()
	ctx := context.Background()
	b, err := OpenSQLite(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx, "grp", func(ctx context.Context, db *DB) error {
		_, err := db.Exec(ctx, `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE);
			CREATE TABLE hooklog (v TEXT NOT NULL)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	db, err := b.Open(ctx, "grp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetGroupMode(mode)
	return db
}

// queued waits until n transaction functions wait in db's queue.
func queued(t *testing.T, db *DB, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		db.group.mu.Lock()
		got := len(db.group.queue)
		db.group.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d functions queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func values(t *testing.T, db *DB, table string) map[string]bool {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT v FROM `+table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]bool{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got[v] = true
	}
	return got
}

// TestGroupCommit queues transactions behind one that holds the writer,
// so that they run as one group, each failing in its own way or not, and
// checks that each gets its own outcome and that only the failed ones'
// work (rows, hooks, transaction values) is gone.
func TestGroupCommit(t *testing.T) {
	errRefused := errors.New("refused by its rules")
	type member struct {
		name string
		fn   func(ctx context.Context, tx *DB, v string) error
		// wantErr: the error it must get (nil: committed); panics: it
		// must panic with this value in its own goroutine.
		wantErr error
		panics  string
		unique  bool // fails on the UNIQUE constraint
	}
	insert := func(ctx context.Context, tx *DB, v string) error {
		_, err := tx.Exec(ctx, `INSERT INTO t (v) VALUES (?)`, v)
		return err
	}
	// withHooks inserts v, counts in a transaction value, and logs v in a
	// BeforeCommit hook and in an AfterCommit hook.
	withHooks := func(failHook bool) func(ctx context.Context, tx *DB, v string) error {
		return func(ctx context.Context, tx *DB, v string) error {
			if err := insert(ctx, tx, v); err != nil {
				return err
			}
			n := tx.TxValue("count", func() any { return new(int) }).(*int)
			*n++
			if *n != 1 {
				return fmt.Errorf("transaction value shared between functions: %d", *n)
			}
			if err := tx.BeforeCommit(ctx, "log", func(ctx context.Context, tx *DB) error {
				if _, err := tx.Exec(ctx, `INSERT INTO hooklog (v) VALUES (?)`, "before:"+v); err != nil {
					return err
				}
				if failHook {
					return errRefused
				}
				return nil
			}); err != nil {
				return err
			}
			tx.AfterCommit(func(base *DB) {
				// After the COMMIT, another connection sees the row.
				var n int
				if err := base.QueryRow(context.Background(), `SELECT COUNT(*) FROM t WHERE v = ?`, v).Scan(&n); err != nil || n != 1 {
					panic(fmt.Sprintf("after-commit hook of %s ran before its row was visible: %d %v", v, n, err))
				}
				afterMu.Lock()
				afterRan = append(afterRan, v)
				afterMu.Unlock()
			})
			return nil
		}
	}
	members := []member{
		{name: "a", fn: withHooks(false)},
		{name: "b", fn: func(ctx context.Context, tx *DB, v string) error {
			if err := insert(ctx, tx, v); err != nil {
				return err
			}
			return errRefused
		}, wantErr: errRefused},
		{name: "c", fn: withHooks(false)},
		{name: "d", fn: withHooks(true), wantErr: errRefused},
		{name: "e", fn: func(ctx context.Context, tx *DB, v string) error {
			if err := insert(ctx, tx, v); err != nil {
				return err
			}
			panic("boom in e")
		}, panics: "boom in e"},
		{name: "f", fn: func(ctx context.Context, tx *DB, v string) error {
			// Its own savepoint inside the group's: a refused part is
			// undone, the rest kept.
			if err := insert(ctx, tx, v); err != nil {
				return err
			}
			if err := tx.Savepoint(ctx, "inner", func() error {
				if err := insert(ctx, tx, v+"-inner"); err != nil {
					return err
				}
				return errRefused
			}); !errors.Is(err, errRefused) {
				return fmt.Errorf("inner savepoint: %v", err)
			}
			return nil
		}},
		{name: "g", fn: func(ctx context.Context, tx *DB, v string) error {
			// It reads what a (before it in the group) wrote.
			var n int
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM t WHERE v = 'a'`).Scan(&n); err != nil {
				return err
			}
			if n != 1 {
				return fmt.Errorf("g sees %d rows of a", n)
			}
			return insert(ctx, tx, v)
		}},
		{name: "h", fn: func(ctx context.Context, tx *DB, v string) error {
			return insert(ctx, tx, "a") // a's value: UNIQUE fails
		}, unique: true},
	}
	for _, mode := range []GroupMode{GroupOn, GroupForced} {
		t.Run(fmt.Sprintf("mode%d", mode), func(t *testing.T) {
			db := groupTestDB(t, mode)
			ctx := context.Background()
			afterMu.Lock()
			afterRan = nil
			afterMu.Unlock()
			hold, holding := make(chan struct{}), make(chan struct{})
			holder := make(chan error, 1)
			go func() {
				holder <- db.Tx(ctx, func(tx *DB) error {
					close(holding)
					<-hold
					return insert(ctx, tx, "holder")
				})
			}()
			<-holding
			type outcome struct {
				err      error
				panicked any
			}
			outcomes := make([]outcome, len(members))
			var wg sync.WaitGroup
			for i, m := range members {
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { outcomes[i].panicked = recover() }()
					outcomes[i].err = db.Tx(ctx, func(tx *DB) error { return m.fn(ctx, tx, m.name) })
				}()
				queued(t, db, i+1) // in this order
			}
			close(hold)
			wg.Wait()
			if err := <-holder; err != nil {
				t.Fatal(err)
			}
			if groups, grouped := db.GroupStats(); groups != 1 || grouped != uint64(len(members)) {
				t.Fatalf("groups %d holding %d functions, want 1 holding %d", groups, grouped, len(members))
			}
			want := map[string]bool{"holder": true}
			wantLog := map[string]bool{}
			var wantAfter []string
			for i, m := range members {
				o := outcomes[i]
				switch {
				case m.panics != "":
					if o.panicked != m.panics {
						t.Errorf("%s: panicked with %v, want %q", m.name, o.panicked, m.panics)
					}
				case m.unique:
					if o.err == nil {
						t.Errorf("%s: no error on a duplicate value", m.name)
					}
				case m.wantErr != nil:
					if !errors.Is(o.err, m.wantErr) {
						t.Errorf("%s: error %v, want %v", m.name, o.err, m.wantErr)
					}
				default:
					if o.err != nil || o.panicked != nil {
						t.Errorf("%s: %v %v", m.name, o.err, o.panicked)
					}
					want[m.name] = true
					if m.name == "a" || m.name == "c" {
						wantLog["before:"+m.name] = true
						wantAfter = append(wantAfter, m.name)
					}
				}
			}
			if got := values(t, db, "t"); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("rows %v, want %v", got, want)
			}
			if got := values(t, db, "hooklog"); fmt.Sprint(got) != fmt.Sprint(wantLog) {
				t.Errorf("before-commit rows %v, want %v", got, wantLog)
			}
			afterMu.Lock()
			defer afterMu.Unlock()
			if fmt.Sprint(afterRan) != fmt.Sprint(wantAfter) {
				t.Errorf("after-commit hooks ran for %v, want %v in that order", afterRan, wantAfter)
			}
		})
	}
}

var (
	afterMu  sync.Mutex
	afterRan []string
)

// TestGroupCommitCancel: a function whose context ends while it waits is
// not run; one whose context ends while it runs in a group finishes, and
// the others of its group are committed.
func TestGroupCommitCancel(t *testing.T) {
	db := groupTestDB(t, GroupOn)
	ctx := context.Background()
	hold, holding := make(chan struct{}), make(chan struct{})
	go func() {
		_ = db.Tx(ctx, func(tx *DB) error {
			close(holding)
			<-hold
			return nil
		})
	}()
	<-holding
	gone, cancelGone := context.WithCancel(ctx)
	running, cancelRunning := context.WithCancel(ctx)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i, c := range []struct {
		ctx context.Context
		fn  func(tx *DB) error
	}{
		{gone, func(tx *DB) error {
			_, err := tx.Exec(gone, `INSERT INTO t (v) VALUES ('gone')`)
			return err
		}},
		{running, func(tx *DB) error {
			cancelRunning() // the client goes away while its save runs
			_, err := tx.Exec(running, `INSERT INTO t (v) VALUES ('running')`)
			return err
		}},
		{ctx, func(tx *DB) error {
			_, err := tx.Exec(ctx, `INSERT INTO t (v) VALUES ('other')`)
			return err
		}},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Tx(c.ctx, c.fn)
		}()
		queued(t, db, i+1)
	}
	cancelGone()
	// "gone" leaves the queue when its context ends, or is skipped by the
	// leader if it was taken first: either way it does not run.
	close(hold)
	wg.Wait()
	if !errors.Is(errs[0], context.Canceled) {
		t.Errorf("cancelled while waiting: %v", errs[0])
	}
	if errs[1] != nil || errs[2] != nil {
		t.Errorf("the group's others: %v, %v", errs[1], errs[2])
	}
	if got := values(t, db, "t"); fmt.Sprint(got) != fmt.Sprint(map[string]bool{"running": true, "other": true}) {
		t.Errorf("rows %v", got)
	}
}

// TestGroupCommitLoad runs many concurrent writers in each mode: every
// acknowledged insert is there, every refused one is not, and with
// grouping on, groups did form.
func TestGroupCommitLoad(t *testing.T) {
	for _, mode := range []GroupMode{GroupOff, GroupOn, GroupForced} {
		t.Run(fmt.Sprintf("mode%d", mode), func(t *testing.T) {
			db := groupTestDB(t, mode)
			ctx := context.Background()
			const writers, each = 16, 40
			var wg sync.WaitGroup
			var mu sync.Mutex
			acked := map[string]bool{}
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						v := fmt.Sprintf("%d-%d", w, i)
						refuse := i%7 == 3
						err := db.Tx(ctx, func(tx *DB) error {
							if _, err := tx.Exec(ctx, `INSERT INTO t (v) VALUES (?)`, v); err != nil {
								return err
							}
							if refuse {
								return errors.New("refused")
							}
							return nil
						})
						if (err != nil) != refuse {
							t.Errorf("%s: %v", v, err)
						}
						if err == nil {
							mu.Lock()
							acked[v] = true
							mu.Unlock()
						}
					}
				}()
			}
			wg.Wait()
			if got := values(t, db, "t"); fmt.Sprint(got) != fmt.Sprint(acked) {
				t.Errorf("%d rows, want the %d acknowledged", len(got), len(acked))
			}
			groups, _ := db.GroupStats()
			if mode == GroupOff && groups != 0 {
				t.Errorf("%d groups with grouping off", groups)
			}
			if mode != GroupOff && groups == 0 {
				t.Errorf("16 concurrent writers never formed a group")
			}
		})
	}
}
