package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/mail"
	"github.com/strata-archaeo/strata/core/mail/mailtest"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

var resetLinkPattern = regexp.MustCompile(`https?://\S+/reset-password\?\S+`)

// requestReset asks for a reset of email and returns the status and body.
func (env *signupEnv) requestReset(email string, headers map[string]string) (int, map[string]any) {
	env.t.Helper()
	b, _ := json.Marshal(map[string]string{"email": email})
	return env.do("POST", "/dig/api/auth/password-reset/request", string(b), headers)
}

// resetLink asks for a reset of email and returns the link of the one mail
// it sent, with its recipients.
func (env *signupEnv) resetLink(email string, headers map[string]string) (*url.URL, mailtest.Received) {
	env.t.Helper()
	env.mail.Clear()
	if status, body := env.requestReset(email, headers); status != 200 {
		env.t.Fatalf("reset request for %s: %d %v", email, status, body)
	}
	got := env.mail.Received()
	if len(got) != 1 {
		env.t.Fatalf("reset request for %s sent %d mails", email, len(got))
	}
	raw := resetLinkPattern.FindString(got[0].Text)
	link, err := url.Parse(raw)
	if raw == "" || err != nil {
		env.t.Fatalf("no reset link in %q", got[0].Text)
	}
	if !strings.Contains(got[0].HTML, `href="`+strings.ReplaceAll(raw, "&", "&amp;")+`"`) {
		env.t.Errorf("the HTML part does not carry the same link %s: %s", raw, got[0].HTML)
	}
	return link, got[0]
}

func (env *signupEnv) confirmReset(email, token, password string) (int, map[string]any) {
	env.t.Helper()
	b, _ := json.Marshal(map[string]string{"email": email, "token": token, "password": password})
	return env.do("POST", "/dig/api/auth/password-reset/confirm", string(b), nil)
}

func (env *signupEnv) login(email, password string) int {
	env.t.Helper()
	b, _ := json.Marshal(map[string]string{"email": email, "password": password})
	status, _ := env.do("POST", "/dig/api/auth/login", string(b), nil)
	return status
}

func TestResetRequestAnswersAlikeForUnknownEmails(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil)
		testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)

		knownStatus, known := env.requestReset("ann@example.org", nil)
		if n := len(env.mail.Received()); knownStatus != 200 || n != 1 {
			t.Fatalf("known email: %d %v, %d mails", knownStatus, known, n)
		}
		env.mail.Clear()
		unknownStatus, unknown := env.requestReset("ghost@example.org", nil)
		if unknownStatus != knownStatus || !jsonEqual(known, unknown) {
			t.Errorf("answers differ: known %d %v, unknown %d %v", knownStatus, known, unknownStatus, unknown)
		}
		if n := len(env.mail.Received()); n != 0 {
			t.Errorf("an unknown email sent %d mails", n)
		}
		if known["code"] != "ok_reset_requested" {
			t.Errorf("code %v", known["code"])
		}

		testenv.Scenario{Method: "POST", URL: "/dig/api/auth/password-reset/request", Body: `{"email":"  "}`,
			ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`}}.Run(t, env.inst.Server)

		noMail := newSignupEnv(t, e, []string{mail.EnvFromAddress, ""})
		testenv.NewUser(t, noMail.dig, "Ann", "ann@example.org", auth.Reader)
		for _, email := range []string{"ann@example.org", "ghost@example.org"} {
			testenv.Scenario{Method: "POST", URL: "/dig/api/auth/password-reset/request", Body: `{"email":"` + email + `"}`,
				ExpectedStatus: 503, ExpectedContent: []string{`"code":"email_not_configured"`}}.Run(t, noMail.inst.Server)
		}
		if u := noMail.user("ann@example.org"); u.ResetTokenHash != nil {
			t.Error("a token was stored although no mail could carry it")
		}
	})
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestPasswordResetFlow(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil)
		ann := testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)
		testenv.NewUser(t, env.dig, "Bob", "bob@example.org", auth.Reader)
		oldSession := testenv.Login(t, env.inst.Server, "dig", "ann@example.org", testenv.Password)

		// Typed in another case and with spaces: the mail goes to the
		// stored address, and the link carries it.
		link, m := env.resetLink("  ANN@Example.ORG ", nil)
		if len(m.To) != 1 || m.To[0] != "ann@example.org" {
			t.Errorf("reset mail to %v, want the stored address", m.To)
		}
		if m.Subject != "Reset your password for dig" {
			t.Errorf("subject %q", m.Subject)
		}
		if link.Path != "/dig/reset-password" || link.Query().Get("email") != "ann@example.org" {
			t.Errorf("link %s", link)
		}
		token := link.Query().Get("token")
		if len(token) < 43 {
			t.Fatalf("token %q is shorter than 32 random bytes", token)
		}
		// Only the SHA-256 of the token is stored.
		stored := env.user("ann@example.org")
		sum := sha256.Sum256([]byte(token))
		if stored.ResetTokenHash == nil || *stored.ResetTokenHash != hex.EncodeToString(sum[:]) {
			t.Errorf("stored %v, want the SHA-256 of the token", stored.ResetTokenHash)
		}
		if stored.ResetTokenExpires == nil || !stored.ResetTokenExpires.Equal(env.clk.Now().Add(time.Hour)) {
			t.Errorf("expires %v, want now + 1 h (%v)", stored.ResetTokenExpires, env.clk.Now().Add(time.Hour))
		}

		for _, c := range []struct{ name, email, token, password, code string }{
			{"wrong token", "ann@example.org", token[:len(token)-2] + "xx", "brand-new-pass", "invalid_or_expired_reset_token"},
			{"empty token", "ann@example.org", "", "brand-new-pass", "invalid_or_expired_reset_token"},
			{"token of another email", "bob@example.org", token, "brand-new-pass", "invalid_or_expired_reset_token"},
			{"unknown email", "ghost@example.org", token, "brand-new-pass", "invalid_or_expired_reset_token"},
			{"the stored hash as the token", "ann@example.org", *stored.ResetTokenHash, "brand-new-pass", "invalid_or_expired_reset_token"},
			{"short password", "ann@example.org", token, "short", "password_too_short"},
		} {
			status, body := env.confirmReset(c.email, c.token, c.password)
			if status != 400 || body["code"] != c.code {
				t.Errorf("%s: %d %v, want 400 %s", c.name, status, body, c.code)
			}
		}

		status, body := env.confirmReset(" Ann@example.org", token, "brand-new-pass")
		if status != 200 || body["code"] != "ok_password_update" {
			t.Fatalf("confirm: %d %v", status, body)
		}
		if env.login("ann@example.org", "brand-new-pass") != 200 {
			t.Error("the new password does not work")
		}
		if env.login("ann@example.org", testenv.Password) != 401 {
			t.Error("the old password still works")
		}
		// Sessions opened before the reset end.
		testenv.Scenario{Method: "GET", URL: "/dig/api/auth/refresh", Headers: testenv.Bearer(oldSession),
			ExpectedStatus: 401, ExpectedContent: []string{`"code":"token_invalidated"`}}.Run(t, env.inst.Server)
		after := env.user("ann@example.org")
		if after.ResetTokenHash != nil || after.ResetTokenExpires != nil || after.TokenVersion != ann.TokenVersion+1 {
			t.Errorf("after the reset: hash %v, expires %v, token version %d", after.ResetTokenHash, after.ResetTokenExpires, after.TokenVersion)
		}
		// Single use.
		if status, body := env.confirmReset("ann@example.org", token, "another-new-pass"); status != 400 || body["code"] != "invalid_or_expired_reset_token" {
			t.Errorf("reused token: %d %v", status, body)
		}

		// A newer request replaces the earlier token.
		first, _ := env.resetLink("ann@example.org", nil)
		second, _ := env.resetLink("ann@example.org", nil)
		if status, _ := env.confirmReset("ann@example.org", first.Query().Get("token"), "third-new-pass"); status != 400 {
			t.Error("an earlier token still works after a new request")
		}
		if status, _ := env.confirmReset("ann@example.org", second.Query().Get("token"), "third-new-pass"); status != 200 {
			t.Error("the latest token does not work")
		}
	})
}

func TestPasswordResetExpiry(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil)
		testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)

		link, _ := env.resetLink("ann@example.org", nil)
		env.clk.Advance(59 * time.Minute)
		if status, body := env.confirmReset("ann@example.org", link.Query().Get("token"), "brand-new-pass"); status != 200 {
			t.Errorf("after 59 minutes: %d %v", status, body)
		}

		link, _ = env.resetLink("ann@example.org", nil)
		env.clk.Advance(time.Hour)
		if status, body := env.confirmReset("ann@example.org", link.Query().Get("token"), "other-new-pass"); status != 400 || body["code"] != "invalid_or_expired_reset_token" {
			t.Errorf("after one hour: %d %v", status, body)
		}
		if env.login("ann@example.org", "brand-new-pass") != 200 {
			t.Error("an expired token changed the password")
		}
	})
}

func TestPasswordResetClearsTheLock(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil)
		testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)
		for range auth.MaxFailedLogins {
			env.login("ann@example.org", "wrong-password")
		}
		if status := env.login("ann@example.org", testenv.Password); status != 423 {
			t.Fatalf("after %d failures: %d, want 423 account_locked", auth.MaxFailedLogins, status)
		}
		link, _ := env.resetLink("ann@example.org", nil)
		if status, body := env.confirmReset("ann@example.org", link.Query().Get("token"), "brand-new-pass"); status != 200 {
			t.Fatalf("confirm: %d %v", status, body)
		}
		if status := env.login("ann@example.org", "brand-new-pass"); status != 200 {
			t.Errorf("login after the reset: %d, want the lock cleared", status)
		}
	})
}

// TestPasswordResetTokenUsedConcurrently: the same token sent twice at once
// sets one password.
func TestPasswordResetTokenUsedConcurrently(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil)
		testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)
		link, _ := env.resetLink("ann@example.org", nil)
		token := link.Query().Get("token")
		var wg sync.WaitGroup
		results := make([]error, 4)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, results[i] = auth.CompletePasswordReset(context.Background(), env.dig.DB, "ann@example.org", token, "$2a$04$x", env.clk.Now())
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range results {
			switch {
			case err == nil:
				ok++
			case err != auth.ErrResetTokenInvalid:
				t.Errorf("unexpected error: %v", err)
			}
		}
		if ok != 1 {
			t.Errorf("%d of %d concurrent uses succeeded, want 1", ok, len(results))
		}
	})
}

func TestPasswordResetLinkOrigin(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		const front = "https://front.example.org"
		withPublic := newSignupEnv(t, e, nil, func(c *config.Config) { c.PublicURL = "https://strata.example.org/" })
		noPublic := newSignupEnv(t, e, nil)
		for _, env := range []*signupEnv{withPublic, noPublic} {
			testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)
			env.setSettings(map[string]string{apps.SettingOAuthAllowedOrigins: `["` + front + `"]`})
		}
		cases := []struct {
			name    string
			env     *signupEnv
			headers map[string]string
			want    string
		}{
			{"allowed origin of the app", withPublic, map[string]string{"Origin": front}, front},
			{"allowed origin, other case", noPublic, map[string]string{"Origin": "HTTPS://Front.Example.org"}, front},
			{"no origin, no public URL: the request's host", noPublic, nil, "http://example.com"},
			{"disallowed origin: public URL", withPublic, map[string]string{"Origin": "https://evil.example.net"}, "https://strata.example.org"},
			{"no origin: public URL", withPublic, nil, "https://strata.example.org"},
			{"disallowed origin, no public URL: the request's host", noPublic, map[string]string{"Origin": "https://evil.example.net"}, "http://example.com"},
			{"origin that only starts like an allowed one", noPublic, map[string]string{"Origin": front + ".evil.net"}, "http://example.com"},
			{"malformed origin", noPublic, map[string]string{"Origin": "null"}, "http://example.com"},
			{"forwarded proto, first token", noPublic, map[string]string{"X-Forwarded-Proto": "https, http"}, "https://example.com"},
			{"the request's own origin with a forwarded proto", noPublic,
				map[string]string{"X-Forwarded-Proto": "https", "Origin": "https://example.com"}, "https://example.com"},
			{"the request's own origin is not the server's when a public URL is set", withPublic, map[string]string{"Origin": "http://example.com"}, "https://strata.example.org"},
			{"the public URL as origin", withPublic, map[string]string{"Origin": "https://strata.example.org"}, "https://strata.example.org"},
		}
		for _, c := range cases {
			link, _ := c.env.resetLink("ann@example.org", c.headers)
			if got := link.Scheme + "://" + link.Host; got != c.want || link.Path != "/dig/reset-password" {
				t.Errorf("%s: link %s, want it at %s/dig/reset-password", c.name, link, c.want)
			}
		}
	})
}

func TestPasswordResetMailLanguageAndFailure(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil)
		env.setSettings(map[string]string{apps.SettingDefinition: "Scavi <Pompei>"})
		testenv.NewUser(t, env.dig, "", "ann@example.org", auth.Reader)

		_, m := env.resetLink("ann@example.org", map[string]string{"Accept-Language": "it"})
		if m.Subject != "Reimposta la tua password per Scavi <Pompei>" {
			t.Errorf("subject %q", m.Subject)
		}
		if !strings.Contains(m.Text, "scade tra un'ora") || !strings.Contains(m.HTML, "Scavi &lt;Pompei&gt;") {
			t.Errorf("Italian mail with the app escaped: %s / %s", m.Text, m.HTML)
		}
		if !strings.Contains(m.Text, "Gentile ann@example.org") {
			t.Errorf("an account without a name is greeted by its email: %s", m.Text)
		}
		_, m = env.resetLink("ann@example.org", map[string]string{"Accept-Language": "en-GB;q=0.9, it;q=0.4"})
		if m.Subject != "Reset your password for Scavi <Pompei>" || !strings.Contains(m.Text, "expires in one hour") {
			t.Errorf("English mail: %q %s", m.Subject, m.Text)
		}

		const providerText = "recipient mailbox full at mx.example.org"
		env.mail.Fail(http.StatusUnprocessableEntity, `{"message":"`+providerText+`"}`)
		testenv.Scenario{Method: "POST", URL: "/dig/api/auth/password-reset/request", Body: `{"email":"ann@example.org"}`,
			ExpectedStatus: 502, ExpectedContent: []string{`"code":"email_send_failed"`}, NotExpectedContent: []string{"mailbox", "mx.example"}}.Run(t, env.inst.Server)
		if !strings.Contains(env.logs.String(), providerText) {
			t.Errorf("the provider's text is not logged: %s", env.logs.String())
		}
	})
}
