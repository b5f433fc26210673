package server

import (
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/mail"
	"github.com/strata-archaeo/strata/core/oauth"
)

var errResetEmailMissing = errs.New(errs.Invalid, "parameter_missing", "email is required").With("parameter", "email")

// resetRequested is the one answer of a reset request, whether or not an
// account has the email (CONTRACT §3).
const resetRequestedMessage = "if an account has this email, a message with a reset link has been sent to it"

type resetRequest struct {
	Email string `json:"email"`
}

// POST /auth/password-reset/request {email} — mail a single-use reset link
// valid for one hour (SPEC §3.4, §5.3).
//
// The answer does not tell whether the email has an account: same body,
// same statements (auth.StartPasswordReset runs its update either way), and
// where there is no one to mail the handler waits about as long as a send
// takes (mail.Client.Imitate). The one difference left is a failing mail
// provider, which a known account answers with 502 email_send_failed: the
// person must learn that no link is coming, and that case depends on the
// provider, not on anything a caller controls.
func (s *Server) handleResetRequest(c *gin.Context) {
	ctx := c.Request.Context()
	a := appOf(c)
	if !s.mailer.Configured() {
		s.fail(c, mail.ErrNotConfigured)
		return
	}
	if err := s.limits.ResetRequest(c.Request); err != nil {
		s.fail(c, err)
		return
	}
	var req resetRequest
	if err := bindJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	email := auth.NormalizeEmail(req.Email)
	if email == "" {
		s.fail(c, errResetEmailMissing)
		return
	}
	if !s.limits.ResetMail(c.Request.Context(), email) {
		// The address had its mails for the hour: the same answer as for
		// an unknown account, no mail, and any link already sent stays
		// valid (no new token replaces it).
		s.mailer.Imitate(ctx)
		success(c, http.StatusOK, gin.H{"code": "ok_reset_requested", "message": resetRequestedMessage})
		return
	}
	u, token, err := auth.StartPasswordReset(ctx, a.DB, email, s.now().UTC())
	if err != nil {
		s.fail(c, err)
		return
	}
	base, err := s.resetLinkBase(c, a)
	if err != nil {
		s.fail(c, err)
		return
	}
	label, err := a.Label(ctx)
	if err != nil {
		s.fail(c, err)
		return
	}
	if u == nil {
		s.mailer.Imitate(ctx)
		success(c, http.StatusOK, gin.H{"code": "ok_reset_requested", "message": resetRequestedMessage})
		return
	}
	// The link and the mail use the address stored on the account, not
	// what the caller typed.
	link := base + "/" + url.PathEscape(a.Name) + "/reset-password?email=" + url.QueryEscape(u.Email) + "&token=" + url.QueryEscape(token)
	name := u.Name
	if name == "" {
		name = u.Email
	}
	content, err := mail.PasswordReset(mail.PickLanguage(c.GetHeader("Accept-Language")), mail.ResetData{App: label, Name: name, Link: link})
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.sendMail(ctx, a, "password reset", content.To(u.Email)); err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "ok_reset_requested", "message": resetRequestedMessage})
}

// resetLinkBase is the origin the reset link points at (CONTRACT §3, §8,
// issue 11): the request's Origin header when it is in the app's allow-list
// (oauth_allowed_origins), else the service's own origin —
// SERVICE_PUBLIC_URL when set, else the scheme and host the request came
// to. The request's Host never makes an Origin trusted: a reset request
// sent with a forged Host would otherwise mail a link to the forger. It is
// the rule of the OAuth flow (oauth.AllowedOrigins).
func (s *Server) resetLinkBase(c *gin.Context, a *apps.App) (string, error) {
	if raw := c.GetHeader("Origin"); raw != "" {
		if origin, ok := oauth.NormalizeOrigin(raw); ok {
			allowed, err := s.allowedOrigins(c, a)
			if err != nil {
				return "", err
			}
			if allowed[origin] {
				return origin, nil
			}
		}
	}
	return oauth.ServiceBase(c.Request, s.cfg.PublicURL), nil
}

type resetConfirmRequest struct {
	Email    string `json:"email"`
	Token    string `json:"token"`
	Password string `json:"password"`
}

// POST /auth/password-reset/confirm {email, token, password} — set a new
// password with a reset token. Success consumes the token, clears any lock
// of the account and ends its existing sessions.
func (s *Server) handleResetConfirm(c *gin.Context) {
	ctx := c.Request.Context()
	a := appOf(c)
	var req resetConfirmRequest
	if err := bindJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	now := s.now().UTC()
	// The token is checked first: a link that no longer works is what the
	// person must learn, whatever password they typed; and a bad token costs
	// no bcrypt hash.
	if _, err := auth.CheckResetToken(ctx, a.DB, req.Email, req.Token, now); err != nil {
		s.fail(c, err)
		return
	}
	if err := auth.CheckPasswordRules(req.Password); err != nil {
		s.fail(c, err)
		return
	}
	hash, err := auth.HashPassword(req.Password, s.authn.Cost())
	if err != nil {
		s.fail(c, err)
		return
	}
	// Checked again, under lock, by the write: a token used twice at the
	// same moment succeeds once.
	if _, err := auth.CompletePasswordReset(ctx, a.DB, req.Email, req.Token, hash, now); err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "ok_password_update"})
}
