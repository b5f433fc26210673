package auth_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// fakeClock is a settable clock for the lock's fifteen minutes.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type lockEnv struct {
	t     *testing.T
	db    *store.DB
	clock *fakeClock
	authn *auth.Authenticator
}

func newLockEnv(t *testing.T, e store.Engine) *lockEnv {
	r := testenv.NewRegistry(t, e)
	a := testenv.NewApp(t, r, "locks")
	testenv.NewUser(t, a, "Ann", "ann@example.org", auth.Writer)
	testenv.NewUser(t, a, "Bob", "bob@example.org", auth.Writer)
	clock := &fakeClock{now: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	authn, err := auth.NewAuthenticator(4, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	return &lockEnv{t: t, db: a.DB, clock: clock, authn: authn}
}

func (l *lockEnv) login(email, pw string) string {
	l.t.Helper()
	_, err := l.authn.Login(context.Background(), l.db, email, pw)
	if err == nil {
		return "ok"
	}
	return errs.CodeOf(err)
}

// steps runs logins and checks each answer: "ok", or an error code.
func (l *lockEnv) steps(steps ...[3]string) {
	l.t.Helper()
	for i, s := range steps {
		if got := l.login(s[0], s[1]); got != s[2] {
			l.t.Fatalf("step %d: login(%s) = %s, want %s", i+1, s[0], got, s[2])
		}
	}
}

const good = testenv.Password

func fail(email string) [3]string   { return [3]string{email, "wrong-password", "login_data_not_valid"} }
func ok(email string) [3]string     { return [3]string{email, good, "ok"} }
func locked(email string) [3]string { return [3]string{email, good, "account_locked"} }

// TestLockStateMachine covers every row of SPEC §3.1.
func TestLockStateMachine(t *testing.T) {
	cases := []struct {
		name string
		run  func(l *lockEnv)
	}{
		{"open: failures below five only count", func(l *lockEnv) {
			l.steps(fail("ann@example.org"), fail("ann@example.org"), fail("ann@example.org"), fail("ann@example.org"), ok("ann@example.org"))
		}},
		{"open: the fifth consecutive failure locks", func(l *lockEnv) {
			for range 5 {
				l.steps(fail("ann@example.org"))
			}
			l.steps(locked("ann@example.org"))
		}},
		{"locked: the lock is checked before the password", func(l *lockEnv) {
			for range 5 {
				l.steps(fail("ann@example.org"))
			}
			l.clock.Advance(14*time.Minute + 59*time.Second)
			// The right password is refused, and a wrong one gets the same
			// answer: the password is not evaluated while locked.
			l.steps(locked("ann@example.org"), [3]string{"ann@example.org", "wrong", "account_locked"})
		}},
		{"locked: an expired lock is cleared and the attempt evaluated", func(l *lockEnv) {
			for range 5 {
				l.steps(fail("ann@example.org"))
			}
			l.clock.Advance(15 * time.Minute)
			l.steps(ok("ann@example.org"))
		}},
		{"locked: after expiry a failure starts a new count", func(l *lockEnv) {
			for range 5 {
				l.steps(fail("ann@example.org"))
			}
			l.clock.Advance(16 * time.Minute)
			for range 4 {
				l.steps(fail("ann@example.org"))
			}
			l.steps(ok("ann@example.org")) // four failures do not lock
		}},
		{"any: success resets the counter", func(l *lockEnv) {
			for range 4 {
				l.steps(fail("ann@example.org"))
			}
			l.steps(ok("ann@example.org"))
			for range 4 {
				l.steps(fail("ann@example.org"))
			}
			l.steps(ok("ann@example.org"))
		}},
		{"per email, not per client: another email is unaffected", func(l *lockEnv) {
			for range 5 {
				l.steps(fail("ann@example.org"))
			}
			l.steps(locked("ann@example.org"), ok("bob@example.org"))
		}},
		{"the email is matched case-insensitively", func(l *lockEnv) {
			for range 5 {
				l.steps(fail(" ANN@Example.org "))
			}
			l.steps(locked("ann@example.org"))
		}},
		{"unknown emails lock too, so the lock reveals no account", func(l *lockEnv) {
			for range 5 {
				l.steps(fail("nobody@example.org"))
			}
			l.steps([3]string{"nobody@example.org", good, "account_locked"})
		}},
		{"locked: a password reset clears the lock", func(l *lockEnv) {
			for range 5 {
				l.steps(fail("ann@example.org"))
			}
			if err := auth.ClearLock(context.Background(), l.db, "Ann@example.org"); err != nil {
				l.t.Fatal(err)
			}
			l.steps(ok("ann@example.org"))
		}},
		{"missing email or password", func(l *lockEnv) {
			l.steps([3]string{"", good, "email_password_needed"}, [3]string{"ann@example.org", "", "email_password_needed"})
		}},
	}
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				l := newLockEnv(t, e)
				c.run(l)
			})
		}
	})
}

func TestLockedAnswerSaysWhenToRetry(t *testing.T) {
	l := newLockEnv(t, store.SQLite)
	for range 5 {
		l.steps(fail("ann@example.org"))
	}
	l.clock.Advance(10 * time.Minute)
	_, err := l.authn.Login(context.Background(), l.db, "ann@example.org", good)
	e, isErr := errs.As(err)
	if !isErr || e.Code != "account_locked" || e.Extra["retry_after"] != 300 {
		t.Fatalf("err = %#v", err)
	}
}

// TestConcurrentFailuresLockExactlyOnce hammers one email from several
// goroutines; the counter must not lose updates on either engine.
func TestConcurrentFailuresLockExactlyOnce(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		l := newLockEnv(t, e)
		var wg sync.WaitGroup
		for range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = l.authn.Login(context.Background(), l.db, "ann@example.org", "wrong")
			}()
		}
		wg.Wait()
		l.steps(locked("ann@example.org"))
	})
}

func TestLegacyHashIsUpgradedOnFirstLogin(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		l := newLockEnv(t, e)
		ctx := context.Background()
		sum := sha1.Sum([]byte("old-scheme-pw"))
		legacy := hex.EncodeToString(sum[:])
		if _, err := l.db.Exec(ctx, `UPDATE `+l.db.Sys("users")+` SET password = ? WHERE email = ?`, legacy, "ann@example.org"); err != nil {
			t.Fatal(err)
		}
		l.steps([3]string{"ann@example.org", "not-the-old-pw", "login_data_not_valid"})
		l.steps([3]string{"ann@example.org", "old-scheme-pw", "ok"})
		u, err := auth.FindUserByEmail(ctx, l.db, "ann@example.org")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(u.Password, "$2") {
			t.Fatalf("hash not upgraded: %s", u.Password)
		}
		l.steps([3]string{"ann@example.org", "old-scheme-pw", "ok"}) // and still works as bcrypt
	})
}

// TestUnknownEmailDoesTheSameWork shows that a login for an unknown email,
// or for a legacy hash, spends exactly one bcrypt comparison, like a login
// for a known bcrypt account. Wall-clock timing is in BenchmarkLogin.
func TestUnknownEmailDoesTheSameWork(t *testing.T) {
	l := newLockEnv(t, store.SQLite)
	sum := sha1.Sum([]byte("legacy-pw"))
	if _, err := l.db.Exec(context.Background(), `UPDATE `+l.db.Sys("users")+` SET password = ? WHERE email = ?`, hex.EncodeToString(sum[:]), "bob@example.org"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ email, pw string }{
		{"ann@example.org", "wrong"}, {"ann@example.org", good}, {"nobody@example.org", "wrong"}, {"bob@example.org", "wrong"},
	} {
		before := auth.BcryptComparisons()
		l.login(c.email, c.pw)
		if n := auth.BcryptComparisons() - before; n != 1 {
			t.Errorf("login(%s, %s) made %d bcrypt comparisons, want 1", c.email, c.pw, n)
		}
	}
}

func TestPasswordRules(t *testing.T) {
	for pw, want := range map[string]error{
		"short": auth.ErrPasswordTooShort, "seven77": auth.ErrPasswordTooShort, "eight888": nil,
		"ñññññññ": auth.ErrPasswordTooShort, "ññññññññ": nil, strings.Repeat("x", 72): nil, strings.Repeat("x", 73): auth.ErrPasswordTooLong,
	} {
		if err := auth.CheckPasswordRules(pw); !errors.Is(err, want) && !(err == nil && want == nil) {
			t.Errorf("CheckPasswordRules(%q) = %v, want %v", pw, err, want)
		}
	}
}
