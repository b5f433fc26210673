package server

import (
	"context"
	"math"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/ratelimit"
	"github.com/strata-archaeo/strata/core/store"
)

var errRateLimited = errs.New(errs.TooManyRequests, "rate_limited", "too many attempts: wait and try again")

// limits are the rate limits of CONTRACT §10. They slow an attacker before
// the account lock (SPEC §3.1), which stays as it is. On PostgreSQL the
// budgets are shared by every node of the instance (ratelimit.Shared, after
// each node's own counter); SQLite serves one node, whose memory holds them.
type limits struct {
	proxies       ratelimit.Proxies
	signInAddr    *ratelimit.Limiter // every sign-in attempt, per client address
	signInAccount *ratelimit.Limiter // every sign-in attempt, per app and email
	resetAddr     *ratelimit.Limiter // reset requests, per client address
	resetMail     *ratelimit.Limiter // reset mails, per address mailed
	keyFail       *ratelimit.Limiter // failed API-key authentications, per client address
	registerAddr  *ratelimit.Limiter // self-registrations, per client address
	oauthAddr     *ratelimit.Limiter // OAuth sign-ins started, per client address
}

func newLimits(r config.RateLimits, trusted []string, now func() time.Time, shared *ratelimit.Shared) (*limits, error) {
	proxies, err := ratelimit.ParseProxies(trusted)
	if err != nil {
		return nil, err
	}
	limiter := func(name string, limit int, window time.Duration) *ratelimit.Limiter {
		l := ratelimit.New(limit, window, now)
		if shared != nil {
			l.ShareThrough(shared, name)
		}
		return l
	}
	return &limits{
		proxies:       proxies,
		signInAddr:    limiter("signin_addr", r.SignInPerAddr, time.Minute),
		signInAccount: limiter("signin_account", r.SignInPerAccount, time.Minute),
		resetAddr:     limiter("reset_addr", r.ResetPerAddr, time.Minute),
		resetMail:     limiter("reset_mail", r.ResetMailsPerHour, time.Hour),
		keyFail:       limiter("apikey_fail", r.APIKeyFailsPerAddr, time.Minute),
		registerAddr:  limiter("register_addr", r.RegisterPerAddr, time.Minute),
		oauthAddr:     limiter("oauth_start_addr", r.OAuthStartPerAddr, time.Minute),
	}, nil
}

// sharedLimits is the store that makes the limits hold across nodes: on
// PostgreSQL a table in the instance's service schema `<ns>__limits`;
// nil on SQLite (one node) or when no limit is on.
func sharedLimits(reg *apps.Registry, r config.RateLimits) (*ratelimit.Shared, error) {
	if reg == nil || r == (config.RateLimits{}) {
		return nil, nil
	}
	pg, ok := reg.Backend().(*store.PostgresBackend)
	if !ok {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return ratelimit.NewShared(ctx, pg.Pool(), pg.ServiceSchema("limits"))
}

// limited is the 429 answer, with the whole seconds to wait (Retry-After).
func limited(retry time.Duration) error {
	return errRateLimited.With("retry_after", int(math.Ceil(retry.Seconds())))
}

// clientAddr is the caller's address as the limits see it.
func (s *Server) clientAddr(c *gin.Context) string { return s.limits.proxies.ClientAddr(c.Request) }

// allowSignIn counts one sign-in attempt with email on the app, before
// any password is checked: first per address, then per account (an
// attempt refused for its address costs the account nothing).
func (s *Server) allowSignIn(c *gin.Context, app, email string) error {
	ctx := c.Request.Context()
	if ok, retry := s.limits.signInAddr.AllowContext(ctx, s.clientAddr(c)); !ok {
		return limited(retry)
	}
	if ok, retry := s.limits.signInAccount.AllowContext(ctx, app+"\x00"+auth.NormalizeEmail(email)); !ok {
		return limited(retry)
	}
	return nil
}

// allowResetRequest counts one reset request per client address. It runs
// before the account is looked up, so the answer never depends on it.
func (s *Server) allowResetRequest(c *gin.Context) error {
	if ok, retry := s.limits.resetAddr.AllowContext(c.Request.Context(), s.clientAddr(c)); !ok {
		return limited(retry)
	}
	return nil
}

// allowResetMail reports whether one more reset mail may go to email. The
// budget is taken whether or not an account has the address, so the
// caller's answer and timing do not depend on it.
func (s *Server) allowResetMail(ctx context.Context, email string) bool {
	ok, _ := s.limits.resetMail.AllowContext(ctx, auth.NormalizeEmail(email))
	return ok
}

// allowRegistration counts one self-registration (password or OAuth) per
// client address, before anything is checked or hashed.
func (s *Server) allowRegistration(c *gin.Context) error {
	if ok, retry := s.limits.registerAddr.AllowContext(c.Request.Context(), s.clientAddr(c)); !ok {
		return limited(retry)
	}
	return nil
}

// allowOAuthStart counts one OAuth sign-in started per client address: each
// start stores a state and sends the browser to the provider.
func (s *Server) allowOAuthStart(c *gin.Context) error {
	if ok, retry := s.limits.oauthAddr.AllowContext(c.Request.Context(), s.clientAddr(c)); !ok {
		return limited(retry)
	}
	return nil
}

// checkKeyFailures refuses an API key from an address that has failed too
// often; keyFailed counts one failure.
func (s *Server) checkKeyFailures(c *gin.Context) error {
	if ok, retry := s.limits.keyFail.CheckContext(c.Request.Context(), s.clientAddr(c)); !ok {
		return limited(retry)
	}
	return nil
}

func (s *Server) keyFailed(c *gin.Context) {
	s.limits.keyFail.AllowContext(c.Request.Context(), s.clientAddr(c))
}
