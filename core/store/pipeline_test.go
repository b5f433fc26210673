package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// pipelineDB is an app database with a table of many column types and
// three rows (one all NULL).
func pipelineDB(t *testing.T, e store.Engine) *store.DB {
	t.Helper()
	db := createMigrated(t, testenv.NewBackend(t, e), "pipe")
	ctx := context.Background()
	cols := `id bigint PRIMARY KEY, n bigint, i4 integer, i2 smallint, f double precision, r real, s text,
		b boolean, d date, ts timestamptz, num numeric, j jsonb, by bytea`
	if e == store.SQLite {
		cols = `id integer PRIMARY KEY, n integer, i4 integer, i2 integer, f real, r real, s text,
			b integer, d text, ts timestamp, num numeric, j text, by blob`
	}
	if _, err := db.Exec(ctx, `CREATE TABLE `+db.Qualify("kinds")+` (`+cols+`)`); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 11, 24, 12, 30, 15, 123456000, time.UTC)
	rows := [][]any{
		{1, int64(1) << 40, 7, 3, 2.5, 1.25, "Amphora", true, "2026-11-24", ts, "12.50", `{"a":[1,2]}`, []byte{0, 1, 2}},
		{2, -5, -7, -3, -0.125, 0.5, "", false, "1999-01-31", ts.Add(-time.Hour), "-3", `[]`, []byte{}},
		{3, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
	}
	for _, r := range rows {
		if e == store.SQLite {
			if b, ok := r[7].(bool); ok {
				r[7] = map[bool]int{true: 1, false: 0}[b]
			}
		}
		if _, err := db.Exec(ctx, `INSERT INTO `+db.Qualify("kinds")+` VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, r...); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// TestPipelineScansAsDatabaseSQL: a pipeline's rows scan alike whether
// its queries run one by one (database/sql) or as one batch (pgx): into
// *any (the type and the value) and into typed destinations.
func TestPipelineScansAsDatabaseSQL(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		db := pipelineDB(t, e)
		read := func(ctx context.Context) (anys []string, typed []string, rounds int) {
			t.Helper()
			p := db.Pipeline()
			p.Query("kinds as any", `SELECT id, n, i4, i2, f, r, s, b, d, ts, num, j, by FROM `+db.Qualify("kinds")+` ORDER BY id`, nil, func(rows store.Rows) error {
				vals := make([]any, 13)
				ptrs := make([]any, 13)
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				for rows.Next() {
					if err := rows.Scan(ptrs...); err != nil {
						return err
					}
					anys = append(anys, fmt.Sprintf("%#v", vals))
				}
				return rows.Err()
			})
			p.Query("kinds typed", `SELECT id, n, i4, f, s, b, ts, s, n FROM `+db.Qualify("kinds")+` WHERE n IS NOT NULL ORDER BY id`, nil, func(rows store.Rows) error {
				for rows.Next() {
					var id, n int64
					var i4 int
					var f float64
					var s string
					var b bool
					var ts time.Time
					var ns sql.NullString
					var ni sql.NullInt64
					if err := rows.Scan(&id, &n, &i4, &f, &s, &b, &ts, &ns, &ni); err != nil {
						return err
					}
					typed = append(typed, fmt.Sprintf("%d %d %d %v %q %v %s %v %v", id, n, i4, f, s, b, ts.UTC().Format(time.RFC3339Nano), ns, ni))
				}
				return rows.Err()
			})
			p.Query("nullable pointers", `SELECT s, n FROM `+db.Qualify("kinds")+` ORDER BY id`, nil, func(rows store.Rows) error {
				for rows.Next() {
					var s *string
					var n *int64
					if err := rows.Scan(&s, &n); err != nil {
						return err
					}
					typed = append(typed, fmt.Sprintf("%v %v", s != nil, n != nil))
				}
				return rows.Err()
			})
			if err := p.Run(ctx); err != nil {
				t.Fatal(err)
			}
			return anys, typed, p.Rounds()
		}
		ctx := context.Background()
		a1, t1, r1 := read(ctx)
		a2, t2, r2 := read(store.WithoutPipelining(ctx))
		if r1 != 1 || r2 != 1 {
			t.Fatalf("rounds: %d and %d, want 1", r1, r2)
		}
		if strings.Join(a1, "\n") != strings.Join(a2, "\n") {
			t.Fatalf("*any values differ\npipelined:\n%s\none by one:\n%s", strings.Join(a1, "\n"), strings.Join(a2, "\n"))
		}
		if strings.Join(t1, "\n") != strings.Join(t2, "\n") || len(t1) != 5 {
			t.Fatalf("typed values differ\npipelined:\n%s\none by one:\n%s", strings.Join(t1, "\n"), strings.Join(t2, "\n"))
		}
		if got := db.Pipeline().Pipelined(ctx); got != (e == store.Postgres) {
			t.Fatalf("Pipelined on %s: %v", e, got)
		}
		if db.Pipeline().Pipelined(store.WithoutPipelining(ctx)) {
			t.Fatal("WithoutPipelining left the pipeline on")
		}
	})
}

// TestPipelineRoundsAndErrors: readers queue the next round; queries run
// in the order queued; the first error stops the run and names its query.
func TestPipelineRoundsAndErrors(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		db := pipelineDB(t, e)
		for _, ctx := range []context.Context{context.Background(), store.WithoutPipelining(context.Background())} {
			var order []string
			p := db.Pipeline()
			q := `SELECT s FROM ` + db.Qualify("kinds") + ` WHERE id = ?`
			var first string
			p.QueryRow("one", q, []any{1}, &first)
			p.Query("two", q, []any{2}, func(rows store.Rows) error {
				order = append(order, "two")
				p.Query("three", q, []any{1}, func(rows store.Rows) error {
					order = append(order, "three")
					p.Query("five", q, []any{2}, func(store.Rows) error { order = append(order, "five"); return nil })
					return nil
				})
				return nil
			})
			p.Query("four", q, []any{3}, func(rows store.Rows) error { order = append(order, "four"); return nil })
			if err := p.Run(ctx); err != nil {
				t.Fatal(err)
			}
			if first != "Amphora" || strings.Join(order, " ") != "two four three five" || p.Rounds() != 3 {
				t.Fatalf("first %q, order %v, rounds %d", first, order, p.Rounds())
			}

			// A reader's error, a failing query and a missing row stop the run.
			boom := errors.New("boom")
			p = db.Pipeline()
			ran := false
			p.Query("failing reader", q, []any{1}, func(store.Rows) error { return boom })
			p.Query("after", q, []any{1}, func(store.Rows) error { ran = true; return nil })
			if err := p.Run(ctx); !errors.Is(err, boom) || !strings.Contains(err.Error(), "failing reader") || ran {
				t.Fatalf("reader error: %v (later reader ran: %v)", err, ran)
			}
			p = db.Pipeline()
			p.Query("fine", q, []any{1}, func(store.Rows) error { return nil })
			p.Query("bad sql", `SELECT nope FROM `+db.Qualify("kinds"), nil, func(store.Rows) error { return nil })
			if err := p.Run(ctx); err == nil || !strings.Contains(err.Error(), "bad sql") {
				t.Fatalf("bad query: %v", err)
			}
			var none string
			p = db.Pipeline()
			p.QueryRow("no row", q, []any{99}, &none)
			if err := p.Run(ctx); !errors.Is(err, sql.ErrNoRows) {
				t.Fatalf("missing row: %v", err)
			}
			// The pool is usable afterwards (no connection left mid-batch).
			if err := db.QueryRow(ctx, q, 2).Scan(&none); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestPipelineInTransaction: a pipeline in a transaction runs on the
// transaction's connection (one batch a round on PostgreSQL, one by one on
// SQLite), and sees its uncommitted writes.
func TestPipelineInTransaction(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		db := pipelineDB(t, e)
		ctx := context.Background()
		err := db.Tx(ctx, func(tx *store.DB) error {
			if _, err := tx.Exec(ctx, `UPDATE `+tx.Qualify("kinds")+` SET s = ? WHERE id = 1`, "changed"); err != nil {
				return err
			}
			p := tx.Pipeline()
			if p.Pipelined(ctx) != (e == store.Postgres) {
				t.Errorf("pipelined in a transaction: %v", p.Pipelined(ctx))
			}
			var s string
			p.QueryRow("in tx", `SELECT s FROM `+tx.Qualify("kinds")+` WHERE id = 1`, nil, &s)
			if err := p.Run(ctx); err != nil {
				return err
			}
			if s != "changed" {
				t.Errorf("read %q in the transaction", s)
			}
			return errors.New("roll back")
		})
		if err == nil || err.Error() != "roll back" {
			t.Fatal(err)
		}
	})
}

// TestCustomPlans: PostgreSQL plans a pipeline's statements for their
// arguments every time under CustomPlans, in and out of a transaction,
// though a connection runs them more than five times (after which it
// would otherwise keep a generic plan, as the same statement without
// CustomPlans shows); the setting ends with the round (or the
// transaction) and is left on no connection.
func TestCustomPlans(t *testing.T) {
	testenv.RequireEngine(t, store.Postgres)
	db := pipelineDB(t, store.Postgres)
	ctx := context.Background()
	const runs = 8
	query := func(tag string) string {
		return `SELECT count(*) FROM ` + db.Qualify("kinds") + ` WHERE id > ? /* ` + tag + ` */`
	}
	run := func(on *store.DB, tag string, custom bool) error {
		p := on.Pipeline()
		if custom {
			p.CustomPlans()
		}
		var n int64
		p.QueryRow(tag, query(tag), []any{0}, &n)
		if err := p.Run(ctx); err != nil {
			return err
		}
		if n != 3 {
			return fmt.Errorf("%s: counted %d rows, want 3", tag, n)
		}
		return nil
	}
	for i := 0; i < runs; i++ {
		for _, tag := range []string{"generic", "custom"} {
			if err := run(db, tag, tag == "custom"); err != nil {
				t.Fatal(err)
			}
		}
		err := db.Tx(ctx, func(tx *store.DB) error { return run(tx, "custom in tx", true) })
		if err != nil {
			t.Fatal(err)
		}
	}

	type stat struct{ generic, custom, most int64 }
	stats := map[string]stat{}
	var held []*sql.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for len(held) < db.Pool().Stats().MaxOpenConnections {
		c, err := db.Pool().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		var mode string
		if err := c.QueryRowContext(ctx, `SHOW plan_cache_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != "auto" {
			t.Errorf("a connection of the pool was left with plan_cache_mode %s", mode)
		}
		rows, err := c.QueryContext(ctx, `SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			var g, cu int64
			if err := rows.Scan(&s, &g, &cu); err != nil {
				t.Fatal(err)
			}
			for _, tag := range []string{"generic", "custom", "custom in tx"} {
				if strings.HasSuffix(s, "/* "+tag+" */") {
					e := stats[tag]
					e.generic, e.custom, e.most = e.generic+g, e.custom+cu, max(e.most, g+cu)
					stats[tag] = e
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	if s := stats["generic"]; s.most <= 5 || s.generic == 0 {
		t.Errorf("without CustomPlans: %+v, want a generic plan after five runs on a connection (else this test shows nothing)", s)
	}
	for _, tag := range []string{"custom", "custom in tx"} {
		if s := stats[tag]; s.generic != 0 || s.custom != runs || s.most <= 5 {
			t.Errorf("%s: %+v, want %d custom plans, no generic one, more than 5 on one connection", tag, s, runs)
		}
	}
}
