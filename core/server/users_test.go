package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// userAdminEnv is an app "dig" with a super_admin, an admin and a writer,
// each signed in.
type userAdminEnv struct {
	inst                         *testenv.Instance
	app                          *apps.App
	super, admin, writer         *auth.User
	superTok, adminTok, writeTok string
}

const digAPI = "/dig/api"

func newUserAdminEnv(t *testing.T, e store.Engine) *userAdminEnv {
	t.Helper()
	inst := testenv.NewInstance(t, e)
	a := testenv.NewApp(t, inst.Apps, "dig")
	super, err := auth.FindUserByEmail(t.Context(), a.DB, "admin@example.org")
	if err != nil {
		t.Fatal(err)
	}
	env := &userAdminEnv{inst: inst, app: a, super: super,
		admin:  testenv.NewUser(t, a, "Ada", "ada@example.org", auth.Admin),
		writer: testenv.NewUser(t, a, "Wes", "wes@example.org", auth.Writer),
	}
	env.superTok = testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password)
	env.adminTok = testenv.Login(t, inst.Server, "dig", "ada@example.org", testenv.Password)
	env.writeTok = testenv.Login(t, inst.Server, "dig", "wes@example.org", testenv.Password)
	return env
}

// do sends a request with a bearer header and returns status and body.
func (env *userAdminEnv) do(t *testing.T, bearer, method, path, body string) (int, map[string]any) {
	t.Helper()
	h := testenv.Bearer(bearer)
	if body != "" {
		h["Content-Type"] = "application/json"
	}
	return testenv.Do(t, env.inst.Server, method, digAPI+path, body, h)
}

// usersByEmail decodes GET /users.
func usersByEmail(t *testing.T, body map[string]any) map[string]map[string]any {
	t.Helper()
	list, ok := body["users"].([]any)
	if !ok {
		t.Fatalf("no users array in %v", body)
	}
	out := map[string]map[string]any{}
	for _, u := range list {
		m := u.(map[string]any)
		out[m["email"].(string)] = m
	}
	return out
}

func TestUserAdministrationRefusals(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newUserAdminEnv(t, e)
		key30 := testenv.NewAPIKey(t, env.app, auth.Reader)
		sup, adm, wri := testenv.Bearer(env.superTok), testenv.Bearer(env.adminTok), testenv.Bearer(env.writeTok)
		superID, adminID := env.super.ID, env.admin.ID
		post := func(body string) testenv.Scenario {
			return testenv.Scenario{Method: "POST", URL: digAPI + "/user", Body: body}
		}
		cases := []struct {
			testenv.Scenario
			as map[string]string
		}{
			// The gate: admin or better, by session or key.
			{testenv.Scenario{Name: "no credential", URL: digAPI + "/users", ExpectedStatus: 401, ExpectedContent: []string{`"code":"unauthenticated"`}}, nil},
			{testenv.Scenario{Name: "writer lists users", URL: digAPI + "/users", ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}}, wri},
			{testenv.Scenario{Name: "writer saves a user", Method: "POST", URL: digAPI + "/user", Body: `{"email":"x@example.org"}`, ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}}, wri},
			// Below admin, one's own profile only (BraDypUS's self-edit).
			{testenv.Scenario{Name: "writer edits another account", Method: "POST", URL: digAPI + "/user", Body: fmt.Sprintf(`{"id":%d,"name":"x"}`, env.admin.ID), ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}}, wri},
			{testenv.Scenario{Name: "writer raises own privilege", Method: "POST", URL: digAPI + "/user", Body: fmt.Sprintf(`{"id":%d,"privilege":10}`, env.writer.ID), ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}}, wri},
			{testenv.Scenario{Name: "writer sets own OAuth identity", Method: "POST", URL: digAPI + "/user", Body: fmt.Sprintf(`{"id":%d,"oauth_provider":"idp_a","oauth_sub":"1"}`, env.writer.ID), ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}}, wri},
			{testenv.Scenario{Name: "reader key lists users", URL: digAPI + "/users", ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}}, testenv.Bearer(key30)},
			{testenv.Scenario{Name: "reader key deletes a user", Method: "DELETE", URL: digAPI + fmt.Sprintf("/user/%d", env.writer.ID), ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}}, testenv.Bearer(key30)},

			// Path ids.
			{testenv.Scenario{Name: "non-numeric id", URL: digAPI + "/user/abc", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_id"`}}, sup},
			{testenv.Scenario{Name: "zero id", URL: digAPI + "/user/0", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_id"`}}, sup},
			{testenv.Scenario{Name: "unknown id", URL: digAPI + "/user/99999", ExpectedStatus: 404, ExpectedContent: []string{`"code":"user_not_found"`}}, sup},
			{testenv.Scenario{Name: "delete non-numeric", Method: "DELETE", URL: digAPI + "/user/1x", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_id"`}}, sup},
			{testenv.Scenario{Name: "delete unknown", Method: "DELETE", URL: digAPI + "/user/99999", ExpectedStatus: 404, ExpectedContent: []string{`"code":"user_not_found"`}}, sup},
			{testenv.Scenario{Name: "revoke unknown", Method: "POST", URL: digAPI + "/user/99999/revoke", ExpectedStatus: 404, ExpectedContent: []string{`"code":"user_not_found"`}}, sup},
			{testenv.Scenario{Name: "revoke non-numeric", Method: "POST", URL: digAPI + "/user/me/revoke", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_id"`}}, sup},

			// Bodies.
			{withWant(post(`[]`), 400, "invalid_json"), sup},
			{withWant(post(`{"email":`), 400, "invalid_json"), sup},
			{withWant(post(`{"name":"No mail"}`), 400, "parameter_missing", `"parameter":"email"`), sup},
			{withWant(post(`{"email":"not-an-email"}`), 400, "email_not_valid"), sup},
			{withWant(post(`{"email":"n@example.org","password":"short"}`), 400, "password_too_short"), sup},
			{withWant(post(`{"email":"n@example.org","privilege":7}`), 400, "invalid_privilege"), sup},
			{withWant(post(`{"email":"n@example.org","privilege":"high"}`), 400, "invalid_json", "privilege must be a level"), sup},
			{withWant(post(`{"email":"n@example.org","name":[5]}`), 400, "invalid_json", "name must be a string"), sup},
			{withWant(post(`{"id":"abc","name":"x"}`), 400, "invalid_json", "id must be an integer"), sup},
			{withWant(post(`{"id":-3,"name":"x"}`), 400, "invalid_id"), sup},
			{withWant(post(`{"id":99999,"name":"x"}`), 404, "user_not_found"), sup},
			{withWant(post(`{"email":"n@example.org","oauth_provider":"github","oauth_sub":"1"}`), 400, "invalid_oauth_provider"), sup},
			{withWant(post(`{"email":"n@example.org","oauth_sub":"1"}`), 400, "oauth_identity_incomplete"), sup},
			{withWant(post(`{"email":"n@example.org","oauth_provider":"idp_a"}`), 400, "oauth_identity_incomplete"), sup},
			{withWant(post(`{"email":" WES@Example.org "}`), 409, "email_present"), sup},
			{withWant(post(fmt.Sprintf(`{"id":%d,"email":"Ada@EXAMPLE.org"}`, env.writer.ID)), 409, "email_present"), sup},

			// Nobody acts above their own level.
			{withWant(post(`{"email":"boss2@example.org","privilege":1}`), 403, "not_enough_privilege", `"reason":"privilege_above_own"`), adm},
			{withWant(post(fmt.Sprintf(`{"id":%d,"privilege":1}`, adminID)), 403, "not_enough_privilege"), adm},
			{withWant(post(fmt.Sprintf(`{"id":"%d","privilege":"1"}`, env.writer.ID)), 403, "not_enough_privilege"), adm},
			{withWant(post(fmt.Sprintf(`{"id":%d,"name":"Pwned"}`, superID)), 403, "not_enough_privilege", `"reason":"target_more_powerful"`), adm},
			{withWant(post(fmt.Sprintf(`{"id":%d,"password":"new password 1"}`, superID)), 403, "not_enough_privilege"), adm},
			{testenv.Scenario{Name: "admin deletes the super_admin", Method: "DELETE", URL: digAPI + fmt.Sprintf("/user/%d", superID), ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}}, adm},
			{testenv.Scenario{Name: "admin revokes the super_admin", Method: "POST", URL: digAPI + fmt.Sprintf("/user/%d/revoke", superID), ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}}, adm},

			// The last super_admin stays.
			{withWant(post(fmt.Sprintf(`{"id":%d,"privilege":10}`, superID)), 409, "last_super_admin"), sup},
			{testenv.Scenario{Name: "last super_admin deletes itself", Method: "DELETE", URL: digAPI + fmt.Sprintf("/user/%d", superID), ExpectedStatus: 409, ExpectedContent: []string{`"code":"last_super_admin"`}}, sup},
		}
		for _, c := range cases {
			if c.Name == "" {
				c.Name = c.Method + " " + c.Body
			}
			c.Headers = c.as
			t.Run(c.Name, func(t *testing.T) { c.Run(t, env.inst.Server) })
		}

		// Nothing above was written: same users, same levels, same tokens.
		for _, u := range []*auth.User{env.super, env.admin, env.writer} {
			now, err := auth.FindUser(t.Context(), env.app.DB, u.ID)
			if err != nil || now.Name != u.Name || now.Email != u.Email || now.Privilege != u.Privilege ||
				now.Password != u.Password || now.TokenVersion != u.TokenVersion {
				t.Errorf("user %s changed: %+v (%v)", u.Email, now, err)
			}
		}
		_, body := env.do(t, env.superTok, "GET", "/users", "")
		if n := len(usersByEmail(t, body)); n != 3 {
			t.Errorf("%d users after refused requests, want 3", n)
		}
	})
}

// withWant names a scenario after its body and sets what it must answer.
func withWant(s testenv.Scenario, status int, code string, more ...string) testenv.Scenario {
	s.Name = s.Body
	s.ExpectedStatus = status
	s.ExpectedContent = append([]string{`"code":"` + code + `"`}, more...)
	return s
}

func TestUserListShowsWhatTheCallerMayEdit(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newUserAdminEnv(t, e)
		_, err := auth.GrantTablePrivilege(t.Context(), env.app.DB, &auth.Actor{Privilege: auth.SuperAdmin}, env.writer.ID, "finds", auth.Reader, nil, time.Now().UTC(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/users", "/user"} {
			status, body := env.do(t, env.adminTok, "GET", path, "")
			if status != http.StatusOK {
				t.Fatalf("GET %s: %d %v", path, status, body)
			}
			users := usersByEmail(t, body)
			for email, want := range map[string]struct {
				editable  bool
				overrides float64
				privilege float64
			}{
				"admin@example.org": {false, 0, 1},
				"ada@example.org":   {true, 0, 10},
				"wes@example.org":   {true, 1, 20},
			} {
				u := users[email]
				if u == nil || u["editable"] != want.editable || u["override_count"] != want.overrides || u["privilege"] != want.privilege {
					t.Errorf("GET %s as admin, %s: %v", path, email, u)
				}
				for _, k := range []string{"id", "name", "oauth_provider", "oauth_sub"} {
					if _, ok := u[k]; !ok {
						t.Errorf("%s lacks %s: %v", email, k, u)
					}
				}
				for _, k := range []string{"password", "token_version", "reset_token_hash"} {
					if _, ok := u[k]; ok {
						t.Errorf("%s exposes %s", email, k)
					}
				}
			}
		}
		// A super_admin may edit everyone.
		_, body := env.do(t, env.superTok, "GET", "/users", "")
		for email, u := range usersByEmail(t, body) {
			if u["editable"] != true {
				t.Errorf("super_admin may not edit %s: %v", email, u)
			}
		}
		testenv.Scenario{URL: digAPI + fmt.Sprintf("/user/%d", env.super.ID), Headers: testenv.Bearer(env.adminTok), ExpectedStatus: 200,
			ExpectedContent:    []string{`"user":{`, `"email":"admin@example.org"`, `"privilege":1`, `"editable":false`, `"override_count":0`, `"oauth_provider":null`},
			NotExpectedContent: []string{"password", "$2"}}.Run(t, env.inst.Server)
	})
}

func TestUserLifecycle(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newUserAdminEnv(t, e)
		h := env.inst.Server

		// Created by an admin: email stored normalised, pending by default.
		status, body := env.do(t, env.adminTok, "POST", "/user", `{"name":"Pia","email":"  Pia@Example.ORG ","password":"a good password"}`)
		if status != http.StatusOK || body["code"] != "user_data_saved" {
			t.Fatalf("create: %d %v", status, body)
		}
		id := int64(body["id"].(float64))
		testenv.Scenario{URL: fmt.Sprintf("%s/user/%d", digAPI, id), Headers: testenv.Bearer(env.adminTok), ExpectedStatus: 200,
			ExpectedContent: []string{`"email":"pia@example.org"`, `"privilege":40`, `"name":"Pia"`, `"editable":true`}}.Run(t, h)
		// Pending: the password is right but the account may not enter yet.
		testenv.Scenario{Method: "POST", URL: digAPI + "/auth/login", Body: `{"email":"pia@example.org","password":"a good password"}`,
			ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}}.Run(t, h)

		// Approved (id as a numeric string), then signs in with the password
		// the admin set.
		status, body = env.do(t, env.adminTok, "POST", "/user", fmt.Sprintf(`{"id":"%d","privilege":"30"}`, id))
		if status != http.StatusOK || body["code"] != "user_data_saved" || body["id"] != float64(id) {
			t.Fatalf("approve: %d %v", status, body)
		}
		testenv.Login(t, h, "dig", "pia@example.org", "a good password")

		// Only the keys sent change; null clears the identity.
		env.do(t, env.adminTok, "POST", "/user", fmt.Sprintf(`{"id":%d,"oauth_provider":"idp_b","oauth_sub":"0000-0002-1825-0097"}`, id))
		env.do(t, env.adminTok, "POST", "/user", fmt.Sprintf(`{"id":%d,"email":"PIA.new@example.org"}`, id))
		testenv.Scenario{URL: fmt.Sprintf("%s/user/%d", digAPI, id), Headers: testenv.Bearer(env.adminTok), ExpectedStatus: 200,
			ExpectedContent: []string{`"email":"pia.new@example.org"`, `"privilege":30`, `"name":"Pia"`, `"oauth_provider":"idp_b"`, `"oauth_sub":"0000-0002-1825-0097"`}}.Run(t, h)
		testenv.Login(t, h, "dig", "pia.new@example.org", "a good password")
		status, _ = env.do(t, env.adminTok, "POST", "/user", fmt.Sprintf(`{"id":%d,"oauth_provider":null,"oauth_sub":null,"password":""}`, id))
		if status != http.StatusOK {
			t.Fatalf("clear identity: %d", status)
		}
		testenv.Scenario{URL: fmt.Sprintf("%s/user/%d", digAPI, id), Headers: testenv.Bearer(env.adminTok), ExpectedStatus: 200,
			ExpectedContent: []string{`"oauth_provider":null`, `"oauth_sub":null`}}.Run(t, h)
		testenv.Login(t, h, "dig", "pia.new@example.org", "a good password") // empty password kept the old one

		// A new password replaces the old one.
		env.do(t, env.adminTok, "POST", "/user", fmt.Sprintf(`{"id":%d,"password":"brand new secret"}`, id))
		testenv.Scenario{Method: "POST", URL: digAPI + "/auth/login", Body: `{"email":"pia.new@example.org","password":"a good password"}`,
			ExpectedStatus: 401, ExpectedContent: []string{`"code":"login_data_not_valid"`}}.Run(t, h)
		testenv.Login(t, h, "dig", "pia.new@example.org", "brand new secret")

		// Forms send an empty or zero id for a new account.
		for _, b := range []string{`{"id":"","email":"blank.id@example.org"}`, `{"id":0,"email":"zero.id@example.org"}`, `{"id":null,"email":"null.id@example.org"}`} {
			if status, body = env.do(t, env.adminTok, "POST", "/user", b); status != http.StatusOK {
				t.Fatalf("%s: %d %v", b, status, body)
			}
		}

		// Without a password an account gets an inert hash: no password opens it.
		status, body = env.do(t, env.adminTok, "POST", "/user", `{"email":"oauth.only@example.org","privilege":30,"oauth_provider":"idp_a","oauth_sub":"42"}`)
		if status != http.StatusOK {
			t.Fatalf("create oauth-only: %d %v", status, body)
		}
		oauthOnly, err := auth.FindUserByEmail(t.Context(), env.app.DB, "oauth.only@example.org")
		if err != nil || !strings.HasPrefix(oauthOnly.Password, "$2") {
			t.Fatalf("oauth-only account %+v %v", oauthOnly, err)
		}
		// The same identity cannot be linked twice.
		status, body = env.do(t, env.adminTok, "POST", "/user", fmt.Sprintf(`{"id":%d,"oauth_provider":"idp_a","oauth_sub":"42"}`, id))
		if status != http.StatusConflict || body["code"] != "oauth_identity_already_linked" {
			t.Fatalf("second link of one identity: %d %v", status, body)
		}
		// The same subject at the other provider is another identity.
		if status, body = env.do(t, env.adminTok, "POST", "/user", fmt.Sprintf(`{"id":%d,"oauth_provider":"idp_b","oauth_sub":"42"}`, id)); status != http.StatusOK {
			t.Fatalf("same sub, other provider: %d %v", status, body)
		}

		// Deleted: gone from the list, its token refused.
		tok := testenv.Login(t, h, "dig", "pia.new@example.org", "brand new secret")
		status, body = env.do(t, env.adminTok, "DELETE", fmt.Sprintf("/user/%d", id), "")
		if status != http.StatusOK || body["code"] != "user_deleted" {
			t.Fatalf("delete: %d %v", status, body)
		}
		testenv.Scenario{URL: fmt.Sprintf("%s/user/%d", digAPI, id), Headers: testenv.Bearer(env.adminTok), ExpectedStatus: 404,
			ExpectedContent: []string{`"code":"user_not_found"`}}.Run(t, h)
		testenv.Scenario{URL: digAPI + "/info/app", Headers: testenv.Bearer(tok), ExpectedStatus: 401,
			ExpectedContent: []string{`"code":"unauthenticated"`}}.Run(t, h)

		// A second super_admin lets the first step down, and then be deleted.
		status, body = env.do(t, env.superTok, "POST", "/user", fmt.Sprintf(`{"id":%d,"privilege":1}`, env.admin.ID))
		if status != http.StatusOK {
			t.Fatalf("promote: %d %v", status, body)
		}
		newSuper := testenv.Login(t, h, "dig", "ada@example.org", testenv.Password)
		if status, body = env.do(t, newSuper, "DELETE", fmt.Sprintf("/user/%d", env.super.ID), ""); status != http.StatusOK {
			t.Fatalf("delete the former only super_admin: %d %v", status, body)
		}
		if status, body = env.do(t, newSuper, "POST", "/user", fmt.Sprintf(`{"id":%d,"privilege":10}`, env.admin.ID)); status != http.StatusConflict || body["code"] != "last_super_admin" {
			t.Fatalf("new last super_admin steps down: %d %v", status, body)
		}
	})
}

// A privilege change or a revoke invalidates every token issued before, at
// once; other edits do not.
func TestTokensInvalidatedByPrivilegeChangeAndRevoke(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newUserAdminEnv(t, e)
		h := env.inst.Server
		info := func(tok string, status int, content ...string) {
			t.Helper()
			testenv.Scenario{URL: digAPI + "/info/app", Headers: testenv.Bearer(tok), ExpectedStatus: status, ExpectedContent: content}.Run(t, h)
		}
		writerURL := fmt.Sprintf("/user/%d", env.writer.ID)

		old := env.writeTok
		info(old, 200)
		if status, _ := env.do(t, env.adminTok, "POST", "/user", fmt.Sprintf(`{"id":%d,"name":"Wesley","email":"wes@example.org"}`, env.writer.ID)); status != 200 {
			t.Fatal("rename failed")
		}
		info(old, 200) // a rename keeps sessions

		if status, _ := env.do(t, env.adminTok, "POST", "/user", fmt.Sprintf(`{"id":%d,"privilege":30}`, env.writer.ID)); status != 200 {
			t.Fatal("privilege change failed")
		}
		info(old, 401, `"code":"token_invalidated"`)
		fresh := testenv.Login(t, h, "dig", "wes@example.org", testenv.Password)
		info(fresh, 200, `"privilege":30`)

		status, body := env.do(t, env.adminTok, "POST", writerURL+"/revoke", "")
		if status != 200 || body["code"] != "token_revoked" {
			t.Fatalf("revoke: %d %v", status, body)
		}
		info(fresh, 401, `"code":"token_invalidated"`)
		info(testenv.Login(t, h, "dig", "wes@example.org", testenv.Password), 200)

		// An admin demoting itself loses its session too.
		if status, _ := env.do(t, env.adminTok, "POST", "/user", fmt.Sprintf(`{"id":%d,"privilege":20}`, env.admin.ID)); status != 200 {
			t.Fatal("self demotion failed")
		}
		info(env.adminTok, 401, `"code":"token_invalidated"`)
	})
}

// TestOwnProfile: below admin, an account edits its own name, email and
// password (BraDypUS's self-edit), sending its privilege unchanged too.
func TestOwnProfile(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newUserAdminEnv(t, e)
		status, body := env.do(t, env.writeTok, "POST", "/user", fmt.Sprintf(`{"id":"%d","name":"Wendy W.","email":"wendy@example.org","privilege":"20"}`, env.writer.ID))
		if status != http.StatusOK || body["code"] != "user_data_saved" {
			t.Fatalf("own profile: %d %v", status, body)
		}
		u, err := auth.FindUser(context.Background(), env.app.DB, env.writer.ID)
		if err != nil || u.Name != "Wendy W." || u.Email != "wendy@example.org" || u.Privilege != auth.Writer {
			t.Fatalf("after the edit: %+v %v", u, err)
		}
	})
}
