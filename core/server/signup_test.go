package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/mail"
	"github.com/strata-archaeo/strata/core/mail/mailtest"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// signupLogs is the test kit's goroutine-safe buffer.
type signupLogs = testenv.SyncBuffer

// signupEnv is an instance whose mail goes to a local provider speaking the
// real wire format, with a clock the test moves.
type signupEnv struct {
	t    *testing.T
	inst *testenv.Instance
	dig  *apps.App
	mail *mailtest.Provider
	clk  *clock
	logs *signupLogs
}

// newSignupEnv builds the instance with app "dig" (super_admin
// admin@example.org). mailEnv adjusts the mail environment (for example
// mail.EnvAPIKey, "" to leave mail unconfigured).
func newSignupEnv(t *testing.T, e store.Engine, mailEnv []string, opts ...func(*config.Config)) *signupEnv {
	t.Helper()
	env := &signupEnv{t: t, mail: mailtest.NewProvider(t), clk: &clock{now: time.Now().UTC().Truncate(time.Second)}, logs: &signupLogs{}}
	env.inst = testenv.NewInstanceWith(t, e, server.Deps{
		Now:    env.clk.Now,
		Mailer: env.mail.Client(mailEnv...),
		Logger: slog.New(slog.NewTextHandler(env.logs, nil)),
	}, opts...)
	env.dig = testenv.NewApp(t, env.inst.Apps, "dig")
	return env
}

func (env *signupEnv) do(method, url, body string, headers map[string]string) (int, map[string]any) {
	env.t.Helper()
	return testenv.Do(env.t, env.inst.Server, method, url, body, headers)
}

func (env *signupEnv) setSettings(set map[string]string, unset ...string) {
	env.t.Helper()
	if err := env.dig.UpdateSettings(context.Background(), set, unset); err != nil {
		env.t.Fatal(err)
	}
}

func (env *signupEnv) openRegistration() {
	env.setSettings(map[string]string{apps.SettingAllowSelfRegistration: "1"})
}

// user returns the account of email, or nil.
func (env *signupEnv) user(email string) *auth.User {
	env.t.Helper()
	u, err := auth.FindUserByEmail(context.Background(), env.dig.DB, email)
	if errors.Is(err, auth.ErrUserNotFound) {
		return nil
	}
	if err != nil {
		env.t.Fatal(err)
	}
	return u
}

func (env *signupEnv) userCount() int64 {
	env.t.Helper()
	var n int64
	if err := env.dig.DB.Gorm.Model(&auth.User{}).Count(&n).Error; err != nil {
		env.t.Fatal(err)
	}
	return n
}

func registerBody(name, email, password string) string {
	b, _ := json.Marshal(map[string]string{"name": name, "email": email, "password": password})
	return string(b)
}

func TestRegisterGates(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		body := registerBody("Ann", "ann@example.org", "long-enough-pw")

		env := newSignupEnv(t, e, nil)
		before := env.userCount()
		testenv.Scenario{Name: "off by default", Method: "POST", URL: "/dig/api/auth/register", Body: body,
			ExpectedStatus: 403, ExpectedContent: []string{`"code":"registration_not_available"`}}.Run(t, env.inst.Server)
		env.openRegistration()
		env.setSettings(nil, apps.SettingAllowSelfRegistration)
		testenv.Scenario{Name: "turned off again", Method: "POST", URL: "/dig/api/auth/register", Body: body,
			ExpectedStatus: 403, ExpectedContent: []string{`"code":"registration_not_available"`}}.Run(t, env.inst.Server)
		if n := env.userCount(); n != before {
			t.Errorf("%d accounts after refused registrations, want %d", n, before)
		}

		for _, unset := range []string{mail.EnvAPIKey, mail.EnvFromAddress} {
			noMail := newSignupEnv(t, e, []string{unset, ""})
			noMail.openRegistration()
			testenv.Scenario{Name: "no " + unset, Method: "POST", URL: "/dig/api/auth/register", Body: body,
				ExpectedStatus: 503, ExpectedContent: []string{`"code":"email_not_configured"`}}.Run(t, noMail.inst.Server)
			if noMail.user("ann@example.org") != nil {
				t.Errorf("no %s: an account was written", unset)
			}
		}
		if n := len(env.mail.Received()); n != 0 {
			t.Errorf("%d mails sent by refused registrations", n)
		}
	})
}

func TestRegisterValidation(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil)
		env.openRegistration()
		testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)
		before := env.userCount()
		for _, s := range []testenv.Scenario{
			{Name: "no name", Body: registerBody("", "bob@example.org", "long-enough-pw"), ExpectedStatus: 400, ExpectedContent: []string{`"code":"all_fields_required"`}},
			{Name: "blank name", Body: registerBody(" \t ", "bob@example.org", "long-enough-pw"), ExpectedStatus: 400, ExpectedContent: []string{`"code":"all_fields_required"`}},
			{Name: "no email", Body: `{"name":"Bob","password":"long-enough-pw"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"all_fields_required"`}},
			{Name: "no password", Body: `{"name":"Bob","email":"bob@example.org"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"all_fields_required"`}},
			{Name: "bad email", Body: registerBody("Bob", "bob-at-example.org", "long-enough-pw"), ExpectedStatus: 400, ExpectedContent: []string{`"code":"email_not_valid"`}},
			{Name: "email with a display name", Body: registerBody("Bob", "Bob <bob@example.org>", "long-enough-pw"), ExpectedStatus: 400, ExpectedContent: []string{`"code":"email_not_valid"`}},
			{Name: "short password", Body: registerBody("Bob", "bob@example.org", "short"), ExpectedStatus: 400, ExpectedContent: []string{`"code":"password_too_short"`}},
			{Name: "long name", Body: registerBody(strings.Repeat("n", auth.MaxNameLength+1), "bob@example.org", "long-enough-pw"), ExpectedStatus: 400, ExpectedContent: []string{`"code":"name_too_long"`}},
			{Name: "email present in another case and spacing", Body: registerBody("Ann again", "  ANN@Example.ORG ", "long-enough-pw"), ExpectedStatus: 409, ExpectedContent: []string{`"code":"email_present"`}},
			{Name: "malformed body", Body: `{"name":`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`}},
		} {
			s.Method, s.URL = "POST", "/dig/api/auth/register"
			t.Run(s.Name, func(t *testing.T) { s.Run(t, env.inst.Server) })
		}
		if n := env.userCount(); n != before {
			t.Errorf("%d accounts after refused registrations, want %d", n, before)
		}
		if n := len(env.mail.Received()); n != 0 {
			t.Errorf("%d mails sent by refused registrations", n)
		}
	})
}

func TestRegisterCreatesPendingAccountAndMails(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil)
		env.openRegistration()
		env.setSettings(map[string]string{apps.SettingDefinition: "Scavi & Co"})
		testenv.NewUser(t, env.dig, "Second Super", "super2@example.org", auth.SuperAdmin)
		testenv.NewUser(t, env.dig, "An Admin", "admin2@example.org", auth.Admin)
		testenv.NewUser(t, env.dig, "A Writer", "writer@example.org", auth.Writer)
		testenv.NewUser(t, env.dig, "A Self Writer", "self@example.org", auth.SelfWriter)
		testenv.NewUser(t, env.dig, "A Reader", "reader@example.org", auth.Reader)
		testenv.NewUser(t, env.dig, "Also Pending", "waiting@example.org", auth.Pending)
		other := testenv.NewApp(t, env.inst.Apps, "other")
		testenv.NewUser(t, other, "Other Admin", "other-admin@example.org", auth.Admin)

		name := `<script>alert("x")</script> Ann`
		status, body := env.do("POST", "/dig/api/auth/register", registerBody(name, "  Ann.New@Example.ORG ", "long-enough-pw"),
			map[string]string{"Accept-Language": "it-IT,it;q=0.9,en;q=0.8"})
		if status != 200 || body["code"] != "ok_registered" {
			t.Fatalf("register: %d %v", status, body)
		}
		u := env.user("ann.new@example.org")
		if u == nil {
			t.Fatal("no account written")
		}
		if u.Privilege != auth.Pending || u.Email != "ann.new@example.org" || u.Name != name {
			t.Errorf("account %+v: want pending, normalised email, name as typed", u)
		}
		if u.OAuthProvider != nil || u.OAuthSub != nil || !strings.HasPrefix(u.Password, "$2") {
			t.Errorf("account carries identity %v/%v, hash %q", u.OAuthProvider, u.OAuthSub, u.Password[:4])
		}

		got := env.mail.Received()
		if len(got) != 2 {
			t.Fatalf("%d mails, want a confirmation and one notice: %+v", len(got), got)
		}
		confirm, notice := got[0], got[1]
		if !slices.Equal(confirm.To, []string{"ann.new@example.org"}) {
			t.Errorf("confirmation to %v", confirm.To)
		}
		if confirm.Subject != "La tua registrazione a Scavi & Co" {
			t.Errorf("confirmation subject %q", confirm.Subject)
		}
		wantAdmins := []string{"admin@example.org", "super2@example.org", "admin2@example.org"}
		if !slices.Equal(notice.To, wantAdmins) {
			t.Errorf("notice to %v, want every admin and super_admin of dig and nobody else: %v", notice.To, wantAdmins)
		}
		if notice.Subject != "Nuova richiesta di registrazione a Scavi & Co" {
			t.Errorf("notice subject %q", notice.Subject)
		}
		for _, m := range got {
			if m.From != "Strata <"+mailtest.FromAddress+">" {
				t.Errorf("from %q", m.From)
			}
			if strings.Contains(m.HTML, "<script>") || !strings.Contains(m.HTML, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; Ann") {
				t.Errorf("the name is not escaped in the HTML part: %s", m.HTML)
			}
			if !strings.Contains(m.HTML, "Scavi &amp; Co") || !strings.Contains(m.HTML, "ann.new@example.org") {
				t.Errorf("HTML part lacks app or email: %s", m.HTML)
			}
			if !strings.Contains(m.Text, name) || !strings.Contains(m.Text, "ann.new@example.org") {
				t.Errorf("text part lacks the name or email: %s", m.Text)
			}
		}
		if !strings.Contains(confirm.Text, "amministratore") {
			t.Errorf("confirmation is not in Italian: %s", confirm.Text)
		}

		// The pending account cannot sign in.
		testenv.Scenario{Method: "POST", URL: "/dig/api/auth/login", Body: `{"email":"ann.new@example.org","password":"long-enough-pw"}`,
			ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}}.Run(t, env.inst.Server)

		// English for anything else; the same email cannot register twice.
		env.mail.Clear()
		status, body = env.do("POST", "/dig/api/auth/register", registerBody("Bob", "bob@example.org", "long-enough-pw"),
			map[string]string{"Accept-Language": "fr-FR,fr;q=0.9,de;q=0.8"})
		if status != 200 {
			t.Fatalf("register bob: %d %v", status, body)
		}
		got = env.mail.Received()
		if len(got) != 2 || got[0].Subject != "Your registration at Scavi & Co" || got[1].Subject != "New registration request at Scavi & Co" {
			t.Errorf("English mails: %+v", got)
		}
		testenv.Scenario{Method: "POST", URL: "/dig/api/auth/register", Body: registerBody("Bob", "BOB@example.org", "long-enough-pw"),
			ExpectedStatus: 409, ExpectedContent: []string{`"code":"email_present"`}}.Run(t, env.inst.Server)
	})
}

// TestRegisterMailFailureLeavesNoAccount: a registration whose mails cannot
// all be sent is undone, answered 502 without the provider's text, and can
// be retried.
func TestRegisterMailFailureLeavesNoAccount(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil)
		env.openRegistration()
		before := env.userCount()
		const providerText = "domain strata.test is not verified (quota 7781)"
		body := registerBody("Ann", "ann@example.org", "long-enough-pw")

		// The confirmation is refused: nothing else is sent.
		env.mail.Fail(http.StatusForbidden, `{"statusCode":403,"message":"`+providerText+`"}`)
		testenv.Scenario{Method: "POST", URL: "/dig/api/auth/register", Body: body, ExpectedStatus: 502,
			ExpectedContent: []string{`"code":"email_send_failed"`}, NotExpectedContent: []string{"quota", "verified", "403"}}.Run(t, env.inst.Server)
		if env.user("ann@example.org") != nil || env.userCount() != before {
			t.Error("the pending account stayed after the confirmation failed")
		}
		if !strings.Contains(env.logs.String(), providerText) {
			t.Errorf("the provider's text is not in the log: %s", env.logs.String())
		}

		// The admins' notice is refused after the confirmation went.
		env.mail.FailWhen(func(m mailtest.Received) bool { return slices.Contains(m.To, "admin@example.org") },
			http.StatusInternalServerError, `{"message":"`+providerText+`"}`)
		testenv.Scenario{Method: "POST", URL: "/dig/api/auth/register", Body: body, ExpectedStatus: 502,
			ExpectedContent: []string{`"code":"email_send_failed"`}, NotExpectedContent: []string{"quota"}}.Run(t, env.inst.Server)
		if env.user("ann@example.org") != nil {
			t.Error("the pending account stayed after the admins' notice failed")
		}

		// Once the provider works again, the same person registers.
		env.mail.Fail(0, "")
		env.mail.Clear()
		testenv.Scenario{Method: "POST", URL: "/dig/api/auth/register", Body: body, ExpectedStatus: 200,
			ExpectedContent: []string{`"code":"ok_registered"`}}.Run(t, env.inst.Server)
		if u := env.user("ann@example.org"); u == nil || u.Privilege != auth.Pending {
			t.Errorf("retry: account %+v", u)
		}
		if n := len(env.mail.Received()); n != 2 {
			t.Errorf("retry: %d mails", n)
		}
	})
}

// TestRegisterPendingDomain covers the domain function the OAuth register
// endpoint shares: an OAuth-only account with an inert hash.
func TestRegisterPendingDomain(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil)
		ctx := context.Background()
		now := env.clk.Now()
		inert, err := auth.InertHash(4)
		if err != nil {
			t.Fatal(err)
		}
		u, err := auth.RegisterPending(ctx, env.dig.DB, auth.RegisterInput{Name: "Orcid\nUser", Email: " Orc@Example.org",
			PasswordHash: inert, OAuthProvider: "idp_b", OAuthSub: "0000-0001-2345-6789"}, now)
		if err != nil {
			t.Fatal(err)
		}
		if u.Privilege != auth.Pending || u.Email != "orc@example.org" || u.Name != "Orcid User" ||
			u.OAuthProvider == nil || *u.OAuthProvider != "idp_b" || u.OAuthSub == nil || *u.OAuthSub != "0000-0001-2345-6789" {
			t.Errorf("account %+v", u)
		}
		_, err = auth.RegisterPending(ctx, env.dig.DB, auth.RegisterInput{Email: "another@example.org", PasswordHash: inert,
			OAuthProvider: "idp_b", OAuthSub: "0000-0001-2345-6789"}, now)
		if !errors.Is(err, auth.ErrUserOAuthIdentityTaken) {
			t.Errorf("same identity again: %v", err)
		}
		_, err = auth.RegisterPending(ctx, env.dig.DB, auth.RegisterInput{Email: "ORC@example.org", PasswordHash: inert}, now)
		if !errors.Is(err, auth.ErrUserEmailPresent) {
			t.Errorf("same email again: %v", err)
		}
		_, err = auth.RegisterPending(ctx, env.dig.DB, auth.RegisterInput{Email: "x@example.org", PasswordHash: inert, OAuthProvider: "idp_b"}, now)
		if !errors.Is(err, auth.ErrOAuthIdentityPartial) {
			t.Errorf("provider without subject: %v", err)
		}
		if _, err = auth.RegisterPending(ctx, env.dig.DB, auth.RegisterInput{Email: "y@example.org"}, now); err == nil {
			t.Error("an account without a hash was written")
		}

		// DiscardPending removes only a still pending account.
		if err := auth.DiscardPending(ctx, env.dig.DB, u.ID); err != nil || env.user("orc@example.org") != nil {
			t.Errorf("discard pending: %v", err)
		}
		reader := testenv.NewUser(t, env.dig, "Reader", "reader@example.org", auth.Reader)
		if err := auth.DiscardPending(ctx, env.dig.DB, reader.ID); err != nil || env.user("reader@example.org") == nil {
			t.Errorf("discard of an approved account: %v", err)
		}
	})
}
