package oauth

import (
	"net/http/httptest"
	"net/url"
	"testing"
)

func TestNormalizeOrigin(t *testing.T) {
	good := map[string]string{
		"https://App.Example.org":       "https://app.example.org",
		"https://app.example.org/":      "https://app.example.org",
		"https://app.example.org:443":   "https://app.example.org",
		"http://app.example.org:80":     "http://app.example.org",
		"http://localhost:5173":         "http://localhost:5173",
		"https://example.org/strata/":   "https://example.org/strata",
		" https://app.example.org ":     "https://app.example.org",
		"HTTPS://[::1]:8443":            "https://[::1]:8443",
		"https://app.example.org:8443/": "https://app.example.org:8443",
	}
	for in, want := range good {
		if got, ok := NormalizeOrigin(in); !ok || got != want {
			t.Errorf("NormalizeOrigin(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{
		"", "app.example.org", "//app.example.org", "javascript:alert(1)", "ftp://app.example.org",
		"https://user@app.example.org", "https://app.example.org?x=1", "https://app.example.org#f",
		"https://app.example.org?", "https:///path", "data:text/html,hi", "https://app.example.org\\@evil.org",
		"https://app.example.org /x",
	} {
		if got, ok := NormalizeOrigin(bad); ok {
			t.Errorf("NormalizeOrigin(%q) = %q, want refusal", bad, got)
		}
	}
}

func TestRequestSchemeAndBase(t *testing.T) {
	r := httptest.NewRequest("GET", "http://svc.example.org/dig/api/x", nil)
	if RequestScheme(r) != "http" || ServiceBase(r, "") != "http://svc.example.org" {
		t.Errorf("plain: %s %s", RequestScheme(r), ServiceBase(r, ""))
	}
	r.Header.Set("X-Forwarded-Proto", "https, http")
	if RequestScheme(r) != "https" || ServiceBase(r, "") != "https://svc.example.org" {
		t.Errorf("first token of X-Forwarded-Proto: %s", RequestScheme(r))
	}
	r.Header.Set("X-Forwarded-Proto", "gopher")
	if RequestScheme(r) != "http" {
		t.Errorf("a nonsense X-Forwarded-Proto is ignored: %s", RequestScheme(r))
	}
	if got := ServiceBase(r, "https://Public.example.org/strata/"); got != "https://public.example.org/strata" {
		t.Errorf("SERVICE_PUBLIC_URL wins: %s", got)
	}
	tls := httptest.NewRequest("GET", "https://svc.example.org/x", nil)
	if RequestScheme(tls) != "https" {
		t.Error("a TLS connection is https")
	}
	if got := RedirectURL("https://svc.example.org", "dig", ProviderA); got != "https://svc.example.org/dig/api/auth/oauth/idp_a/callback" {
		t.Errorf("RedirectURL = %s", got)
	}
}

func TestAllowedOrigins(t *testing.T) {
	r := httptest.NewRequest("GET", "http://svc.example.org/x", nil)
	list := []string{"https://Client.example.org/", "not an origin", ""}
	for _, tc := range []struct {
		name, public string
		want         []string
	}{
		// With a public URL, it alone is the own origin: the request's host is not.
		{"public URL", "https://public.example.org/", []string{"https://public.example.org", "https://client.example.org"}},
		{"no public URL", "", []string{"http://svc.example.org", "https://client.example.org"}},
	} {
		set := AllowedOrigins(r, tc.public, list)
		for _, o := range tc.want {
			if !set[o] {
				t.Errorf("%s: %s should be allowed: %v", tc.name, o, set)
			}
		}
		if len(set) != len(tc.want) {
			t.Errorf("%s: only %v expected: %v", tc.name, tc.want, set)
		}
	}
}

func TestCallbackURL(t *testing.T) {
	got := CallbackURL("https://app.example.org", "error", "no_account", "app", "dig", "pending", "a+b/c=.&x", "token", "")
	if got != "https://app.example.org/oauth-callback?error=no_account&app=dig&pending=a%2Bb%2Fc%3D.%26x" {
		t.Fatalf("CallbackURL = %s", got)
	}
	u, _ := url.Parse(got)
	if u.Query().Get("pending") != "a+b/c=.&x" {
		t.Fatal("parameters must survive a round trip")
	}
}
