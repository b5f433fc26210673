package server

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/applog"
	"github.com/strata-archaeo/strata/core/auth"
)

type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

func userJSON(u *auth.User) gin.H {
	return gin.H{"id": u.ID, "name": u.Name, "email": u.Email, "privilege": u.Privilege}
}

// issue signs a session token for u and writes it with the user.
func (s *Server) issue(c *gin.Context, u *auth.User) {
	body := gin.H{"user": userJSON(u)}
	if err := s.addToken(c, u, body); err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, body)
}

// addToken puts a new session token of u and its expiry in body.
func (s *Server) addToken(c *gin.Context, u *auth.User, body gin.H) error {
	a := appOf(c)
	secret, err := a.JWTSecret(c.Request.Context())
	if err != nil {
		return err
	}
	token, exp, err := auth.IssueToken(secret, a.Name, u, s.now().UTC())
	if err != nil {
		return err
	}
	body["token"], body["expires_at"] = token, exp.Format(time.RFC3339)
	return nil
}

// POST /auth/login — password login (SPEC §3.1, §5.2).
func (s *Server) handleLogin(c *gin.Context) {
	var req loginRequest
	if err := bindJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	c.Set(applog.CtxSubject, auth.NormalizeEmail(req.Email)) // whom a failed sign-in was for, in the log
	if err := s.limits.SignIn(c.Request, appOf(c).Name, auth.NormalizeEmail(req.Email)); err != nil {
		s.metrics.SignIn(err)
		s.fail(c, err)
		return
	}
	u, err := s.authn.Login(c.Request.Context(), appOf(c).DB, req.Email, req.Password)
	if err == nil && !auth.Enter.Allows(u.Privilege) {
		err = auth.ErrAccountPending
	}
	s.metrics.SignIn(err)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.issue(c, u)
}

// GET /auth/refresh — a fresh token carrying the current privilege.
func (s *Server) handleRefresh(c *gin.Context) {
	u, err := auth.FindUser(c.Request.Context(), appOf(c).DB, actorOf(c).UserID)
	if err != nil {
		// An API key has no session to refresh.
		s.fail(c, auth.ErrUnauthenticated.With("reason", "not_a_session"))
		return
	}
	s.issue(c, u)
}

// GET /auth/logout — sessions are stateless tokens held per browser tab;
// the client forgets its token. Revoking every token of a user is
// POST /user/{id}/revoke. What the server keeps for the session (a free
// SQL unlock) ends here.
func (s *Server) handleLogout(c *gin.Context) {
	s.endFreeSQLUnlock(c)
	success(c, http.StatusOK, nil)
}

type checkPasswordRequest struct {
	Password string `json:"password"`
	Pwd      string `json:"pwd"`
}

// POST /admin/check-password — re-confirm the caller's password before a
// destructive operation, through the login routine (so the lock applies).
func (s *Server) handleCheckPassword(c *gin.Context) {
	var req checkPasswordRequest
	if err := bindJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if req.Password == "" {
		req.Password = req.Pwd
	}
	if err := s.checkPassword(c, req.Password); err != nil {
		s.fail(c, err)
		return
	}
	// BraDypUS's code (its spelling), which its client's messages know.
	success(c, http.StatusOK, gin.H{"code": "valid_pasword"})
}

// checkPassword verifies the caller's own password, with the sign-in
// rate limits and lockout.
func (s *Server) checkPassword(c *gin.Context, password string) error {
	if err := s.limits.SignIn(c.Request, appOf(c).Name, auth.NormalizeEmail(actorOf(c).Email)); err != nil {
		return err
	}
	_, err := s.authn.Login(c.Request.Context(), appOf(c).DB, actorOf(c).Email, password)
	return err
}

// GET /migrations — applied and pending system migrations (admin).
func (s *Server) handleMigrations(c *gin.Context) {
	db := appOf(c).DB
	applied, err := db.AppliedMigrations(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	pending, err := db.PendingMigrations(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	// BraDypUS's client reads counts and one list with each step's state.
	list := make([]gin.H, 0, len(applied)+len(pending))
	for _, m := range applied {
		list = append(list, gin.H{"id": m.ID, "name": m.Name, "applied": true, "applied_at": m.AppliedAt})
	}
	pend := make([]gin.H, 0, len(pending))
	for _, m := range pending {
		pend = append(pend, gin.H{"id": m.ID, "name": m.Name})
		list = append(list, gin.H{"id": m.ID, "name": m.Name, "applied": false, "applied_at": nil})
	}
	success(c, http.StatusOK, gin.H{"total": len(list), "applied": len(applied), "migrations": list, "pending": pend})
}
