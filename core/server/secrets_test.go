package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/oauth"
	"github.com/strata-archaeo/strata/core/oauth/oauthtest"
	"github.com/strata-archaeo/strata/core/secrets"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// rawSetting is a setting as stored, without the app's decoding.
func rawSetting(t *testing.T, a *apps.App, key string) string {
	t.Helper()
	var v string
	if err := a.DB.QueryRow(context.Background(), `SELECT value FROM `+a.DB.Sys("settings")+` WHERE key = ?`, key).Scan(&v); err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return v
}

func setRaw(t *testing.T, a *apps.App, key, value string) {
	t.Helper()
	if _, err := a.DB.Exec(context.Background(), `UPDATE `+a.DB.Sys("settings")+` SET value = ? WHERE key = ?`, value, key); err != nil {
		t.Fatal(err)
	}
}

// Secrets are sealed at rest with the instance key; values stored in clear
// before encryption still work, are sealed on their next write, and a
// rotation re-seals everything with a new key (issue 11).
func TestSecretsEncryptedAtRest(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newOAuthEnv(t, e)
		h := env.inst.Server
		su := testenv.Login(t, h, "dig", "admin@example.org", testenv.Password)
		secretKey := apps.OAuthClientSecretKey(oauth.ProviderA)

		testenv.Scenario{Method: "PUT", URL: "/dig/api/config/app", Headers: testenv.Bearer(su),
			Body:           `{"oauth":{"idp_a":{"client_id":"` + env.idpA.ClientID + `","client_secret":"` + env.idpA.ClientSecret + `"}}}`,
			ExpectedStatus: 200, NotExpectedContent: []string{env.idpA.ClientSecret}}.Run(t, h)
		for _, key := range []string{secretKey, apps.SettingJWTSecret} {
			raw := rawSetting(t, env.dig, key)
			if !secrets.IsSealed(raw) {
				t.Errorf("%s is stored in clear: %q", key, raw)
			}
		}
		if strings.Contains(rawSetting(t, env.dig, secretKey), env.idpA.ClientSecret) {
			t.Error("the client secret is readable in the database")
		}
		// Still usable: the provider is configured, sign-in tokens verify.
		if code, body := env.redirect("dig", oauth.ProviderA, clientOrigin, nil); code != 200 {
			t.Fatalf("redirect with a sealed secret: %d %v", code, body)
		}
		if ann := env.whoAmI(strings.TrimPrefix(su, "Bearer ")); ann == "" {
			t.Error("a token signed with the sealed JWT secret no longer verifies")
		}

		// A value written in clear before this change is read as it is ...
		setRaw(t, env.dig, secretKey, env.idpA.ClientSecret)
		loc := env.login(oauth.ProviderA, oauthtest.Identity{Sub: "legacy-1", Email: "admin@example.org", EmailVerified: true})
		if loc.Query().Get("token") == "" {
			t.Fatalf("a clear legacy secret no longer works: %s", loc)
		}
		// ... and sealed on the next write.
		testenv.Scenario{Method: "PUT", URL: "/dig/api/config/app", Headers: testenv.Bearer(su),
			Body: `{"oauth":{"idp_a":{"client_secret":"` + env.idpA.ClientSecret + `"}}}`, ExpectedStatus: 200}.Run(t, h)
		if raw := rawSetting(t, env.dig, secretKey); !secrets.IsSealed(raw) {
			t.Errorf("not sealed on the next write: %q", raw)
		}
	})
}
