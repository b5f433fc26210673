package server_test

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/oauth"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// With SERVICE_PUBLIC_URL set, it alone is the server's own origin: a
// forged Host (or X-Forwarded-*) never makes an Origin trusted, so a reset
// request cannot make the mailed link point at the attacker (issue 11).
func TestResetLinkIgnoresForgedHostWithPublicURL(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newSignupEnv(t, e, nil, func(c *config.Config) { c.PublicURL = "https://strata.example.org" })
		testenv.NewUser(t, env.dig, "Ann", "ann@example.org", auth.Reader)
		env.setSettings(map[string]string{apps.SettingOAuthAllowedOrigins: `["https://front.example.org"]`})
		for _, h := range []map[string]string{
			{"Host": "evil.example", "Origin": "http://evil.example"},
			{"Host": "evil.example", "Origin": "https://evil.example", "X-Forwarded-Proto": "https"},
			{"X-Forwarded-Host": "evil.example", "Origin": "http://evil.example"},
			{"Origin": "http://example.com"}, // the request's own host is not the server's origin
		} {
			link, _ := env.resetLink("ann@example.org", h)
			if got := link.Scheme + "://" + link.Host; got != "https://strata.example.org" {
				t.Errorf("%v: link %s, want it at https://strata.example.org", h, link)
			}
		}
		link, _ := env.resetLink("ann@example.org", map[string]string{"Host": "evil.example", "Origin": "https://front.example.org"})
		if got := link.Scheme + "://" + link.Host; got != "https://front.example.org" {
			t.Errorf("an allow-listed origin: link %s", link)
		}
	})
}

// The same rule for the OAuth redirect and callback.
func TestOAuthOriginIgnoresForgedHostWithPublicURL(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newOAuthEnv(t, e, func(c *config.Config) { c.PublicURL = "https://records.example.org" })
		forge := func(r *http.Request) { r.Host = "evil.example" }
		for _, origin := range []string{"http://evil.example", "http://example.com"} {
			if code, body := env.redirect("dig", oauth.ProviderA, origin, forge); code != 400 || body["code"] != "invalid_origin" {
				t.Errorf("origin %s with a forged Host: %d %v, want 400 invalid_origin", origin, code, body)
			}
		}
		code, body := env.redirect("dig", oauth.ProviderA, "https://records.example.org", forge)
		if code != 200 {
			t.Fatalf("the public URL is an allowed origin: %d %v", code, body)
		}
		u, _ := url.Parse(body["url"].(string))
		if got := u.Query().Get("redirect_uri"); !strings.HasPrefix(got, "https://records.example.org/") {
			t.Errorf("redirect address %s is not built on the public URL", got)
		}
		// A callback whose request carries the same forged Host still sends
		// the client's token only to the allow-listed origin.
		st := env.state("dig", oauth.ProviderA, clientOrigin, forge)
		loc := env.callback("dig", oauth.ProviderA, url.Values{"state": {st}}, forge)
		expectRedirect(t, loc, clientOrigin, map[string]string{"error": "invalid_request", "app": "dig"})
		loc = env.callback("dig", oauth.ProviderA, url.Values{"state": {"garbage"}}, forge)
		expectRedirect(t, loc, "https://records.example.org", map[string]string{"error": "invalid_state", "app": "dig"})
	})
}

// Without SERVICE_PUBLIC_URL the server warns at start that links will use
// the request's Host; with it, it does not.
func TestStartWarnsWithoutPublicURL(t *testing.T) {
	for _, public := range []string{"", "https://strata.example.org"} {
		logs := &lockedBuffer{}
		testenv.NewInstanceWith(t, store.SQLite, server.Deps{Logger: slog.New(slog.NewTextHandler(logs, nil))},
			func(c *config.Config) { c.PublicURL = public })
		warned := strings.Contains(logs.String(), "SERVICE_PUBLIC_URL is not set")
		if warned != (public == "") {
			t.Errorf("public URL %q: warned %v; logs %s", public, warned, logs.String())
		}
	}
}
