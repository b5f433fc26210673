package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/golang-jwt/jwt/v5"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestLoginEndpoint(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstance(t, e)
		a := testenv.NewApp(t, inst.Apps, "dig")
		testenv.NewUser(t, a, "Pending Pat", "pat@example.org", auth.Pending)
		for _, s := range []testenv.Scenario{
			{Name: "success", Body: `{"email":"Admin@Example.org","password":"` + testenv.Password + `","app":"ignored"}`, ExpectedStatus: 200,
				ExpectedContent:    []string{`"token":"ey`, `"user":{`, `"email":"admin@example.org"`, `"privilege":1`, `"expires_at":"`},
				NotExpectedContent: []string{"password", "$2"}},
			{Name: "wrong password", Body: `{"email":"admin@example.org","password":"nope-nope"}`, ExpectedStatus: 401, ExpectedContent: []string{`"code":"login_data_not_valid"`}},
			{Name: "unknown email", Body: `{"email":"ghost@example.org","password":"nope-nope"}`, ExpectedStatus: 401, ExpectedContent: []string{`"code":"login_data_not_valid"`}},
			{Name: "missing password", Body: `{"email":"admin@example.org"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"email_password_needed"`}},
			{Name: "missing email", Body: `{"password":"x"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"email_password_needed"`}},
			{Name: "malformed body", Body: `{"email":`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_json"`}},
			{Name: "pending account stays out", Body: `{"email":"pat@example.org","password":"` + testenv.Password + `"}`, ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}},
		} {
			s.Method, s.URL = "POST", "/dig/api/auth/login"
			t.Run(s.Name, func(t *testing.T) { s.Run(t, inst.Server) })
		}
		testenv.Scenario{Method: "POST", URL: "/nowhere/api/auth/login", Body: `{"email":"a@b.org","password":"x"}`,
			ExpectedStatus: 404, ExpectedContent: []string{`"code":"app_not_found"`}}.Run(t, inst.Server)
	})
}

func TestTokenClaims(t *testing.T) {
	inst := testenv.NewInstance(t, store.SQLite)
	testenv.NewApp(t, inst.Apps, "dig")
	token := strings.TrimPrefix(testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password), "Bearer ")
	parts := strings.Split(token, ".")
	header, _ := base64.RawURLEncoding.DecodeString(parts[0])
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var h map[string]any
	var c map[string]any
	_ = json.Unmarshal(header, &h)
	_ = json.Unmarshal(payload, &c)
	if h["alg"] != "HS256" {
		t.Errorf("alg %v", h["alg"])
	}
	for k, want := range map[string]any{"sub": "1", "name": "Admin", "eml": "admin@example.org", "app": "dig", "prv": 1.0, "tkv": 1.0} {
		if c[k] != want {
			t.Errorf("claim %s = %v, want %v", k, c[k], want)
		}
	}
	if exp, iat := c["exp"].(float64), c["iat"].(float64); exp-iat != 8*3600 {
		t.Errorf("lifetime %v s, want 8 h", exp-iat)
	}
}

// TestCredentialFailures covers every way a credential can be wrong.
func TestCredentialFailures(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		clk := &clock{now: time.Now().UTC()}
		inst := testenv.NewInstanceWithClock(t, e, clk.Now)
		dig := testenv.NewApp(t, inst.Apps, "dig")
		other := testenv.NewApp(t, inst.Apps, "other")
		ctx := context.Background()
		ann := testenv.NewUser(t, dig, "Ann", "ann@example.org", auth.Reader)
		gone := testenv.NewUser(t, dig, "Gone", "gone@example.org", auth.Reader)
		bumped := testenv.NewUser(t, dig, "Bumped", "bumped@example.org", auth.Reader)

		secret, _ := dig.JWTSecret(ctx)
		sign := func(m jwt.SigningMethod, key any, claims jwt.MapClaims) string {
			s, err := jwt.NewWithClaims(m, claims).SignedString(key)
			if err != nil {
				t.Fatal(err)
			}
			return "Bearer " + s
		}
		claims := func(app string, u *auth.User) jwt.MapClaims {
			return jwt.MapClaims{"sub": fmt.Sprint(u.ID), "app": app, "prv": u.Privilege, "tkv": 1,
				"iat": clk.Now().Unix(), "exp": clk.Now().Add(time.Hour).Unix()}
		}
		noneToken := "Bearer " + base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
			base64.RawURLEncoding.EncodeToString(mustJSON(claims("dig", ann))) + "."

		valid := testenv.Login(t, inst.Server, "dig", "ann@example.org", testenv.Password)
		goneToken := testenv.Login(t, inst.Server, "dig", "gone@example.org", testenv.Password)
		bumpedToken := testenv.Login(t, inst.Server, "dig", "bumped@example.org", testenv.Password)
		otherToken := testenv.Login(t, inst.Server, "other", "admin@example.org", testenv.Password)
		if err := dig.DB.Gorm.Delete(gone).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := dig.DB.Exec(ctx, `UPDATE `+dig.DB.Sys("users")+` SET token_version = 2 WHERE id = ?`, bumped.ID); err != nil {
			t.Fatal(err)
		}
		key := testenv.NewAPIKey(t, dig, auth.Reader)
		otherKey := testenv.NewAPIKey(t, other, auth.Reader)
		revoked := testenv.NewAPIKey(t, dig, auth.Reader)
		revokedKey, _ := auth.FindAPIKey(ctx, dig.DB, strings.TrimPrefix(revoked, "Bearer "))
		if _, err := auth.RevokeAPIKey(ctx, dig.DB, revokedKey.ID, clk.Now()); err != nil {
			t.Fatal(err)
		}

		cases := []struct {
			name, header string
			status       int
			code, reason string
		}{
			{"valid token", valid, 200, "", ""},
			{"valid api key", key, 200, "", ""},
			{"no header", "", 401, "unauthenticated", "missing"},
			{"other scheme", "Basic YWRtaW46eA==", 401, "unauthenticated", "missing"},
			{"garbage", "Bearer not-a-token", 401, "unauthenticated", "invalid"},
			{"alg none", noneToken, 401, "unauthenticated", "invalid"},
			{"HS512 with the right secret", sign(jwt.SigningMethodHS512, secret, claims("dig", ann)), 401, "unauthenticated", "invalid"},
			{"signed with another secret", sign(jwt.SigningMethodHS256, []byte("not-the-secret-not-the-secret-xx"), claims("dig", ann)), 401, "unauthenticated", "invalid"},
			{"no expiry", sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": fmt.Sprint(ann.ID), "app": "dig", "tkv": 1}), 401, "unauthenticated", "invalid"},
			{"token of another app", otherToken, 403, "app_mismatch", ""},
			{"forged token claiming another app", sign(jwt.SigningMethodHS256, []byte("forged-forged-forged-forged-forg"), claims("other", ann)), 401, "unauthenticated", "invalid"},
			{"token claiming an unknown app", sign(jwt.SigningMethodHS256, secret, claims("nowhere", ann)), 401, "unauthenticated", "invalid"},
			{"deleted user", goneToken, 401, "unauthenticated", "user_deleted"},
			{"older token version", bumpedToken, 401, "token_invalidated", ""},
			{"unknown api key", "Bearer svc_" + strings.Repeat("A", 43), 401, "unauthenticated", "invalid"},
			{"revoked api key", revoked, 401, "unauthenticated", "revoked"},
			{"api key of another app", otherKey, 403, "app_mismatch", ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s := testenv.Scenario{URL: "/dig/api/info/app", ExpectedStatus: c.status}
				if c.header != "" {
					s.Headers = testenv.Bearer(c.header)
				}
				if c.code != "" {
					s.ExpectedContent = append(s.ExpectedContent, `"code":"`+c.code+`"`)
				}
				if c.reason != "" {
					s.ExpectedContent = append(s.ExpectedContent, `"reason":"`+c.reason+`"`)
				}
				s.Run(t, inst.Server)
			})
		}

		t.Run("expired token", func(t *testing.T) {
			clk.Advance(8*time.Hour + time.Second)
			testenv.Scenario{URL: "/dig/api/info/app", Headers: testenv.Bearer(valid), ExpectedStatus: 401,
				ExpectedContent: []string{`"code":"unauthenticated"`, `"reason":"expired"`}}.Run(t, inst.Server)
		})
	})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestSessionEndpoints(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstance(t, e)
		a := testenv.NewApp(t, inst.Apps, "dig")
		ctx := context.Background()
		ann := testenv.NewUser(t, a, "Ann", "ann@example.org", auth.Reader)
		admin := testenv.NewUser(t, a, "Ada", "ada@example.org", auth.Admin)
		super := testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password)
		reader := testenv.Login(t, inst.Server, "dig", "ann@example.org", testenv.Password)
		adminTok := testenv.Login(t, inst.Server, "dig", admin.Email, testenv.Password)
		key := testenv.NewAPIKey(t, a, auth.Admin)

		// The privilege in a refreshed token is read from the database now.
		if _, err := a.DB.Exec(ctx, `UPDATE `+a.DB.Sys("users")+` SET privilege = ? WHERE id = ?`, auth.Writer, ann.ID); err != nil {
			t.Fatal(err)
		}
		for _, s := range []testenv.Scenario{
			{Name: "refresh carries the current privilege", URL: "/dig/api/auth/refresh", Headers: testenv.Bearer(reader), ExpectedStatus: 200,
				ExpectedContent: []string{`"token":"ey`, `"privilege":20`}},
			{Name: "refresh needs a session", URL: "/dig/api/auth/refresh", ExpectedStatus: 401, ExpectedContent: []string{`"code":"unauthenticated"`}},
			{Name: "an api key has no session to refresh", URL: "/dig/api/auth/refresh", Headers: testenv.Bearer(key), ExpectedStatus: 401,
				ExpectedContent: []string{`"reason":"not_a_session"`}},
			{Name: "logout", URL: "/dig/api/auth/logout", ExpectedStatus: 200},
			{Name: "app info", URL: "/dig/api/info/app", Headers: testenv.Bearer(reader), ExpectedStatus: 200,
				ExpectedContent: []string{`"name":"dig"`, `"definition":"dig"`, `"privilege":20`}, NotExpectedContent: []string{"jwt_secret", "oauth."}},
			{Name: "migrations for admins", URL: "/dig/api/migrations", Headers: testenv.Bearer(adminTok), ExpectedStatus: 200,
				ExpectedContent: []string{`"migrations":[{"applied":true,"applied_at":`, `"id":1,"name":"init"}`, `"name":"access"`, `"pending":[]`}},
			{Name: "migrations not for writers", URL: "/dig/api/migrations", Headers: testenv.Bearer(reader), ExpectedStatus: 403,
				ExpectedContent: []string{`"code":"not_enough_privilege"`, `"required":"admin"`}},
			{Name: "check-password right", Method: "POST", URL: "/dig/api/admin/check-password", Headers: testenv.Bearer(super),
				Body: `{"password":"` + testenv.Password + `"}`, ExpectedStatus: 200, ExpectedContent: []string{`"code":"valid_pasword"`}},
			{Name: "check-password accepts pwd", Method: "POST", URL: "/dig/api/admin/check-password", Headers: testenv.Bearer(super),
				Body: `{"pwd":"` + testenv.Password + `"}`, ExpectedStatus: 200},
			{Name: "check-password wrong", Method: "POST", URL: "/dig/api/admin/check-password", Headers: testenv.Bearer(super),
				Body: `{"password":"wrong-wrong"}`, ExpectedStatus: 401, ExpectedContent: []string{`"code":"login_data_not_valid"`}},
			{Name: "check-password empty", Method: "POST", URL: "/dig/api/admin/check-password", Headers: testenv.Bearer(super),
				Body: `{}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"email_password_needed"`}},
			{Name: "check-password is super_admin only", Method: "POST", URL: "/dig/api/admin/check-password", Headers: testenv.Bearer(adminTok),
				Body: `{"password":"` + testenv.Password + `"}`, ExpectedStatus: 403, ExpectedContent: []string{`"code":"not_enough_privilege"`}},
		} {
			t.Run(s.Name, func(t *testing.T) { s.Run(t, inst.Server) })
		}

		t.Run("check-password feeds the lock", func(t *testing.T) {
			for range 4 {
				testenv.Scenario{Method: "POST", URL: "/dig/api/admin/check-password", Headers: testenv.Bearer(super),
					Body: `{"password":"wrong-wrong"}`, ExpectedStatus: 401}.Run(t, inst.Server)
			}
			testenv.Scenario{Method: "POST", URL: "/dig/api/admin/check-password", Headers: testenv.Bearer(super),
				Body: `{"password":"` + testenv.Password + `"}`, ExpectedStatus: 423, ExpectedContent: []string{`"code":"account_locked"`}}.Run(t, inst.Server)
			testenv.Scenario{Method: "POST", URL: "/dig/api/auth/login", Body: `{"email":"admin@example.org","password":"` + testenv.Password + `"}`,
				ExpectedStatus: 423, ExpectedContent: []string{`"code":"account_locked"`, `"retry_after":900`}}.Run(t, inst.Server)
		})
	})
}

// probeRoutes are test routes, one per access class, that echo the level
// the gate let through.
func probeRoutes() []server.Route {
	echo := func(c *gin.Context) {
		c.JSON(200, gin.H{"status": "success", "level": server.LevelOf(c), "user_id": server.ActorOf(c).UserID})
	}
	routes := []server.Route{}
	for path, access := range map[string]auth.Access{
		"/probe/enter": auth.Enter, "/probe/:tb/read": auth.Read, "/probe/:tb/add": auth.AddNew,
		"/probe/:tb/edit": auth.Edit, "/probe/admin": auth.AdminOnly, "/probe/super": auth.SuperAdminOnly,
	} {
		routes = append(routes, server.Route{Scope: server.App, Method: "GET", Path: path, Access: access, Handler: echo})
	}
	return routes
}

// TestPrivilegeMatrix checks every level against every class of route, for
// users (JWT) and API keys, through the one route→privilege table.
func TestPrivilegeMatrix(t *testing.T) {
	classes := []string{"enter", "finds/read", "finds/add", "finds/edit", "admin", "super"}
	allowed := map[int][]bool{ // per class, in the order above
		auth.SuperAdmin: {true, true, true, true, true, true},
		auth.Admin:      {true, true, true, true, true, false},
		auth.Writer:     {true, true, true, true, false, false},
		auth.SelfWriter: {true, true, true, true, false, false}, // edit gate passes; the row rule is in records
		auth.Reader:     {true, true, false, false, false, false},
		auth.Pending:    {false, false, false, false, false, false},
	}
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstanceWith(t, e, server.Deps{ExtraRoutes: probeRoutes()})
		a := testenv.NewApp(t, inst.Apps, "dig")
		ctx := context.Background()
		for level, want := range allowed {
			creds := map[string]string{}
			u := testenv.NewUser(t, a, "L", fmt.Sprintf("level%d@example.org", level), min(level, auth.Reader))
			creds["jwt"] = testenv.Login(t, inst.Server, "dig", u.Email, testenv.Password)
			if level == auth.Pending { // pending accounts cannot log in; demote after
				setPrivilege(t, a, u.ID, auth.Pending)
			} else if level != u.Privilege {
				setPrivilege(t, a, u.ID, level)
			}
			if auth.ValidAPIKeyPrivilege(level) {
				creds["api key"] = testenv.NewAPIKey(t, a, level)
			}
			for kind, header := range creds {
				for i, class := range classes {
					status := 200
					if !want[i] {
						status = 403
					}
					t.Run(fmt.Sprintf("%s %d %s", kind, level, class), func(t *testing.T) {
						testenv.Scenario{URL: "/dig/api/probe/" + class, Headers: testenv.Bearer(header), ExpectedStatus: status}.Run(t, inst.Server)
					})
				}
			}
		}
		_ = ctx
	})
}

func setPrivilege(t *testing.T, a *apps.App, id int64, level int) {
	t.Helper()
	if _, err := a.DB.Exec(context.Background(), `UPDATE `+a.DB.Sys("users")+` SET privilege = ? WHERE id = ?`, level, id); err != nil {
		t.Fatal(err)
	}
}

// TestTableOverrides: an override replaces the global level for record
// work on that table only, raising or lowering it; entering and
// administration keep the global level.
func TestTableOverrides(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstanceWith(t, e, server.Deps{ExtraRoutes: probeRoutes()})
		a := testenv.NewApp(t, inst.Apps, "dig")
		ctx := context.Background()
		reader := testenv.NewUser(t, a, "R", "reader@example.org", auth.Reader)
		boss := testenv.NewUser(t, a, "B", "boss@example.org", auth.SuperAdmin)
		for _, tp := range []auth.TablePrivilege{
			{UserID: reader.ID, TableName: "finds", Privilege: auth.Writer}, // raised on finds
			{UserID: boss.ID, TableName: "finds", Privilege: auth.Reader},   // lowered on finds
			{UserID: reader.ID, TableName: "units", Privilege: auth.Admin},  // raised to the cap
		} {
			if err := auth.SaveTablePrivilege(ctx, a.DB, &tp, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		r := testenv.Login(t, inst.Server, "dig", reader.Email, testenv.Password)
		b := testenv.Login(t, inst.Server, "dig", boss.Email, testenv.Password)
		for _, s := range []testenv.Scenario{
			{Name: "raised: reader edits finds", URL: "/dig/api/probe/finds/edit", Headers: testenv.Bearer(r), ExpectedStatus: 200, ExpectedContent: []string{`"level":20`}},
			{Name: "only that table", URL: "/dig/api/probe/sites/edit", Headers: testenv.Bearer(r), ExpectedStatus: 403},
			{Name: "reads elsewhere at the global level", URL: "/dig/api/probe/sites/read", Headers: testenv.Bearer(r), ExpectedStatus: 200, ExpectedContent: []string{`"level":30`}},
			{Name: "a table override does not open admin routes", URL: "/dig/api/probe/admin", Headers: testenv.Bearer(r), ExpectedStatus: 403},
			{Name: "lowered: super_admin only reads finds", URL: "/dig/api/probe/finds/edit", Headers: testenv.Bearer(b), ExpectedStatus: 403},
			{Name: "lowered but still reads", URL: "/dig/api/probe/finds/read", Headers: testenv.Bearer(b), ExpectedStatus: 200, ExpectedContent: []string{`"level":30`}},
			{Name: "global level elsewhere", URL: "/dig/api/probe/super", Headers: testenv.Bearer(b), ExpectedStatus: 200},
		} {
			t.Run(s.Name, func(t *testing.T) { s.Run(t, inst.Server) })
		}
		// Never beyond admin.
		tp := auth.TablePrivilege{UserID: reader.ID, TableName: "sites", Privilege: auth.SuperAdmin}
		if err := auth.SaveTablePrivilege(ctx, a.DB, &tp, time.Now()); err == nil {
			t.Fatal("an override granted super_admin")
		}
		// A pending user stays out whatever the override says.
		setPrivilege(t, a, reader.ID, auth.Pending)
		testenv.Scenario{URL: "/dig/api/probe/finds/edit", Headers: testenv.Bearer(r), ExpectedStatus: 403}.Run(t, inst.Server)
	})
}

// TestFailedLoginsDoNotLogPasswords captures every log line (debug level)
// around failed and successful logins and looks for the passwords.
func TestFailedLoginsDoNotLogPasswords(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	inst := testenv.NewInstanceWith(t, store.SQLite, server.Deps{Logger: logger})
	testenv.NewApp(t, inst.Apps, "dig")
	for _, pw := range []string{"Tr0ub4dor&3-attempt", "hunter2-hunter2", testenv.Password} {
		testenv.Do(t, inst.Server, "POST", "/dig/api/auth/login", `{"email":"admin@example.org","password":"`+pw+`"}`, nil)
	}
	testenv.Do(t, inst.Server, "POST", "/dig/api/auth/login?password=in-the-query", `{"email":"x@y.org","password":"another-secret-pw"}`, nil)
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "/dig/api/auth/login") {
		t.Fatal("requests were not logged at all; the test would prove nothing")
	}
	for _, secret := range []string{"Tr0ub4dor", "hunter2", testenv.Password, "in-the-query", "another-secret-pw"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("a password reached the logs: %q", secret)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
