package freesql_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/freesql"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestUnlocks: the store of session unlocks, on each engine's (memory on
// SQLite, the service schema's table on PostgreSQL): an unlock answers
// only the session token, user and token version it was made for, within
// its idle window and maximum, until ended; ended ones are purged. Also
// as a PostgreSQL owner that is no superuser.
func TestUnlocks(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		b := testenv.NewBackend(t, e)
		u := freesql.UnlocksFor(b)
		// Before any verify (no table yet on PostgreSQL): nothing is unlocked.
		if ok, err := u.Use(ctx, freesql.Session{App: "dig", Token: "tok-a", UserID: 1, TokenVersion: 3}, time.Now()); ok || err != nil {
			t.Fatalf("before any grant: %v %v", ok, err)
		}
		if err := u.End(ctx, "dig", "tok-a"); err != nil {
			t.Fatalf("end before any grant: %v", err)
		}
		t0 := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
		mine := freesql.Session{App: "dig", Token: "tok-a", UserID: 1, TokenVersion: 3}
		if err := u.Grant(ctx, mine, t0); err != nil {
			t.Fatal(err)
		}
		other := func(f func(*freesql.Session)) freesql.Session { s := mine; f(&s); return s }
		for _, tc := range []struct {
			name string
			s    freesql.Session
			ok   bool
		}{
			{"another session token", other(func(s *freesql.Session) { s.Token = "tok-b" }), false},
			{"the same token for another app", other(func(s *freesql.Session) { s.App = "other" }), false},
			{"another user", other(func(s *freesql.Session) { s.UserID = 2 }), false},
			{"a newer token version (revoked)", other(func(s *freesql.Session) { s.TokenVersion = 4 }), false},
			{"the session itself", mine, true},
		} {
			ok, err := u.Use(ctx, tc.s, t0.Add(time.Minute))
			if err != nil || ok != tc.ok {
				t.Fatalf("%s: %v %v", tc.name, ok, err)
			}
		}
		// Used at +1 min, it lasts to +11 min.
		if ok, _ := u.Use(ctx, mine, t0.Add(time.Minute+freesql.UnlockIdle-time.Second)); !ok {
			t.Fatal("refused within the idle window")
		}
		if ok, _ := u.Use(ctx, mine, t0.Add(2*time.Minute+2*freesql.UnlockIdle)); ok {
			t.Fatal("allowed after the idle window")
		}
		// End drops it at once.
		if err := u.Grant(ctx, mine, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := u.End(ctx, "dig", "tok-a"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := u.Use(ctx, mine, t0.Add(time.Hour+time.Second)); ok {
			t.Fatal("allowed after End")
		}
		// Expired rows are purged by a later grant (PostgreSQL: count them).
		if pg, isPG := b.(*store.PostgresBackend); isPG {
			stale := freesql.Session{App: "dig", Token: "tok-stale", UserID: 1, TokenVersion: 3}
			if err := u.Grant(ctx, stale, t0.Add(2*time.Hour)); err != nil {
				t.Fatal(err)
			}
			if err := u.Grant(ctx, mine, t0.Add(4*time.Hour)); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := pg.Pool().QueryRowContext(ctx, `SELECT count(*) FROM "`+pg.ServiceSchema("freesql")+`".unlocks`).Scan(&n); err != nil && err != sql.ErrNoRows {
				t.Fatal(err)
			}
			if n != 1 {
				t.Fatalf("rows after the sweep: %d, want 1", n)
			}
		}
	})
}
