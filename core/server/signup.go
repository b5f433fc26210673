package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/mail"
)

var errRegistrationNotAvailable = errs.New(errs.Forbidden, "registration_not_available", "self-registration is not open for this application")

// maxRecipientsPerMail is the most addresses one provider call may carry.
const maxRecipientsPerMail = 50

type registerRequest struct {
	Name     string `json:"name"`
	Email    string `json:"email"`
	Password string `json:"password"`
}

// checkRegistrationOpen applies the gate of every self-registration,
// password or OAuth (SPEC §5.4): allow_self_registration must be on
// (403 registration_not_available) and mail configured (503
// email_not_configured), since a registration is not complete without
// its mails.
func (s *Server) checkRegistrationOpen(ctx context.Context, a *apps.App) error {
	open, err := a.SelfRegistrationAllowed(ctx)
	if err != nil {
		return err
	}
	if !open {
		return errRegistrationNotAvailable
	}
	if !s.mailer.Configured() {
		return mail.ErrNotConfigured
	}
	return nil
}

// POST /auth/register {name, email, password} — self-registration
// (SPEC §3.2): a pending account, a confirmation to the person and a
// notice to every admin and super_admin.
func (s *Server) handleRegister(c *gin.Context) {
	ctx := c.Request.Context()
	a := appOf(c)
	if err := s.checkRegistrationOpen(ctx, a); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.limits.Registration(c.Request); err != nil {
		s.fail(c, err)
		return
	}
	var req registerRequest
	if err := bindJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	name, email := auth.CleanName(req.Name), auth.NormalizeEmail(req.Email)
	if name == "" || email == "" || req.Password == "" {
		s.fail(c, auth.ErrAllFieldsRequired)
		return
	}
	// Every check that needs no database runs before the bcrypt hash.
	if err := auth.ValidateEmail(email); err != nil {
		s.fail(c, err)
		return
	}
	if err := auth.CheckPasswordRules(req.Password); err != nil {
		s.fail(c, err)
		return
	}
	if len([]rune(name)) > auth.MaxNameLength {
		s.fail(c, auth.ErrNameTooLong)
		return
	}
	hash, err := auth.HashPassword(req.Password, s.authn.Cost())
	if err != nil {
		s.fail(c, err)
		return
	}
	u, err := auth.RegisterPending(ctx, a.DB, auth.RegisterInput{Name: name, Email: email, PasswordHash: hash}, s.now().UTC())
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.sendRegistrationMails(c, a, u); err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "ok_registered"})
}

// sendRegistrationMails completes a registration whose pending account u
// was just written (auth.RegisterPending): the confirmation to u, then one
// notice to every admin and super_admin of the app, in the language of the
// request's Accept-Language.
//
// A registration is all or nothing. When a mail cannot be sent the pending
// account is removed again and the error returned (502 email_send_failed,
// 503 email_not_configured), so the answer tells the truth, no account is
// left that its owner was never told about or that no admin knows of, and
// the person can simply try again. The confirmation goes first: the
// address just typed is the likeliest to be refused, and then no admin has
// been bothered. If the notice fails after the confirmation went, the
// person holds a confirmation of a registration that was undone; the 502
// tells them to retry, which is the lesser evil than an account no admin
// will ever look at. The work goes on if the client disconnects, so the
// outcome is one of the two, never in between.
//
// The OAuth register endpoint calls it too, after RegisterPending with an
// inert hash; the caller only answers the returned error.
func (s *Server) sendRegistrationMails(c *gin.Context, a *apps.App, u *auth.User) error {
	ctx := context.WithoutCancel(c.Request.Context())
	undo := func(cause error) error {
		if err := auth.DiscardPending(ctx, a.DB, u.ID); err != nil {
			s.log.ErrorContext(ctx, "registration: could not remove the pending account after a mail failure",
				"app", a.Name, "user_id", u.ID, "err", err)
		}
		return cause
	}
	label, err := a.Label(ctx)
	if err != nil {
		return undo(err)
	}
	lang := mail.PickLanguage(c.GetHeader("Accept-Language"))
	data := mail.RegistrationData{App: label, Name: u.Name, Email: u.Email}
	confirmation, err := mail.RegistrationConfirmation(lang, data)
	if err != nil {
		return undo(err)
	}
	notice, err := mail.RegistrationNotice(lang, data)
	if err != nil {
		return undo(err)
	}
	admins, err := auth.Admins(ctx, a.DB)
	if err != nil {
		return undo(err)
	}
	if err := s.sendMail(ctx, a, "registration confirmation", confirmation.To(u.Email)); err != nil {
		return undo(err)
	}
	// One message to all admins (in batches the provider accepts): it went
	// or it did not, for every admin at once. They are the app's admins, who
	// can see each other in user administration anyway.
	var to []string
	for _, ad := range admins {
		if ad.ID != u.ID {
			to = append(to, ad.Email)
		}
	}
	for len(to) > 0 {
		n := min(len(to), maxRecipientsPerMail)
		if err := s.sendMail(ctx, a, "registration notice", notice.To(to[:n]...)); err != nil {
			return undo(err)
		}
		to = to[n:]
	}
	return nil
}

// sendMail sends m and, on failure, logs the cause with the provider's text
// (which never reaches the client) and returns the coded error:
// email_send_failed, or email_not_configured if mail was unconfigured
// meanwhile.
func (s *Server) sendMail(ctx context.Context, a *apps.App, what string, m mail.Message) error {
	err := s.mailer.Send(ctx, m)
	if err == nil || errors.Is(err, mail.ErrNotConfigured) {
		return err
	}
	s.log.ErrorContext(ctx, "email not sent", "app", a.Name, "mail", what, "recipients", len(m.To), "err", err)
	if _, coded := errs.As(err); coded {
		return err
	}
	return mail.ErrSendFailed.Wrap(err)
}
