package oaipmh

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC)

type env struct {
	t    *testing.T
	repo *memRepo
	h    http.Handler
	v    *validator
}

func newEnv(t *testing.T, repo *memRepo, opt Options) *env {
	if opt.Now == nil {
		opt.Now = func() time.Time { return testNow }
	}
	if opt.TokenKey == nil {
		opt.TokenKey = []byte("test key")
	}
	return &env{t: t, repo: repo, h: Handler(repo, opt), v: newValidator(t)}
}

// do sends a GET (raw query) and returns the recorder; 200 answers are kept
// for validation.
func (e *env) do(method, raw string) *httptest.ResponseRecorder {
	e.t.Helper()
	var r *http.Request
	if method == http.MethodPost {
		r = httptest.NewRequest(method, "/dig/oai", strings.NewReader(raw))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(method, "/dig/oai?"+raw, nil)
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	if w.Code == http.StatusOK {
		if ct := w.Header().Get("Content-Type"); ct != "text/xml; charset=utf-8" {
			e.t.Errorf("%s: Content-Type %q", raw, ct)
		}
		e.v.add(method+" "+raw, w.Body.Bytes())
	}
	return w
}

func (e *env) get(raw string) *parsed {
	e.t.Helper()
	w := e.do(http.MethodGet, raw)
	if w.Code != http.StatusOK {
		e.t.Fatalf("%s: status %d: %s", raw, w.Code, w.Body)
	}
	return parse(e.t, w.Body.Bytes())
}

func parse(t *testing.T, b []byte) *parsed {
	t.Helper()
	var p parsed
	if err := xml.Unmarshal(b, &p); err != nil {
		t.Fatalf("unmarshal: %v\n%s", err, b)
	}
	if p.XMLName.Space != "http://www.openarchives.org/OAI/2.0/" || p.XMLName.Local != "OAI-PMH" {
		t.Fatalf("root %v", p.XMLName)
	}
	return &p
}

// q builds a query string from pairs.
func q(kv ...string) string {
	var b strings.Builder
	for i := 0; i < len(kv); i += 2 {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(kv[i]) + "=" + url.QueryEscape(kv[i+1]))
	}
	return b.String()
}

func httptestPost(body string) *http.Request {
	return httptest.NewRequest(http.MethodPost, "/dig/oai", strings.NewReader(body))
}

func withType(r *http.Request, ct string) *http.Request {
	r.Header.Set("Content-Type", ct)
	return r
}

func httpDo(e *env, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	e.v.add(r.Method+" "+r.URL.String(), w.Body.Bytes())
	return w
}
