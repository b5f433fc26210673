package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestRoutingErrorsUseTheEnvelope(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstance(t, e)
		testenv.NewApp(t, inst.Apps, "demo")
		for _, s := range []testenv.Scenario{
			{Name: "bare records list", URL: "/api/records/finds", ExpectedStatus: 404, ExpectedContent: []string{`"code":"app_prefix_required"`}},
			{Name: "bare records POST", Method: "POST", URL: "/api/records/finds", Body: `{}`, ExpectedStatus: 404, ExpectedContent: []string{`"code":"app_prefix_required"`}},
			{Name: "bare single record", URL: "/api/record/finds/1", ExpectedStatus: 404, ExpectedContent: []string{`"code":"app_prefix_required"`}},
			{Name: "legacy app query parameter", URL: "/api/records/finds?app=demo", ExpectedStatus: 404, ExpectedContent: []string{`"code":"app_prefix_required"`}},
			{Name: "other app route without prefix", URL: "/api/upgrade/status", ExpectedStatus: 404, ExpectedContent: []string{`"code":"app_prefix_required"`}},
			{Name: "instance route with prefix", URL: "/demo/api/info", ExpectedStatus: 404, ExpectedContent: []string{`"code":"app_prefix_not_allowed"`}},
			{Name: "instance POST with prefix", Method: "POST", URL: "/demo/api/new-app", Body: `{}`, ExpectedStatus: 404, ExpectedContent: []string{`"code":"app_prefix_not_allowed"`}},
			{Name: "unknown app", URL: "/nope/api/upgrade/status", ExpectedStatus: 404, ExpectedContent: []string{`"code":"app_not_found"`}},
			{Name: "reserved name as app", URL: "/api/api/upgrade/status", ExpectedStatus: 404, ExpectedContent: []string{`"code":"app_not_found"`}},
			{Name: "unknown app, unknown route", URL: "/nope/api/whatever", ExpectedStatus: 404, ExpectedContent: []string{`"code":"app_not_found"`}},
			{Name: "known app, unknown route", URL: "/demo/api/whatever", ExpectedStatus: 404, ExpectedContent: []string{`"code":"route_not_found"`}},
			{Name: "unknown instance route", URL: "/api/whatever", ExpectedStatus: 404, ExpectedContent: []string{`"code":"route_not_found"`}},
			// GET of a page path answers the web application (core/webui);
			// other methods and paths no page has stay JSON.
			{Name: "outside the api, not GET", Method: "POST", URL: "/some/page", Body: `{}`, ExpectedStatus: 404, ExpectedContent: []string{`"code":"route_not_found"`}},
			{Name: "root, not GET", Method: "DELETE", URL: "/", ExpectedStatus: 404, ExpectedContent: []string{`"code":"route_not_found"`}},
			{Name: "no page has the path", URL: "/favicon.ico", ExpectedStatus: 404, ExpectedContent: []string{`"code":"route_not_found"`}},
			{Name: "unknown asset", URL: "/static/assets/nothing.js", ExpectedStatus: 404, ExpectedContent: []string{`"code":"route_not_found"`}},
			{Name: "trailing slash is another path", URL: "/api/info/", ExpectedStatus: 404, ExpectedContent: []string{`"code":"route_not_found"`}},
			{Name: "wrong method on instance route", Method: "DELETE", URL: "/api/info", ExpectedStatus: 405,
				ExpectedContent: []string{`"code":"method_not_allowed"`, `"allowed":["GET"]`}},
			{Name: "wrong method on app route", Method: "POST", URL: "/demo/api/upgrade/status", Body: `{}`, ExpectedStatus: 405,
				ExpectedContent: []string{`"code":"method_not_allowed"`, `"allowed":["GET"]`}},
			{Name: "wrong method on new-app", Method: "GET", URL: "/api/new-app", ExpectedStatus: 405,
				ExpectedContent: []string{`"allowed":["POST"]`}},
		} {
			t.Run(s.Name, func(t *testing.T) { s.Run(t, inst.Server) })
		}
	})
}

func TestMethodNotAllowedSetsAllowHeader(t *testing.T) {
	inst := testenv.NewInstance(t, store.SQLite)
	rec := httptest.NewRecorder()
	inst.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodPut, "/api/info", nil))
	if rec.Code != 405 || rec.Header().Get("Allow") != "GET" {
		t.Fatalf("status %d Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}

func TestBodyCap(t *testing.T) {
	inst := testenv.NewInstance(t, store.SQLite, func(c *config.Config) { c.MaxBodyBytes = 256 })
	big := `{"name":"` + strings.Repeat("x", 400) + `"}`
	t.Run("announced length over the cap", func(t *testing.T) {
		testenv.Scenario{Method: "POST", URL: "/api/new-app", Body: big, ExpectedStatus: 413,
			ExpectedContent: []string{`"code":"too_large"`, `"limit":256`}}.Run(t, inst.Server)
	})
	t.Run("streamed body over the cap", func(t *testing.T) {
		req := httptest.NewRequest("POST", "/api/new-app", strings.NewReader(big))
		req.ContentLength = -1 // chunked: the cap must hold while reading
		rec := httptest.NewRecorder()
		inst.Server.ServeHTTP(rec, req)
		m := testenv.CheckEnvelope(t, rec)
		if rec.Code != 413 || m["code"] != "too_large" {
			t.Fatalf("status %d body %s", rec.Code, rec.Body.String())
		}
	})
	testenv.AssertNoTrace(t, inst.Apps)
}
