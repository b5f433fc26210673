package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// newConfigAppEnv is a signupEnv with its own data folder (for the app
// configuration file) and the super_admin's bearer header.
func newConfigAppEnv(t *testing.T, e store.Engine) (*signupEnv, map[string]string) {
	t.Helper()
	dataDir := t.TempDir()
	env := newSignupEnv(t, e, nil, func(c *config.Config) { c.DataDir = dataDir })
	return env, testenv.Bearer(testenv.Login(t, env.inst.Server, "dig", "admin@example.org", testenv.Password))
}

// writeConfigFile writes dig's configuration file.
func (env *signupEnv) writeConfigFile(content string) {
	env.t.Helper()
	path := apps.ConfigFilePath(env.inst.Config.DataDir, "dig")
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		env.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		env.t.Fatal(err)
	}
}

// appProps returns the "app" object of GET /config/app.
func (env *signupEnv) appProps(h map[string]string) map[string]any {
	env.t.Helper()
	status, body := env.do("GET", "/dig/api/config/app", "", h)
	if status != 200 {
		env.t.Fatalf("GET /config/app: %d %v", status, body)
	}
	return body["app"].(map[string]any)
}

func provider(props map[string]any, p string) map[string]any {
	return props["oauth"].(map[string]any)[p].(map[string]any)
}

// authApps returns the oauth list of dig in GET /api/auth/apps.
func (env *signupEnv) authApps() string {
	env.t.Helper()
	status, body := env.do("GET", "/api/auth/apps", "", nil)
	if status != 200 {
		env.t.Fatalf("GET /api/auth/apps: %d %v", status, body)
	}
	for _, a := range body["apps"].([]any) {
		if m := a.(map[string]any); m["name"] == "dig" {
			return jsonOf(m["oauth"])
		}
	}
	env.t.Fatal("dig not listed")
	return ""
}

func TestConfigAppProperties(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env, su := newConfigAppEnv(t, e)

		props := env.appProps(su)
		if props["name"] != "dig" || props["definition"] != "dig" || props["allow_self_registration"] != false ||
			props["status"] != nil || props["language"] != nil || props["maxImageSize"] != nil || jsonOf(props["oauth_allowed_origins"]) != "[]" {
			t.Errorf("defaults: %v", props)
		}
		if a := provider(props, "idp_a"); a["client_id"] != "" || a["client_secret_set"] != false || a["configured"] != false {
			t.Errorf("idp_a by default: %v", a)
		}

		const secretA, secretB = "s3cr3t-of-idp-a-7781", "s3cr3t-of-idp-b-9902"
		testenv.Scenario{Method: "PUT", URL: "/dig/api/config/app", Headers: su, Body: `{
			"definition": "Scavi di Pompei", "status": "frozen", "language": "it", "allow_self_registration": true,
			"maxImageSize": 1600, "oauth_allowed_origins": ["https://Front.Example.org/", "https://front.example.org", "http://localhost:5173"],
			"oauth": {"idp_a": {"client_id": "id-a", "client_secret": "` + secretA + `"}, "idp_b": {"client_id": "id-b", "client_secret": "` + secretB + `"}}}`,
			ExpectedStatus: 200, ExpectedContent: []string{`"code":"app_properties_saved"`, `"client_secret_set":true`},
			NotExpectedContent: []string{secretA, secretB}}.Run(t, env.inst.Server)
		props = env.appProps(su)
		want := map[string]string{"definition": `"Scavi di Pompei"`, "status": `"frozen"`, "language": `"it"`,
			"allow_self_registration": "true", "maxImageSize": "1600",
			"oauth_allowed_origins": `["https://front.example.org","http://localhost:5173"]`, "oauth_allowed_origins_source": `"settings"`}
		for k, v := range want {
			if got := jsonOf(props[k]); got != v {
				t.Errorf("%s = %s, want %s", k, got, v)
			}
		}
		if a := provider(props, "idp_a"); a["client_id"] != "id-a" || a["client_secret_set"] != true || a["configured"] != true ||
			a["client_id_source"] != "settings" || a["client_secret_source"] != "settings" {
			t.Errorf("idp_a: %v", a)
		}
		if raw := jsonOf(props); strings.Contains(raw, secretA) || strings.Contains(raw, secretB) {
			t.Errorf("GET returns a secret: %s", raw)
		}
		if got := env.authApps(); got != `["idp_a","idp_b"]` {
			t.Errorf("/api/auth/apps oauth %s", got)
		}
		// /info/app shows the public ones.
		testenv.Scenario{Method: "GET", URL: "/dig/api/info/app", Headers: su, ExpectedStatus: 200,
			ExpectedContent:    []string{`"allow_self_registration":"1"`, `"language":"it"`, `"maxImageSize":"1600"`},
			NotExpectedContent: []string{secretA}}.Run(t, env.inst.Server)

		// Only what is sent changes; an empty string clears; the body may be
		// wrapped as GET answers it.
		testenv.Scenario{Method: "PUT", URL: "/dig/api/config/app", Headers: su,
			Body:           `{"status":"success","app":{"name":"ignored","oauth":{"idp_a":{"client_secret":""}},"allow_self_registration":false,"maxImageSize":null,"language":""}}`,
			ExpectedStatus: 200}.Run(t, env.inst.Server)
		props = env.appProps(su)
		if a := provider(props, "idp_a"); a["client_id"] != "id-a" || a["client_secret_set"] != false || a["configured"] != false || a["client_secret_source"] != nil {
			t.Errorf("idp_a after clearing its secret: %v", a)
		}
		if props["allow_self_registration"] != false || props["maxImageSize"] != nil || props["language"] != nil ||
			props["definition"] != "Scavi di Pompei" || props["status"] != "frozen" || props["name"] != "dig" {
			t.Errorf("after a partial update: %v", props)
		}
		if got := env.authApps(); got != `["idp_b"]` {
			t.Errorf("/api/auth/apps oauth %s after clearing idp_a's secret", got)
		}
		if v, ok, _ := env.dig.Setting(context.Background(), apps.OAuthClientSecretKey("idp_a")); ok {
			t.Errorf("a cleared secret is kept as %q", v)
		}
		if id, secret, err := env.dig.OAuthCredentials(context.Background(), "idp_b"); err != nil || id != "id-b" || secret != secretB {
			t.Errorf("OAuthCredentials(idp_b) = %q, %q, %v", id, secret, err)
		}

		// Forms send strings.
		testenv.Scenario{Method: "PUT", URL: "/dig/api/config/app", Headers: su,
			Body: `{"allow_self_registration":"1","maxImageSize":"2048","oauth_allowed_origins":"https://a.example.org, https://b.example.org"}`, ExpectedStatus: 200,
			ExpectedContent: []string{`"allow_self_registration":true`, `"maxImageSize":2048`, `"oauth_allowed_origins":["https://a.example.org","https://b.example.org"]`}}.Run(t, env.inst.Server)
		// An empty definition falls back to the app's name.
		testenv.Scenario{Method: "PUT", URL: "/dig/api/config/app", Headers: su, Body: `{"definition":""}`, ExpectedStatus: 200,
			ExpectedContent: []string{`"definition":"dig"`}}.Run(t, env.inst.Server)
	})
}

func TestConfigAppRefusals(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env, su := newConfigAppEnv(t, e)
		testenv.NewUser(t, env.dig, "Admin", "admin2@example.org", auth.Admin)
		admin := testenv.Bearer(testenv.Login(t, env.inst.Server, "dig", "admin2@example.org", testenv.Password))
		testenv.NewApp(t, env.inst.Apps, "other")
		otherSuper := testenv.Bearer(testenv.Login(t, env.inst.Server, "other", "admin@example.org", testenv.Password))
		for _, s := range []testenv.Scenario{
			{Name: "admin may not read", Method: "GET", Headers: admin, ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}},
			{Name: "admin may not write", Method: "PUT", Headers: admin, Body: `{"allow_self_registration":true}`, ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}},
			{Name: "anonymous", Method: "GET", ExpectedStatus: 401, ExpectedContent: []string{`"code":"unauthenticated"`}},
			{Name: "another app's super_admin", Method: "PUT", Headers: otherSuper, Body: `{"allow_self_registration":true}`, ExpectedStatus: 403, ExpectedContent: []string{`"code":"app_mismatch"`}},
			{Name: "origin with a query", Method: "PUT", Headers: su, Body: `{"oauth_allowed_origins":["https://a.example.org/?x=1"]}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_origin"`}},
			{Name: "origin of another scheme", Method: "PUT", Headers: su, Body: `{"oauth_allowed_origins":["ftp://a.example.org"]}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_origin"`}},
			{Name: "unknown provider", Method: "PUT", Headers: su, Body: `{"oauth":{"idp_c":{"client_id":"x"}}}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_oauth_provider"`}},
			{Name: "secret of the wrong type", Method: "PUT", Headers: su, Body: `{"oauth":{"idp_a":{"client_secret":42}}}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_setting"`}},
			{Name: "size not a number", Method: "PUT", Headers: su, Body: `{"maxImageSize":"big"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_setting"`, `"setting":"maxImageSize"`}},
			{Name: "negative size", Method: "PUT", Headers: su, Body: `{"maxImageSize":-5}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_setting"`}},
			{Name: "bad language", Method: "PUT", Headers: su, Body: `{"language":"english please"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_setting"`, `"setting":"language"`}},
			{Name: "flag not a boolean", Method: "PUT", Headers: su, Body: `{"allow_self_registration":"maybe"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_setting"`}},
			{Name: "definition too long", Method: "PUT", Headers: su, Body: `{"definition":"` + strings.Repeat("d", 501) + `"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_setting"`}},
			{Name: "not an object", Method: "PUT", Headers: su, Body: `[1]`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`}},
		} {
			s.URL = "/dig/api/config/app"
			t.Run(s.Name, func(t *testing.T) { s.Run(t, env.inst.Server) })
		}
		// A refused body writes nothing, not even its valid parts.
		testenv.Scenario{Method: "PUT", URL: "/dig/api/config/app", Headers: su,
			Body: `{"allow_self_registration":true,"maxImageSize":"big"}`, ExpectedStatus: 400}.Run(t, env.inst.Server)
		if props := env.appProps(su); props["allow_self_registration"] != false {
			t.Errorf("a refused update was partly written: %v", props)
		}
	})
}

func TestConfigAppFileFallback(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env, su := newConfigAppEnv(t, e)
		ctx := context.Background()
		const fileSecret = "file-secret-0042"
		env.writeConfigFile(`{"oauth":{"idp_b":{"client_id":"file-id-b","client_secret":"` + fileSecret + `"},
			"idp_a":{"client_id":"file-id-a"}}, "oauth_allowed_origins":["https://from-file.example.org"], "comment":"ignored"}`)

		props := env.appProps(su)
		b := provider(props, "idp_b")
		if b["client_id"] != "file-id-b" || b["client_secret_set"] != true || b["configured"] != true ||
			b["client_id_source"] != "file" || b["client_secret_source"] != "file" {
			t.Errorf("idp_b from the file: %v", b)
		}
		if a := provider(props, "idp_a"); a["configured"] != false || a["client_id"] != "file-id-a" {
			t.Errorf("idp_a half configured in the file: %v", a)
		}
		if jsonOf(props["oauth_allowed_origins"]) != `["https://from-file.example.org"]` || props["oauth_allowed_origins_source"] != "file" {
			t.Errorf("origins from the file: %v %v", props["oauth_allowed_origins"], props["oauth_allowed_origins_source"])
		}
		if strings.Contains(jsonOf(props), fileSecret) {
			t.Error("GET returns the file's secret")
		}
		if got := env.authApps(); got != `["idp_b"]` {
			t.Errorf("/api/auth/apps oauth %s", got)
		}
		if id, secret, err := env.dig.OAuthCredentials(ctx, "idp_b"); id != "file-id-b" || secret != fileSecret || err != nil {
			t.Errorf("OAuthCredentials from the file: %q %q %v", id, secret, err)
		}

		// The database wins, value by value: a secret in the settings
		// completes idp_a, an id in the settings overrides idp_b's.
		testenv.Scenario{Method: "PUT", URL: "/dig/api/config/app", Headers: su,
			Body:           `{"oauth":{"idp_a":{"client_secret":"db-secret-a"},"idp_b":{"client_id":"db-id-b"}},"oauth_allowed_origins":["https://from-db.example.org"]}`,
			ExpectedStatus: 200}.Run(t, env.inst.Server)
		props = env.appProps(su)
		if a := provider(props, "idp_a"); a["configured"] != true || a["client_id_source"] != "file" || a["client_secret_source"] != "settings" {
			t.Errorf("idp_a merged: %v", a)
		}
		if b := provider(props, "idp_b"); b["client_id"] != "db-id-b" || b["client_id_source"] != "settings" || b["client_secret_source"] != "file" {
			t.Errorf("idp_b merged: %v", b)
		}
		if origins, _ := env.dig.AllowedOrigins(ctx); jsonOf(origins) != `["https://from-db.example.org"]` {
			t.Errorf("origins with both set: %v", origins)
		}
		if got := env.authApps(); got != `["idp_a","idp_b"]` {
			t.Errorf("/api/auth/apps oauth %s", got)
		}

		// The file is read on every request: no restart, no cache.
		env.writeConfigFile(`{"oauth":{}}`)
		if a := provider(env.appProps(su), "idp_a"); a["configured"] != false {
			t.Errorf("idp_a after its id left the file: %v", a)
		}
		if got := env.authApps(); got != `[]` {
			t.Errorf("/api/auth/apps after the file changed: %s (idp_b's secret was in the file)", got)
		}
		testenv.Scenario{Method: "PUT", URL: "/dig/api/config/app", Headers: su,
			Body: `{"oauth":{"idp_b":{"client_secret":"db-secret-b"}}}`, ExpectedStatus: 200}.Run(t, env.inst.Server)

		// A broken file is an error where credentials are needed, logged;
		// the sign-in list falls back to the settings.
		env.writeConfigFile(`{"oauth": nope`)
		testenv.Scenario{Method: "GET", URL: "/dig/api/config/app", Headers: su, ExpectedStatus: 500,
			ExpectedContent: []string{`"code":"internal_error"`}, NotExpectedContent: []string{"config", ".json"}}.Run(t, env.inst.Server)
		if _, _, err := env.dig.OAuthCredentials(ctx, "idp_a"); err == nil {
			t.Error("OAuthCredentials hides a broken file")
		}
		if got := env.authApps(); got != `["idp_b"]` {
			t.Errorf("/api/auth/apps with a broken file: %s", got)
		}
		if !strings.Contains(env.logs.String(), "dig.json") {
			t.Errorf("the broken file is not named in the log: %s", env.logs.String())
		}

		// Another instance's data folder holds another file: each registry
		// reads its own.
		other, otherSu := newConfigAppEnv(t, e)
		if b := provider(other.appProps(otherSu), "idp_b"); b["client_id"] != "" {
			t.Errorf("another instance reads this one's file: %v", b)
		}
	})
}
