package testenv

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
)

// Instance is a server on real storage, for API tests.
type Instance struct {
	Engine store.Engine
	Config config.Config
	Apps   *apps.Registry
	Server *server.Server
}

// NewInstance starts a server on a fresh backend of the engine. Options
// adjust the configuration before the server is built.
func NewInstance(t testing.TB, e store.Engine, opts ...func(*config.Config)) *Instance {
	t.Helper()
	return NewInstanceWithClock(t, e, nil, opts...)
}

// NewInstanceWithClock is NewInstance with the server's clock replaced.
func NewInstanceWithClock(t testing.TB, e store.Engine, clock func() time.Time, opts ...func(*config.Config)) *Instance {
	t.Helper()
	return NewInstanceWith(t, e, server.Deps{Now: clock}, opts...)
}

// NewInstanceWith builds the server from deps (clock, extra routes, a job
// system); the config and logger are filled in, and the registry unless
// deps has one (of engine e).
func NewInstanceWith(t testing.TB, e store.Engine, deps server.Deps, opts ...func(*config.Config)) *Instance {
	t.Helper()
	cfg := config.Default()
	cfg.AllowNewApp = true
	cfg.PasswordCost = 4
	// Tests sign in as often as they need; the rate-limit tests turn the
	// limits on.
	cfg.RateLimits = config.RateLimits{}
	// Uploaded files go to the test's own folder, never ./data.
	cfg.DataDir = t.TempDir()
	for _, o := range opts {
		o(&cfg)
	}
	reg := deps.Apps
	if reg == nil {
		reg = NewRegistry(t, e)
	}
	deps.Config, deps.Apps = cfg, reg
	if deps.Logger == nil {
		deps.Logger = Logger()
	}
	srv, err := server.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	return &Instance{Engine: e, Config: cfg, Apps: reg, Server: srv}
}

// Scenario is one table-driven API case: a request and what the answer
// must contain.
type Scenario struct {
	Name               string
	Method             string
	URL                string
	Body               string
	Headers            map[string]string
	ExpectedStatus     int
	ExpectedContent    []string // substrings the body must contain
	NotExpectedContent []string // substrings it must not contain
}

// Run sends the request to h and checks the answer: its status, that it is
// JSON in the envelope of CONTRACT §1, and the expected fragments.
func (s Scenario) Run(t *testing.T, h http.Handler) *httptest.ResponseRecorder {
	t.Helper()
	var body io.Reader
	if s.Body != "" {
		body = strings.NewReader(s.Body)
	}
	method := s.Method
	if method == "" {
		method = http.MethodGet
	}
	req := httptest.NewRequest(method, s.URL, body)
	if s.Body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	setHeaders(req, s.Headers)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	got := rec.Body.String()
	if rec.Code != s.ExpectedStatus {
		t.Errorf("%s %s: status %d, want %d; body %s", method, s.URL, rec.Code, s.ExpectedStatus, got)
	}
	CheckEnvelope(t, rec)
	for _, frag := range s.ExpectedContent {
		if !strings.Contains(got, frag) {
			t.Errorf("%s %s: body lacks %s; body %s", method, s.URL, frag, got)
		}
	}
	for _, frag := range s.NotExpectedContent {
		if strings.Contains(got, frag) {
			t.Errorf("%s %s: body must not contain %s; body %s", method, s.URL, frag, got)
		}
	}
	return rec
}

// GoInternals matches what must never reach an answer: Go type names and
// parser or runtime internals. Every error body any test reads through
// CheckEnvelope (Do, Scenario.Run) is checked against it.
var GoInternals = regexp.MustCompile(`map\[string\]|interface \{|\[\]interface|json: cannot|strconv\.|server\.[a-z]+[A-Z]|records\.[A-Z]|\bstruct \{|runtime error|goroutine \d`)

// CheckEnvelope asserts a JSON body whose "status" matches the HTTP status
// class, a "code" on every error, and no Go internals in an error.

func CheckEnvelope(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json; body %s", ct, rec.Body.String())
	}
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Errorf("body is not a JSON object: %v; body %s", err, rec.Body.String())
		return nil
	}
	status, _ := m["status"].(string)
	if status == "error" && GoInternals.Match(rec.Body.Bytes()) {
		t.Errorf("an error answer names Go internals: %s", rec.Body.String())
	}
	switch {
	case rec.Code >= 400 && status != "error":
		t.Errorf("HTTP %d with status %q", rec.Code, status)
	case rec.Code >= 400 && m["code"] == nil:
		t.Errorf("error body without code: %s", rec.Body.String())
	case rec.Code < 400 && status != "success" && status != "warning":
		t.Errorf("HTTP %d with status %q", rec.Code, status)
	}
	return m
}

// Do sends a request and returns the decoded JSON body.
func Do(t *testing.T, h http.Handler, method, url, body string, headers map[string]string) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, url, r)
	setHeaders(req, headers)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, CheckEnvelope(t, rec)
}

// setHeaders sets headers on req; the key "Host" sets the host the request
// came to (req.Host), as a client that forges it would.
func setHeaders(req *http.Request, headers map[string]string) {
	for k, v := range headers {
		if http.CanonicalHeaderKey(k) == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
}

// FormFile is one file part of a multipart request.
type FormFile struct {
	Field, Name string
	Data        []byte
}

// DoMultipart posts a multipart form (fields, then files in order) to url
// with the Authorization value auth, and returns the status and the body,
// checked to be JSON in the envelope (CheckEnvelope).
func DoMultipart(t *testing.T, h http.Handler, url, auth string, fields map[string]string, files ...FormFile) (int, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		fw, err := mw.CreateFormFile(f.Field, f.Name)
		if err == nil {
			_, err = fw.Write(f.Data)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, url, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, CheckEnvelope(t, rec)
}
