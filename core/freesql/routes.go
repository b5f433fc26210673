package freesql

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/applog"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
)

// PasswordCheck verifies the caller's own password (with the sign-in
// rate limits and lockout).
type PasswordCheck func(c *gin.Context, password string) error

// tokenScope is what a free-SQL token is signed for (auth.SignLink).
const tokenScope = "free-sql"

// ErrVerify: run needs a token from verify, of this user, not expired,
// or (without a token) a session that verify unlocked.
var ErrVerify = errs.New(errs.Forbidden, "password_verification_required", "confirm your password (POST /free-sql/verify), then run within its unlock or send its sql_token")

// SessionOf is the request's session, false for a caller without one (an
// API key): the HTTP layer knows the bearer token and its version.
type SessionOf func(c *gin.Context) (Session, bool)

// Deps are what free SQL's routes need from the server.
type Deps struct {
	Check   PasswordCheck
	Now     func() time.Time
	Unlocks Unlocks   // nil: no session unlock, sql_token only
	Session SessionOf // nil: likewise
}

// Routes are free SQL's (CONTRACT §10): super_admin only, the password
// confirmed first.
func Routes(d Deps) []api.Route {
	h := handlers{Deps: d}
	return []api.Route{
		{Scope: api.App, Method: http.MethodPost, Path: "/free-sql/verify", Access: auth.SuperAdminOnly, Handler: h.verify},
		{Scope: api.App, Method: http.MethodPost, Path: "/free-sql/run", Access: auth.SuperAdminOnly, Handler: h.run},
	}
}

type handlers struct{ Deps }

// session is the caller's session when unlocks are on and it has one.
func (h handlers) session(c *gin.Context) (Session, bool) {
	if h.Unlocks == nil || h.Session == nil {
		return Session{}, false
	}
	return h.Session(c)
}

type verifyBody struct {
	Password string `json:"password"`
	Pwd      string `json:"pwd"`
}

// POST /free-sql/verify {password} — {code: "ok", sql_token} valid 10
// minutes for this user; a session token's session is also unlocked
// (BraDypUS's client runs without the token).
func (h handlers) verify(c *gin.Context) {
	var b verifyBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	if b.Password == "" {
		b.Password = b.Pwd
	}
	if b.Password == "" {
		api.Fail(c, errs.New(errs.Invalid, "parameter_missing", "password is required"))
		return
	}
	if err := h.Check(c, b.Password); err != nil {
		api.Fail(c, err)
		return
	}
	a, actor := api.AppOf(c), api.ActorOf(c)
	secret, err := a.JWTSecret(c.Request.Context())
	if err != nil {
		api.Fail(c, err)
		return
	}
	if sess, ok := h.session(c); ok {
		if err := h.Unlocks.Grant(c.Request.Context(), sess, h.Now()); err != nil {
			api.Fail(c, err)
			return
		}
	}
	tok := auth.SignLink(secret, a.Name, tokenScope, actor.UserID, 0, h.Now())
	api.Success(c, http.StatusOK, gin.H{"code": "ok", "sql_token": tok, "expires_in": int(auth.LinkTTL.Seconds())})
}

type runBody struct {
	SQL      string `json:"sql"`
	SQLToken string `json:"sql_token"`
}

// POST /free-sql/run {sql, sql_token} (or X-Strata-Sql-Token), or {sql}
// alone in a session verify unlocked — a read
// answers {code: "ok", columns, rows, total, truncated}; a write
// {code: "ok_free_sql_run", affected}. The statement goes to the log.
func (h handlers) run(c *gin.Context) {
	var b runBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	tok := b.SQLToken
	if tok == "" {
		tok = c.GetHeader("X-Strata-Sql-Token")
	}
	a, actor := api.AppOf(c), api.ActorOf(c)
	if err := h.unlocked(c, strings.TrimSpace(tok), actor.UserID); err != nil {
		api.Fail(c, err)
		return
	}
	if strings.TrimSpace(b.SQL) == "" {
		api.Fail(c, errNoSQL)
		return
	}
	c.Set(applog.CtxDetail, map[string]any{"sql": b.SQL})
	res, err := Run(c.Request.Context(), a.DB, b.SQL, Options{})
	if err != nil {
		api.Fail(c, err)
		return
	}
	if res.Kind == Write {
		api.Success(c, http.StatusOK, gin.H{"code": "ok_free_sql_run", "affected": res.Affected})
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok", "columns": res.Columns, "rows": res.Rows, "total": len(res.Rows), "truncated": res.Truncated})
}

// unlocked lets a run through: with a sql_token, that token decides, as
// before session unlocks (Strata's own client sends it); without one, the
// caller's session must be unlocked.
func (h handlers) unlocked(c *gin.Context, tok string, user int64) error {
	if user == 0 {
		return ErrVerify
	}
	if tok != "" {
		a := api.AppOf(c)
		secret, err := a.JWTSecret(c.Request.Context())
		if err != nil {
			return err
		}
		claims, err := auth.VerifyLink(secret, a.Name, tokenScope, tok, h.Now())
		if err != nil || claims.UserID != user {
			return ErrVerify
		}
		return nil
	}
	sess, ok := h.session(c)
	if !ok {
		return ErrVerify
	}
	open, err := h.Unlocks.Use(c.Request.Context(), sess, h.Now())
	if err != nil {
		return err
	}
	if !open {
		return ErrVerify
	}
	return nil
}
