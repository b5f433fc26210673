package server

import (
	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/freesql"
)

// freeSQLSession is the session of a request for free SQL's unlock: the
// bearer session token, its user and that user's token version now. An
// API key or a signed link has none (an API key has no password to
// confirm, and keeps to sql_token, which it cannot get either).
func (s *Server) freeSQLSession(c *gin.Context) (freesql.Session, bool) {
	actor := actorOf(c)
	token := bearer(c.GetHeader("Authorization"))
	if actor.IsAPIKey() || actor.UserID == 0 || token == "" || auth.IsAPIKey(token) {
		return freesql.Session{}, false
	}
	g, ok := c.Get(ctxGrants)
	if !ok {
		return freesql.Session{}, false
	}
	u := g.(*auth.Grants).User
	if u == nil || u.ID != actor.UserID {
		return freesql.Session{}, false
	}
	return freesql.Session{App: appOf(c).Name, Token: token, UserID: u.ID, TokenVersion: u.TokenVersion}, true
}

// endFreeSQLUnlock drops the free SQL unlock of the session token a
// sign-out sends. Only a token that verifies for this app counts, so a
// stranger's request costs no write; a failure is logged, not answered:
// the client signs out anyway, and the unlock ends with its idle window.
func (s *Server) endFreeSQLUnlock(c *gin.Context) {
	token := bearer(c.GetHeader("Authorization"))
	if s.unlocks == nil || token == "" || auth.IsAPIKey(token) {
		return
	}
	a := appOf(c)
	secret, err := a.JWTSecret(c.Request.Context())
	if err != nil {
		return
	}
	if _, err := s.tokens.Parse(secret, token, s.now()); err != nil {
		return
	}
	if err := s.unlocks.End(c.Request.Context(), a.Name, token); err != nil {
		s.log.Warn("could not end the free SQL unlock at sign-out", "app", a.Name, "err", err)
	}
}
