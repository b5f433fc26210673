package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// withRateLimits turns on the limits of CONTRACT §10 (testenv turns them
// off, so that other tests may sign in as often as they like).
func withRateLimits(c *config.Config) { c.RateLimits = config.DefaultRateLimits }

// from sends a request from the client address addr and returns the
// status, the decoded body and the Retry-After header.
func from(t *testing.T, h http.Handler, addr, method, url, body string, headers map[string]string) (int, map[string]any, string) {
	t.Helper()
	req := httptest.NewRequest(method, url, strings.NewReader(body))
	req.RemoteAddr = addr + ":40000"
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, testenv.CheckEnvelope(t, rec), rec.Header().Get("Retry-After")
}

func loginBody(email, password string) string {
	b, _ := json.Marshal(map[string]string{"email": email, "password": password})
	return string(b)
}

func expectLimited(t *testing.T, what string, status int, body map[string]any, retry string) {
	t.Helper()
	if status != http.StatusTooManyRequests || body["code"] != "rate_limited" {
		t.Fatalf("%s: %d %v, want 429 rate_limited", what, status, body)
	}
	if retry == "" || retry == "0" {
		t.Errorf("%s: Retry-After %q", what, retry)
	}
}

func TestSignInRateLimits(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil, withRateLimits)
		h := env.inst.Server
		testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)
		testenv.NewUser(t, env.dig, "Bob", "bob@example.org", auth.Reader)
		login := "/dig/api/auth/login"

		// Per account: 10 a minute, whichever address they come from.
		for i := 0; i < 10; i++ {
			if status, body, _ := from(t, h, "198.51.100."+string(rune('1'+i%5)), "POST", login, loginBody("ann@example.org", testenv.Password), nil); status != 200 {
				t.Fatalf("sign-in %d of ann: %d %v", i+1, status, body)
			}
		}
		status, body, retry := from(t, h, "203.0.113.50", "POST", login, loginBody(" ANN@example.org", testenv.Password), nil)
		expectLimited(t, "11th sign-in of one account", status, body, retry)
		if status, body, _ := from(t, h, "203.0.113.50", "POST", login, loginBody("bob@example.org", testenv.Password), nil); status != 200 {
			t.Fatalf("another account from the same address: %d %v", status, body)
		}

		// Per address: 20 a minute, whatever the accounts (unknown ones too).
		const attacker = "192.0.2.66"
		for i := 0; i < 20; i++ {
			if status, body, _ := from(t, h, attacker, "POST", login, loginBody("ghost"+string(rune('a'+i))+"@example.org", "wrong-password"), nil); status != 401 {
				t.Fatalf("attempt %d: %d %v", i+1, status, body)
			}
		}
		status, body, retry = from(t, h, attacker, "POST", login, loginBody("bob@example.org", testenv.Password), nil)
		expectLimited(t, "21st attempt from one address", status, body, retry)
		if status, body, _ := from(t, h, "192.0.2.67", "POST", login, loginBody("bob@example.org", testenv.Password), nil); status != 200 {
			t.Fatalf("another address: %d %v", status, body)
		}
		// X-Forwarded-For does not change the address without a trusted proxy.
		status, body, retry = from(t, h, attacker, "POST", login, loginBody("bob@example.org", testenv.Password), map[string]string{"X-Forwarded-For": "198.18.0.1"})
		expectLimited(t, "a forged X-Forwarded-For", status, body, retry)

		env.clk.Advance(time.Minute)
		if status, body, _ := from(t, h, attacker, "POST", login, loginBody("ann@example.org", testenv.Password), nil); status != 200 {
			t.Fatalf("a minute later: %d %v", status, body)
		}

		// The lock of SPEC §3.1 stays: five failures lock the account.
		for i := 0; i < 5; i++ {
			from(t, h, "198.51.100.9", "POST", login, loginBody("bob@example.org", "wrong-password"), nil)
		}
		if status, body, _ := from(t, h, "198.51.100.10", "POST", login, loginBody("bob@example.org", testenv.Password), nil); status != 423 {
			t.Fatalf("after five failures: %d %v, want 423 account_locked", status, body)
		}
	})
}

// Behind a trusted proxy the client address is taken from X-Forwarded-For.
func TestSignInRateLimitBehindTrustedProxy(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil, withRateLimits, func(c *config.Config) { c.TrustedProxies = []string{"10.0.0.0/8"} })
		h := env.inst.Server
		for i := 0; i < 20; i++ {
			from(t, h, "10.0.0.1", "POST", "/dig/api/auth/login", loginBody("ghost@example.org"+string(rune('a'+i)), "x"), map[string]string{"X-Forwarded-For": "198.51.100.1"})
		}
		status, body, retry := from(t, h, "10.0.0.1", "POST", "/dig/api/auth/login", loginBody("admin@example.org", testenv.Password), map[string]string{"X-Forwarded-For": "198.51.100.1"})
		expectLimited(t, "the proxied client", status, body, retry)
		if status, body, _ := from(t, h, "10.0.0.1", "POST", "/dig/api/auth/login", loginBody("admin@example.org", testenv.Password), map[string]string{"X-Forwarded-For": "198.51.100.2"}); status != 200 {
			t.Fatalf("another client of the same proxy: %d %v", status, body)
		}
	})
}

func TestResetRateLimits(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil, withRateLimits)
		h := env.inst.Server
		testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)
		reset := "/dig/api/auth/password-reset/request"
		mailTo := `{"email":"ann@example.org"}`

		// At most 3 mails an hour to one address, whatever the client
		// addresses; beyond that the same success answer and no mail.
		var first map[string]any
		for i := 0; i < 5; i++ {
			env.mail.Clear()
			status, body, _ := from(t, h, "198.51.100."+string(rune('1'+i)), "POST", reset, mailTo, nil)
			if status != 200 {
				t.Fatalf("reset request %d: %d %v", i+1, status, body)
			}
			if first == nil {
				first = body
			} else if !jsonEqual(first, body) {
				t.Errorf("request %d answered %v, want %v", i+1, body, first)
			}
			want := 1
			if i >= 3 {
				want = 0
			}
			if n := len(env.mail.Received()); n != want {
				t.Errorf("request %d sent %d mails, want %d", i+1, n, want)
			}
		}
		env.clk.Advance(20 * time.Minute)
		env.mail.Clear()
		from(t, h, "198.51.100.20", "POST", reset, mailTo, nil)
		if n := len(env.mail.Received()); n != 1 {
			t.Errorf("20 minutes later: %d mails, want 1", n)
		}

		// 5 requests a minute per client address, known account or not:
		// the sixth is refused alike.
		const attacker = "192.0.2.66"
		for i := 0; i < 5; i++ {
			if status, body, _ := from(t, h, attacker, "POST", reset, `{"email":"ghost`+string(rune('a'+i))+`@example.org"}`, nil); status != 200 {
				t.Fatalf("request %d: %d %v", i+1, status, body)
			}
		}
		stKnown, known, retry := from(t, h, attacker, "POST", reset, mailTo, nil)
		expectLimited(t, "sixth reset request, known account", stKnown, known, retry)
		stUnknown, unknown, _ := from(t, h, attacker, "POST", reset, `{"email":"nobody@example.org"}`, nil)
		if stKnown != stUnknown || !jsonEqual(known, unknown) {
			t.Errorf("known %d %v, unknown %d %v", stKnown, known, stUnknown, unknown)
		}
	})
}

func TestAPIKeyFailureRateLimit(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil, withRateLimits)
		h := env.inst.Server
		admin := testenv.Login(t, h, "dig", "admin@example.org", testenv.Password)
		status, body, _ := from(t, h, "198.51.100.1", "POST", "/dig/api/api-keys", `{"label":"importer","privilege":20}`, map[string]string{"Authorization": admin})
		key, _ := body["key"].(string)
		if status != 200 || key == "" {
			t.Fatalf("create key: %d %v", status, body)
		}
		use := func(addr, cred string) (int, map[string]any, string) {
			return from(t, h, addr, "GET", "/dig/api/auth/refresh", "", map[string]string{"Authorization": "Bearer " + cred})
		}
		const attacker = "192.0.2.66"
		for i := 0; i < 30; i++ {
			if status, body, _ := use(attacker, "svc_guess"+strings.Repeat("x", i)); status != 401 {
				t.Fatalf("guess %d: %d %v", i+1, status, body)
			}
		}
		status, body, retry := use(attacker, "svc_guess-31")
		expectLimited(t, "31st failed key", status, body, retry)
		status, body, retry = use(attacker, key)
		expectLimited(t, "a valid key from the limited address", status, body, retry)
		// Successes do not count, and other addresses are not affected.
		for i := 0; i < 40; i++ {
			if status, body, _ := from(t, h, "198.51.100.1", "GET", "/dig/api/users", "", map[string]string{"Authorization": "Bearer " + key}); status >= 500 || status == 429 {
				t.Fatalf("valid key use %d: %d %v", i+1, status, body)
			}
		}
		env.clk.Advance(2 * time.Second)
		if status, _, _ := use(attacker, "svc_guess-again"); status != 401 {
			t.Fatalf("2 s later one more guess is allowed: %d", status)
		}
	})
}

// TestRegistrationAndOAuthStartRateLimits: self-registration (10 a minute)
// and OAuth starts (20 a minute) per client address, counted before any
// check; another address keeps its own budget.
func TestRegistrationAndOAuthStartRateLimits(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil, withRateLimits)
		env.openRegistration()
		h := env.inst.Server
		for _, tc := range []struct {
			name, method, url, body string
			limit                   int
		}{
			{"register", "POST", "/dig/api/auth/register", `{}`, 10},
			{"oauth register", "POST", "/dig/api/auth/oauth/register", `{}`, 0}, // shares the registration budget
			{"oauth start", "GET", "/dig/api/auth/oauth/idp_a/redirect", "", 20},
		} {
			const addr = "203.0.113.9"
			for i := 0; i < tc.limit; i++ {
				if status, body, _ := from(t, h, addr, tc.method, tc.url, tc.body, nil); status == http.StatusTooManyRequests {
					t.Fatalf("%s %d of %d: %v", tc.name, i+1, tc.limit, body)
				}
			}
			status, body, retry := from(t, h, addr, tc.method, tc.url, tc.body, nil)
			expectLimited(t, tc.name+" over the limit", status, body, retry)
			if tc.limit == 0 {
				continue // its answer below the limit is BraDypUS's HTTP 200 error
			}
			if status, body, _ := from(t, h, "203.0.113.10", tc.method, tc.url, tc.body, nil); status == http.StatusTooManyRequests {
				t.Fatalf("%s from another address: %v", tc.name, body)
			}
		}
		env.clk.Advance(time.Minute)
		if status, body, _ := from(t, h, "203.0.113.9", "POST", "/dig/api/auth/register", `{}`, nil); status == http.StatusTooManyRequests {
			t.Fatalf("a minute later: %v", body)
		}
	})
}
