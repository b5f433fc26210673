package pluginhost_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
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

// binDir holds the plugin binaries built once for the test process.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "strata-plugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	if err := goBuild(filepath.Join(dir, "testplugin"), "./testdata/testplugin"); err != nil {
		fmt.Fprintln(os.Stderr, "build the test plugin:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func goBuild(out, pkg string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goBin, "build", "-o", out, pkg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v: %s", err, stderr.String())
	}
	return nil
}

var (
	exampleOnce sync.Once
	exampleErr  error
)

// exampleBinary builds plugins/example (once) and returns its path.
func exampleBinary(t testing.TB) string {
	t.Helper()
	path := filepath.Join(binDir, "example")
	exampleOnce.Do(func() { exampleErr = goBuild(path, "../../plugins/example") })
	if exampleErr != nil {
		t.Fatalf("build plugins/example: %v", exampleErr)
	}
	return path
}

// pluginDir returns a plugin directory holding the test plugin under each
// name (its behaviour follows the name), plus extra files: name → source.
func pluginDir(t testing.TB, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		install(t, filepath.Join(binDir, "testplugin"), filepath.Join(dir, n))
	}
	return dir
}

func install(t testing.TB, src, dst string) {
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

// syncBuffer is the test kit's goroutine-safe buffer.
type syncBuffer = testenv.SyncBuffer

// fastOptions make supervision quick enough for tests.
func fastOptions(dir string, reg *apps.Registry, log *slog.Logger) pluginhost.Options {
	return pluginhost.Options{Dir: dir, Apps: reg, Logger: log, MinBackoff: 50 * time.Millisecond,
		MaxBackoff: 400 * time.Millisecond, PollInterval: 20 * time.Millisecond, HookTimeout: time.Second}
}

func startManager(t testing.TB, opts pluginhost.Options) *pluginhost.Manager {
	t.Helper()
	m := pluginhost.New(opts)
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	return m
}

// fixture is a server with plugins on real storage: app "digs" with the
// tables finds (code), other (code, label: a user field named like the
// plugin's column) and plain (code, label, year: the same columns as user
// fields, for comparisons without plugins), and one user per level.
type fixture struct {
	t                     testing.TB
	reg                   *apps.Registry
	mgr                   *pluginhost.Manager
	srv                   *server.Server
	app                   *apps.App
	logs                  *syncBuffer
	super, writer, reader string
	readerID              int64
}

func newFixture(t testing.TB, e store.Engine, dir string, tune func(*pluginhost.Options)) *fixture {
	t.Helper()
	return newFixtureWith(t, e, dir, tune, false)
}

// newFixtureWith is newFixture, with a running job system when withJobs.
func newFixtureWith(t testing.TB, e store.Engine, dir string, tune func(*pluginhost.Options), withJobs bool) *fixture {
	t.Helper()
	ctx, now := context.Background(), time.Now().UTC()
	reg := testenv.NewRegistry(t, e)
	a := testenv.NewApp(t, reg, "digs")
	for _, tb := range []struct {
		name   string
		fields []schema.FieldDef
	}{
		{"finds", []schema.FieldDef{{Name: "code"}}},
		{"other", []schema.FieldDef{{Name: "code"}, {Name: "label"}}},
		{"plain", []schema.FieldDef{{Name: "code"}, {Name: "label"}, {Name: "year", DBType: "int"}}},
	} {
		if _, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: tb.name}, now); err != nil {
			t.Fatal(err)
		}
		for _, f := range tb.fields {
			if _, err := schema.AddField(ctx, a.DB, tb.name, f, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := fastOptions(dir, reg, log)
	if tune != nil {
		tune(&opts)
	}
	mgr := startManager(t, opts)
	cfg := config.Default()
	cfg.PasswordCost = 4
	deps := server.Deps{Config: cfg, Apps: reg, Logger: log, Plugins: mgr}
	if withJobs {
		sys, err := jobs.Open(ctx, reg.Backend(), jobs.Options{Dir: t.TempDir(), Logger: log,
			PollInterval: 10 * time.Millisecond, ProgressInterval: 20 * time.Millisecond, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = sys.Stop(ctx)
		})
		deps.Jobs = sys
	}
	srv, err := server.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	if deps.Jobs != nil {
		if err := deps.Jobs.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{t: t, reg: reg, mgr: mgr, srv: srv, app: a, logs: logs}
	f.super = testenv.Login(t, srv, "digs", "admin@example.org", testenv.Password)
	testenv.NewUser(t, a, "Writer", "writer@example.org", auth.Writer)
	f.writer = testenv.Login(t, srv, "digs", "writer@example.org", testenv.Password)
	f.readerID = testenv.NewUser(t, a, "Reader", "reader@example.org", auth.Reader).ID
	f.reader = testenv.Login(t, srv, "digs", "reader@example.org", testenv.Password)
	return f
}

// do sends a request and returns the status and the raw answer.
func (f *fixture) do(method, url, body, token string) *httptest.ResponseRecorder {
	f.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, url, r)
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

// json sends a request and decodes a JSON answer, failing on another code.
func (f *fixture) json(method, url, body, token string, want int) map[string]any {
	f.t.Helper()
	rec := f.do(method, url, body, token)
	if rec.Code != want {
		f.t.Fatalf("%s %s: %d, want %d: %s", method, url, rec.Code, want, rec.Body.String())
	}
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		f.t.Fatalf("%s %s: not JSON: %s", method, url, rec.Body.String())
	}
	return m
}

// code sends a request and returns the status and the answer's code.
func (f *fixture) code(method, url, body, token string) (int, string) {
	f.t.Helper()
	rec := f.do(method, url, body, token)
	var m map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &m)
	c, _ := m["code"].(string)
	return rec.Code, c
}

func (f *fixture) activate(table, feature string) {
	f.t.Helper()
	f.json(http.MethodPost, "/digs/api/config/table/"+table+"/"+feature, "", f.super, http.StatusOK)
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

// core returns the value of a field in the full record.
func core(rec map[string]any, field string) any {
	c, _ := rec["core"].(map[string]any)
	v, _ := c[field].(map[string]any)
	return v["val"]
}

func killPID(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// waitGone waits until the manager has seen process pid exit.
func waitGone(t testing.TB, m *pluginhost.Manager, name string, pid int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for m.PID(name) == pid {
		if time.Now().After(deadline) {
			t.Fatalf("plugin %s: process %d still listed", name, pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitState waits until the plugin is in state.
func waitState(t testing.TB, m *pluginhost.Manager, name string, state pluginhost.State) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for m.State(name) != state {
		if time.Now().After(deadline) {
			t.Fatalf("plugin %s: state %q, want %q", name, m.State(name), state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
