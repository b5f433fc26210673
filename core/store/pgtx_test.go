package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestTransactionSendsWritesTogether: in a transaction, a write whose
// answer is not needed (ExecLater) waits for the next statement, and on
// PostgreSQL goes with it, BEGIN with the first, the last ones with
// COMMIT: in order, seen by what follows, all or nothing. A waiting write
// that fails fails the transaction, whose other writes are rolled back,
// with that write's error.
func TestTransactionSendsWritesTogether(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		db := pipelineDB(t, e)
		ctx := context.Background()
		kinds := db.Qualify("kinds")
		text := func(id int) string {
			t.Helper()
			var s *string
			if err := db.QueryRow(ctx, `SELECT s FROM `+kinds+` WHERE id = ?`, id).Scan(&s); err != nil {
				t.Fatal(err)
			}
			if s == nil {
				return "<null>"
			}
			return *s
		}
		var sent store.Statements
		tctx := store.TraceStatements(ctx, &sent)
		err := db.Tx(tctx, func(tx *store.DB) error {
			if err := tx.ExecLater(tctx, "first", `UPDATE `+kinds+` SET s = ? WHERE id = 1`, "one"); err != nil {
				return err
			}
			if err := tx.ExecLater(tctx, "second", `UPDATE `+kinds+` SET s = s || ? WHERE id = 1`, "+two"); err != nil {
				return err
			}
			// A pipeline's round goes with what waits, and sees it.
			var s string
			p := tx.Pipeline()
			p.QueryRow("read", `SELECT s FROM `+kinds+` WHERE id = 1`, nil, &s)
			if err := p.Run(tctx); err != nil {
				return err
			}
			if s != "one+two" {
				t.Errorf("read %q in the transaction", s)
			}
			if err := tx.ExecLater(tctx, "third", `UPDATE `+kinds+` SET s = ? WHERE id = 2`, "three"); err != nil {
				return err
			}
			// A plain query is sent after what waits.
			var n int
			if err := tx.QueryRow(tctx, `SELECT COUNT(*) FROM `+kinds+` WHERE s = ?`, "three").Scan(&n); err != nil || n != 1 {
				t.Errorf("count after a waiting write: %d %v", n, err)
			}
			return tx.ExecLater(tctx, "fourth", `UPDATE `+kinds+` SET s = ? WHERE id = 3`, "four")
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(1) + " " + text(2) + " " + text(3); got != "one+two three four" {
			t.Errorf("committed: %s", got)
		}
		if e == store.Postgres {
			// BEGIN with the first round, the third write before the
			// count, the fourth with COMMIT.
			var shapes []string
			for _, s := range sent.Sent() {
				switch {
				case strings.HasPrefix(s, "batch: BEGIN; UPDATE") && strings.Count(s, "UPDATE") == 2 && strings.Contains(s, "SELECT s"):
					shapes = append(shapes, "begin+2 writes+read")
				case strings.HasPrefix(s, "batch: UPDATE") && strings.HasSuffix(s, "COMMIT;"):
					shapes = append(shapes, "write+commit")
				case strings.HasPrefix(s, "batch: UPDATE"):
					shapes = append(shapes, "write")
				case strings.HasPrefix(s, "SELECT COUNT(*)"):
					shapes = append(shapes, "count")
				case strings.HasPrefix(s, "prepare: "):
				default:
					shapes = append(shapes, s)
				}
			}
			if got := strings.Join(shapes, ", "); got != "begin+2 writes+read, write, count, write+commit" {
				t.Errorf("sent: %s\n%s", got, strings.Join(sent.Sent(), "\n"))
			}
		}

		// A waiting write that fails: the transaction fails with its
		// error, and the writes before it are not kept.
		err = db.Tx(ctx, func(tx *store.DB) error {
			if err := tx.ExecLater(ctx, "good", `UPDATE `+kinds+` SET s = ? WHERE id = 1`, "lost"); err != nil {
				return err
			}
			if err := tx.ExecLater(ctx, "bad write", `UPDATE `+kinds+` SET id = ? WHERE id = 2`, 1); err != nil {
				return err
			}
			return tx.ExecLater(ctx, "after", `UPDATE `+kinds+` SET s = ? WHERE id = 3`, "lost too")
		})
		if err == nil || !strings.Contains(err.Error(), "bad write") {
			t.Errorf("failing waiting write: %v", err)
		}
		if got := text(1) + " " + text(3); got != "one+two four" {
			t.Errorf("after a failed transaction: %s", got)
		}
		// The same failure seen by a later read in the transaction.
		err = db.Tx(ctx, func(tx *store.DB) error {
			if err := tx.ExecLater(ctx, "bad write", `UPDATE `+kinds+` SET id = ? WHERE id = 2`, 1); err != nil {
				return err
			}
			var s string
			return tx.QueryRow(ctx, `SELECT s FROM `+kinds+` WHERE id = 1`).Scan(&s)
		})
		if err == nil || (e == store.Postgres && !strings.Contains(err.Error(), "bad write")) {
			t.Errorf("failing waiting write before a read: %v", err)
		}
		// fn's error rolls back what waited and what was sent.
		err = db.Tx(ctx, func(tx *store.DB) error {
			if _, err := tx.Exec(ctx, `UPDATE `+kinds+` SET s = ? WHERE id = 1`, "sent"); err != nil {
				return err
			}
			if err := tx.ExecLater(ctx, "waiting", `UPDATE `+kinds+` SET s = ? WHERE id = 3`, "waiting"); err != nil {
				return err
			}
			return errors.New("give up")
		})
		if err == nil || err.Error() != "give up" {
			t.Fatalf("fn's error: %v", err)
		}
		// A panic too.
		func() {
			defer func() { _ = recover() }()
			_ = db.Tx(ctx, func(tx *store.DB) error {
				if _, err := tx.Exec(ctx, `UPDATE `+kinds+` SET s = ? WHERE id = 1`, "panicked"); err != nil {
					return err
				}
				panic("boom")
			})
		}()
		if got := text(1) + " " + text(3); got != "one+two four" {
			t.Errorf("after rollbacks: %s", got)
		}
		// The pool's connections are left outside any transaction: a
		// transaction that sends nothing, then plain statements on every
		// connection, commit at once.
		if err := db.Tx(ctx, func(*store.DB) error { return nil }); err != nil {
			t.Fatal(err)
		}
		for range 25 {
			if _, err := db.Exec(ctx, `UPDATE `+kinds+` SET s = s WHERE id = 1`); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestTransactionChecksAssumedCounters: under a context whose request
// runs on assumed counters (store.Assumed), a transaction reads them as
// its first statement (on PostgreSQL sent with BEGIN and its first
// writes) and, when they moved, fails with ErrAssumptionFailed and keeps
// nothing; Confirm reads them when nothing has yet, and a write outside a
// transaction is not made on counters that moved.
func TestTransactionChecksAssumedCounters(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		db := pipelineDB(t, e)
		ctx := context.Background()
		kinds := db.Qualify("kinds")
		keys := []string{"schema_version"}
		now, err := db.Counters(ctx, keys...)
		if err != nil {
			t.Fatal(err)
		}
		text := func() string {
			t.Helper()
			var s *string
			if err := db.QueryRow(ctx, `SELECT s FROM `+kinds+` WHERE id = 3`).Scan(&s); err != nil {
				t.Fatal(err)
			}
			if s == nil {
				return "<null>"
			}
			return *s
		}
		write := func(ctx context.Context, v string) error {
			return db.Tx(ctx, func(tx *store.DB) error {
				if err := tx.ExecLater(ctx, "write", `UPDATE `+kinds+` SET s = ? WHERE id = 3`, v); err != nil {
					return err
				}
				var n int
				return tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+kinds).Scan(&n)
			})
		}
		for _, c := range []struct {
			name    string
			assumed int64
			held    bool
		}{{"moved", now[0] - 1, false}, {"held", now[0], true}} {
			// In a transaction.
			var sent store.Statements
			a := db.Assume(keys, []int64{c.assumed})
			actx := store.WithAssumed(store.TraceStatements(ctx, &sent), a)
			err := write(actx, "tx "+c.name)
			want := map[bool]string{true: "tx held", false: "<null>"}[c.held]
			if got := text(); got != want || errors.Is(err, store.ErrAssumptionFailed) == c.held || (c.held && err != nil) {
				t.Errorf("%s: transaction: %v, row %q, want %q", c.name, err, got, want)
			}
			if held, got, err := a.Check(ctx); err != nil || held != c.held || got[0] != now[0] {
				t.Errorf("%s: Check after the transaction: %v %v %v", c.name, held, got, err)
			}
			if e == store.Postgres {
				first := sent.Sent()[0]
				if !strings.HasPrefix(first, "batch: BEGIN; SELECT (SELECT value FROM") || !strings.Contains(first, "; UPDATE ") {
					t.Errorf("%s: the counters are not read with BEGIN and the first write:\n%s", c.name, strings.Join(sent.Sent(), "\n"))
				}
			}
			// Confirm, then a write outside a transaction.
			a = db.Assume(keys, []int64{c.assumed})
			actx = store.WithAssumed(ctx, a)
			if err := store.Confirm(actx, db); errors.Is(err, store.ErrAssumptionFailed) == c.held || (c.held && err != nil) {
				t.Errorf("%s: Confirm: %v", c.name, err)
			}
			a = db.Assume(keys, []int64{c.assumed})
			actx = store.WithAssumed(ctx, a)
			_, err = db.Exec(actx, `UPDATE `+kinds+` SET s = ? WHERE id = 3`, "exec "+c.name)
			want = map[bool]string{true: "exec held", false: "<null>"}[c.held]
			if got := text(); got != want || errors.Is(err, store.ErrAssumptionFailed) == c.held {
				t.Errorf("%s: write outside a transaction: %v, row %q, want %q", c.name, err, got, want)
			}
		}
	})
}
