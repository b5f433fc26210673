package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/strata-archaeo/strata/core/auth"
)

// Provider slugs (SPEC §2.4).
const (
	ProviderA = "idp_a"
	ProviderB = "idp_b"
)

// Default endpoints. idp_a is an OpenID Connect provider and defaults to
// Google's endpoints; idp_b is ORCID and defaults to the ORCID production
// registry. Each can be replaced from the environment (CONTRACT §7), which
// tests use to point the flow at local fakes and deployments can use for a
// sandbox (for example https://sandbox.orcid.org/oauth/...).
const (
	DefaultIdpAAuthURL     = "https://accounts.google.com/o/oauth2/v2/auth"
	DefaultIdpATokenURL    = "https://oauth2.googleapis.com/token"
	DefaultIdpAUserinfoURL = "https://openidconnect.googleapis.com/v1/userinfo"
	DefaultIdpBAuthURL     = "https://orcid.org/oauth/authorize"
	DefaultIdpBTokenURL    = "https://orcid.org/oauth/token"
)

// Environment variables overriding the endpoints.
const (
	EnvIdpAAuthURL     = "OAUTH_IDP_A_AUTH_URL"
	EnvIdpATokenURL    = "OAUTH_IDP_A_TOKEN_URL"
	EnvIdpAUserinfoURL = "OAUTH_IDP_A_USERINFO_URL"
	EnvIdpBAuthURL     = "OAUTH_IDP_B_AUTH_URL"
	EnvIdpBTokenURL    = "OAUTH_IDP_B_TOKEN_URL"
)

// Scopes asked of each provider.
var (
	scopesA = []string{"openid", "email", "profile"}
	scopesB = []string{"/authenticate"}
)

// maxUserinfoBytes bounds the userinfo body read; a real one is well under
// a kilobyte.
const maxUserinfoBytes = 1 << 20

// exchangeTimeout bounds the whole conversation with a provider during a
// callback (token exchange plus userinfo), so a slow provider cannot hold
// request goroutines indefinitely.
const exchangeTimeout = 15 * time.Second

// KnownProvider reports whether name is a provider slug.
func KnownProvider(name string) bool { return name == ProviderA || name == ProviderB }

// Identity is who a provider says the user is. Only what the account
// lookup needs is kept; the provider's tokens are dropped after the call.
type Identity struct {
	Provider      string
	Sub           string
	Email         string // normalised; idp_a only
	EmailVerified bool   // idp_a's email_verified claim
	Name          string
}

// Provider is one configured provider of one app, for one request: its
// endpoints, the app's credentials and the redirect address.
type Provider struct {
	Name        string
	UserinfoURL string // idp_a only
	config      oauth2.Config
	client      *http.Client
}

// Credentials are an app's client id and secret for a provider.
type Credentials struct {
	ClientID, ClientSecret string
}

// Configured reports whether both parts are set: a provider is offered only
// then (SPEC §5.5).
func (c Credentials) Configured() bool { return c.ClientID != "" && c.ClientSecret != "" }

// NewProvider builds the adapter of a provider. getenv supplies the endpoint
// overrides; client (nil for a default with a timeout) makes the calls.
func NewProvider(name string, creds Credentials, redirectURL string, getenv func(string) string, client *http.Client) (*Provider, error) {
	env := func(key, def string) string {
		if getenv != nil {
			if v := strings.TrimSpace(getenv(key)); v != "" {
				return v
			}
		}
		return def
	}
	if client == nil {
		client = &http.Client{Timeout: exchangeTimeout}
	}
	p := &Provider{Name: name, client: client}
	cfg := oauth2.Config{ClientID: creds.ClientID, ClientSecret: creds.ClientSecret, RedirectURL: redirectURL}
	switch name {
	case ProviderA:
		cfg.Endpoint = oauth2.Endpoint{
			AuthURL:  env(EnvIdpAAuthURL, DefaultIdpAAuthURL),
			TokenURL: env(EnvIdpATokenURL, DefaultIdpATokenURL),
			// OpenID Connect's default client authentication is
			// client_secret_basic. Fixing it avoids x/oauth2's auto-detection,
			// which retries a failed exchange with the other style.
			AuthStyle: oauth2.AuthStyleInHeader,
		}
		cfg.Scopes = scopesA
		p.UserinfoURL = env(EnvIdpAUserinfoURL, DefaultIdpAUserinfoURL)
	case ProviderB:
		cfg.Endpoint = oauth2.Endpoint{
			AuthURL:  env(EnvIdpBAuthURL, DefaultIdpBAuthURL),
			TokenURL: env(EnvIdpBTokenURL, DefaultIdpBTokenURL),
			// ORCID documents the credentials as form parameters.
			AuthStyle: oauth2.AuthStyleInParams,
		}
		cfg.Scopes = scopesB
	default:
		return nil, fmt.Errorf("oauth: unknown provider %q", name)
	}
	p.config = cfg
	return p, nil
}

// AuthCodeURL is the provider's authorization address for a signed state.
func (p *Provider) AuthCodeURL(state string) string { return p.config.AuthCodeURL(state) }

// ExchangeError is a failed conversation with the provider. Its text names
// the step and the provider's status or error code, never the response
// body, which may echo the code or carry tokens.
type ExchangeError struct {
	Step   string // "token" or "userinfo"
	Detail string
}

func (e *ExchangeError) Error() string { return "oauth " + e.Step + ": " + e.Detail }

// Identify exchanges code for tokens and returns the identity they prove.
// The provider's tokens live only in this call.
func (p *Provider) Identify(ctx context.Context, code string) (*Identity, error) {
	ctx, cancel := context.WithTimeout(ctx, exchangeTimeout)
	defer cancel()
	ctx = context.WithValue(ctx, oauth2.HTTPClient, p.client)
	tok, err := p.config.Exchange(ctx, code)
	if err != nil {
		return nil, &ExchangeError{Step: "token", Detail: describeExchangeError(err)}
	}
	switch p.Name {
	case ProviderA:
		return p.identifyA(ctx, tok)
	default:
		return identifyB(tok)
	}
}

func describeExchangeError(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		if re.ErrorCode != "" {
			return fmt.Sprintf("status %d, error %q", status, re.ErrorCode)
		}
		return fmt.Sprintf("status %d", status)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	// Transport errors name the URL, which holds no secret (the code and
	// credentials go in the POST body or header).
	return err.Error()
}

// identifyB reads ORCID's token response: the researcher iD is in `orcid`
// and the display name in `name`; there is no email and no userinfo call.
func identifyB(tok *oauth2.Token) (*Identity, error) {
	sub, _ := tok.Extra("orcid").(string)
	sub = strings.TrimSpace(sub)
	if sub == "" {
		return nil, &ExchangeError{Step: "token", Detail: "the response carries no orcid"}
	}
	name, _ := tok.Extra("name").(string)
	return &Identity{Provider: ProviderB, Sub: sub, Name: strings.TrimSpace(name)}, nil
}

// userinfo is the OpenID Connect userinfo response. email_verified is a
// boolean by the standard, but some providers send the string "true".
type userinfo struct {
	Sub           string          `json:"sub"`
	Email         string          `json:"email"`
	EmailVerified json.RawMessage `json:"email_verified"`
	Name          string          `json:"name"`
}

func verifiedFlag(raw json.RawMessage) bool {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b
	}
	var s string
	return json.Unmarshal(raw, &s) == nil && strings.EqualFold(s, "true")
}

// identifyA calls the userinfo endpoint with the access token. The
// identity is taken from userinfo, received over TLS straight from the
// provider with our own token; when the token response also carried an
// id_token, its sub must be the same and its audience must be us (OpenID
// Connect Core §5.3.2), so a token minted for another client or user is
// refused.
func (p *Provider) identifyA(ctx context.Context, tok *oauth2.Token) (*Identity, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.UserinfoURL, nil)
	if err != nil {
		return nil, &ExchangeError{Step: "userinfo", Detail: "bad userinfo URL"}
	}
	req.Header.Set("Accept", "application/json")
	tok.SetAuthHeader(req)
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, &ExchangeError{Step: "userinfo", Detail: describeExchangeError(err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxUserinfoBytes))
	if err != nil {
		return nil, &ExchangeError{Step: "userinfo", Detail: "reading the response failed"}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &ExchangeError{Step: "userinfo", Detail: fmt.Sprintf("status %d", resp.StatusCode)}
	}
	var ui userinfo
	if err := json.Unmarshal(body, &ui); err != nil {
		return nil, &ExchangeError{Step: "userinfo", Detail: "the response is not JSON"}
	}
	ui.Sub = strings.TrimSpace(ui.Sub)
	if ui.Sub == "" {
		return nil, &ExchangeError{Step: "userinfo", Detail: "the response carries no sub"}
	}
	if idt, _ := tok.Extra("id_token").(string); idt != "" {
		if err := p.checkIDToken(idt, ui.Sub); err != nil {
			return nil, err
		}
	}
	id := &Identity{Provider: ProviderA, Sub: ui.Sub, Name: strings.TrimSpace(ui.Name)}
	if email := auth.NormalizeEmail(ui.Email); email != "" && auth.ValidateEmail(email) == nil {
		id.Email = email
		id.EmailVerified = verifiedFlag(ui.EmailVerified)
	}
	return id, nil
}

// checkIDToken compares the id_token's claims with the userinfo subject and
// our client id. Its signature is not checked: it came over TLS directly
// from the token endpoint in exchange for our client secret, which OpenID
// Connect Core §3.1.3.7 accepts in place of signature validation.
func (p *Provider) checkIDToken(idToken, sub string) error {
	parts := strings.Split(idToken, ".")
	if len(parts) != 3 {
		return &ExchangeError{Step: "token", Detail: "malformed id_token"}
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return &ExchangeError{Step: "token", Detail: "malformed id_token"}
	}
	var claims struct {
		Sub string          `json:"sub"`
		Aud json.RawMessage `json:"aud"`
	}
	if err := json.Unmarshal(raw, &claims); err != nil {
		return &ExchangeError{Step: "token", Detail: "malformed id_token"}
	}
	if claims.Sub != "" && claims.Sub != sub {
		return &ExchangeError{Step: "userinfo", Detail: "userinfo sub differs from the id_token's"}
	}
	if len(claims.Aud) > 0 && !audienceHas(claims.Aud, p.config.ClientID) {
		return &ExchangeError{Step: "token", Detail: "id_token issued for another client"}
	}
	return nil
}

// audienceHas reads aud, a string or an array of strings.
func audienceHas(raw json.RawMessage, clientID string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == clientID
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		for _, a := range many {
			if a == clientID {
				return true
			}
		}
	}
	return false
}
