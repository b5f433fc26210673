package realplugins_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// The plugins under test, by binary name (their manifest names too).
var realPlugins = []string{"chronology", "osteology", "radiocarbon"}

// routePlugins are built too but linked into a fixture's plugin dir only
// by the tests that use them (they offer routes, no features).
var routePlugins = []string{"gazetteer", "refmgr", "sequence"}

var (
	// binDir holds the plugin binaries, built once for the test process.
	binDir string
	// curvesDir is STRATA_CURVES_DIR of the test run, passed on to the
	// radiocarbon plugin as the server would; "" (the usual case): the
	// plugin's built-in curves.
	curvesDir string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	curvesDir = os.Getenv("STRATA_CURVES_DIR")
	dir, err := os.MkdirTemp("", "strata-real-plugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	if err := buildPlugins(root, dir); err != nil {
		fmt.Fprintln(os.Stderr, "build the plugins:", err)
		return 1
	}
	return m.Run()
}

// moduleRoot is the directory of go.mod above the working directory (the
// package's directory under go test).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// buildPlugins builds the three plugins into dir in one go build.
func buildPlugins(root, dir string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, p := range append(append([]string{}, realPlugins...), routePlugins...) {
		args = append(args, "./plugins/"+p)
	}
	cmd := exec.Command(goBin, args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v: %s", err, stderr.String())
	}
	return nil
}

// syncBuffer is the test kit's goroutine-safe buffer.
type syncBuffer = testenv.SyncBuffer

// fixture is a server with the real plugins on real storage: app "dig"
// with the tables sites (name), units (code, site: a lookup to sites) and
// finds (code), and a super admin, a writer and a reader.
type fixture struct {
	t                     testing.TB
	mgr                   *pluginhost.Manager
	srv                   *server.Server
	app                   *apps.App
	logs                  *syncBuffer
	jobs                  *jobs.System // nil unless newFixtureWith(…, true)
	super, writer, reader string
}

func newFixture(t testing.TB, e store.Engine, tune func(*pluginhost.Options)) *fixture {
	t.Helper()
	return newFixtureWith(t, e, tune, false)
}

// newFixtureWith is newFixture, with a running job system when withJobs
// (for plugins' job routes).
func newFixtureWith(t testing.TB, e store.Engine, tune func(*pluginhost.Options), withJobs bool) *fixture {
	t.Helper()
	reg := testenv.NewRegistry(t, e)
	a := testenv.NewApp(t, reg, "dig")
	f := &fixture{t: t, app: a, logs: &syncBuffer{}}
	f.table("sites", schema.FieldDef{Name: "name"})
	f.table("units", schema.FieldDef{Name: "code"}, schema.FieldDef{Name: "site", Type: "select", IDFromTb: "sites"})
	f.table("finds", schema.FieldDef{Name: "code"})

	// The plugins get the environment the server would give them
	// (cmd/strata serve): the data dir, and STRATA_CURVES_DIR when the
	// test run has it, never anything else of ours.
	getenv := func(k string) string {
		if k == "STRATA_CURVES_DIR" {
			return curvesDir
		}
		return ""
	}
	dir := t.TempDir()
	for _, p := range realPlugins {
		link(t, filepath.Join(binDir, p), filepath.Join(dir, p))
	}
	log := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := pluginhost.Options{Dir: dir, Apps: reg, Logger: log, Env: pluginhost.Environment(getenv, t.TempDir()),
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 400 * time.Millisecond, PollInterval: 20 * time.Millisecond}
	if tune != nil {
		tune(&opts)
	}
	f.mgr = pluginhost.New(opts)
	if err := f.mgr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.mgr.Stop)
	for _, p := range realPlugins {
		if s := f.mgr.State(p); s != pluginhost.StateRunning {
			t.Fatalf("plugin %s: state %q; log:\n%s", p, s, f.logs)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server and plugin log:\n%s", f.logs)
		}
	})

	cfg := config.Default()
	cfg.PasswordCost = 4
	deps := server.Deps{Config: cfg, Apps: reg, Logger: log, Plugins: f.mgr}
	if withJobs {
		sys, err := jobs.Open(context.Background(), reg.Backend(), jobs.Options{Dir: t.TempDir(), Logger: log,
			PollInterval: 10 * time.Millisecond, ProgressInterval: 20 * time.Millisecond, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = sys.Stop(ctx)
		})
		deps.Jobs, f.jobs = sys, sys
	}
	srv, err := server.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	if f.jobs != nil {
		if err := f.jobs.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	f.srv = srv
	f.super = testenv.Login(t, srv, "dig", "admin@example.org", testenv.Password)
	testenv.NewUser(t, a, "Writer", "writer@example.org", auth.Writer)
	f.writer = testenv.Login(t, srv, "dig", "writer@example.org", testenv.Password)
	testenv.NewUser(t, a, "Reader", "reader@example.org", auth.Reader)
	f.reader = testenv.Login(t, srv, "dig", "reader@example.org", testenv.Password)
	return f
}

// link puts a plugin binary into a plugin directory (a hard link when it
// can: the binaries are large).
func link(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.Link(src, dst); err == nil {
		return
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// table creates a user table with fields (a plugin table of parent when
// parent is not empty).
func (f *fixture) table(name string, fields ...schema.FieldDef) {
	f.childTable(name, "", fields...)
}

func (f *fixture) childTable(name, parent string, fields ...schema.FieldDef) {
	f.t.Helper()
	ctx, now := context.Background(), time.Now().UTC()
	if _, err := schema.CreateTable(ctx, f.app.DB, schema.TableDef{Name: name, PluginOf: parent}, now); err != nil {
		f.t.Fatal(err)
	}
	for _, fd := range fields {
		if _, err := schema.AddField(ctx, f.app.DB, name, fd, now); err != nil {
			f.t.Fatalf("%s.%s: %v", name, fd.Name, err)
		}
	}
}

// do sends a request and returns the recorder.
func (f *fixture) do(method, url, body, token string) *httptest.ResponseRecorder {
	f.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "/dig/api"+url, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	return rec
}

// json sends a request and decodes the JSON answer, failing on another
// status than want.
func (f *fixture) json(method, url, body, token string, want int) map[string]any {
	f.t.Helper()
	rec := f.do(method, url, body, token)
	if rec.Code != want {
		f.t.Fatalf("%s %s %s: %d, want %d: %s", method, url, body, rec.Code, want, rec.Body.String())
	}
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		f.t.Fatalf("%s %s: not JSON: %s", method, url, rec.Body.String())
	}
	return m
}

// code sends a request and returns the status, the answer's code and the
// decoded answer.
func (f *fixture) code(method, url, body, token string) (int, string, map[string]any) {
	f.t.Helper()
	rec := f.do(method, url, body, token)
	var m map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &m)
	c, _ := m["code"].(string)
	return rec.Code, c, m
}

// activate turns a feature on (by name or alias) and checks the answer.
func (f *fixture) activate(table, feature, plugin string) {
	f.t.Helper()
	body := f.json("POST", "/config/table/"+table+"/"+feature, "", f.super, 200)
	code := plugin + "_activated"
	if feature == "fuzzy-date" {
		code = "fuzzy_date_activated" // BraDypUS's name answers in its words
	}
	if body["code"] != code || body["table"] != table || body["feature"] != plugin {
		f.t.Fatalf("activate %s on %s: %v", feature, table, body)
	}
}

func (f *fixture) deactivate(table, feature, plugin string) {
	f.t.Helper()
	body := f.json("DELETE", "/config/table/"+table+"/"+feature, "", f.super, 200)
	code := plugin + "_deactivated"
	if feature == "fuzzy-date" {
		code = "fuzzy_date_deactivated"
	}
	if body["code"] != code {
		f.t.Fatalf("deactivate %s on %s: %v", feature, table, body)
	}
}

// create saves a new record (the whole body) and returns its id.
func (f *fixture) create(table, body string) int64 {
	f.t.Helper()
	m := f.json("POST", "/record/"+table, body, f.writer, 200)
	return int64(m["id"].(float64))
}

// record reads a full record.
func (f *fixture) record(table string, id int64) map[string]any {
	f.t.Helper()
	return f.json("GET", fmt.Sprintf("/record/%s/%d", table, id), "", f.reader, 200)
}

// count is the number of rows of a table, straight from the database.
func (f *fixture) count(table string) int {
	f.t.Helper()
	var n int
	if err := f.app.DB.QueryRow(context.Background(), `SELECT COUNT(*) FROM `+f.app.DB.Qualify(table)).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

// sql runs a statement on the app's database.
func (f *fixture) sql(q string) {
	f.t.Helper()
	if _, err := f.app.DB.Exec(context.Background(), q); err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
}

// obj walks nested objects of a decoded answer: obj(m, "schema", "plugins").
func obj(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m, _ = m[k].(map[string]any)
	}
	return m
}

// val is a core field's value in a full record.
func val(rec map[string]any, field string) any {
	return obj(rec, "core", field)["val"]
}

// num reads a JSON number (nil when it is not one).
func num(v any) any {
	if n, ok := v.(float64); ok {
		return int64(n)
	}
	return v
}

// codes are the "code" values of a list answer's rows, in order.
func codes(list map[string]any) []string {
	out := []string{}
	for _, r := range list["data"].([]any) {
		out = append(out, fmt.Sprint(r.(map[string]any)["code"]))
	}
	return out
}

// fieldError finds the error of rule on field in a validation_failed
// answer (a value the plugin refuses gets only the plugin's error; a
// save may have errors on other fields too).
func fieldError(body map[string]any, field, rule string) map[string]any {
	errs, _ := body["errors"].([]any)
	for _, e := range errs {
		if m, _ := e.(map[string]any); m["field"] == field && m["rule"] == rule {
			return m
		}
	}
	return nil
}

// jsonText encodes v as a request body.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
