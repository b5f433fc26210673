package bradypus_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// from sends a request as if from the client address addr.
func from(t *testing.T, h http.Handler, addr, method, url, body string) (int, map[string]any, string) {
	t.Helper()
	req := httptest.NewRequest(method, url, strings.NewReader(body))
	req.RemoteAddr = addr + ":40000"
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, testenv.CheckEnvelope(t, rec), rec.Header().Get("Retry-After")
}

// TestMajorUpgradeRateLimited: the major upgrade checks a super-admin's
// password, so its attempts are sign-ins: they draw on the sign-in
// limits of the caller's address (shared with POST /auth/login) and of
// the account, answered 429 rate_limited with Retry-After as sign-in's
// are, and five failures lock the account (423 account_locked, even for
// the right password) until the lock's time has passed.
func TestMajorUpgradeRateLimited(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		clk := &testClock{now: time.Now().UTC().Truncate(time.Second)}
		inst := testenv.NewInstanceWith(t, e, server.Deps{Now: clk.Now}, func(c *config.Config) { c.RateLimits = config.DefaultRateLimits })
		h := inst.Server
		testenv.NewApp(t, inst.Apps, "beta")
		makeFolder(t, filepath.Join(inst.Config.DataDir, "bradypus"), "dig", fixture{records: 2, noPlugins: true, noArchive: true})
		up := "/dig/api/upgrade/major"
		limited := func(what string, status int, body map[string]any, retry string) {
			t.Helper()
			if status != http.StatusTooManyRequests || body["code"] != "rate_limited" || retry == "" || retry == "0" {
				t.Fatalf("%s: %d %v (Retry-After %q), want 429 rate_limited as sign-in's limit answers", what, status, body, retry)
			}
		}

		// Per address: 20 attempts a minute, upgrade and sign-in together.
		const attacker = "192.0.2.66"
		for i := 0; i < 15; i++ {
			if status, body, _ := from(t, h, attacker, "POST", up, upgradeBody("guess"+string(rune('a'+i))+"@example.org", "wrong")); status != 401 || body["code"] != "superadmin_auth_failed" {
				t.Fatalf("guess %d: %d %v", i+1, status, body)
			}
		}
		for i := 0; i < 5; i++ {
			if status, body, _ := from(t, h, attacker, "POST", "/beta/api/auth/login", upgradeBody("nobody@example.org", "wrong")); status != 401 {
				t.Fatalf("sign-in %d: %d %v", i+1, status, body)
			}
		}
		status, body, retry := from(t, h, attacker, "POST", up, upgradeBody(superEmail, superPwd))
		limited("the 21st attempt from one address", status, body, retry)
		status, body, retry = from(t, h, attacker, "POST", "/beta/api/auth/login", upgradeBody("admin@example.org", testenv.Password))
		limited("a sign-in after 20 upgrade attempts and sign-ins", status, body, retry)

		// Per account: the lock after five failures, whatever the address;
		// then the account's 10 attempts a minute.
		for i := 0; i < 5; i++ {
			addr := "198.51.100." + string(rune('1'+i))
			if status, body, _ := from(t, h, addr, "POST", up, upgradeBody(superEmail, "wrong")); status != 401 {
				t.Fatalf("failure %d of the super-admin: %d %v", i+1, status, body)
			}
		}
		for i := 0; i < 5; i++ {
			addr := "203.0.113." + string(rune('1'+i))
			if status, body, _ := from(t, h, addr, "POST", up, upgradeBody(" BOSS@example.org", superPwd)); status != http.StatusLocked || body["code"] != "account_locked" {
				t.Fatalf("the right password after five failures (%d): %d %v, want 423 account_locked", i+1, status, body)
			}
		}
		status, body, retry = from(t, h, "203.0.113.9", "POST", up, upgradeBody(superEmail, superPwd))
		limited("the 11th attempt on one account", status, body, retry)
		if ok, _ := inst.Apps.Backend().Exists(t.Context(), "dig"); ok {
			t.Fatal("a refused attempt upgraded the folder")
		}

		// Once the lock's time has passed, the right password upgrades.
		clk.Advance(16 * time.Minute)
		if status, body, _ := from(t, h, "203.0.113.9", "POST", up, upgradeBody(superEmail, superPwd)); status != 200 || body["code"] != "upgrade_complete" {
			t.Fatalf("after the lock: %d %v", status, body)
		}
	})
}
