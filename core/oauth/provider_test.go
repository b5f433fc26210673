package oauth_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/oauth"
	"github.com/strata-archaeo/strata/core/oauth/oauthtest"
)

func newProvider(t *testing.T, fake *oauthtest.Provider, secret string) *oauth.Provider {
	t.Helper()
	p, err := oauth.NewProvider(fake.Name, oauth.Credentials{ClientID: fake.ClientID, ClientSecret: secret},
		"https://svc.example.org/dig/api/auth/oauth/"+fake.Name+"/callback", oauthtest.Getenv(fake), nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAuthCodeURL(t *testing.T) {
	for _, tc := range []struct {
		name, scope string
		env         func(string) string
		base        string
	}{
		{oauth.ProviderA, "openid email profile", nil, oauth.DefaultIdpAAuthURL},
		{oauth.ProviderB, "/authenticate", nil, oauth.DefaultIdpBAuthURL},
		{oauth.ProviderA, "openid email profile", func(k string) string {
			return map[string]string{oauth.EnvIdpAAuthURL: "http://127.0.0.1:9/auth"}[k]
		}, "http://127.0.0.1:9/auth"},
	} {
		p, err := oauth.NewProvider(tc.name, oauth.Credentials{ClientID: "cid", ClientSecret: "sec"},
			"https://svc.example.org/dig/api/auth/oauth/"+tc.name+"/callback", tc.env, nil)
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(p.AuthCodeURL("st.ate"))
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		if base := u.Scheme + "://" + u.Host + u.Path; base != tc.base {
			t.Errorf("%s: endpoint %s, want %s", tc.name, base, tc.base)
		}
		want := map[string]string{"client_id": "cid", "response_type": "code", "scope": tc.scope, "state": "st.ate",
			"redirect_uri": "https://svc.example.org/dig/api/auth/oauth/" + tc.name + "/callback"}
		for k, v := range want {
			if q.Get(k) != v {
				t.Errorf("%s: %s = %q, want %q", tc.name, k, q.Get(k), v)
			}
		}
		if q.Has("client_secret") || strings.Contains(u.String(), "sec") {
			t.Errorf("%s: the client secret must never be in the authorization URL: %s", tc.name, u)
		}
	}
	if _, err := oauth.NewProvider("idp_z", oauth.Credentials{}, "", nil, nil); err == nil {
		t.Error("an unknown provider must be refused")
	}
}

func TestIdentifyIdpA(t *testing.T) {
	fake := oauthtest.NewIdpA(t)
	ctx := context.Background()
	p := newProvider(t, fake, fake.ClientSecret)

	id, err := p.Identify(ctx, fake.Grant(oauthtest.Identity{Sub: "a-1", Email: " Ann@Example.org ", EmailVerified: true, Name: "Ann", IDToken: true}))
	if err != nil {
		t.Fatal(err)
	}
	if *id != (oauth.Identity{Provider: oauth.ProviderA, Sub: "a-1", Email: "ann@example.org", EmailVerified: true, Name: "Ann"}) {
		t.Fatalf("identity %+v", id)
	}
	if got := fake.RedirectURIs(); len(got) != 1 || got[0] != "https://svc.example.org/dig/api/auth/oauth/idp_a/callback" {
		t.Errorf("the exchange must send the same redirect_uri as the authorization step: %v", got)
	}

	for _, tc := range []struct {
		claim any
		want  bool
	}{{"true", true}, {"TRUE", true}, {false, false}, {"false", false}, {nil, false}, {1, false}} {
		id, err := p.Identify(ctx, fake.Grant(oauthtest.Identity{Sub: "a-2", Email: "bo@example.org", EmailVerified: tc.claim}))
		if err != nil || id.EmailVerified != tc.want {
			t.Errorf("email_verified %#v: got %v, %v; want %v", tc.claim, id, err, tc.want)
		}
	}
	if id, err := p.Identify(ctx, fake.Grant(oauthtest.Identity{Sub: "a-3", Email: "not an email", EmailVerified: true})); err != nil || id.Email != "" || id.EmailVerified {
		t.Errorf("a malformed email is dropped: %+v, %v", id, err)
	}

	failures := map[string]oauthtest.Identity{
		"userinfo down":         {Sub: "a-4", NoUserinfo: true},
		"no sub":                {Sub: ""},
		"id_token of other sub": {Sub: "a-5", IDToken: true, IDTokenSub: "someone-else"},
		"id_token of other aud": {Sub: "a-6", IDToken: true, IDTokenAud: "another-client"},
	}
	for name, who := range failures {
		if id, err := p.Identify(ctx, fake.Grant(who)); err == nil {
			t.Errorf("%s: want an error, got %+v", name, id)
		}
	}
	code := fake.Grant(oauthtest.Identity{Sub: "a-7"})
	if _, err := p.Identify(ctx, code); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Identify(ctx, code); err == nil {
		t.Error("a code is single-use at the provider: a replay must fail")
	}
	if _, err := newProvider(t, fake, "wrong-secret").Identify(ctx, fake.Grant(oauthtest.Identity{Sub: "a-8"})); err == nil {
		t.Error("wrong client secret must fail")
	}
	fake.FailNextTokens(1)
	_, err = p.Identify(ctx, fake.Grant(oauthtest.Identity{Sub: "a-9"}))
	var ee *oauth.ExchangeError
	if !errors.As(err, &ee) || ee.Step != "token" || !strings.Contains(ee.Error(), "status 500") {
		t.Errorf("token endpoint 500: %v", err)
	}
	if strings.Contains(err.Error(), "upstream exploded") {
		t.Errorf("the provider's body must not reach the error text: %v", err)
	}
}

func TestIdentifyIdpB(t *testing.T) {
	fake := oauthtest.NewIdpB(t)
	ctx := context.Background()
	p := newProvider(t, fake, fake.ClientSecret)
	id, err := p.Identify(ctx, fake.Grant(oauthtest.Identity{Sub: "0000-0002-1825-0097", Name: "Josiah Carberry", Email: "ignored@example.org", EmailVerified: true}))
	if err != nil {
		t.Fatal(err)
	}
	if *id != (oauth.Identity{Provider: oauth.ProviderB, Sub: "0000-0002-1825-0097", Name: "Josiah Carberry"}) {
		t.Fatalf("identity %+v (idp_b never yields an email)", id)
	}
	if _, err := p.Identify(ctx, fake.Grant(oauthtest.Identity{Name: "X", OmitOrcidSub: true})); err == nil {
		t.Error("a token answer without orcid must fail")
	}
	if _, err := newProvider(t, fake, "wrong").Identify(ctx, fake.Grant(oauthtest.Identity{Sub: "0000-0001"})); err == nil {
		t.Error("wrong client secret must fail")
	}
}
