package mail_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/mail"
	"github.com/strata-archaeo/strata/core/mail/mailtest"
)

func TestConfiguredNeedsKeyAndFromAddress(t *testing.T) {
	p := mailtest.NewProvider(t)
	cases := []struct {
		name  string
		extra []string
		want  bool
	}{
		{"both set", nil, true},
		{"no key", []string{mail.EnvAPIKey, ""}, false},
		{"no from address", []string{mail.EnvFromAddress, ""}, false},
		{"blank key", []string{mail.EnvAPIKey, "   "}, false},
	}
	for _, c := range cases {
		if got := p.Client(c.extra...).Configured(); got != c.want {
			t.Errorf("%s: Configured() = %v, want %v", c.name, got, c.want)
		}
	}
	if mail.New(func(string) string { return "" }, nil).Configured() {
		t.Error("an empty environment counts as configured")
	}
}

func TestConfigurationIsReadOnEveryCall(t *testing.T) {
	p := mailtest.NewProvider(t)
	env := map[string]string{mail.EnvProviderURL: p.URL}
	c := mail.New(func(k string) string { return env[k] }, nil)
	msg := mail.Message{To: []string{"ann@example.org"}, Subject: "s", HTML: "<p>h</p>", Text: "h"}
	if err := c.Send(context.Background(), msg); !errors.Is(err, mail.ErrNotConfigured) {
		t.Fatalf("unconfigured send: %v", err)
	}
	env[mail.EnvAPIKey], env[mail.EnvFromAddress] = mailtest.APIKey, mailtest.FromAddress
	if err := c.Send(context.Background(), msg); err != nil {
		t.Fatalf("send after configuring: %v", err)
	}
	if n := len(p.Received()); n != 1 {
		t.Fatalf("provider received %d messages", n)
	}
}

func TestSendSpeaksTheProviderFormat(t *testing.T) {
	p := mailtest.NewProvider(t)
	c := p.Client(mail.EnvProviderURL, p.URL+"/") // a trailing slash on the base is tolerated
	err := c.Send(context.Background(), mail.Message{
		To: []string{"ann@example.org"}, Subject: "Hello\r\nBcc: evil@example.org", HTML: "<p>Hi</p>", Text: "Hi",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := p.Received()
	if len(got) != 1 {
		t.Fatalf("received %d", len(got))
	}
	m := got[0]
	if m.Authorization != "Bearer "+mailtest.APIKey {
		t.Errorf("authorization %q", m.Authorization)
	}
	if m.From != "Strata <"+mailtest.FromAddress+">" {
		t.Errorf("from %q (MAIL_FROM_NAME defaults to Strata)", m.From)
	}
	if len(m.To) != 1 || m.To[0] != "ann@example.org" {
		t.Errorf("to %v", m.To)
	}
	if strings.ContainsAny(m.Subject, "\r\n") {
		t.Errorf("subject keeps a line break: %q", m.Subject)
	}
	if m.HTML != "<p>Hi</p>" || m.Text != "Hi" {
		t.Errorf("parts %q / %q", m.HTML, m.Text)
	}

	p.Clear()
	if err := p.Client(mail.EnvFromName, "Scavi di Pompei").Send(context.Background(), mail.Message{To: []string{"a@b.org"}, Subject: "s", Text: "t"}); err != nil {
		t.Fatal(err)
	}
	if from := p.Received()[0].From; from != "Scavi di Pompei <"+mailtest.FromAddress+">" {
		t.Errorf("from %q", from)
	}
}

func TestFormatFrom(t *testing.T) {
	for name, want := range map[string]string{
		"Strata":          "Strata <a@b.org>",
		"Dig, Team":       `"Dig, Team" <a@b.org>`,
		`Say "hi"`:        `"Say \"hi\"" <a@b.org>`,
		"Evil\r\nBcc: x":  `"Evil  Bcc: x" <a@b.org>`,
		"":                "a@b.org",
		"Scavi \u00e8 Co": "Scavi \u00e8 Co <a@b.org>",
	} {
		if got := mail.FormatFrom(name, "a@b.org"); got != want {
			t.Errorf("FormatFrom(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestProviderFailureIsSendFailedWithTheTextOnlyInTheCause(t *testing.T) {
	p := mailtest.NewProvider(t)
	p.Fail(http.StatusInternalServerError, `{"message":"quota exceeded for domain strata.test"}`)
	err := p.Client().Send(context.Background(), mail.Message{To: []string{"a@b.org"}, Subject: "s", Text: "t"})
	e, ok := errs.As(err)
	if !ok || e.Code != "email_send_failed" || e.Kind != errs.BadGateway {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(e.Message, "quota") {
		t.Errorf("the provider's text is in the message shown to clients: %q", e.Message)
	}
	var pe *mail.ProviderError
	if !errors.As(err, &pe) || pe.Status != 500 || !strings.Contains(pe.Body, "quota exceeded") {
		t.Errorf("cause %v: the provider's status and text belong in the logged cause", err)
	}

	// A wrong key is a refusal like any other.
	p.Fail(0, "")
	err = p.Client(mail.EnvAPIKey, "wrong").Send(context.Background(), mail.Message{To: []string{"a@b.org"}, Subject: "s", Text: "t"})
	if !errors.As(err, &pe) || pe.Status != 401 {
		t.Errorf("wrong key: %v", err)
	}
	// So is an unreachable provider.
	err = p.Client(mail.EnvProviderURL, "http://127.0.0.1:1").Send(context.Background(), mail.Message{To: []string{"a@b.org"}, Subject: "s", Text: "t"})
	if errs.CodeOf(err) != "email_send_failed" {
		t.Errorf("unreachable provider: %v", err)
	}
}

func TestPickLanguage(t *testing.T) {
	for header, want := range map[string]mail.Lang{
		"":                          mail.English,
		"it":                        mail.Italian,
		"it-IT,it;q=0.9,en;q=0.8":   mail.Italian,
		"IT-ch":                     mail.Italian,
		"en-US,en;q=0.9,it;q=0.8":   mail.English,
		"en;q=0.5, it;q=0.9":        mail.Italian,
		"it;q=0.2, en;q=0.3":        mail.English,
		"fr-FR,fr;q=0.9":            mail.English,
		"fr, it;q=0.7":              mail.Italian, // the best language we write in
		"fr, it;q=0.7, en;q=0.8":    mail.English,
		"it;q=0":                    mail.English, // q=0 means not acceptable
		"it;q=banana":               mail.English,
		"*":                         mail.English,
		"de, *;q=0.5, it;q=0.4":     mail.English,
		"it; q=0.8 , en ; q = 0.5 ": mail.Italian,
		",,;;==":                    mail.English,
	} {
		if got := mail.PickLanguage(header); got != want {
			t.Errorf("PickLanguage(%q) = %s, want %s", header, got, want)
		}
	}
}

func TestTemplatesEscapeUserValues(t *testing.T) {
	d := mail.RegistrationData{App: `Dig & <Co>`, Name: `<script>alert("x")</script>`, Email: `a"b@example.org`}
	for _, render := range []func(mail.Lang, mail.RegistrationData) (mail.Content, error){mail.RegistrationConfirmation, mail.RegistrationNotice} {
		for _, lang := range []mail.Lang{mail.English, mail.Italian} {
			c, err := render(lang, d)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(c.HTML, "<script>") || strings.Contains(c.HTML, "<Co>") {
				t.Errorf("%s: unescaped value in HTML: %s", lang, c.HTML)
			}
			if !strings.Contains(c.HTML, "&lt;script&gt;") || !strings.Contains(c.HTML, "Dig &amp; &lt;Co&gt;") {
				t.Errorf("%s: escaped value missing from HTML: %s", lang, c.HTML)
			}
			if !strings.Contains(c.Text, `<script>alert("x")</script>`) {
				t.Errorf("%s: the text part should carry the name as typed: %s", lang, c.Text)
			}
			if !strings.Contains(c.HTML, `lang="`+string(lang)+`"`) {
				t.Errorf("%s: html lang attribute missing", lang)
			}
		}
	}
	c, err := mail.PasswordReset(mail.Italian, mail.ResetData{App: "Dig", Name: "Ann", Link: "https://dig.example.org/dig/reset-password?email=ann%40example.org&token=abc"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject != "Reimposta la tua password per Dig" {
		t.Errorf("subject %q", c.Subject)
	}
	if !strings.Contains(c.HTML, `href="https://dig.example.org/dig/reset-password?email=ann%40example.org&amp;token=abc"`) {
		t.Errorf("link in HTML: %s", c.HTML)
	}
	if !strings.Contains(c.Text, "https://dig.example.org/dig/reset-password?email=ann%40example.org&token=abc") {
		t.Errorf("link in text: %s", c.Text)
	}
	// A link that is not http(s) is neutralised by the HTML escaper.
	c, _ = mail.PasswordReset(mail.English, mail.ResetData{App: "Dig", Name: "Ann", Link: "javascript:alert(1)"})
	if strings.Contains(c.HTML, `href="javascript:`) {
		t.Errorf("javascript link kept: %s", c.HTML)
	}
}

// TestImitateTakesAboutAsLongAsASend: a flow with nothing to send waits as
// long as the provider's recent round trips, so its timing reveals nothing.
func TestImitateTakesAboutAsLongAsASend(t *testing.T) {
	const delay = 40 * time.Millisecond
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"x"}`))
	}))
	defer slow.Close()
	env := map[string]string{mail.EnvAPIKey: "k", mail.EnvFromAddress: "a@b.org", mail.EnvProviderURL: slow.URL}
	c := mail.New(func(k string) string { return env[k] }, nil)
	if c.TypicalLatency() <= 0 {
		t.Fatal("no initial estimate: the first unknown-email request would answer at once")
	}
	for range 12 {
		if err := c.Send(context.Background(), mail.Message{To: []string{"x@b.org"}, Subject: "s", Text: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	typical := c.TypicalLatency()
	if typical < delay || typical > 4*delay {
		t.Errorf("typical latency %v after sends of about %v", typical, delay)
	}
	start := time.Now()
	c.Imitate(context.Background())
	if took := time.Since(start); took < typical*9/10 {
		t.Errorf("Imitate took %v, want about %v", took, typical)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	c.Imitate(ctx)
	if took := time.Since(start); took > typical/2 {
		t.Errorf("Imitate ignored a cancelled context: %v", took)
	}
}
