package server_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/config"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// /healthz and /readyz answer without credentials; readiness fails while
// an app has a migration to apply, and comes back once it is applied.
func TestHealthAndReadiness(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		inst := testenv.NewInstance(t, e)
		a := testenv.NewApp(t, inst.Apps, "dig")
		ctx := context.Background()
		testenv.Scenario{Name: "alive", URL: "/healthz", ExpectedStatus: 200, ExpectedContent: []string{`"code":"alive"`}}.Run(t, inst.Server)
		testenv.Scenario{Name: "not under /api", URL: "/api/healthz", ExpectedStatus: 404}.Run(t, inst.Server)
		testenv.Scenario{Name: "a write is refused", Method: "POST", URL: "/readyz", ExpectedStatus: 405}.Run(t, inst.Server)

		var last int
		var name string
		if err := a.DB.QueryRow(ctx, `SELECT id, name FROM `+a.DB.Sys("migrations")+` ORDER BY id DESC LIMIT 1`).Scan(&last, &name); err != nil {
			t.Fatal(err)
		}
		if _, err := a.DB.Exec(ctx, `DELETE FROM `+a.DB.Sys("migrations")+` WHERE id = ?`, last); err != nil {
			t.Fatal(err)
		}
		testenv.Scenario{Name: "behind", URL: "/readyz", ExpectedStatus: 503,
			ExpectedContent:    []string{`"code":"not_ready"`, `"pending":["dig"]`, `"database":{"apps":1,"ok":true}`},
			NotExpectedContent: []string{"jwt", "secret", "password"}}.Run(t, inst.Server)
		if _, err := a.DB.Exec(ctx, `INSERT INTO `+a.DB.Sys("migrations")+` (id, name, applied_at) VALUES (?, ?, CURRENT_TIMESTAMP)`, last, name); err != nil {
			t.Fatal(err)
		}
		testenv.Scenario{Name: "ready", URL: "/readyz", ExpectedStatus: 200,
			ExpectedContent: []string{`"ready":true`, `"migrations":{"ok":true}`}}.Run(t, inst.Server)
	})
}

// /metrics on the main port answers only the bearer of STRATA_METRICS_TOKEN
// (404 without one configured); requests are counted by route template,
// and nothing a client sent appears in a label.
func TestMetrics(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		plain := testenv.NewInstance(t, e)
		testenv.Scenario{Name: "not on the main port by default", URL: "/metrics", ExpectedStatus: 404}.Run(t, plain.Server)

		inst := testenv.NewInstance(t, e, func(c *config.Config) { c.MetricsToken = "s3cret-metrics" })
		testenv.NewApp(t, inst.Apps, "dig")
		token := testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password)
		for _, u := range []string{"/dig/api/records/zz_private_table?q=zz_private_value", "/api/zz_private_path", "/dig/api/info/app"} {
			testenv.Do(t, inst.Server, "GET", u, "", testenv.Bearer(token))
		}
		for range 2 {
			testenv.Do(t, inst.Server, "POST", "/dig/api/auth/login", `{"email":"admin@example.org","password":"zz_private_wrong"}`, nil)
		}
		testenv.Scenario{Name: "no token", URL: "/metrics", ExpectedStatus: 401, ExpectedContent: []string{"invalid_token"}}.Run(t, inst.Server)
		testenv.Scenario{Name: "a session token is not the metrics token", URL: "/metrics", Headers: testenv.Bearer(token), ExpectedStatus: 401}.Run(t, inst.Server)
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Header.Set("Authorization", "Bearer s3cret-metrics")
		rec := httptest.NewRecorder()
		inst.Server.ServeHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
			t.Fatalf("metrics: %d %s", rec.Code, rec.Header().Get("Content-Type"))
		}
		for _, want := range []string{
			`strata_http_requests_total{method="GET",route="/:app/api/info/app",status="200"} 1`,
			`strata_http_requests_total{method="GET",route="unmatched",status="404"}`,
			`strata_http_request_duration_seconds_bucket{method="GET",route="/:app/api/records/:tb"`,
			"go_goroutines",
			`strata_signin_attempts_total{outcome="success"} 1`,
			`strata_signin_attempts_total{outcome="failure"} 2`,
			`strata_signin_attempts_total{outcome="locked"} 0`,
			`strata_app_busy_total 0`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
		if e == store.Postgres && !strings.Contains(body, `go_sql_open_connections{db_name="postgres"}`) {
			t.Error("metrics lack the PostgreSQL pool")
		}
		if strings.Contains(body, "zz_private") || strings.Contains(body, "s3cret") {
			t.Fatal("a client-supplied value or the token is in the metrics")
		}
	})
}

// TestJobMetrics: the jobs of the instance by state, read at each scrape
// from the job system's table, so any node reports the same figures.
func TestJobMetrics(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		inst := testenv.NewInstanceWithJobs(t, e, func(c *config.Config) { c.MetricsToken = "tok" })
		testenv.NewApp(t, inst.Apps, "dig")
		scrape := func() string {
			req := httptest.NewRequest("GET", "/metrics", nil)
			req.Header.Set("Authorization", "Bearer tok")
			rec := httptest.NewRecorder()
			inst.Server.ServeHTTP(rec, req)
			if rec.Code != 200 {
				t.Fatalf("metrics: %d", rec.Code)
			}
			return rec.Body.String()
		}
		if body := scrape(); !strings.Contains(body, `strata_jobs{state="done"} 0`) || !strings.Contains(body, `strata_jobs{state="queued"} 0`) {
			t.Fatalf("no jobs yet:\n%s", grepLines(body, "strata_jobs"))
		}
		token := testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password)
		testenv.Scenario{Method: "POST", URL: "/dig/api/backups", Headers: testenv.Bearer(token), ExpectedStatus: 200}.Run(t, inst.Server)
		if body := scrape(); !strings.Contains(body, `strata_jobs{state="done"} 1`) {
			t.Fatalf("after a backup:\n%s", grepLines(body, "strata_jobs"))
		}
	})
}

func grepLines(body, prefix string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
