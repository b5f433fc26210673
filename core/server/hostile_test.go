package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// hostileBodies are what a careless or hostile client sends: text with NUL,
// invalid UTF-8, lone surrogates, numbers beyond every type, deep nesting,
// the wrong JSON kinds.
var hostileBodies = []string{
	`{"name":"a\u0000b","label":"x\u0000","email":"a\u0000@b.org","password":"\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000","core":{"label":"\u0000"}}`,
	"{\"name\":\"\xff\xfe\",\"label\":\"\xc3\x28\",\"core\":{\"label\":\"\xed\xa0\x80\"}}",
	`{"name":"\ud800","label":"\udfff x","core":{"label":"\ud800\u0041"},"email":"\udc00@b.org"}`,
	`{"id":1e400,"page":99999999999999999999999999,"privilege":-1e308,"min":1e999,"core":{"label":1e400,"weight":-1e400},"order":123456789012345678901234567890}`,
	`{"id":"99999999999999999999","per_page":"-5","core":{"weight":"NaN","unit":"1e9999"},"first":"18446744073709551616","second":-9223372036854775809}`,
	strings.Repeat(`{"a":`, 500) + `1` + strings.Repeat(`}`, 500),
	`[1,2,3]`, `"text"`, `12`, `null`, `true`, ``, `{`, `{"core":[],"plugins":"x","fields":{},"sort":{"a":1}}`,
}

// unavailable are the 5xx answers that say a dependency is missing, not
// that the server failed (CONTRACT §1).
var unavailable = map[string]bool{"email_not_configured": true, "provider_not_configured": true, "plugin_unavailable": true}

// TestHostileBodiesOnEveryRoute sends each hostile body to every route of
// the route table as a super_admin (so the handlers, not the privilege
// gate, read it): no answer is a 5xx, none names Go internals.
func TestHostileBodiesOnEveryRoute(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		f.create(t, f.super, "finds", `{"label":"bowl"}`)
		for _, r := range routesToProbe(t, f) {
			bodies := hostileBodies
			if r[0] == "GET" {
				bodies = []string{""}
				// Hostile text in the query string too.
				for _, q := range []string{"value=%00", "value=%ff", "q=%ed%a0%80", "q=a%00b", "id=%00", "%00=1"} {
					if msg := probe(f, "GET", r[1]+"&"+q, ""); msg != "" {
						t.Error(msg)
					}
				}
			}
			for _, body := range bodies {
				if msg := probe(f, r[0], r[1], body); msg != "" {
					t.Error(msg)
				}
			}
		}
	})
}

// routesToProbe is every route with its parameters filled for the dig
// fixture (GET routes carry hostile query parameters).
func routesToProbe(t testing.TB, f *digFixture) [][2]string {
	// :device_id names an offline device of the caller (GET /sync/devices/:device_id); :upload_id an upload (sync uploads).
	fill := strings.NewReplacer(":app", "dig", ":tb", "finds", ":id", "1", ":device_id", "tablet-1", ":upload_id", "x", ":fld", "label", ":feature", "chronology",
		":name", "x", ":provider", "idp_a", ":ids", "1", "*path", "x", ":version", "1", ":file", "dig_20200101_000000_abcdef.tar.gz")
	var out [][2]string
	for _, r := range server.RoutePaths(f.inst.Server) {
		method, path := r[0], fill.Replace(r[1])
		if strings.Contains(path, "/:") || strings.Contains(path, "*") {
			t.Fatalf("route %s %s has a parameter this test does not fill", method, r[1])
		}
		if path == "/dig/api/config/table/finds" && method == "DELETE" {
			continue // would drop the table the other routes read
		}
		if method == "GET" {
			path += "?page=99999999999999999999&per_page=-1&limit=1e400&field=label&fld=label&id=1&q=x&filter=%7B%22label%22%3A%7B%22_eq%22%3A%22%5Cu0000%22%7D%7D"
		}
		out = append(out, [2]string{method, path})
	}
	return out
}

// probe sends one request as the super_admin and says what is wrong with
// the answer ("" when nothing): a 5xx that is not a missing dependency, or
// Go internals in the body.
func probe(f *digFixture, method, path, body string) string {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Authorization", "Bearer "+f.super)
	rec := httptest.NewRecorder()
	f.inst.Server.ServeHTTP(rec, req)
	var m map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &m)
	if (rec.Code >= 500 && !unavailable[fmt.Sprint(m["code"])]) || testenv.GoInternals.Match(rec.Body.Bytes()) {
		return fmt.Sprintf("%s %s %.60q: %d %.300s", method, path, body, rec.Code, rec.Body)
	}
	return ""
}

// FuzzRouteBodies sends fuzzed bodies to every route (SQLite, one
// instance for the whole run), with the hostile bodies as seeds.
func FuzzRouteBodies(f *testing.F) {
	for i, b := range hostileBodies {
		f.Add(uint16(i), b)
	}
	fx := newDig(f, store.SQLite)
	routes := routesToProbe(f, fx)
	f.Fuzz(func(t *testing.T, route uint16, body string) {
		r := routes[int(route)%len(routes)]
		if msg := probe(fx, r[0], strings.SplitN(r[1], "?", 2)[0], body); msg != "" {
			t.Error(msg)
		}
	})
}
