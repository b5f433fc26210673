package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/secrets"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func rawSettingOf(t *testing.T, a *apps.App, key string) string {
	t.Helper()
	var v string
	if err := a.DB.QueryRow(context.Background(), `SELECT value FROM `+a.DB.Sys("settings")+` WHERE key = ?`, key).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// strata secrets rotate re-seals every app's secrets with a new key and
// seals the values older versions stored in clear; the key file is 0600
// and ends with the new key alone.
func TestSecretsRotate(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		c := newCLI(t, e)
		ctx := context.Background()
		for _, name := range []string{"dig", "survey"} {
			if code, _, errOut := c.run(ctx, "", nil, "app", "create", name, "--email", "a@example.org", "--password", "long-enough-pw"); code != 0 {
				t.Fatalf("create %s: %s", name, errOut)
			}
		}
		dataDir := c.env["STRATA_DATA_DIR"]
		keyFile := filepath.Join(dataDir, "secret.key")
		if st, err := os.Stat(keyFile); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("key file made at first start, 0600: %v %v", st, err)
		}
		before, _ := secrets.ReadKeyFile(keyFile)
		cfg, _ := config.FromEnv(func(k string) string { return c.env[k] })
		open := func() *apps.Registry {
			keys, _, err := secrets.Load(dataDir, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			reg, err := openRegistryWith(ctx, cfg, keys, testenv.Logger())
			if err != nil {
				t.Fatal(err)
			}
			return reg
		}
		reg := open()
		dig, _ := reg.Get(ctx, "dig")
		secretKey := apps.OAuthClientSecretKey("idp_a")
		if err := dig.SetSettings(ctx, map[string]string{secretKey: "oauth-secret", "zotero_api_key": "zk-1"}); err != nil {
			t.Fatal(err)
		}
		// As an older version stored it: in clear.
		if _, err := dig.DB.Exec(ctx, `UPDATE `+dig.DB.Sys("settings")+` SET value = ? WHERE key = ?`, "zk-legacy", "zotero_api_key"); err != nil {
			t.Fatal(err)
		}
		jwtBefore, _ := dig.JWTSecret(ctx)
		reg.Close()

		code, out, errOut := c.run(ctx, "", nil, "secrets", "rotate")
		if code != 0 || !strings.Contains(out, "sealed with it") {
			t.Fatalf("rotate: %d %s %s", code, out, errOut)
		}
		after, err := secrets.ReadKeyFile(keyFile)
		if err != nil || len(after) != 1 || secrets.KeyID(after[0]) == secrets.KeyID(before[0]) {
			t.Fatalf("the key file holds one new key: %v", err)
		}
		newID := secrets.KeyID(after[0])
		reg = open()
		defer reg.Close()
		for _, name := range []string{"dig", "survey"} {
			a, _ := reg.Get(ctx, name)
			if got := secrets.SealedWith(rawSettingOf(t, a, apps.SettingJWTSecret)); got != newID {
				t.Errorf("%s: jwt secret sealed with %q, want %s", name, got, newID)
			}
		}
		dig, _ = reg.Get(ctx, "dig")
		for key, want := range map[string]string{secretKey: "oauth-secret", "zotero_api_key": "zk-legacy"} {
			if got := secrets.SealedWith(rawSettingOf(t, dig, key)); got != newID {
				t.Errorf("%s sealed with %q, want %s", key, got, newID)
			}
			if v, _, err := dig.Setting(ctx, key); err != nil || v != want {
				t.Errorf("%s reads %q %v, want %q", key, v, err, want)
			}
		}
		if jwtAfter, err := dig.JWTSecret(ctx); err != nil || string(jwtAfter) != string(jwtBefore) {
			t.Error("the JWT secret changed: existing tokens would stop verifying")
		}
		// Nothing left to do: a second run re-seals everything again with a newer key.
		if code, _, errOut := c.run(ctx, "", nil, "secrets", "rotate"); code != 0 {
			t.Fatalf("second rotate: %s", errOut)
		}
	})
}
