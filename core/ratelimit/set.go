package ratelimit

import (
	"context"
	"math"
	"net/http"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
)

// ErrLimited is the 429 answer of every limit (CONTRACT §10).
var ErrLimited = errs.New(errs.TooManyRequests, "rate_limited", "too many attempts: wait and try again")

// Set holds the instance's limits of CONTRACT §10. They slow an attacker
// before the account lock (SPEC §3.1), which stays as it is. With a Shared
// store (PostgreSQL) each budget holds across every node of the instance,
// after each node's own counter; SQLite serves one node, whose memory
// holds them.
type Set struct {
	proxies       Proxies
	signInAddr    *Limiter // every sign-in attempt, per client address
	signInAccount *Limiter // every sign-in attempt, per app and email
	resetAddr     *Limiter // reset requests, per client address
	resetMail     *Limiter // reset mails, per address mailed
	keyFail       *Limiter // failed API-key authentications, per client address
	registerAddr  *Limiter // self-registrations, per client address
	oauthAddr     *Limiter // OAuth sign-ins started, per client address
	folderLock    *Limiter // failed super-admin checks of a BraDypUS folder, per app and email
}

// NewSet builds the limits r, the client address read behind the trusted
// proxies, sharing their budgets through shared when it is not nil.
func NewSet(r config.RateLimits, trusted []string, now func() time.Time, shared *Shared) (*Set, error) {
	proxies, err := ParseProxies(trusted)
	if err != nil {
		return nil, err
	}
	limiter := func(name string, limit int, window time.Duration) *Limiter {
		l := New(limit, window, now)
		if shared != nil {
			l.ShareThrough(shared, name)
		}
		return l
	}
	return &Set{
		proxies:       proxies,
		signInAddr:    limiter("signin_addr", r.SignInPerAddr, time.Minute),
		signInAccount: limiter("signin_account", r.SignInPerAccount, time.Minute),
		resetAddr:     limiter("reset_addr", r.ResetPerAddr, time.Minute),
		resetMail:     limiter("reset_mail", r.ResetMailsPerHour, time.Hour),
		keyFail:       limiter("apikey_fail", r.APIKeyFailsPerAddr, time.Minute),
		registerAddr:  limiter("register_addr", r.RegisterPerAddr, time.Minute),
		oauthAddr:     limiter("oauth_start_addr", r.OAuthStartPerAddr, time.Minute),
		// The account lock's rule, which no setting turns off (as auth.Login's).
		folderLock: limiter("folder_lock", auth.MaxFailedLogins, auth.LockDuration),
	}, nil
}

// limited is the 429 answer, with the whole seconds to wait (Retry-After).
func limited(retry time.Duration) error {
	return ErrLimited.With("retry_after", int(math.Ceil(retry.Seconds())))
}

func allow(l *Limiter, ctx context.Context, key string) error {
	if ok, retry := l.AllowContext(ctx, key); !ok {
		return limited(retry)
	}
	return nil
}

// ClientAddr is the caller's address as the limits see it.
func (s *Set) ClientAddr(r *http.Request) string { return s.proxies.ClientAddr(r) }

// SignIn counts one sign-in attempt with email (normalised) on app,
// before any password is checked: first per address, then per account
// (an attempt refused for its address costs the account nothing).
func (s *Set) SignIn(r *http.Request, app, email string) error {
	if err := allow(s.signInAddr, r.Context(), s.ClientAddr(r)); err != nil {
		return err
	}
	return allow(s.signInAccount, r.Context(), app+"\x00"+email)
}

// ResetRequest counts one reset request per client address. It runs
// before the account is looked up, so the answer never depends on it.
func (s *Set) ResetRequest(r *http.Request) error {
	return allow(s.resetAddr, r.Context(), s.ClientAddr(r))
}

// ResetMail reports whether one more reset mail may go to email
// (normalised). The budget is taken whether or not an account has the
// address, so the caller's answer and timing do not depend on it.
func (s *Set) ResetMail(ctx context.Context, email string) bool {
	ok, _ := s.resetMail.AllowContext(ctx, email)
	return ok
}

// Registration counts one self-registration (password or OAuth) per
// client address, before anything is checked or hashed.
func (s *Set) Registration(r *http.Request) error {
	return allow(s.registerAddr, r.Context(), s.ClientAddr(r))
}

// OAuthStart counts one OAuth sign-in started per client address: each
// start stores a state and sends the browser to the provider.
func (s *Set) OAuthStart(r *http.Request) error {
	return allow(s.oauthAddr, r.Context(), s.ClientAddr(r))
}

// CheckKeyFailures refuses an API key from an address that has failed too
// often; KeyFailed counts one failure.
func (s *Set) CheckKeyFailures(r *http.Request) error {
	if ok, retry := s.keyFail.CheckContext(r.Context(), s.ClientAddr(r)); !ok {
		return limited(retry)
	}
	return nil
}

// KeyFailed counts one failed API-key authentication of the caller's address.
func (s *Set) KeyFailed(r *http.Request) { s.keyFail.AllowContext(r.Context(), s.ClientAddr(r)) }

// FolderSignIn counts one attempt at a BraDypUS folder's super-admin
// check (POST /<app>/api/upgrade/major) as a sign-in: SignIn's budgets,
// keyed as a sign-in to app with email (normalised), so guesses there and
// at sign-in draw on the same limits. The folder's bdus_users is read
// only and the application has no Strata accounts yet, so the lock of
// SPEC §3.1 is kept here instead of in sys_login_attempts, at its rate:
// at most auth.MaxFailedLogins failures per auth.LockDuration (a burst of
// five, then one more every three minutes; FolderFailed counts them).
// Beyond it an attempt answers account_locked, as a locked sign-in does,
// before any password is looked at.
func (s *Set) FolderSignIn(r *http.Request, app, email string) error {
	if err := s.SignIn(r, app, email); err != nil {
		return err
	}
	if ok, retry := s.folderLock.CheckContext(r.Context(), app+"\x00"+email); !ok {
		return auth.ErrAccountLocked.With("retry_after", int(math.Ceil(retry.Seconds())))
	}
	return nil
}

// FolderFailed counts one failed super-admin check of a BraDypUS folder.
func (s *Set) FolderFailed(r *http.Request, app, email string) {
	s.folderLock.AllowContext(r.Context(), app+"\x00"+email)
}
