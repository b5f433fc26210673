// Package oauthtest runs local fakes of the two identity providers for
// tests. They speak the real wire formats: an OAuth 2.0 token endpoint
// (RFC 6749 §4.1.3, form-encoded request, JSON answer) checking the client
// credentials the way each provider takes them, idp_a's OpenID Connect
// userinfo endpoint, and idp_b's ORCID-style token answer carrying `orcid`
// and `name`. The authorization step is a browser page at the provider, so
// tests skip it: Grant registers a one-time code as if the user had
// consented.
package oauthtest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/strata-archaeo/strata/core/oauth"
)

// Identity is what a fake provider says about the user of a code.
type Identity struct {
	Sub   string
	Email string
	// EmailVerified is sent as is: a bool, the string "true", or nil to
	// leave the claim out.
	EmailVerified any
	Name          string
	// IDToken, for idp_a, adds an id_token to the token answer with this
	// sub and audience (empty: the code's own sub and the client id).
	IDToken      bool
	IDTokenSub   string
	IDTokenAud   string
	NoUserinfo   bool // idp_a: userinfo answers 500
	OmitOrcidSub bool // idp_b: the token answer lacks `orcid`
}

// Provider is one running fake.
type Provider struct {
	Name         string
	ClientID     string
	ClientSecret string
	Server       *httptest.Server

	mu           sync.Mutex
	codes        map[string]Identity
	access       map[string]Identity
	failToken    int
	redirectURIs []string
	consent      *Identity
}

// NewIdpA starts a fake OpenID Connect provider, closed at cleanup.
func NewIdpA(t testing.TB) *Provider { return start(t, oauth.ProviderA) }

// NewIdpB starts a fake ORCID-style provider, closed at cleanup.
func NewIdpB(t testing.TB) *Provider { return start(t, oauth.ProviderB) }

func start(t testing.TB, name string) *Provider {
	p := &Provider{Name: name, ClientID: name + "-client", ClientSecret: name + "-secret-" + random(),
		codes: map[string]Identity{}, access: map[string]Identity{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", p.token)
	mux.HandleFunc("GET /userinfo", p.userinfo)
	mux.HandleFunc("GET /authorize", p.authorize)
	p.Server = httptest.NewServer(mux)
	t.Cleanup(p.Server.Close)
	return p
}

func random() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Env is the environment pointing the service at this fake (CONTRACT §7).
func (p *Provider) Env() map[string]string {
	u := p.Server.URL
	if p.Name == oauth.ProviderA {
		return map[string]string{oauth.EnvIdpAAuthURL: u + "/authorize", oauth.EnvIdpATokenURL: u + "/token", oauth.EnvIdpAUserinfoURL: u + "/userinfo"}
	}
	return map[string]string{oauth.EnvIdpBAuthURL: u + "/authorize", oauth.EnvIdpBTokenURL: u + "/token"}
}

// Getenv reads the environment of every fake given, then falls back to
// nothing (so no real environment leaks into a test).
func Getenv(fakes ...*Provider) func(string) string {
	env := map[string]string{}
	for _, f := range fakes {
		for k, v := range f.Env() {
			env[k] = v
		}
	}
	return func(k string) string { return env[k] }
}

// Grant returns a fresh one-time code for id.
func (p *Provider) Grant(id Identity) string {
	code := "code-" + random()
	p.mu.Lock()
	p.codes[code] = id
	p.mu.Unlock()
	return code
}

// Consent makes the authorization page answer as if the user had signed
// in as id and consented: a redirect to the request's redirect_uri with a
// fresh code and the state, as a provider sends the browser back. A
// browser test drives the whole flow this way; without Consent the page
// answers 501 and API tests use Grant.
func (p *Provider) Consent(id Identity) {
	p.mu.Lock()
	p.consent = &id
	p.mu.Unlock()
}

func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	id := p.consent
	p.mu.Unlock()
	q := r.URL.Query()
	if id == nil {
		http.Error(w, "the fake has no consent page: use Grant or Consent", http.StatusNotImplemented)
		return
	}
	target, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || target.Host == "" || q.Get("client_id") != p.ClientID || q.Get("response_type") != "code" {
		http.Error(w, "invalid authorization request", http.StatusBadRequest)
		return
	}
	back := target.Query()
	back.Set("code", p.Grant(*id))
	back.Set("state", q.Get("state"))
	target.RawQuery = back.Encode()
	http.Redirect(w, r, target.String(), http.StatusFound)
}

// FailNextTokens makes the next n token requests answer 500.
func (p *Provider) FailNextTokens(n int) {
	p.mu.Lock()
	p.failToken = n
	p.mu.Unlock()
}

// RedirectURIs are the redirect_uri values token requests carried.
func (p *Provider) RedirectURIs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.redirectURIs...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]string{"error": code})
}

// token is the token endpoint. idp_a takes the client credentials by HTTP
// Basic authentication (client_secret_basic), idp_b as form parameters.
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.failToken > 0 {
		p.failToken--
		p.mu.Unlock()
		http.Error(w, "upstream exploded", http.StatusInternalServerError)
		return
	}
	p.mu.Unlock()
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	var id, secret string
	if p.Name == oauth.ProviderA {
		var ok bool
		if id, secret, ok = r.BasicAuth(); !ok {
			oauthError(w, http.StatusUnauthorized, "invalid_client")
			return
		}
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != p.ClientID || secret != p.ClientSecret {
		oauthError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	if r.PostForm.Get("grant_type") != "authorization_code" {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	code := r.PostForm.Get("code")
	p.mu.Lock()
	who, ok := p.codes[code]
	delete(p.codes, code) // codes are single-use
	p.redirectURIs = append(p.redirectURIs, r.PostForm.Get("redirect_uri"))
	access := "at-" + random()
	if ok {
		p.access[access] = who
	}
	p.mu.Unlock()
	if !ok {
		oauthError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	body := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3599}
	if p.Name == oauth.ProviderA {
		body["scope"] = "openid email profile"
		if who.IDToken {
			sub, aud := who.IDTokenSub, who.IDTokenAud
			if sub == "" {
				sub = who.Sub
			}
			if aud == "" {
				aud = p.ClientID
			}
			body["id_token"] = idToken(p.Server.URL, sub, aud)
		}
	} else {
		body["token_type"] = "bearer"
		body["scope"] = "/authenticate"
		body["refresh_token"] = "rt-" + random()
		body["name"] = who.Name
		if !who.OmitOrcidSub {
			body["orcid"] = who.Sub
		}
	}
	writeJSON(w, http.StatusOK, body)
}

// idToken is a JWT-shaped id_token. The service does not check its
// signature (it comes straight from the token endpoint), so a dummy one
// keeps the fake small.
func idToken(issuer, sub, aud string) string {
	enc := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	return enc(map[string]string{"alg": "RS256", "typ": "JWT"}) + "." +
		enc(map[string]any{"iss": issuer, "sub": sub, "aud": aud, "iat": 1, "exp": 9999999999}) + "." +
		base64.RawURLEncoding.EncodeToString([]byte("not-checked"))
}

// userinfo is idp_a's OpenID Connect userinfo endpoint.
func (p *Provider) userinfo(w http.ResponseWriter, r *http.Request) {
	at, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	p.mu.Lock()
	who, known := p.access[at]
	p.mu.Unlock()
	if !ok || !known {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if who.NoUserinfo {
		http.Error(w, "userinfo down", http.StatusInternalServerError)
		return
	}
	body := map[string]any{"sub": who.Sub, "name": who.Name}
	if who.Email != "" {
		body["email"] = who.Email
	}
	if who.EmailVerified != nil {
		body["email_verified"] = who.EmailVerified
	}
	writeJSON(w, http.StatusOK, body)
}
