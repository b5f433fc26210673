package pluginhost_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// Plugin routes sit behind the same gate as core routes and get the
// request as data; the plugin's answer comes back as it is.
func TestPluginRoutes(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), func(o *pluginhost.Options) { o.MinBackoff, o.MaxBackoff = time.Minute, time.Minute })

		// The request as the plugin sees it: path, params, query, headers
		// without Authorization, the actor at its effective level.
		req := httptest.NewRequest(http.MethodGet, "/digs/api/testplug/echo/7?x=1&y=a+b", nil)
		req.Header.Set("Authorization", f.reader)
		req.Header.Set("Accept-Language", "it")
		req.Header.Set("Cookie", "session=secret")
		rec := httptest.NewRecorder()
		f.srv.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("echo: %d %s", rec.Code, rec.Body)
		}
		got := rec.Body.String()
		for _, want := range []string{`"path":"/testplug/echo/7"`, `"route":"/testplug/echo/:id"`, `"params":{"id":"7"}`,
			`"query":"x=1\u0026y=a+b"`, `"Accept-Language":"it"`, `"user_id":` + strconv.FormatInt(f.readerID, 10), `"privilege":30`, `"app":"digs"`} {
			if !strings.Contains(got, want) {
				t.Errorf("echo lacks %s: %s", want, got)
			}
		}
		if strings.Contains(got, "Bearer") || strings.Contains(got, "secret") || strings.Contains(got, "Authorization") {
			t.Errorf("credentials reached the plugin: %s", got)
		}

		// The gate: no credential, too low a level.
		for _, c := range []struct {
			method, url, body, token string
			status                   int
			code                     string
		}{
			{"GET", "/digs/api/testplug/echo/7", "", "", 401, "unauthenticated"},
			{"POST", "/digs/api/testplug/echo/7", `{"a":1}`, f.reader, 403, "not_enough_privilege"},
			{"GET", "/digs/api/testplug/env", "", f.writer, 403, "not_enough_privilege"},
			{"POST", "/digs/api/testplug/echo/7", `{"a":"` + strings.Repeat("x", 2000) + `"}`, f.writer, 413, "too_large"},
			{"PUT", "/digs/api/testplug/echo/7", "", f.writer, 405, "method_not_allowed"},
			{"GET", "/nope/api/testplug/public", "", "", 404, "app_not_found"},
		} {
			if status, code := f.code(c.method, c.url, c.body, c.token); status != c.status || code != c.code {
				t.Errorf("%s %s: %d %s, want %d %s", c.method, c.url, status, code, c.status, c.code)
			}
		}
		body := f.json("POST", "/digs/api/testplug/echo/7", `{"a":1}`, f.writer, 200)
		if body["body"] != `{"a":1}` || body["method"] != "POST" {
			t.Errorf("post echo: %v", body)
		}
		// A public route: no actor but the application.
		body = f.json("GET", "/digs/api/testplug/public", "", "", 200)
		if actor := body["actor"].(map[string]any); actor["app"] != "digs" || actor["user_id"] != nil {
			t.Errorf("public actor: %v", actor)
		}

		// Status, headers and body as the plugin wrote them.
		rec = f.do("GET", "/digs/api/testplug/teapot", "", f.reader)
		if rec.Code != 418 || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" ||
			rec.Header().Get("X-Plugin") != "testplug" || rec.Body.String() != "short and stout" {
			t.Errorf("teapot: %d %v %q", rec.Code, rec.Header(), rec.Body)
		}

		// The route's own deadline (300 ms) ends a slow call.
		start := time.Now()
		if status, code := f.code("GET", "/digs/api/testplug/slow", "", f.reader); status != 504 || code != "plugin_timeout" {
			t.Errorf("slow route: %d %s", status, code)
		}
		if took := time.Since(start); took > 1500*time.Millisecond {
			t.Errorf("the slow route took %v", took)
		}

		// A plugin that is down answers 503 at once.
		if err := syscall.Kill(f.mgr.PID("testplug"), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitState(t, f.mgr, "testplug", pluginhost.StateRestarting)
		start = time.Now()
		if status, code := f.code("GET", "/digs/api/testplug/echo/1", "", f.reader); status != 503 || code != "plugin_unavailable" {
			t.Errorf("down: %d %s", status, code)
		}
		if took := time.Since(start); took > 500*time.Millisecond {
			t.Errorf("a call to a plugin that is down took %v", took)
		}
	})
}
