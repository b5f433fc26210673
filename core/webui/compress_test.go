package webui_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func raw(t *testing.T, method, url string, h map[string]string) (*http.Response, []byte) {
	t.Helper()
	return testenv.RawDo(t, method, url, h)
}

func decode(t *testing.T, coding string, b []byte) []byte {
	t.Helper()
	return testenv.Decode(t, coding, b)
}

// The build's scripts and styles are sent in the precompressed form the
// request prefers (brotli, gzip, identity by q-values), each with its own
// ETag, Vary and exact Content-Length; HEAD, conditional requests and
// ranges (over the identity bytes) stay right; the .br and .gz files are
// not answered by their own names.
func TestPrecompressedAssets(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstance(t, e)
		srv := httptest.NewServer(inst.Server)
		t.Cleanup(srv.Close)

		_, index := raw(t, "GET", srv.URL+"/", nil)
		m := regexp.MustCompile(`src="(/static/assets/index-[^"]+\.js)"`).FindStringSubmatch(string(index))
		if m == nil {
			t.Fatalf("no main script in index.html:\n%s", index)
		}
		script := srv.URL + m[1]
		res, identity := raw(t, "GET", script, nil)
		tag := res.Header.Get("ETag")
		if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "" || len(identity) < 100000 ||
			!regexp.MustCompile(`^"[0-9a-f]{24}"$`).MatchString(tag) || res.Header.Get("Vary") != "Accept-Encoding" {
			t.Fatalf("identity: %d %q %d bytes, ETag %q, Vary %q", res.StatusCode, res.Header.Get("Content-Encoding"), len(identity), tag, res.Header.Get("Vary"))
		}
		base := strings.Trim(tag, `"`)
		for _, c := range []struct{ accept, coding string }{
			{"gzip, deflate, br, zstd", "br"}, // Chromium
			{"br", "br"},
			{"gzip", "gzip"},
			{"br;q=0.5, gzip", "gzip"},
			{"*", "br"},
			{"*;q=0.5, br;q=0", "gzip"},
			{"identity", ""},
			{"br;q=0, gzip;q=0", ""},
			{"gzip;q=0.3, identity", ""},
			{"deflate", ""},
		} {
			res, body := raw(t, "GET", script, map[string]string{"Accept-Encoding": c.accept})
			wantTag := map[string]string{"br": `"` + base + `-br"`, "gzip": `"` + base + `-gz"`, "": tag}[c.coding]
			if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != c.coding || res.Header.Get("ETag") != wantTag ||
				res.Header.Get("Vary") != "Accept-Encoding" || res.ContentLength != int64(len(body)) ||
				!strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") {
				t.Errorf("Accept-Encoding %q: %d %q ETag %q Vary %q Content-Length %d (%d bytes) %q; want %q", c.accept, res.StatusCode,
					res.Header.Get("Content-Encoding"), res.Header.Get("ETag"), res.Header.Get("Vary"), res.ContentLength, len(body),
					res.Header.Get("Content-Type"), c.coding)
				continue
			}
			if !bytes.Equal(decode(t, c.coding, body), identity) {
				t.Errorf("Accept-Encoding %q: the decoded body differs from the file", c.accept)
			}
			if c.coding != "" && len(body) > len(identity)/3 {
				t.Errorf("%s: %d of %d bytes", c.coding, len(body), len(identity))
			}
			// HEAD: the same headers, no body.
			hres, hbody := raw(t, "HEAD", script, map[string]string{"Accept-Encoding": c.accept})
			if hres.StatusCode != 200 || hres.Header.Get("Content-Encoding") != c.coding || hres.ContentLength != int64(len(body)) || len(hbody) != 0 {
				t.Errorf("HEAD, Accept-Encoding %q: %d %q Content-Length %d", c.accept, hres.StatusCode, hres.Header.Get("Content-Encoding"), hres.ContentLength)
			}
			// The tag revalidates its own form.
			cres, _ := raw(t, "GET", script, map[string]string{"Accept-Encoding": c.accept, "If-None-Match": wantTag})
			if cres.StatusCode != 304 || cres.Header.Get("ETag") != wantTag {
				t.Errorf("If-None-Match %s, Accept-Encoding %q: %d ETag %q", wantTag, c.accept, cres.StatusCode, cres.Header.Get("ETag"))
			}
		}
		// Another form's tag is not this form's.
		if res, body := raw(t, "GET", script, map[string]string{"Accept-Encoding": "gzip", "If-None-Match": `"` + base + `-br"`}); res.StatusCode != 200 ||
			res.Header.Get("Content-Encoding") != "gzip" || len(body) == 0 {
			t.Errorf("gzip with the brotli tag: %d %q", res.StatusCode, res.Header.Get("Content-Encoding"))
		}

		// Ranges count in the file's own bytes, whatever the client takes.
		for _, h := range []map[string]string{
			{"Range": "bytes=100-199", "Accept-Encoding": "br, gzip"},
			{"Range": "bytes=100-199", "Accept-Encoding": "gzip", "If-Range": tag},
		} {
			res, body := raw(t, "GET", script, h)
			if res.StatusCode != 206 || res.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, identity[100:200]) ||
				res.Header.Get("ETag") != tag || res.Header.Get("Content-Range") == "" {
				t.Errorf("range %v: %d %q %q ETag %q", h, res.StatusCode, res.Header.Get("Content-Encoding"), res.Header.Get("Content-Range"), res.Header.Get("ETag"))
			}
		}
		// If-Range with a coding's tag: not the identity's, so the whole file.
		if res, body := raw(t, "GET", script, map[string]string{"Range": "bytes=0-9", "If-Range": `"` + base + `-br"`}); res.StatusCode != 200 || !bytes.Equal(body, identity) {
			t.Errorf("If-Range with the brotli tag: %d, %d bytes", res.StatusCode, len(body))
		}

		// The stylesheet too; small files (favicon, index.html) as they are.
		if css := regexp.MustCompile(`href="(/static/assets/index-[^"]+\.css)"`).FindStringSubmatch(string(index)); css == nil {
			t.Error("no stylesheet in index.html")
		} else if res, _ := raw(t, "GET", srv.URL+css[1], map[string]string{"Accept-Encoding": "br"}); res.Header.Get("Content-Encoding") != "br" {
			t.Errorf("stylesheet: %q", res.Header.Get("Content-Encoding"))
		}
		for _, p := range []string{"/static/favicon.svg", "/"} {
			res, _ := raw(t, "GET", srv.URL+p, map[string]string{"Accept-Encoding": "br, gzip"})
			if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "" || res.Header.Get("ETag") == "" {
				t.Errorf("%s: %d %q ETag %q", p, res.StatusCode, res.Header.Get("Content-Encoding"), res.Header.Get("ETag"))
			}
		}

		// The compressed files are not assets of their own.
		for _, p := range []string{m[1] + ".br", m[1] + ".gz"} {
			res, body := raw(t, "GET", srv.URL+p, map[string]string{"Accept-Encoding": "br, gzip"})
			var e map[string]any
			if res.StatusCode != 404 || json.Unmarshal(body, &e) != nil || e["code"] != "route_not_found" {
				t.Errorf("%s: %d %s", p, res.StatusCode, body)
			}
		}
	})
}
