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

// ErrVerify: run needs a token from verify, of this user, not expired.
var ErrVerify = errs.New(errs.Forbidden, "password_verification_required", "confirm your password (POST /free-sql/verify) and send its sql_token")

// Routes are free SQL's (CONTRACT §10): super_admin only, the password
// confirmed first.
func Routes(check PasswordCheck, now func() time.Time) []api.Route {
	h := handlers{check: check, now: now}
	return []api.Route{
		{Scope: api.App, Method: http.MethodPost, Path: "/free-sql/verify", Access: auth.SuperAdminOnly, Handler: h.verify},
		{Scope: api.App, Method: http.MethodPost, Path: "/free-sql/run", Access: auth.SuperAdminOnly, Handler: h.run},
	}
}

type handlers struct {
	check PasswordCheck
	now   func() time.Time
}

type verifyBody struct {
	Password string `json:"password"`
	Pwd      string `json:"pwd"`
}

// POST /free-sql/verify {password} — {code: "ok", sql_token} valid 10
// minutes for this user.
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
	if err := h.check(c, b.Password); err != nil {
		api.Fail(c, err)
		return
	}
	a, actor := api.AppOf(c), api.ActorOf(c)
	secret, err := a.JWTSecret(c.Request.Context())
	if err != nil {
		api.Fail(c, err)
		return
	}
	tok := auth.SignLink(secret, a.Name, tokenScope, actor.UserID, 0, h.now())
	api.Success(c, http.StatusOK, gin.H{"code": "ok", "sql_token": tok, "expires_in": int(auth.LinkTTL.Seconds())})
}

type runBody struct {
	SQL      string `json:"sql"`
	SQLToken string `json:"sql_token"`
}

// POST /free-sql/run {sql, sql_token} (or X-Strata-Sql-Token) — a read
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
	secret, err := a.JWTSecret(c.Request.Context())
	if err != nil {
		api.Fail(c, err)
		return
	}
	claims, err := auth.VerifyLink(secret, a.Name, tokenScope, strings.TrimSpace(tok), h.now())
	if err != nil || claims.UserID != actor.UserID || actor.UserID == 0 {
		api.Fail(c, ErrVerify)
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
