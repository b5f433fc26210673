package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/freesql"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// unlockFixture is the dig app on a server whose clock the test moves,
// with a second super_admin, boss2.
type unlockFixture struct {
	*digFixture
	clk   *clock
	boss2 string // bearer of the second super_admin
	id2   int64
}

func newUnlockFixture(t *testing.T, e store.Engine, opts ...func(*config.Config)) *unlockFixture {
	t.Helper()
	clk := &clock{now: time.Now().UTC()}
	f := &unlockFixture{digFixture: newDigDeps(t, e, server.Deps{Now: clk.Now}, opts...), clk: clk}
	f.id2 = testenv.NewUser(t, f.app, "Boss Two", "boss2@example.org", auth.SuperAdmin).ID
	f.boss2 = f.login(t, "boss2@example.org")
	return f
}

// login signs in again (a new session of the account), a second later so
// that the test's clock moves as a real one would.
func (f *unlockFixture) login(t *testing.T, email string) string {
	t.Helper()
	f.clk.Advance(time.Second)
	return testenv.Login(t, f.inst.Server, "dig", email, testenv.Password)
}

const unlockAPI = "/dig/api"

func (f *unlockFixture) verify(t *testing.T, who string) {
	t.Helper()
	if code, m := f.do(t, who, "POST", unlockAPI+"/free-sql/verify", fmt.Sprintf(`{"password":%q}`, testenv.Password)); code != 200 || m["code"] != "ok" {
		t.Fatalf("verify: %d %v", code, m)
	}
}

// run sends a statement without sql_token, as BraDypUS's client does.
func (f *unlockFixture) run(t *testing.T, who string) (int, map[string]any) {
	t.Helper()
	return f.do(t, who, "POST", unlockAPI+"/free-sql/run", `{"sql":"SELECT 1 AS one"}`)
}

func (f *unlockFixture) mustRun(t *testing.T, who, what string) {
	t.Helper()
	if code, m := f.run(t, who); code != 200 || fmt.Sprint(m["rows"]) != "[map[one:1]]" {
		t.Fatalf("%s: want the run allowed, got %d %v", what, code, m)
	}
}

func (f *unlockFixture) mustRefuse(t *testing.T, who, what string) {
	t.Helper()
	if code, m := f.run(t, who); code != 403 || m["code"] != "password_verification_required" {
		t.Fatalf("%s: want 403 password_verification_required, got %d %v", what, code, m)
	}
}

// TestFreeSQLSessionUnlock: BraDypUS's client verifies, then runs without
// a token. The verify unlocks that session (and only it) on the server for
// UnlockIdle after the last run, UnlockMax at most, on both engines.
func TestFreeSQLSessionUnlock(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newUnlockFixture(t, e)

		f.mustRefuse(t, f.super, "before any verify")
		if code, m := f.do(t, f.super, "POST", unlockAPI+"/free-sql/verify", `{"password":"wrong-password-1"}`); code != 401 || m["code"] != "login_data_not_valid" {
			t.Fatalf("wrong password: %d %v", code, m)
		}
		f.mustRefuse(t, f.super, "after a wrong password")

		f.verify(t, f.super)
		f.mustRun(t, f.super, "after verify, same session")
		if code, m := f.do(t, f.super, "POST", unlockAPI+"/free-sql/run", `{"sql":"INSERT INTO sites (name) VALUES ('Unlocked')"}`); code != 200 || m["code"] != "ok_free_sql_run" || m["affected"] != float64(1) {
			t.Fatalf("a write in the unlocked session: %d %v", code, m)
		}

		// Another session of the same account, another account: locked.
		f.mustRefuse(t, f.login(t, "admin@example.org"), "another session of the same user")
		f.mustRefuse(t, f.boss2, "another super_admin")

		// Each run extends the unlock by the idle window...
		for i := 0; i < 2; i++ {
			f.clk.Advance(freesql.UnlockIdle - time.Minute)
			f.mustRun(t, f.super, fmt.Sprintf("run %d, within the idle window", i))
		}
		// ...which, left idle, ends it.
		f.clk.Advance(freesql.UnlockIdle)
		f.mustRefuse(t, f.super, "after the idle window")

		// Kept busy, it still ends UnlockMax after the verify.
		f.verify(t, f.super)
		start := f.clk.Now()
		for f.clk.Now().Add(freesql.UnlockIdle - time.Minute).Before(start.Add(freesql.UnlockMax)) {
			f.clk.Advance(freesql.UnlockIdle - time.Minute)
			f.mustRun(t, f.super, "within the maximum")
		}
		f.clk.Advance(freesql.UnlockIdle - time.Minute)
		f.mustRefuse(t, f.super, "past the maximum, though busy")
	})
}

// TestFreeSQLSessionUnlockEnds: sign-out, revoke and a privilege change end
// the unlock; another session's sign-out does not end mine.
func TestFreeSQLSessionUnlockEnds(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newUnlockFixture(t, e)

		// Sign-out ends this session's unlock, not another's.
		other := f.login(t, "admin@example.org")
		f.verify(t, f.super)
		f.verify(t, other)
		if code, m := f.do(t, other, "GET", unlockAPI+"/auth/logout", ""); code != 200 {
			t.Fatalf("logout: %d %v", code, m)
		}
		f.mustRefuse(t, other, "after sign-out (the token itself is still valid)")
		f.mustRun(t, f.super, "another session after a sign-out")

		// Revoke: the old token is refused, and a new sign-in is locked.
		f.verify(t, f.boss2)
		f.mustRun(t, f.boss2, "boss2 unlocked")
		if code, m := f.do(t, f.super, "POST", fmt.Sprintf("%s/user/%d/revoke", unlockAPI, f.id2), ""); code != 200 {
			t.Fatalf("revoke: %d %v", code, m)
		}
		if code, m := f.run(t, f.boss2); code != 401 || m["code"] != "token_invalidated" {
			t.Fatalf("revoked token: %d %v", code, m)
		}
		f.boss2 = f.login(t, "boss2@example.org")
		f.mustRefuse(t, f.boss2, "a new session after revoke")

		// A privilege change (down and back up) likewise.
		f.verify(t, f.boss2)
		f.mustRun(t, f.boss2, "boss2 unlocked again")
		for _, level := range []int{auth.Admin, auth.SuperAdmin} {
			if code, m := f.do(t, f.super, "POST", unlockAPI+"/user", fmt.Sprintf(`{"id":%d,"privilege":%d}`, f.id2, level)); code != 200 {
				t.Fatalf("privilege %d: %d %v", level, code, m)
			}
		}
		if code, m := f.run(t, f.boss2); code != 401 || m["code"] != "token_invalidated" {
			t.Fatalf("token after a privilege change: %d %v", code, m)
		}
		f.mustRefuse(t, f.login(t, "boss2@example.org"), "a new session after a privilege change")
	})
}

// TestFreeSQLTokenStillWorks: sql_token keeps working as before, for
// clients that send it; when sent, it decides, unlock or not.
func TestFreeSQLTokenStillWorks(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newUnlockFixture(t, e)
		_, m := f.do(t, f.super, "POST", unlockAPI+"/free-sql/verify", fmt.Sprintf(`{"password":%q}`, testenv.Password))
		tok, _ := m["sql_token"].(string)
		if tok == "" || m["expires_in"] != float64(600) {
			t.Fatalf("verify: %v", m)
		}
		withToken := func(who, tok string) (int, map[string]any) {
			return f.do(t, who, "POST", unlockAPI+"/free-sql/run", fmt.Sprintf(`{"sql":"SELECT 2 AS two","sql_token":%q}`, tok))
		}
		// The token is the user's, as before: another session of theirs,
		// never unlocked, runs with it.
		if code, m := withToken(f.login(t, "admin@example.org"), tok); code != 200 || fmt.Sprint(m["rows"]) != "[map[two:2]]" {
			t.Fatalf("sql_token from another session: %d %v", code, m)
		}
		// Not another user's.
		if code, m := withToken(f.boss2, tok); code != 403 || m["code"] != "password_verification_required" {
			t.Fatalf("another user's sql_token: %d %v", code, m)
		}
		// A bad token is refused even in an unlocked session.
		if code, m := withToken(f.super, "1.0.99999999999.x"); code != 403 || m["code"] != "password_verification_required" {
			t.Fatalf("a bad sql_token in an unlocked session: %d %v", code, m)
		}
		// It lasts its 10 minutes, not the unlock's idle extension.
		f.clk.Advance(auth.LinkTTL + time.Second)
		if code, m := withToken(f.super, tok); code != 403 {
			t.Fatalf("expired sql_token: %d %v", code, m)
		}
	})
}

// TestFreeSQLUnlockRateLimited: wrong passwords are refused and slowed as
// before, and never unlock; an API key cannot unlock.
func TestFreeSQLUnlockRateLimited(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newUnlockFixture(t, e, func(c *config.Config) {
			c.RateLimits = config.RateLimits{SignInPerAccount: 3, SignInPerAddr: 100}
		})
		// The sign-in was the account's first attempt of the minute.
		for i, want := range []int{401, 401, 429} {
			code, m := f.do(t, f.super, "POST", unlockAPI+"/free-sql/verify", `{"password":"wrong-password-1"}`)
			if code != want {
				t.Fatalf("wrong password %d: %d %v", i, code, m)
			}
			f.mustRefuse(t, f.super, "after a wrong password")
		}
		// Limited, the right password is not even looked at.
		if code, m := f.do(t, f.super, "POST", unlockAPI+"/free-sql/verify", fmt.Sprintf(`{"password":%q}`, testenv.Password)); code != 429 || m["code"] != "rate_limited" {
			t.Fatalf("right password while limited: %d %v", code, m)
		}
		f.mustRefuse(t, f.super, "while limited")
		f.clk.Advance(time.Minute)
		f.verify(t, f.super)
		f.mustRun(t, f.super, "once the limit allows")

		// An API key reaches neither route (super_admin only; keys stop at admin).
		key := testenv.NewAPIKey(t, f.app, auth.Admin)
		if code, m := f.run(t, key); code != 403 || m["code"] != "not_enough_privilege" {
			t.Fatalf("api key: %d %v", code, m)
		}
	})
}

// TestFreeSQLUnlockAcrossNodes: on PostgreSQL, two servers share one
// database: a verify on one unlocks the runs the other answers, and a
// sign-out on either ends it on both. (SQLite serves one node.)
func TestFreeSQLUnlockAcrossNodes(t *testing.T) {
	testenv.RequireEngine(t, store.Postgres)
	f := newUnlockFixture(t, store.Postgres)
	nodeB := testenv.NewInstanceWith(t, store.Postgres, server.Deps{Apps: f.inst.Apps, Now: f.clk.Now})
	onB := func(who string) (int, map[string]any) {
		return testenv.Do(t, nodeB.Server, "POST", unlockAPI+"/free-sql/run", `{"sql":"SELECT 1 AS one"}`, testenv.Bearer(who))
	}
	if code, m := onB(f.super); code != 403 {
		t.Fatalf("node B before verify: %d %v", code, m)
	}
	f.verify(t, f.super)
	if code, m := onB(f.super); code != 200 || fmt.Sprint(m["rows"]) != "[map[one:1]]" {
		t.Fatalf("node B after a verify on node A: %d %v", code, m)
	}
	// Node B's run extended the unlock for node A too.
	f.clk.Advance(freesql.UnlockIdle - time.Minute)
	f.mustRun(t, f.super, "node A after node B's run")
	if code, m := testenv.Do(t, nodeB.Server, "GET", unlockAPI+"/auth/logout", "", testenv.Bearer(f.super)); code != 200 {
		t.Fatalf("logout on node B: %d %v", code, m)
	}
	f.mustRefuse(t, f.super, "node A after a sign-out on node B")
}
