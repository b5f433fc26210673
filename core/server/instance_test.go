package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
	"github.com/strata-archaeo/strata/core/version"
)

func newAppBody(name string) string {
	return fmt.Sprintf(`{"name":%q,"definition":"Pompeii Regio VI","email":"Boss@Example.org","password":"longenough1","name_of_admin":"Boss"}`, name)
}

func TestInstanceEndpointsOnFreshInstall(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstance(t, e)
		for _, s := range []testenv.Scenario{
			{Name: "info is public", URL: "/api/info", ExpectedStatus: 200,
				ExpectedContent: []string{`"version":"` + version.Version + `"`, `"go_version":"go`, `"plugins":[]`}},
			{Name: "status says a fresh install is needed", URL: "/api/new-app/status", ExpectedStatus: 200,
				ExpectedContent: []string{`"permitted":true`, `"needed":true`, `"engines":["sqlite","postgres"]`, `"engine":"` + string(e) + `"`}},
			{Name: "no apps listed", URL: "/api/auth/apps", ExpectedStatus: 200, ExpectedContent: []string{`"apps":[]`}},
		} {
			t.Run(s.Name, func(t *testing.T) { s.Run(t, inst.Server) })
		}
	})
}

func TestCreateAppThenListIt(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstance(t, e)
		testenv.Scenario{Method: "POST", URL: "/api/new-app", Body: newAppBody("pompeii"), ExpectedStatus: 200,
			ExpectedContent:    []string{`"code":"ok_app_created"`, `"name":"pompeii"`, `"db":"pompeii"`, `"definition":"Pompeii Regio VI"`, `"upgrade":null`, `"oauth":[]`},
			NotExpectedContent: []string{"password", "secret"},
		}.Run(t, inst.Server)

		for _, s := range []testenv.Scenario{
			{Name: "listed with its definition", URL: "/api/auth/apps", ExpectedStatus: 200,
				ExpectedContent:    []string{`"apps":[{`, `"name":"pompeii"`, `"definition":"Pompeii Regio VI"`, `"upgrade":null`},
				NotExpectedContent: []string{"jwt", "secret"}},
			{Name: "no longer a fresh install", URL: "/api/new-app/status", ExpectedStatus: 200, ExpectedContent: []string{`"needed":false`}},
			{Name: "same name again conflicts", Method: "POST", URL: "/api/new-app", Body: newAppBody("pompeii"), ExpectedStatus: 409,
				ExpectedContent: []string{`"code":"app_exists"`}},
			{Name: "upgrade status is app-scoped and public", URL: "/pompeii/api/upgrade/status", ExpectedStatus: 200,
				ExpectedContent: []string{`"upgrade":null`}},
		} {
			t.Run(s.Name, func(t *testing.T) { s.Run(t, inst.Server) })
		}

		// The first user is a super_admin with a normalised email and a
		// bcrypt hash, never the plain password.
		a, err := inst.Apps.Get(t.Context(), "pompeii")
		if err != nil {
			t.Fatal(err)
		}
		var email, hash string
		var priv int
		err = a.DB.QueryRow(t.Context(), `SELECT email, password, privilege FROM `+a.DB.Sys("users")).Scan(&email, &hash, &priv)
		if err != nil {
			t.Fatal(err)
		}
		if email != "boss@example.org" || priv != 1 || !strings.HasPrefix(hash, "$2") {
			t.Fatalf("first user: email %q privilege %d hash %.4s…", email, priv, hash)
		}
		secret, err := a.JWTSecret(t.Context())
		if err != nil || len(secret) != 32 {
			t.Fatalf("JWT secret: %d bytes, %v", len(secret), err)
		}
	})
}

func TestBadNewAppRequestsLeaveNoTrace(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstance(t, e)
		body := func(name string) string { return newAppBody(name) }
		cases := []testenv.Scenario{
			{Name: "reserved api", Body: body("api"), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_app_name"`, `"reason":"reserved"`}},
			{Name: "reserved any case", Body: body("LOGIN"), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_app_name"`, `"reason":"reserved"`}},
			{Name: "reserved new-app", Body: body("new-app"), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_app_name"`}},
			{Name: "reserved favicon", Body: body("Favicon.ico"), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_app_name"`}},
			{Name: "path traversal", Body: body("../x"), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_app_name"`}},
			{Name: "space and capitals", Body: body("A B"), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_app_name"`}},
			{Name: "70 characters", Body: body(strings.Repeat("a", 70)), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_app_name"`}},
			{Name: "empty name", Body: body(""), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_app_name"`}},
			{Name: "one letter", Body: body("a"), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_app_name"`}},
			{Name: "leading digit", Body: body("1site"), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_app_name"`}},
			{Name: "sql in name", Body: body(`x"; drop schema public; --`), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_app_name"`}},
			{Name: "missing email", Body: `{"name":"okname","password":"longenough1"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`, `"parameter":"email"`}},
			{Name: "missing password", Body: `{"name":"okname","email":"a@b.org"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`, `"parameter":"password"`}},
			{Name: "bad email", Body: `{"name":"okname","email":"not an email","password":"longenough1"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"email_not_valid"`}},
			{Name: "short password", Body: `{"name":"okname","email":"a@b.org","password":"short"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"password_too_short"`}},
			{Name: "password over bcrypt's limit", Body: `{"name":"okname","email":"a@b.org","password":"` + strings.Repeat("p", 73) + `"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"password_too_long"`}},
			{Name: "name of wrong type", Body: `{"name":{"n":5},"email":"a@b.org","password":"longenough1"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`, "name must be text, not an object"}},
			{Name: "malformed JSON", Body: `{"name":"okname",`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`}},
			{Name: "two JSON values", Body: `{"name":"okname"} {}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`}},
			{Name: "JSON array", Body: `[]`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`}},
		}
		for _, s := range cases {
			s.Method, s.URL = "POST", "/api/new-app"
			t.Run(s.Name, func(t *testing.T) { s.Run(t, inst.Server) })
		}
		t.Run("empty body", func(t *testing.T) {
			testenv.Scenario{Method: "POST", URL: "/api/new-app", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`}}.Run(t, inst.Server)
		})
		testenv.AssertNoTrace(t, inst.Apps)
	})
}

func TestNewAppNeedsTheDeploymentFlag(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstance(t, e, func(c *config.Config) { c.AllowNewApp = false })
		testenv.Scenario{URL: "/api/new-app/status", ExpectedStatus: 200, ExpectedContent: []string{`"permitted":false`}}.Run(t, inst.Server)
		testenv.Scenario{Method: "POST", URL: "/api/new-app", Body: newAppBody("blocked"), ExpectedStatus: 403,
			ExpectedContent: []string{`"code":"not_allowed_app_create"`}}.Run(t, inst.Server)
		testenv.AssertNoTrace(t, inst.Apps)
	})
}

func TestOAuthProvidersListedOnlyWhenFullyConfigured(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstance(t, e)
		a := testenv.NewApp(t, inst.Apps, "dig")
		err := a.SetSettings(t.Context(), map[string]string{
			"oauth.idp_a.client_id": "id-a", "oauth.idp_a.client_secret": "s3cr3t",
			"oauth.idp_b.client_id": "id-b", // no secret: not offered
		})
		if err != nil {
			t.Fatal(err)
		}
		testenv.Scenario{URL: "/api/auth/apps", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"oauth":["idp_a"]`}, NotExpectedContent: []string{"s3cr3t"}}.Run(t, inst.Server)
	})
}
