package server

import (
	"context"
	"errors"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
)

// Context keys of the authenticated request.
const (
	ctxActor = api.CtxActor
	ctxLevel = api.CtxLevel
)

// actorOf returns who is calling (set by authenticate).
func actorOf(c *gin.Context) *auth.Actor { return c.MustGet(ctxActor).(*auth.Actor) }

// ActorOf returns who is calling, for routes mounted through ExtraRoutes.
func ActorOf(c *gin.Context) *auth.Actor { return actorOf(c) }

// LevelOf returns the privilege level that passed the route's gate: the
// per-table override on routes naming a table, else the global level.
func LevelOf(c *gin.Context) int { return c.GetInt(ctxLevel) }

// bearer extracts the credential of an "Authorization: Bearer X" header.
func bearer(header string) string {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(cred)
}

// authenticator is the route's authentication step (identify).
func (s *Server) authenticator(links bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		if s.identify(c, links) {
			c.Next()
		}
	}
}

// identify resolves the caller: authenticate, or for a route that takes
// signed links, a `t` parameter when no Authorization header is sent. It
// sets the actor, or answers the failure and returns false.
func (s *Server) identify(c *gin.Context, links bool) bool {
	t := c.Query("t")
	if !links || t == "" || c.GetHeader("Authorization") != "" {
		return s.authenticate(c)
	}
	actor, err := s.actorFromLink(c, appOf(c), t)
	if err == nil && !auth.Enter.Allows(actor.Privilege) {
		err = auth.ErrAccountPending
	}
	if err != nil {
		s.fail(c, err)
		return false
	}
	c.Set(ctxActor, actor)
	return true
}

// admit is identify then the route's privilege check (permit), for
// routes that run them without the middleware chain (readOnly).
func (s *Server) admit(c *gin.Context, links bool, access auth.Access, tableQuery string) bool {
	return s.identify(c, links) && s.permit(c, access, tableQuery)
}

// actorFromLink verifies a signed link for this request's path and reads
// its user as a session token's would be: deleted → 401, sessions ended
// (token version moved on) → 401 token_invalidated.
func (s *Server) actorFromLink(c *gin.Context, a *apps.App, t string) (*auth.Actor, error) {
	secret, err := a.JWTSecret(c.Request.Context())
	if err != nil {
		return nil, err
	}
	claims, err := auth.VerifyLink(secret, a.Name, c.Request.URL.Path, t, s.now())
	if err != nil {
		return nil, err
	}
	v, err := s.requestVersions(c)
	if err != nil {
		return nil, err
	}
	grants, err := s.access.Get(c.Request.Context(), a.Name, a.DB, claims.UserID, v.auth)
	if errors.Is(err, auth.ErrUserNotFound) {
		return nil, auth.ErrInvalidLink.With("reason", "user_deleted")
	}
	if err != nil {
		return nil, err
	}
	if claims.TokenVersion < grants.User.TokenVersion {
		return nil, auth.ErrTokenInvalidated
	}
	c.Set(ctxGrants, grants)
	u := grants.User
	return &auth.Actor{UserID: u.ID, Name: u.Name, Email: u.Email, Privilege: u.Privilege}, nil
}

// authenticate resolves the bearer credential (a JWT or an svc_ API key)
// into an actor whose privilege is read from the database now, not from
// the token. A credential of another application answers app_mismatch.
// It answers the failure and returns false, or sets the actor.
func (s *Server) authenticate(c *gin.Context) bool {
	cred := bearer(c.GetHeader("Authorization"))
	if cred == "" {
		s.fail(c, auth.ErrUnauthenticated.With("reason", "missing"))
		return false
	}
	ctx := c.Request.Context()
	a := appOf(c)
	var actor *auth.Actor
	var err error
	if auth.IsAPIKey(cred) {
		if err := s.limits.CheckKeyFailures(c.Request); err != nil {
			s.fail(c, err)
			return false
		}
		actor, err = s.actorFromKey(ctx, a, cred)
		if err != nil && errs.CodeOf(err) == "unauthenticated" {
			s.limits.KeyFailed(c.Request)
		}
	} else {
		actor, err = s.actorFromToken(c, a, cred)
	}
	if err != nil {
		s.fail(c, err)
		return false
	}
	if !auth.Enter.Allows(actor.Privilege) {
		s.fail(c, auth.ErrAccountPending)
		return false
	}
	c.Set(ctxActor, actor)
	return true
}

func (s *Server) actorFromToken(c *gin.Context, a *apps.App, token string) (*auth.Actor, error) {
	ctx := c.Request.Context()
	claimed, ok := s.tokens.App(token)
	if !ok {
		return nil, auth.ErrUnauthenticated.With("reason", "invalid")
	}
	if claimed != a.Name {
		return nil, s.foreignTokenError(ctx, claimed, token)
	}
	secret, err := a.JWTSecret(ctx)
	if err != nil {
		return nil, err
	}
	claims, err := s.tokens.Parse(secret, token, s.now())
	if err != nil {
		return nil, err
	}
	id, _ := claims.UserID()
	v, err := s.requestVersions(c)
	if err != nil {
		return nil, err
	}
	grants, err := s.access.Get(ctx, a.Name, a.DB, id, v.auth)
	if errors.Is(err, auth.ErrUserNotFound) {
		return nil, auth.ErrUnauthenticated.With("reason", "user_deleted")
	}
	if err != nil {
		return nil, err
	}
	c.Set(ctxGrants, grants)
	user := grants.User
	if claims.TokenVersion < user.TokenVersion {
		return nil, auth.ErrTokenInvalidated
	}
	// File entries in the answer carry links signed for this user
	// (auth.SignedURL), which browsers fetch without this header.
	uid, tkv, app := user.ID, user.TokenVersion, a.Name
	c.Request = c.Request.WithContext(auth.WithLinkSigner(ctx, func(path string) string {
		return auth.SignLink(secret, app, path, uid, tkv, s.now())
	}))
	return &auth.Actor{UserID: user.ID, Name: user.Name, Email: user.Email, Privilege: user.Privilege}, nil
}

// foreignTokenError tells a token genuinely issued by another application
// (app_mismatch) from a forged or broken one (unauthenticated): only a
// signature that verifies with the claimed app's secret counts.
func (s *Server) foreignTokenError(ctx context.Context, claimed, token string) error {
	other, err := s.apps.Get(ctx, claimed)
	if err != nil {
		return auth.ErrUnauthenticated.With("reason", "invalid")
	}
	secret, err := other.JWTSecret(ctx)
	if err != nil {
		return err
	}
	if _, err := auth.ParseToken(secret, token, s.now()); err != nil {
		return err
	}
	return auth.ErrAppMismatch
}

func (s *Server) actorFromKey(ctx context.Context, a *apps.App, plain string) (*auth.Actor, error) {
	key, err := auth.FindAPIKey(ctx, a.DB, plain)
	if errors.Is(err, auth.ErrAPIKeyNotFound) {
		return nil, s.foreignKeyError(ctx, a.Name, plain)
	}
	if err != nil {
		return nil, err
	}
	if !key.Active() {
		return nil, auth.ErrUnauthenticated.With("reason", "revoked")
	}
	if err := auth.TouchAPIKey(ctx, a.DB, key, s.now().UTC()); err != nil {
		s.log.Warn("could not record api key use", "app", a.Name, "key", key.ID, "err", err)
	}
	return &auth.Actor{KeyID: key.ID, Name: key.Label, Privilege: key.Privilege}, nil
}

// foreignKeyError looks the key up in the other applications, so a key
// used on the wrong application gets app_mismatch rather than a bare 401.
// Only an active key counts.
func (s *Server) foreignKeyError(ctx context.Context, current, plain string) error {
	names, err := s.apps.List(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		if n == current {
			continue
		}
		other, err := s.apps.Get(ctx, n)
		if err != nil {
			continue
		}
		if k, err := auth.FindAPIKey(ctx, other.DB, plain); err == nil && k.Active() {
			return auth.ErrAppMismatch
		}
	}
	return auth.ErrUnauthenticated.With("reason", "invalid")
}

// authorize is the route's privilege check (permit).
func (s *Server) authorize(access auth.Access, tableQuery string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if s.permit(c, access, tableQuery) {
			c.Next()
		}
	}
}

// permit checks the actor against the route's access. On routes naming
// a table (a :tb path parameter, or the query parameter tableQuery of a
// plugin route), a per-table override replaces the global level for
// record work; several tables give the least of their levels. It answers
// the failure and returns false, or sets the level.
func (s *Server) permit(c *gin.Context, access auth.Access, tableQuery string) bool {
	actor := actorOf(c)
	level := actor.Privilege
	if tables := routeTables(c, tableQuery); len(tables) > 0 && access.TableScoped() {
		// The overrides are loaded once per request and kept for the
		// handler, which needs them again for the row subset.
		acc, err := s.callerAccess(c)
		if err != nil {
			s.fail(c, err)
			return false
		}
		// The catalog tells a plugin table, whose level is its parent's
		// at most (records.Grants.Level).
		cat, err := s.requestCatalog(c)
		if err != nil {
			s.fail(c, err)
			return false
		}
		for i, table := range tables {
			// Privilege numbers: the larger, the less the caller may.
			if l := acc.Level(cat, table); i == 0 || l > level {
				level = l
			}
		}
	}
	if !access.Allows(level) {
		s.fail(c, auth.ErrNotEnoughPrivilege.With("required", access.String()))
		return false
	}
	c.Set(ctxLevel, level)
	return true
}

// routeTables are the tables a request names for the gate: the :tb path
// parameter, then each value of the query parameter tableQuery (repeated
// or comma-separated). Every one is checked (a look-up in the caller's
// overrides each; the request line bounds their number).
func routeTables(c *gin.Context, tableQuery string) []string {
	var out []string
	add := func(t string) {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	add(c.Param("tb"))
	if tableQuery != "" {
		for _, v := range c.QueryArray(tableQuery) {
			for _, t := range strings.Split(v, ",") {
				add(t)
			}
		}
	}
	return out
}
