package webui_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
	"github.com/strata-archaeo/strata/core/webui"
)

func get(t *testing.T, method, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// The pages answer index.html with its security headers, over a real
// listener on both engines; API paths keep their JSON errors; the hashed
// assets index.html names are served with a year of caching.
func TestServesTheWebApplication(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstance(t, e)
		testenv.NewApp(t, inst.Apps, "dig")
		srv := httptest.NewServer(inst.Server)
		t.Cleanup(srv.Close)

		var index string
		for _, path := range []string{"/", "/dig", "/dig/", "/dig/t/finds/12", "/dig/reset-password?email=a%40b.org&token=x",
			"/oauth-callback?token=abc&app=dig", "/oauth-callback?error=no_account&app=dig&pending=p", "/nosuchapp/t/x"} {
			res, body := get(t, "GET", srv.URL+path)
			if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, `<div id="app">`) {
				t.Fatalf("GET %s: %d %s %.80s", path, res.StatusCode, res.Header.Get("Content-Type"), body)
			}
			for h, want := range map[string]string{
				"Content-Security-Policy": webui.ContentSecurityPolicy, "Cache-Control": "no-cache",
				"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
			} {
				if got := res.Header.Get(h); got != want {
					t.Errorf("GET %s: %s = %q, want %q", path, h, got, want)
				}
			}
			index = body
		}
		csp := webui.ContentSecurityPolicy
		if !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("CSP %q", csp)
		}
		if regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]`).MatchString(index) {
			t.Errorf("index.html has an inline script, which the CSP would block:\n%s", index)
		}
		if res, _ := get(t, "HEAD", srv.URL+"/dig/"); res.StatusCode != 200 {
			t.Errorf("HEAD /dig/: %d", res.StatusCode)
		}

		assets := regexp.MustCompile(`(?:src|href)="(/static/assets/[^"]+)"`).FindAllStringSubmatch(index, -1)
		if len(assets) < 2 {
			t.Fatalf("index.html names %d assets:\n%s", len(assets), index)
		}
		for _, a := range assets {
			res, body := get(t, "GET", srv.URL+a[1])
			want := "text/javascript"
			if strings.HasSuffix(a[1], ".css") {
				want = "text/css"
			}
			if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), want) || len(body) < 100 ||
				res.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
				t.Errorf("GET %s: %d %q %q (%d bytes)", a[1], res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"), len(body))
			}
		}
		if res, _ := get(t, "GET", srv.URL+"/static/favicon.svg"); res.StatusCode != 200 || res.Header.Get("Cache-Control") != "public, max-age=3600" {
			t.Errorf("favicon: %d %q", res.StatusCode, res.Header.Get("Cache-Control"))
		}

		// The offline app (issue 32): the service worker is revalidated at
		// every visit and may serve the whole site; the manifest and the
		// icons it names are served with their types.
		res, sw := get(t, "GET", srv.URL+"/static/sw.js")
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") ||
			res.Header.Get("Cache-Control") != "no-cache" || res.Header.Get("Service-Worker-Allowed") != "/" {
			t.Errorf("GET /static/sw.js: %d %q %q %q", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"), res.Header.Get("Service-Worker-Allowed"))
		}
		for _, a := range assets {
			if !strings.Contains(sw, `"`+a[1]+`"`) {
				t.Errorf("the service worker does not precache %s", a[1])
			}
		}
		if !strings.Contains(sw, `url:"/",revision:`) {
			t.Error("the service worker does not precache the page (/)")
		}
		if !strings.Contains(index, `rel="manifest" href="/static/manifest.webmanifest"`) {
			t.Errorf("index.html names no manifest:\n%s", index)
		}
		res, body := get(t, "GET", srv.URL+"/static/manifest.webmanifest")
		var manifest struct {
			Name, Scope, Display string
			StartURL             string `json:"start_url"`
			Icons                []struct{ Src, Sizes, Type string }
		}
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/manifest+json" || json.Unmarshal([]byte(body), &manifest) != nil {
			t.Fatalf("GET manifest: %d %q %.200s", res.StatusCode, res.Header.Get("Content-Type"), body)
		}
		sizes := map[string]bool{}
		for _, ic := range manifest.Icons {
			res, png := get(t, "GET", srv.URL+ic.Src)
			if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/png" || !strings.HasPrefix(png, "\x89PNG") {
				t.Errorf("icon %s: %d %q", ic.Src, res.StatusCode, res.Header.Get("Content-Type"))
			}
			sizes[ic.Sizes] = true
		}
		if manifest.Name == "" || manifest.Display != "standalone" || manifest.StartURL != "/" || manifest.Scope != "/" || !sizes["192x192"] || !sizes["512x512"] {
			t.Errorf("manifest %+v", manifest)
		}

		// JSON, never the page, for API paths, other methods, unknown assets
		// and paths no page has.
		for _, c := range []struct{ method, path, code string }{
			{"GET", "/api/nothing", "route_not_found"},
			{"GET", "/dig/api/nothing", "route_not_found"},
			{"GET", "/dig/api/", "route_not_found"},
			{"GET", "/nosuchapp/api/records/x", "app_not_found"},
			{"GET", "/static/assets/missing.js", "route_not_found"},
			{"GET", "/static/index.html", "route_not_found"},
			{"GET", "/static/../index.html", "route_not_found"},
			{"GET", "/favicon.ico", "route_not_found"},
			{"GET", "/healthz/x", "route_not_found"},
			{"POST", "/dig/t/finds", "route_not_found"},
			{"DELETE", "/", "route_not_found"},
		} {
			res, body := get(t, c.method, srv.URL+c.path)
			var m map[string]any
			if err := json.Unmarshal([]byte(body), &m); err != nil || res.StatusCode != 404 || m["code"] != c.code {
				t.Errorf("%s %s: %d %.120s, want 404 %s", c.method, c.path, res.StatusCode, body, c.code)
			}
		}
	})
}

func TestIsPage(t *testing.T) {
	for path, want := range map[string]bool{
		"/": true, "/oauth-callback": true, "/dig": true, "/dig/": true, "/dig/reset-password": true, "/dig/t/x/1": true,
		"/api": false, "/api/info": false, "/dig/api": false, "/dig/api/x": false, "/static/x": false, "/healthz": false,
		"/Dig": false, "/favicon.ico": false, "/x": false, "//": false, "/oauth-callback/x": false, "/new-app": false,
	} {
		if got := webui.IsPage(path); got != want {
			t.Errorf("IsPage(%q) = %v, want %v", path, got, want)
		}
	}
}
