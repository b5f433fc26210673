package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/oauth"
)

// Errors of the OAuth endpoints (SPEC §7, CONTRACT §8).
var (
	errUnknownProvider = errs.New(errs.NotFound, "unknown_provider", "no such OAuth provider: idp_a or idp_b")
	errProviderNotConf = errs.New(errs.Unavailable, "provider_not_configured", "this provider is not configured for the application")
	errInvalidOrigin   = errs.New(errs.Invalid, "invalid_origin", "origin is not an allowed origin of this application")
	errInvalidPending  = errs.New(errs.Invalid, "invalid_or_expired_pending", "the pending sign-in is missing, invalid or expired: sign in with the provider again")
)

// Codes the callback puts in its redirect (SPEC §7).
const (
	cbInvalidState    = "invalid_state"
	cbInvalidRequest  = "invalid_request"
	cbNotConfigured   = "provider_not_configured"
	cbOAuthError      = "oauth_error"
	cbNoAccount       = "no_account"
	cbInternal        = "internal_error"
	cbNotEnoughPrivil = "not_enough_privilege"
)

// providerFor builds the adapter of provider for this request, with the
// app's credentials (read on every request, so a change in the settings
// applies at once) and the redirect address registered with the provider.
// ok is false when the credentials are not both set.
func (s *Server) providerFor(c *gin.Context, a *apps.App, provider string) (*oauth.Provider, bool, error) {
	id, secret, err := a.OAuthCredentials(c.Request.Context(), provider)
	if err != nil {
		return nil, false, err
	}
	creds := oauth.Credentials{ClientID: id, ClientSecret: secret}
	if !creds.Configured() {
		return nil, false, nil
	}
	redirect := oauth.RedirectURL(oauth.ServiceBase(c.Request, s.cfg.PublicURL), a.Name, provider)
	p, err := oauth.NewProvider(provider, creds, redirect, s.getenv, nil)
	return p, err == nil, err
}

// allowedOrigins is where a flow's result may be sent (CONTRACT §8).
func (s *Server) allowedOrigins(c *gin.Context, a *apps.App) (map[string]bool, error) {
	list, err := a.AllowedOrigins(c.Request.Context())
	if err != nil {
		return nil, err
	}
	return oauth.AllowedOrigins(c.Request, s.cfg.PublicURL, list), nil
}

// GET /auth/oauth/{provider}/redirect?origin= — the provider's
// authorization address with a signed state bound to the app, the origin,
// the provider and a nonce.
func (s *Server) handleOAuthRedirect(c *gin.Context) {
	provider := c.Param("provider")
	if !oauth.KnownProvider(provider) {
		s.fail(c, errUnknownProvider)
		return
	}
	if err := s.limits.OAuthStart(c.Request); err != nil {
		s.fail(c, err)
		return
	}
	a := appOf(c)
	p, ok, err := s.providerFor(c, a, provider)
	if err != nil {
		s.fail(c, err)
		return
	}
	if !ok {
		s.fail(c, errProviderNotConf.With("provider", provider))
		return
	}
	allowed, err := s.allowedOrigins(c, a)
	if err != nil {
		s.fail(c, err)
		return
	}
	origin, ok := oauth.NormalizeOrigin(c.Query("origin"))
	if !ok || !allowed[origin] {
		s.fail(c, errInvalidOrigin)
		return
	}
	secret, err := a.JWTSecret(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	state, err := oauth.NewState(secret, a.Name, origin, provider, s.now())
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	success(c, http.StatusOK, gin.H{"url": p.AuthCodeURL(state)})
}

// redirectTo ends the callback with a redirect. It is never cached, and
// no-referrer keeps the callback address (with its code and state) out of
// the Referer the next page sends. There is no body: the browser follows
// the Location, and the code and tokens need not appear twice.
func redirectTo(c *gin.Context, target string) {
	c.Header("Cache-Control", "no-store")
	c.Header("Referrer-Policy", "no-referrer")
	c.Header("Location", target)
	c.AbortWithStatus(http.StatusFound)
}

// GET /auth/oauth/{provider}/callback?code=&state= — the provider's return.
// It always answers with a redirect, and only to an origin the service
// trusts: the one in an authentic state, still allowed for this request;
// otherwise the service's own address (CONTRACT §8).
func (s *Server) handleOAuthCallback(c *gin.Context) {
	ctx := c.Request.Context()
	a := appOf(c)
	provider := c.Param("provider")
	own := oauth.ServiceBase(c.Request, s.cfg.PublicURL)
	fail := func(origin, code string) { redirectTo(c, oauth.CallbackURL(origin, "error", code, "app", a.Name)) }
	internal := func(origin, what string, err error) {
		s.log.ErrorContext(ctx, "oauth callback: "+what, "app", a.Name, "provider", provider, "err", err)
		fail(origin, cbInternal)
	}

	secret, err := a.JWTSecret(ctx)
	if err != nil {
		internal(own, "read the app secret", err)
		return
	}
	raw := c.Query("state")
	if raw == "" {
		fail(own, cbInvalidRequest)
		return
	}
	now := s.now()
	st, stErr := oauth.VerifyState(secret, raw, a.Name, now)
	if st == nil {
		fail(own, cbInvalidState)
		return
	}
	// The state's origin was allowed when the flow started, for the request
	// that started it. It is checked again for this request, which the
	// user's browser sends to the registered redirect address: a state
	// obtained by sending the service a forged Host or X-Forwarded-Proto
	// names an origin that is not allowed here, so no token goes there.
	allowed, err := s.allowedOrigins(c, a)
	if err != nil {
		internal(own, "read the allowed origins", err)
		return
	}
	if !allowed[st.Origin] {
		s.log.WarnContext(ctx, "oauth callback: the state's origin is not allowed for this request", "app", a.Name, "provider", provider)
		fail(own, cbInvalidState)
		return
	}
	origin := st.Origin
	if errors.Is(stErr, oauth.ErrExpired) || st.Provider != provider {
		fail(origin, cbInvalidState)
		return
	}
	code := c.Query("code")
	if code == "" {
		fail(origin, cbInvalidRequest)
		return
	}
	p, ok, err := s.providerFor(c, a, provider)
	if err != nil {
		internal(origin, "read the provider credentials", err)
		return
	}
	if !ok {
		fail(origin, cbNotConfigured)
		return
	}
	id, err := p.Identify(ctx, code)
	if err != nil {
		// Only the step and the provider's status are logged; never the code
		// or the provider's response body.
		s.log.WarnContext(ctx, "oauth callback: provider exchange failed", "app", a.Name, "provider", provider, "err", err)
		fail(origin, cbOAuthError)
		return
	}
	u, err := oauth.Resolve(ctx, a.DB, *id, now.UTC())
	if err != nil {
		internal(origin, "resolve the account", err)
		return
	}
	if u == nil {
		pending, err := oauth.NewPending(secret, a.Name, *id, now)
		if err != nil {
			internal(origin, "sign the pending token", err)
			return
		}
		redirectTo(c, oauth.CallbackURL(origin, "error", cbNoAccount, "app", a.Name, "pending", pending))
		return
	}
	if !auth.Enter.Allows(u.Privilege) {
		fail(origin, cbNotEnoughPrivil)
		return
	}
	token, _, err := auth.IssueToken(secret, a.Name, u, now.UTC())
	if err != nil {
		internal(origin, "sign the session token", err)
		return
	}
	redirectTo(c, oauth.CallbackURL(origin, "token", token, "app", a.Name))
}

// failOK answers a link or register failure: HTTP 200 with the error
// envelope (SPEC §4.3). Errors without a code are logged and answered as
// internal_error, as everywhere else.
func (s *Server) failOK(c *gin.Context, err error) {
	e, ok := errs.As(err)
	if !ok || e.Kind == errs.Internal {
		if errors.Is(err, context.Canceled) && c.Request.Context().Err() != nil {
			c.Abort()
			return
		}
		s.log.ErrorContext(c.Request.Context(), "request failed", "method", c.Request.Method,
			"path", c.Request.URL.Path, "err", err)
		e = errInternal
	}
	body := gin.H{"status": "error", "code": e.Code, "message": e.Message}
	for k, v := range e.Extra {
		body[k] = v
	}
	c.Abort()
	c.PureJSON(http.StatusOK, body)
}

// verifyPending checks the pending token of a link or register request.
func (s *Server) verifyPending(c *gin.Context, a *apps.App, token string) (*oauth.Pending, []byte, error) {
	secret, err := a.JWTSecret(c.Request.Context())
	if err != nil {
		return nil, nil, err
	}
	p, err := oauth.VerifyPending(secret, token, a.Name, s.now())
	if err != nil {
		return nil, nil, errInvalidPending
	}
	return p, secret, nil
}

type oauthLinkRequest struct {
	Pending  string `json:"pending"`
	Email    string `json:"email"`
	Password string `json:"password"`
}

// POST /auth/oauth/link {pending, email, password} — attach the identity of
// a pending token to an existing account whose password the caller knows.
// The password goes through the login routine, so the lock applies; a
// wrong password leaves the pending token usable (it is stateless).
func (s *Server) handleOAuthLink(c *gin.Context) {
	var req oauthLinkRequest
	if err := bindJSON(c, &req); err != nil {
		s.failOK(c, err)
		return
	}
	ctx := c.Request.Context()
	a := appOf(c)
	p, secret, err := s.verifyPending(c, a, req.Pending)
	if err != nil {
		s.failOK(c, err)
		return
	}
	// Already linked: answered before the password is looked at, so a
	// retry of a completed link costs no login attempt.
	if err := oauth.IdentityFree(ctx, a.DB, p.Provider, p.Sub); err != nil {
		s.failOK(c, err)
		return
	}
	if err := s.limits.SignIn(c.Request, a.Name, auth.NormalizeEmail(req.Email)); err != nil {
		s.failOK(c, err)
		return
	}
	u, err := s.authn.Login(ctx, a.DB, req.Email, req.Password)
	if err != nil {
		s.failOK(c, err)
		return
	}
	// A pending account gets no session, so it gets no identity either: it
	// would be a way in that approval has not granted.
	if !auth.Enter.Allows(u.Privilege) {
		s.failOK(c, auth.ErrAccountPending)
		return
	}
	now := s.now().UTC()
	if err := oauth.Link(ctx, a.DB, u.ID, p.Provider, p.Sub, now); err != nil {
		s.failOK(c, err)
		return
	}
	token, exp, err := auth.IssueToken(secret, a.Name, u, now)
	if err != nil {
		s.failOK(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "ok", "token": token, "expires_at": exp.Format(time.RFC3339), "user": userJSON(u)})
}

type oauthRegisterRequest struct {
	Pending string `json:"pending"`
	Email   string `json:"email"`
	// Name is optional: the provider's display name is used when it is
	// absent (ORCID gives it only when the researcher made it public).
	Name string `json:"name"`
}

// POST /auth/oauth/register {pending, email} — self-registration of an
// OAuth-only account: gated like password self-registration, created
// pending (40) with an inert password hash and the identity of the pending
// token, then the registration mails go out (undone if they cannot).
func (s *Server) handleOAuthRegister(c *gin.Context) {
	ctx := c.Request.Context()
	a := appOf(c)
	if err := s.checkRegistrationOpen(ctx, a); err != nil {
		s.failOK(c, err)
		return
	}
	if err := s.limits.Registration(c.Request); err != nil {
		s.fail(c, err)
		return
	}
	var req oauthRegisterRequest
	if err := bindJSON(c, &req); err != nil {
		s.failOK(c, err)
		return
	}
	p, _, err := s.verifyPending(c, a, req.Pending)
	if err != nil {
		s.failOK(c, err)
		return
	}
	email := auth.NormalizeEmail(req.Email)
	if err := auth.ValidateEmail(email); err != nil {
		s.failOK(c, err)
		return
	}
	if err := oauth.IdentityFree(ctx, a.DB, p.Provider, p.Sub); err != nil {
		s.failOK(c, err)
		return
	}
	// The inert hash is real bcrypt of random bytes at the configured cost:
	// no password opens the account, and a login attempt on it costs the
	// same as on any other.
	hash, err := auth.InertHash(s.authn.Cost())
	if err != nil {
		s.failOK(c, err)
		return
	}
	u, err := auth.RegisterPending(ctx, a.DB, auth.RegisterInput{Name: registrationName(req.Name, p.Name, email),
		Email: email, PasswordHash: hash, OAuthProvider: p.Provider, OAuthSub: p.Sub}, s.now().UTC())
	if err != nil {
		s.failOK(c, err)
		return
	}
	if err := s.sendRegistrationMails(c, a, u); err != nil {
		s.failOK(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "ok_registered"})
}

// registrationName picks the display name of an OAuth registration: the
// one sent, else the provider's, else the email's local part; cut to the
// length self-registration allows, since a provider's name is not ours to
// refuse.
func registrationName(sent, fromProvider, email string) string {
	name := auth.CleanName(sent)
	if name == "" {
		name = auth.CleanName(fromProvider)
	}
	if name == "" {
		name, _, _ = strings.Cut(email, "@")
	}
	if r := []rune(name); len(r) > auth.MaxNameLength {
		name = strings.TrimSpace(string(r[:auth.MaxNameLength]))
	}
	return name
}
