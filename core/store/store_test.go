package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestValidIdent(t *testing.T) {
	cases := map[string]bool{
		"finds": true, "a": true, "sys_users": true, "t2_x": true,
		"": false, "Finds": false, "2x": false, "a-b": false, "a b": false,
		`a"b`: false, "../x": false, "é": false, strings.Repeat("a", 63): true, strings.Repeat("a", 64): false,
		"_a": false, "a_": true, "a\n": false, "a\x00": false, "aé": false, "a{": false, "a`": false, "a/": false, "a:": false,
		"z9": true, "a@": false, "a[": false,
	}
	// The rule as a regular expression: the hand-written check must agree
	// with it on every case and on every single byte after a letter.
	rule := regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)
	for c := 0; c < 256; c++ {
		cases["a"+string([]byte{byte(c)})] = rule.MatchString("a" + string([]byte{byte(c)}))
		cases[string([]byte{byte(c)})] = rule.MatchString(string([]byte{byte(c)}))
	}
	for in, want := range cases {
		if got := store.ValidIdent(in); got != want || rule.MatchString(in) != want {
			t.Errorf("ValidIdent(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestQuoteRefusesInvalidIdentifiers(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("quoting an invalid identifier must panic")
		}
	}()
	store.SQLite.Quote(`x"; DROP TABLE sys_users; --`)
}

func TestRebind(t *testing.T) {
	q := "SELECT a FROM t WHERE b = ? AND c IN (?, ?)"
	if got := store.SQLite.Rebind(q); got != q {
		t.Errorf("sqlite rebind changed the query: %s", got)
	}
	for in, want := range map[string]string{
		q:          "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)",
		"SELECT 1": "SELECT 1",
		"?":        "$1",
		"??, ?":    "$1$2, $3",
		"x IN (" + strings.Repeat("?, ", 11) + "?) AND y = ?": "x IN ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) AND y = $13",
		"é ? ü": "é $1 ü",
	} {
		if got := store.Postgres.Rebind(in); got != want {
			t.Errorf("postgres rebind %q = %s, want %s", in, got, want)
		}
	}
}

func TestMigrationStepsMatchAcrossEngines(t *testing.T) {
	lite, err := store.LoadMigrations(store.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := store.LoadMigrations(store.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if len(lite) == 0 || len(lite) != len(pg) {
		t.Fatalf("engines have %d and %d migration steps", len(lite), len(pg))
	}
	for i := range lite {
		if lite[i].ID != pg[i].ID || lite[i].Name != pg[i].Name {
			t.Errorf("step %d: sqlite %04d_%s, postgres %04d_%s", i, lite[i].ID, lite[i].Name, pg[i].ID, pg[i].Name)
		}
	}
}

// columnsOf lists "table.column" for every system table of the app.
func columnsOf(t *testing.T, db *store.DB) []string {
	t.Helper()
	ctx := context.Background()
	var q string
	var args []any
	if db.Engine == store.SQLite {
		q = `SELECT m.name || '.' || p.name FROM sqlite_master m, pragma_table_info(m.name) p
		     WHERE m.type = 'table' AND m.name LIKE 'sys\_%' ESCAPE '\'`
	} else {
		q = `SELECT table_name || '.' || column_name FROM information_schema.columns WHERE table_schema = ?`
		args = []any{db.Schema()}
	}
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func createMigrated(t *testing.T, b store.Backend, name string) *store.DB {
	t.Helper()
	ctx := context.Background()
	err := b.Create(ctx, name, func(ctx context.Context, db *store.DB) error {
		_, err := db.Migrate(ctx, time.Now)
		return err
	})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	db, err := b.Open(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestMigrationsProduceSameTablesOnBothEngines(t *testing.T) {
	testenv.RequireEngine(t, store.Postgres)
	lite := createMigrated(t, testenv.NewBackend(t, store.SQLite), "parity")
	pg := createMigrated(t, testenv.NewBackend(t, store.Postgres), "parity")
	a, b := columnsOf(t, lite), columnsOf(t, pg)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("system tables differ\nsqlite:\n%s\npostgres:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if len(a) < 10 {
		t.Fatalf("suspiciously few columns: %v", a)
	}
}

func TestMigrateRecordsStepsAndIsIdempotent(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := createMigrated(t, testenv.NewBackend(t, e), "mig")
		all, _ := store.LoadMigrations(e)
		applied, err := db.AppliedMigrations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(applied) != len(all) {
			t.Fatalf("applied %d of %d steps", len(applied), len(all))
		}
		if applied[0].AppliedAt.IsZero() {
			t.Error("applied_at not recorded")
		}
		// Run again from several goroutines: nothing more applies, no error.
		var wg sync.WaitGroup
		errc := make(chan error, 4)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ran, err := db.Migrate(ctx, time.Now)
				if err == nil && len(ran) > 0 {
					err = errors.New("a recorded step ran again")
				}
				errc <- err
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			if err != nil {
				t.Fatal(err)
			}
		}
		var v string
		if err := db.QueryRow(ctx, `SELECT value FROM `+db.Sys("settings")+` WHERE key = 'schema_version'`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if want := all[len(all)-1].ID; v != strconv.Itoa(want) {
			t.Errorf("schema_version = %s, want %d", v, want)
		}
	})
}

func TestFailedCreateLeavesNothing(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		b := testenv.NewBackend(t, e)
		boom := errors.New("boom")
		err := b.Create(ctx, "half", func(ctx context.Context, db *store.DB) error {
			if _, err := db.Migrate(ctx, time.Now); err != nil {
				return err
			}
			if _, err := db.Exec(ctx, `INSERT INTO `+db.Sys("settings")+` (key, value) VALUES ('x', 'y')`); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Create error = %v, want boom", err)
		}
		assertNoTrace(t, b, "half")
		// The name is free again.
		createMigrated(t, b, "half")
	})
}

func TestCreateTwiceConflicts(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		b := testenv.NewBackend(t, e)
		createMigrated(t, b, "twice")
		err := b.Create(context.Background(), "twice", func(context.Context, *store.DB) error { return nil })
		if !errors.Is(err, store.ErrAppExists) {
			t.Fatalf("second create: %v, want app_exists", err)
		}
	})
}

// assertNoTrace checks that storage holds nothing of the app: no folder or
// file on SQLite, no registry row or schema on PostgreSQL.
func assertNoTrace(t *testing.T, b store.Backend, name string) {
	t.Helper()
	ctx := context.Background()
	if ok, err := b.Exists(ctx, name); err != nil || ok {
		t.Fatalf("app %s exists=%v err=%v after failed create", name, ok, err)
	}
	names, err := b.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n == name {
			t.Fatalf("app %s listed after failed create", name)
		}
	}
	switch b := b.(type) {
	case *store.SQLiteBackend:
		entries, err := os.ReadDir(filepath.Dir(b.AppDir(name)))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.Contains(e.Name(), name) {
				t.Fatalf("left on disk: %s", e.Name())
			}
		}
	case *store.PostgresBackend:
		var n int
		err := b.Pool().QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_namespace WHERE nspname = $1`, b.SchemaFor(name)).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("schema %s left in PostgreSQL", b.SchemaFor(name))
		}
	}
}

func TestLongAppNamesGetDistinctSchemas(t *testing.T) {
	testenv.RequireEngine(t, store.Postgres)
	b := testenv.NewBackend(t, store.Postgres).(*store.PostgresBackend)
	long1 := strings.Repeat("a", 62) + "b"
	long2 := strings.Repeat("a", 62) + "c"
	s1, s2 := b.SchemaFor(long1), b.SchemaFor(long2)
	if s1 == s2 || len(s1) > 63 || len(s2) > 63 || !store.ValidIdent(s1) {
		t.Fatalf("schemas %q and %q", s1, s2)
	}
	createMigrated(t, b, long1)
	createMigrated(t, b, long2)
}

// TestConcurrentReadThenWriteTransactions: transactions that read and then
// write must queue, not fail with "database is locked" (SQLite) and not lose
// updates (both engines).
func TestConcurrentReadThenWriteTransactions(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := createMigrated(t, testenv.NewBackend(t, e), "counter")
		if _, err := db.Exec(ctx, `INSERT INTO `+db.Sys("settings")+` (key, value) VALUES ('n', '0')`); err != nil {
			t.Fatal(err)
		}
		const workers, rounds = 4, 10
		var wg sync.WaitGroup
		errc := make(chan error, workers*rounds)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					errc <- db.Tx(ctx, func(tx *store.DB) error {
						var v string
						q := `SELECT value FROM ` + tx.Sys("settings") + ` WHERE key = 'n'`
						if e == store.Postgres {
							q += ` FOR UPDATE`
						}
						if err := tx.QueryRow(ctx, q).Scan(&v); err != nil {
							return err
						}
						n, _ := strconv.Atoi(v)
						_, err := tx.Exec(ctx, `UPDATE `+tx.Sys("settings")+` SET value = ? WHERE key = 'n'`, strconv.Itoa(n+1))
						return err
					})
				}
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			if err != nil {
				t.Fatal(err)
			}
		}
		var v string
		if err := db.QueryRow(ctx, `SELECT value FROM `+db.Sys("settings")+` WHERE key = 'n'`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v != strconv.Itoa(workers*rounds) {
			t.Fatalf("counter = %s, want %d: updates were lost", v, workers*rounds)
		}
	})
}

// TestTxRollsBackOnErrorAndPanic: nothing of a failed transaction stays.
func TestTxRollsBackOnErrorAndPanic(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := createMigrated(t, testenv.NewBackend(t, e), "rollback")
		insert := func(tx *store.DB, k string) {
			if _, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("settings")+` (key, value) VALUES (?, 'x')`, k); err != nil {
				t.Fatal(err)
			}
			var s setting
			if err := tx.Gorm.Where("key = ?", k).Take(&s).Error; err != nil {
				t.Fatalf("gorm does not see the raw write of its own transaction: %v", err)
			}
		}
		boom := errors.New("boom")
		err := db.Tx(ctx, func(tx *store.DB) error {
			insert(tx, "by_error")
			return tx.Tx(ctx, func(inner *store.DB) error { insert(inner, "nested"); return boom })
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Tx error %v", err)
		}
		func() {
			defer func() { _ = recover() }()
			_ = db.Tx(ctx, func(tx *store.DB) error { insert(tx, "by_panic"); panic("boom") })
		}()
		var n int
		if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Sys("settings")+` WHERE key IN ('by_error', 'nested', 'by_panic')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("%d rows of rolled-back transactions remain", n)
		}
		// The pool is still usable: no connection was left inside a transaction.
		for range 10 {
			if err := db.Tx(ctx, func(tx *store.DB) error { _, err := tx.Exec(ctx, `SELECT 1`); return err }); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// setting maps to sys_settings through the store's naming strategy.
type setting struct{ Key, Value string }
