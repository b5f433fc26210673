package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/mail"
	"github.com/strata-archaeo/strata/core/mail/mailtest"
	"github.com/strata-archaeo/strata/core/oauth"
	"github.com/strata-archaeo/strata/core/oauth/oauthtest"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// clientOrigin is the front end's origin in these tests, allowed through
// the app's oauth_allowed_origins; the service itself answers as
// http://example.com (httptest's default host).
const (
	clientOrigin = "https://client.example.org"
	ownOrigin    = "http://example.com"
)

// lockedBuffer is the test kit's goroutine-safe buffer.
type lockedBuffer = testenv.SyncBuffer

type oauthEnv struct {
	t     *testing.T
	inst  *testenv.Instance
	dig   *apps.App
	other *apps.App
	idpA  *oauthtest.Provider
	idpB  *oauthtest.Provider
	clk   *clock
	logs  *lockedBuffer
}

func newOAuthEnv(t *testing.T, e store.Engine, opts ...func(*config.Config)) *oauthEnv {
	t.Helper()
	return newOAuthEnvWithMail(t, e, nil, opts...)
}

// newOAuthEnvWithMail is newOAuthEnv with a mail client (nil: mail is not
// configured, since the fakes' environment has no mail variables).
func newOAuthEnvWithMail(t *testing.T, e store.Engine, mailer *mail.Client, opts ...func(*config.Config)) *oauthEnv {
	t.Helper()
	env := &oauthEnv{t: t, idpA: oauthtest.NewIdpA(t), idpB: oauthtest.NewIdpB(t),
		clk: &clock{now: time.Now().UTC()}, logs: &lockedBuffer{}}
	env.inst = testenv.NewInstanceWith(t, e, server.Deps{
		Now:    env.clk.Now,
		Getenv: oauthtest.Getenv(env.idpA, env.idpB),
		Mailer: mailer,
		Logger: slog.New(slog.NewTextHandler(env.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}, opts...)
	env.dig = testenv.NewApp(t, env.inst.Apps, "dig")
	env.other = testenv.NewApp(t, env.inst.Apps, "other")
	for _, a := range []*apps.App{env.dig, env.other} {
		env.configure(a, env.idpA, env.idpA.ClientSecret)
		env.configure(a, env.idpB, env.idpB.ClientSecret)
		env.setOrigins(a, clientOrigin)
	}
	return env
}

// configure sets an app's credentials for a fake provider ("" clears the
// secret, which unconfigures the provider).
func (env *oauthEnv) configure(a *apps.App, p *oauthtest.Provider, secret string) {
	env.t.Helper()
	err := a.SetSettings(context.Background(), map[string]string{
		apps.OAuthClientIDKey(p.Name): p.ClientID, apps.OAuthClientSecretKey(p.Name): secret})
	if err != nil {
		env.t.Fatal(err)
	}
}

func (env *oauthEnv) setOrigins(a *apps.App, origins ...string) {
	env.t.Helper()
	raw, _ := json.Marshal(origins)
	if err := a.SetSettings(context.Background(), map[string]string{apps.SettingOAuthAllowedOrigins: string(raw)}); err != nil {
		env.t.Fatal(err)
	}
}

func (env *oauthEnv) send(req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	env.inst.Server.ServeHTTP(rec, req)
	return rec
}

// redirect calls the redirect endpoint; mutate adjusts the request.
func (env *oauthEnv) redirect(app, provider, origin string, mutate func(*http.Request)) (int, map[string]any) {
	env.t.Helper()
	req := httptest.NewRequest("GET", "/"+app+"/api/auth/oauth/"+provider+"/redirect?origin="+url.QueryEscape(origin), nil)
	if mutate != nil {
		mutate(req)
	}
	rec := env.send(req)
	return rec.Code, testenv.CheckEnvelope(env.t, rec)
}

// state starts a flow and returns the state of its authorization URL.
func (env *oauthEnv) state(app, provider, origin string, mutate func(*http.Request)) string {
	env.t.Helper()
	code, body := env.redirect(app, provider, origin, mutate)
	if code != 200 {
		env.t.Fatalf("redirect %s %s: %d %v", app, provider, code, body)
	}
	u, err := url.Parse(body["url"].(string))
	if err != nil {
		env.t.Fatal(err)
	}
	return u.Query().Get("state")
}

// callback calls the callback endpoint with raw query parameters and
// returns the parsed Location of its redirect.
func (env *oauthEnv) callback(app, provider string, params url.Values, mutate func(*http.Request)) *url.URL {
	env.t.Helper()
	req := httptest.NewRequest("GET", "/"+app+"/api/auth/oauth/"+provider+"/callback?"+params.Encode(), nil)
	if mutate != nil {
		mutate(req)
	}
	rec := env.send(req)
	if rec.Code != http.StatusFound && rec.Code != http.StatusSeeOther {
		env.t.Fatalf("callback: status %d, want a redirect; body %s", rec.Code, rec.Body.String())
	}
	if rec.Header().Get("Cache-Control") != "no-store" || rec.Header().Get("Referrer-Policy") != "no-referrer" {
		env.t.Errorf("callback redirect headers: %v", rec.Header())
	}
	loc, err := url.Parse(rec.Header().Get("Location"))
	if err != nil || loc.Path == "" {
		env.t.Fatalf("bad Location %q", rec.Header().Get("Location"))
	}
	return loc
}

// login runs a whole flow for who at provider and returns the redirect.
func (env *oauthEnv) login(provider string, who oauthtest.Identity) *url.URL {
	env.t.Helper()
	fake := env.idpA
	if provider == oauth.ProviderB {
		fake = env.idpB
	}
	st := env.state("dig", provider, clientOrigin, nil)
	return env.callback("dig", provider, url.Values{"code": {fake.Grant(who)}, "state": {st}}, nil)
}

// post sends a JSON body to link or register; both always answer 200.
func (env *oauthEnv) post(path string, body any) map[string]any {
	env.t.Helper()
	raw, _ := json.Marshal(body)
	req := httptest.NewRequest("POST", "/dig/api/auth/oauth/"+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	rec := env.send(req)
	var m map[string]any
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &m) != nil {
		env.t.Fatalf("POST %s: %d %s; want HTTP 200 with JSON", path, rec.Code, rec.Body.String())
	}
	return m
}

// expectRedirect checks where a callback sent the browser.
func expectRedirect(t *testing.T, loc *url.URL, origin string, want map[string]string) {
	t.Helper()
	if got := loc.Scheme + "://" + loc.Host; got != origin || loc.Path != "/oauth-callback" {
		t.Errorf("redirect to %s, want %s/oauth-callback", loc, origin)
	}
	q := loc.Query()
	for k, v := range want {
		if v == "*" {
			if q.Get(k) == "" {
				t.Errorf("redirect %s lacks %s", loc, k)
			}
		} else if q.Get(k) != v {
			t.Errorf("redirect %s: %s = %q, want %q", loc, k, q.Get(k), v)
		}
	}
	for k := range q {
		if _, ok := want[k]; !ok {
			t.Errorf("redirect %s carries unexpected %s", loc, k)
		}
	}
}

// whoAmI uses a session token and returns the signed-in email.
func (env *oauthEnv) whoAmI(token string) string {
	env.t.Helper()
	code, body := testenv.Do(env.t, env.inst.Server, "GET", "/dig/api/auth/refresh", "", testenv.Bearer("Bearer "+token))
	if code != 200 {
		env.t.Fatalf("token does not work: %d %v", code, body)
	}
	return body["user"].(map[string]any)["email"].(string)
}

func storedIdentity(t *testing.T, a *apps.App, id int64) string {
	t.Helper()
	u, err := auth.FindUser(context.Background(), a.DB, id)
	if err != nil {
		t.Fatal(err)
	}
	if u.OAuthProvider == nil || u.OAuthSub == nil {
		return ""
	}
	return *u.OAuthProvider + "/" + *u.OAuthSub
}

func TestOAuthRedirectEndpoint(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newOAuthEnv(t, e)
		for _, tc := range []struct{ provider, scope, auth string }{
			{oauth.ProviderA, "openid email profile", env.idpA.Server.URL + "/authorize"},
			{oauth.ProviderB, "/authenticate", env.idpB.Server.URL + "/authorize"},
		} {
			code, body := env.redirect("dig", tc.provider, clientOrigin, nil)
			if code != 200 {
				t.Fatalf("%s: %d %v", tc.provider, code, body)
			}
			u, _ := url.Parse(body["url"].(string))
			q := u.Query()
			if base := u.Scheme + "://" + u.Host + u.Path; base != tc.auth {
				t.Errorf("%s: authorization endpoint %s, want %s", tc.provider, base, tc.auth)
			}
			cid := env.idpA.ClientID
			if tc.provider == oauth.ProviderB {
				cid = env.idpB.ClientID
			}
			for k, v := range map[string]string{"client_id": cid, "scope": tc.scope, "response_type": "code",
				"redirect_uri": "http://example.com/dig/api/auth/oauth/" + tc.provider + "/callback"} {
				if q.Get(k) != v {
					t.Errorf("%s: %s = %q, want %q", tc.provider, k, q.Get(k), v)
				}
			}
			if q.Get("state") == "" || strings.Contains(u.String(), "secret") {
				t.Errorf("%s: url %s", tc.provider, u)
			}
		}

		// X-Forwarded-Proto: its first token is the scheme of the redirect address.
		_, body := env.redirect("dig", oauth.ProviderA, clientOrigin, func(r *http.Request) { r.Header.Set("X-Forwarded-Proto", "https, http") })
		u, _ := url.Parse(body["url"].(string))
		if got := u.Query().Get("redirect_uri"); got != "https://example.com/dig/api/auth/oauth/idp_a/callback" {
			t.Errorf("X-Forwarded-Proto not honoured: %s", got)
		}
		// The request's own scheme+host is an allowed origin, with the same scheme rule.
		if code, body := env.redirect("dig", oauth.ProviderA, "https://example.com", func(r *http.Request) { r.Header.Set("X-Forwarded-Proto", "https") }); code != 200 {
			t.Errorf("own origin refused: %d %v", code, body)
		}

		for _, tc := range []struct {
			name, app, provider, origin string
			status                      int
			code                        string
		}{
			{"disallowed origin", "dig", oauth.ProviderA, "https://evil.example", 400, "invalid_origin"},
			{"origin with a look-alike suffix", "dig", oauth.ProviderA, clientOrigin + ".evil.example", 400, "invalid_origin"},
			{"origin with user info", "dig", oauth.ProviderA, "https://client.example.org@evil.example", 400, "invalid_origin"},
			{"missing origin", "dig", oauth.ProviderA, "", 400, "invalid_origin"},
			{"another scheme of the own host", "dig", oauth.ProviderA, "https://example.com", 400, "invalid_origin"},
			{"unknown provider", "dig", "idp_z", clientOrigin, 404, "unknown_provider"},
			{"unknown app", "nowhere", oauth.ProviderA, clientOrigin, 404, "app_not_found"},
		} {
			if code, body := env.redirect(tc.app, tc.provider, tc.origin, nil); code != tc.status || body["code"] != tc.code {
				t.Errorf("%s: %d %v, want %d %s", tc.name, code, body, tc.status, tc.code)
			}
		}

		// Not configured: a missing secret (or id) is 503, and the provider is
		// not offered in the app list.
		env.configure(env.dig, env.idpB, "")
		if code, body := env.redirect("dig", oauth.ProviderB, clientOrigin, nil); code != 503 || body["code"] != "provider_not_configured" {
			t.Errorf("not configured: %d %v", code, body)
		}
		_, list := testenv.Do(t, env.inst.Server, "GET", "/api/auth/apps", "", nil)
		for _, raw := range list["apps"].([]any) {
			if app := raw.(map[string]any); app["name"] == "dig" {
				if got, _ := json.Marshal(app["oauth"]); string(got) != `["idp_a"]` {
					t.Errorf("dig offers %s, want only idp_a", got)
				}
			}
		}
	})
}

func TestOAuthRedirectUsesPublicURL(t *testing.T) {
	env := newOAuthEnv(t, store.SQLite, func(c *config.Config) { c.PublicURL = "https://records.example.org" })
	_, body := env.redirect("dig", oauth.ProviderA, "https://records.example.org", func(r *http.Request) { r.Header.Set("X-Forwarded-Proto", "http") })
	u, _ := url.Parse(body["url"].(string))
	if got := u.Query().Get("redirect_uri"); got != "https://records.example.org/dig/api/auth/oauth/idp_a/callback" {
		t.Fatalf("SERVICE_PUBLIC_URL is the base of the redirect address: %s", got)
	}
	// A state that fails goes to SERVICE_PUBLIC_URL, not to the request's host.
	loc := env.callback("dig", oauth.ProviderA, url.Values{"state": {"garbage"}, "code": {"x"}}, nil)
	expectRedirect(t, loc, "https://records.example.org", map[string]string{"error": "invalid_state", "app": "dig"})
}

func TestOAuthCallbackSignIn(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newOAuthEnv(t, e)
		ann := testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)
		pat := testenv.NewUser(t, env.dig, "Pat", "pat@example.org", auth.Pending)

		// Unverified email: no_account with a pending token; nothing linked.
		loc := env.login(oauth.ProviderA, oauthtest.Identity{Sub: "g-ann", Email: "ann@example.org", EmailVerified: false})
		expectRedirect(t, loc, clientOrigin, map[string]string{"error": "no_account", "app": "dig", "pending": "*"})
		if got := storedIdentity(t, env.dig, ann.ID); got != "" {
			t.Fatalf("unverified email linked %s", got)
		}

		// Verified email on an approved account: signed in, identity stored.
		loc = env.login(oauth.ProviderA, oauthtest.Identity{Sub: "g-ann", Email: "ANN@example.org", EmailVerified: true, IDToken: true})
		expectRedirect(t, loc, clientOrigin, map[string]string{"token": "*", "app": "dig"})
		if got := env.whoAmI(loc.Query().Get("token")); got != "ann@example.org" {
			t.Fatalf("token is for %s", got)
		}
		if got := storedIdentity(t, env.dig, ann.ID); got != "idp_a/g-ann" {
			t.Fatalf("identity after first login: %q", got)
		}
		// Later logins match by sub, whatever email the provider reports.
		loc = env.login(oauth.ProviderA, oauthtest.Identity{Sub: "g-ann", Email: "ann@elsewhere.example", EmailVerified: true})
		if env.whoAmI(loc.Query().Get("token")) != "ann@example.org" {
			t.Fatal("match by sub failed")
		}
		// Another idp_a identity claiming Ann's verified email: Ann already
		// has one, so it is not linked.
		loc = env.login(oauth.ProviderA, oauthtest.Identity{Sub: "g-ann-2", Email: "ann@example.org", EmailVerified: true})
		expectRedirect(t, loc, clientOrigin, map[string]string{"error": "no_account", "app": "dig", "pending": "*"})

		// A pending account is never linked by email.
		loc = env.login(oauth.ProviderA, oauthtest.Identity{Sub: "g-pat", Email: "pat@example.org", EmailVerified: true})
		expectRedirect(t, loc, clientOrigin, map[string]string{"error": "no_account", "app": "dig", "pending": "*"})
		if got := storedIdentity(t, env.dig, pat.ID); got != "" {
			t.Fatalf("pending account linked: %s", got)
		}
		// A pending account that does carry the identity gets no session.
		if err := oauth.Link(context.Background(), env.dig.DB, pat.ID, oauth.ProviderB, "0000-0000-0000-0040", time.Now()); err != nil {
			t.Fatal(err)
		}
		loc = env.login(oauth.ProviderB, oauthtest.Identity{Sub: "0000-0000-0000-0040", Name: "Pat"})
		expectRedirect(t, loc, clientOrigin, map[string]string{"error": "not_enough_privilege", "app": "dig"})

		// idp_b: the first login is always no_account, even for a known name.
		loc = env.login(oauth.ProviderB, oauthtest.Identity{Sub: "0000-0002-1825-0097", Name: "Ann"})
		expectRedirect(t, loc, clientOrigin, map[string]string{"error": "no_account", "app": "dig", "pending": "*"})
	})
}

// tamper re-encodes a signed token's payload with one field changed,
// keeping the old signature.
func tamper(t *testing.T, tok, key, value string) string {
	t.Helper()
	payload, sig, _ := strings.Cut(tok, ".")
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	m[key] = value
	raw, _ = json.Marshal(m)
	return base64.RawURLEncoding.EncodeToString(raw) + "." + sig
}

func TestOAuthCallbackFailures(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newOAuthEnv(t, e)
		testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)
		grant := func() string {
			return env.idpA.Grant(oauthtest.Identity{Sub: "g-ann", Email: "ann@example.org", EmailVerified: true})
		}
		good := env.state("dig", oauth.ProviderA, clientOrigin, nil)
		cb := func(params url.Values) *url.URL { return env.callback("dig", oauth.ProviderA, params, nil) }

		// No trustworthy state: the service's own origin, never one the request names.
		for name, tc := range map[string]struct {
			params url.Values
			code   string
		}{
			"missing state":          {url.Values{"code": {grant()}}, "invalid_request"},
			"missing everything":     {url.Values{}, "invalid_request"},
			"garbage state":          {url.Values{"code": {grant()}, "state": {"garbage"}}, "invalid_state"},
			"tampered origin":        {url.Values{"code": {grant()}, "state": {tamper(t, good, "origin", "https://evil.example")}}, "invalid_state"},
			"tampered app":           {url.Values{"code": {grant()}, "state": {tamper(t, good, "app", "other")}}, "invalid_state"},
			"another app's state":    {url.Values{"code": {grant()}, "state": {env.state("other", oauth.ProviderA, clientOrigin, nil)}}, "invalid_state"},
			"a pending token":        {url.Values{"code": {grant()}, "state": {mustPendingFor(t, env)}}, "invalid_state"},
			"garbage, no code":       {url.Values{"state": {"x.y"}}, "invalid_state"},
			"origin in the query":    {url.Values{"state": {"garbage"}, "origin": {"https://evil.example"}, "redirect_uri": {"https://evil.example"}}, "invalid_state"},
			"signature of other key": {url.Values{"code": {grant()}, "state": {strings.Split(good, ".")[0] + "." + strings.Split(env.state("other", oauth.ProviderA, clientOrigin, nil), ".")[1]}}, "invalid_state"},
		} {
			t.Run(name, func(t *testing.T) {
				expectRedirect(t, cb(tc.params), ownOrigin, map[string]string{"error": tc.code, "app": "dig"})
			})
		}

		// An authentic state carries a trusted origin.
		expectRedirect(t, cb(url.Values{"state": {good}}), clientOrigin, map[string]string{"error": "invalid_request", "app": "dig"})
		expectRedirect(t, env.callback("dig", oauth.ProviderB, url.Values{"code": {grant()}, "state": {good}}, nil),
			clientOrigin, map[string]string{"error": "invalid_state", "app": "dig"})

		// Token exchange failures.
		env.idpA.FailNextTokens(1)
		expectRedirect(t, cb(url.Values{"code": {grant()}, "state": {good}}), clientOrigin, map[string]string{"error": "oauth_error", "app": "dig"})
		expectRedirect(t, cb(url.Values{"code": {"never-issued"}, "state": {good}}), clientOrigin, map[string]string{"error": "oauth_error", "app": "dig"})
		used := grant()
		expectRedirect(t, cb(url.Values{"code": {used}, "state": {good}}), clientOrigin, map[string]string{"token": "*", "app": "dig"})
		expectRedirect(t, cb(url.Values{"code": {used}, "state": {good}}), clientOrigin, map[string]string{"error": "oauth_error", "app": "dig"})

		// Credentials removed after the flow started.
		env.configure(env.dig, env.idpA, "")
		expectRedirect(t, cb(url.Values{"code": {grant()}, "state": {good}}), clientOrigin, map[string]string{"error": "provider_not_configured", "app": "dig"})
		env.configure(env.dig, env.idpA, env.idpA.ClientSecret)

		// Wrong credentials configured: the provider refuses the exchange.
		env.configure(env.dig, env.idpA, "stale-secret")
		expectRedirect(t, cb(url.Values{"code": {grant()}, "state": {good}}), clientOrigin, map[string]string{"error": "oauth_error", "app": "dig"})
		env.configure(env.dig, env.idpA, env.idpA.ClientSecret)

		// A state obtained with a forged Host (which made that host "the
		// request's own origin") names an origin that is not allowed for the
		// browser's real callback: nothing goes there.
		forged := env.state("dig", oauth.ProviderA, "http://evil.example", func(r *http.Request) { r.Host = "evil.example" })
		expectRedirect(t, cb(url.Values{"code": {grant()}, "state": {forged}}), ownOrigin, map[string]string{"error": "invalid_state", "app": "dig"})
		// Likewise an origin removed from the app's list since the flow began.
		env.setOrigins(env.dig, "https://another.example.org")
		expectRedirect(t, cb(url.Values{"code": {grant()}, "state": {good}}), ownOrigin, map[string]string{"error": "invalid_state", "app": "dig"})
		env.setOrigins(env.dig, clientOrigin)

		// Expiry: ten minutes. An expired authentic state still names its origin.
		fresh := env.state("dig", oauth.ProviderA, clientOrigin, nil)
		env.clk.Advance(9*time.Minute + 59*time.Second)
		expectRedirect(t, cb(url.Values{"code": {grant()}, "state": {fresh}}), clientOrigin, map[string]string{"token": "*", "app": "dig"})
		env.clk.Advance(2 * time.Second)
		expectRedirect(t, cb(url.Values{"code": {grant()}, "state": {fresh}}), clientOrigin, map[string]string{"error": "invalid_state", "app": "dig"})
		expectRedirect(t, cb(url.Values{"state": {fresh}}), clientOrigin, map[string]string{"error": "invalid_state", "app": "dig"})

		if logs := env.logs.String(); strings.Contains(logs, "upstream exploded") || strings.Contains(logs, "stale-secret") {
			t.Errorf("provider bodies or secrets reached the log:\n%s", logs)
		}
	})
}

// mustPendingFor obtains a real pending token of dig through a flow.
func mustPendingFor(t *testing.T, env *oauthEnv) string {
	t.Helper()
	loc := env.login(oauth.ProviderB, oauthtest.Identity{Sub: "0000-0000-0000-" + randomDigits(), Name: "Someone"})
	p := loc.Query().Get("pending")
	if p == "" {
		t.Fatalf("no pending token in %s", loc)
	}
	return p
}

var (
	digitsMu sync.Mutex
	digitsN  int
)

// randomDigits gives each generated ORCID iD a distinct last block.
func randomDigits() string {
	digitsMu.Lock()
	defer digitsMu.Unlock()
	digitsN++
	return fmt.Sprintf("%04d", digitsN)
}

func TestOAuthLink(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newOAuthEnv(t, e)
		ann := testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)
		bob := testenv.NewUser(t, env.dig, "Bob", "bob@example.org", auth.Writer)
		testenv.NewUser(t, env.dig, "Pat", "pat@example.org", auth.Pending)
		testenv.NewUser(t, env.other, "Ann", "ann@example.org", auth.Reader)
		orcid := oauthtest.Identity{Sub: "0000-0002-1825-0097", Name: "Ann Researcher"}
		loc := env.login(oauth.ProviderB, orcid)
		pending := loc.Query().Get("pending")
		link := func(pending, email, password string) map[string]any {
			return env.post("link", map[string]string{"pending": pending, "email": email, "password": password})
		}
		expectCode := func(what string, m map[string]any, code string) {
			t.Helper()
			if m["status"] != "error" || m["code"] != code {
				t.Errorf("%s: %v, want error %s", what, m, code)
			}
		}

		// Wrong password: refused through the login routine, the pending
		// token stays usable, and the failure counts towards the lock.
		expectCode("wrong password", link(pending, "ann@example.org", "wrong-password"), "login_data_not_valid")
		expectCode("missing password", link(pending, "ann@example.org", ""), "email_password_needed")
		expectCode("pending account", link(pending, "pat@example.org", testenv.Password), "not_enough_privilege")
		if got := storedIdentity(t, env.dig, ann.ID); got != "" {
			t.Fatalf("a failed link wrote %s", got)
		}
		// Bad pending tokens, before any password is looked at.
		for name, bad := range map[string]string{
			"missing":        "",
			"garbage":        "garbage",
			"tampered":       tamper(t, pending, "sub", "0000-0000-0000-0001"),
			"another app's":  env.otherPending(),
			"a state":        env.state("dig", oauth.ProviderB, clientOrigin, nil),
			"signature only": "." + strings.Split(pending, ".")[1],
		} {
			expectCode(name, link(bad, "ann@example.org", testenv.Password), "invalid_or_expired_pending")
		}

		m := link(pending, "Ann@Example.org", testenv.Password)
		if m["status"] != "success" || m["code"] != "ok" || m["token"] == nil {
			t.Fatalf("link: %v", m)
		}
		if env.whoAmI(m["token"].(string)) != "ann@example.org" {
			t.Fatal("link token is not Ann's")
		}
		if got := storedIdentity(t, env.dig, ann.ID); got != "idp_b/0000-0002-1825-0097" {
			t.Fatalf("identity after link: %q", got)
		}
		// The identity now signs in directly.
		loc = env.login(oauth.ProviderB, orcid)
		expectRedirect(t, loc, clientOrigin, map[string]string{"token": "*", "app": "dig"})
		if env.whoAmI(loc.Query().Get("token")) != "ann@example.org" {
			t.Fatal("sign-in after link is not Ann's")
		}
		// The same pending again, to the same or another account.
		expectCode("second link, same account", link(pending, "ann@example.org", testenv.Password), "oauth_identity_already_linked")
		expectCode("second link, other account", link(pending, "bob@example.org", testenv.Password), "oauth_identity_already_linked")
		// Another identity onto an account that already has one: refused, not replaced.
		other := env.login(oauth.ProviderA, oauthtest.Identity{Sub: "g-ann", Email: "ann@example.org", EmailVerified: false}).Query().Get("pending")
		expectCode("account has an identity", link(other, "ann@example.org", testenv.Password), "oauth_identity_already_linked")
		if got := storedIdentity(t, env.dig, ann.ID); got != "idp_b/0000-0002-1825-0097" {
			t.Fatalf("identity replaced: %q", got)
		}
		// ...but it can go to Bob.
		if m := link(other, "bob@example.org", testenv.Password); m["status"] != "success" {
			t.Fatalf("link to Bob: %v", m)
		}
		if got := storedIdentity(t, env.dig, bob.ID); got != "idp_a/g-ann" {
			t.Fatalf("Bob's identity: %q", got)
		}

		// Malformed body: still HTTP 200.
		req := httptest.NewRequest("POST", "/dig/api/auth/oauth/link", strings.NewReader(`{"pending":`))
		rec := env.send(req)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"code":"invalid_json"`) {
			t.Errorf("malformed body: %d %s", rec.Code, rec.Body.String())
		}
	})
}

// otherPending is a genuine pending token of the app "other".
func (env *oauthEnv) otherPending() string {
	env.t.Helper()
	st := env.state("other", oauth.ProviderB, clientOrigin, nil)
	loc := env.callback("other", oauth.ProviderB, url.Values{"code": {env.idpB.Grant(oauthtest.Identity{Sub: "0000-0009-0000-0001"})}, "state": {st}}, nil)
	return loc.Query().Get("pending")
}

func TestOAuthLinkLockAndExpiry(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newOAuthEnv(t, e)
		ann := testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)
		pending := env.login(oauth.ProviderB, oauthtest.Identity{Sub: "0000-0001-0000-0001"}).Query().Get("pending")
		link := func(password string) map[string]any {
			return env.post("link", map[string]string{"pending": pending, "email": "ann@example.org", "password": password})
		}
		for i := 1; i <= auth.MaxFailedLogins; i++ {
			if m := link("wrong-password"); m["code"] != "login_data_not_valid" {
				t.Fatalf("failure %d: %v", i, m)
			}
		}
		// Locked now: even the right password is refused, before it is checked,
		// and the lock is the one password login sees.
		if m := link(testenv.Password); m["code"] != "account_locked" {
			t.Fatalf("after %d failures: %v", auth.MaxFailedLogins, m)
		}
		testenv.Scenario{Method: "POST", URL: "/dig/api/auth/login", Body: `{"email":"ann@example.org","password":"` + testenv.Password + `"}`,
			ExpectedStatus: 423, ExpectedContent: []string{`"code":"account_locked"`}}.Run(t, env.inst.Server)
		if got := storedIdentity(t, env.dig, ann.ID); got != "" {
			t.Fatalf("linked while locked: %s", got)
		}
		// Within the pending token's ten minutes, the lock (fifteen) does not
		// end; past them the token is spent even though the lock has ended.
		env.clk.Advance(9 * time.Minute)
		if m := link(testenv.Password); m["code"] != "account_locked" {
			t.Fatalf("still locked: %v", m)
		}
		env.clk.Advance(7 * time.Minute)
		if m := link(testenv.Password); m["code"] != "invalid_or_expired_pending" {
			t.Fatalf("expired pending: %v", m)
		}
		// A fresh flow links.
		pending = env.login(oauth.ProviderB, oauthtest.Identity{Sub: "0000-0001-0000-0001"}).Query().Get("pending")
		if m := link(testenv.Password); m["status"] != "success" {
			t.Fatalf("after the lock: %v", m)
		}
	})
}

// TestOAuthSecretsStayOutOfLogs runs whole flows and checks that no code,
// state, pending token, session token or client secret appears in the log:
// the request log records paths without query strings.
func TestOAuthSecretsStayOutOfLogs(t *testing.T) {
	env := newOAuthEnv(t, store.SQLite)
	testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)
	var secrets []string
	st := env.state("dig", oauth.ProviderA, clientOrigin, nil)
	code := env.idpA.Grant(oauthtest.Identity{Sub: "g-ann", Email: "ann@example.org", EmailVerified: true})
	loc := env.callback("dig", oauth.ProviderA, url.Values{"code": {code}, "state": {st}}, nil)
	secrets = append(secrets, st, code, loc.Query().Get("token"))
	st = env.state("dig", oauth.ProviderB, clientOrigin, nil)
	code = env.idpB.Grant(oauthtest.Identity{Sub: "0000-0003-0000-0001"})
	loc = env.callback("dig", oauth.ProviderB, url.Values{"code": {code}, "state": {st}}, nil)
	pending := loc.Query().Get("pending")
	secrets = append(secrets, st, code, pending)
	m := env.post("link", map[string]string{"pending": pending, "email": "ann@example.org", "password": "wrong-password"})
	if m["code"] != "login_data_not_valid" {
		t.Fatal(m)
	}
	secrets = append(secrets, "wrong-password", env.idpA.ClientSecret, env.idpB.ClientSecret)
	env.idpA.FailNextTokens(1)
	code = env.idpA.Grant(oauthtest.Identity{Sub: "g-x"})
	env.callback("dig", oauth.ProviderA, url.Values{"code": {code}, "state": {env.state("dig", oauth.ProviderA, clientOrigin, nil)}}, nil)
	secrets = append(secrets, code)

	logs := env.logs.String()
	if !strings.Contains(logs, "/dig/api/auth/oauth/idp_a/callback") {
		t.Fatalf("the request log should name the callback path:\n%s", logs)
	}
	for _, s := range secrets {
		if s == "" {
			t.Fatal("a flow produced an empty secret")
		}
		if strings.Contains(logs, s) {
			t.Errorf("%q reached the log:\n%s", s, logs)
		}
	}
	if strings.Contains(logs, "code=") || strings.Contains(logs, "state=") || strings.Contains(logs, "token=") {
		t.Errorf("a query string reached the log:\n%s", logs)
	}
}

func TestOAuthRegister(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		mp := mailtest.NewProvider(t)
		env := newOAuthEnvWithMail(t, e, mp.Client())
		testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)
		orcid := oauthtest.Identity{Sub: "0000-0002-7000-0001", Name: "Rita Researcher"}
		pending := env.login(oauth.ProviderB, orcid).Query().Get("pending")
		register := func(pending, email string) map[string]any {
			return env.post("register", map[string]string{"pending": pending, "email": email})
		}
		expectCode := func(what string, m map[string]any, code string) {
			t.Helper()
			if m["status"] != "error" || m["code"] != code {
				t.Errorf("%s: %v, want error %s", what, m, code)
			}
		}
		users := func() int {
			list, err := auth.ListUsers(context.Background(), env.dig.DB)
			if err != nil {
				t.Fatal(err)
			}
			return len(list)
		}
		before := users()

		// The self-registration gate: closed by default.
		expectCode("registration off", register(pending, "rita@example.org"), "registration_not_available")
		if err := env.dig.UpdateSettings(context.Background(), map[string]string{apps.SettingAllowSelfRegistration: "1"}, nil); err != nil {
			t.Fatal(err)
		}
		for name, tc := range map[string]struct{ pending, email, code string }{
			"missing pending": {"", "rita@example.org", "invalid_or_expired_pending"},
			"tampered":        {tamper(t, pending, "sub", "0000-0000-0000-0002"), "rita@example.org", "invalid_or_expired_pending"},
			"another app's":   {env.otherPending(), "rita@example.org", "invalid_or_expired_pending"},
			"missing email":   {pending, "", "email_not_valid"},
			"bad email":       {pending, "rita at example.org", "email_not_valid"},
			"taken email":     {pending, "ANN@example.org", "email_present"},
		} {
			expectCode(name, register(tc.pending, tc.email), tc.code)
		}
		if users() != before || len(mp.Received()) != 0 {
			t.Fatalf("failed registrations left %d accounts, %d mails", users()-before, len(mp.Received()))
		}

		// A mail failure undoes the account; the pending token can be retried.
		mp.Fail(500, `{"message":"provider down"}`)
		expectCode("mail failure", register(pending, "rita@example.org"), "email_send_failed")
		if users() != before {
			t.Fatalf("the account of a failed registration was kept: %d vs %d\n%s", users(), before, env.logs.String())
		}
		mp.Fail(0, "")

		m := register(pending, " Rita@Example.org ")
		if m["status"] != "success" || m["code"] != "ok_registered" {
			t.Fatalf("register: %v", m)
		}
		u, err := oauth.FindByIdentity(context.Background(), env.dig.DB, oauth.ProviderB, orcid.Sub)
		if err != nil {
			t.Fatal(err)
		}
		if u.Email != "rita@example.org" || u.Privilege != auth.Pending || u.Name != "Rita Researcher" || !strings.HasPrefix(u.Password, "$2") {
			t.Fatalf("registered account %+v", u)
		}
		got := mp.Received()
		if len(got) != 2 || got[0].To[0] != "rita@example.org" || got[1].To[0] != "admin@example.org" {
			t.Fatalf("mails: %+v", got)
		}
		// No password opens an OAuth-only account.
		testenv.Scenario{Method: "POST", URL: "/dig/api/auth/login", Body: `{"email":"rita@example.org","password":"` + testenv.Password + `"}`,
			ExpectedStatus: 401, ExpectedContent: []string{`"code":"login_data_not_valid"`}}.Run(t, env.inst.Server)

		// The identity is spent: register and link again are refused.
		expectCode("second register", register(pending, "rita2@example.org"), "oauth_identity_already_linked")
		expectCode("link after register", env.post("link", map[string]string{"pending": pending, "email": "ann@example.org", "password": testenv.Password}), "oauth_identity_already_linked")
		// Signing in with it finds the account, still pending.
		loc := env.login(oauth.ProviderB, orcid)
		expectRedirect(t, loc, clientOrigin, map[string]string{"error": "not_enough_privilege", "app": "dig"})

		// Mail not configured: the gate answers before anything else.
		env2 := newOAuthEnvWithMail(t, e, mp.Client(mail.EnvAPIKey, ""))
		if err := env2.dig.UpdateSettings(context.Background(), map[string]string{apps.SettingAllowSelfRegistration: "1"}, nil); err != nil {
			t.Fatal(err)
		}
		p2 := env2.login(oauth.ProviderA, oauthtest.Identity{Sub: "g-new", Email: "new@example.org", EmailVerified: true, Name: "New"}).Query().Get("pending")
		if m := env2.post("register", map[string]string{"pending": p2, "email": "new@example.org"}); m["code"] != "email_not_configured" {
			t.Fatalf("mail not configured: %v", m)
		}
	})
}
