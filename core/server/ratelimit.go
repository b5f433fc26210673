package server

import (
	"math"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/ratelimit"
)

var errRateLimited = errs.New(errs.TooManyRequests, "rate_limited", "too many attempts: wait and try again")

// limits are the rate limits of CONTRACT §10. They slow an attacker before
// the account lock (SPEC §3.1), which stays as it is. Counters are kept in
// this node's memory (package ratelimit says why), so with N nodes an
// address gets at most N times each rate; the lock, in the database,
// holds across nodes.
type limits struct {
	proxies       ratelimit.Proxies
	signInAddr    *ratelimit.Limiter // every sign-in attempt, per client address
	signInAccount *ratelimit.Limiter // every sign-in attempt, per app and email
	resetAddr     *ratelimit.Limiter // reset requests, per client address
	resetMail     *ratelimit.Limiter // reset mails, per address mailed
	keyFail       *ratelimit.Limiter // failed API-key authentications, per client address
}

func newLimits(r config.RateLimits, trusted []string, now func() time.Time) (*limits, error) {
	proxies, err := ratelimit.ParseProxies(trusted)
	if err != nil {
		return nil, err
	}
	return &limits{
		proxies:       proxies,
		signInAddr:    ratelimit.New(r.SignInPerAddr, time.Minute, now),
		signInAccount: ratelimit.New(r.SignInPerAccount, time.Minute, now),
		resetAddr:     ratelimit.New(r.ResetPerAddr, time.Minute, now),
		resetMail:     ratelimit.New(r.ResetMailsPerHour, time.Hour, now),
		keyFail:       ratelimit.New(r.APIKeyFailsPerAddr, time.Minute, now),
	}, nil
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
	if ok, retry := s.limits.signInAddr.Allow(s.clientAddr(c)); !ok {
		return limited(retry)
	}
	if ok, retry := s.limits.signInAccount.Allow(app + "\x00" + auth.NormalizeEmail(email)); !ok {
		return limited(retry)
	}
	return nil
}

// allowResetRequest counts one reset request per client address. It runs
// before the account is looked up, so the answer never depends on it.
func (s *Server) allowResetRequest(c *gin.Context) error {
	if ok, retry := s.limits.resetAddr.Allow(s.clientAddr(c)); !ok {
		return limited(retry)
	}
	return nil
}

// allowResetMail reports whether one more reset mail may go to email. The
// budget is taken whether or not an account has the address, so the
// caller's answer and timing do not depend on it.
func (s *Server) allowResetMail(email string) bool {
	ok, _ := s.limits.resetMail.Allow(auth.NormalizeEmail(email))
	return ok
}

// checkKeyFailures refuses an API key from an address that has failed too
// often; keyFailed counts one failure.
func (s *Server) checkKeyFailures(c *gin.Context) error {
	if ok, retry := s.limits.keyFail.Check(s.clientAddr(c)); !ok {
		return limited(retry)
	}
	return nil
}

func (s *Server) keyFailed(c *gin.Context) { s.limits.keyFail.Allow(s.clientAddr(c)) }
