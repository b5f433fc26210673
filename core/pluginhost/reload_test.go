package pluginhost_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// variants are the test plugin built with -ldflags -X: another version,
// a broken one (testdata/testplugin's doc).
var variants sync.Map // name → *variantBuild

type variantBuild struct {
	once sync.Once
	path string
	err  error
}

func variant(t testing.TB, name, ldflags string) string {
	t.Helper()
	v, _ := variants.LoadOrStore(name, &variantBuild{path: filepath.Join(binDir, "variant-"+name)})
	b := v.(*variantBuild)
	b.once.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		cmd := exec.Command(goBin, "build", "-ldflags", ldflags, "-o", b.path, "./testdata/testplugin")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			b.err = fmt.Errorf("%v: %s", err, stderr.String())
		}
	})
	if b.err != nil {
		t.Fatalf("build the test plugin variant %s: %v", name, b.err)
	}
	return b.path
}

func v2Binary(t testing.TB) string     { return variant(t, "v2", "-X main.version=2.0.0") }
func brokenBinary(t testing.TB) string { return variant(t, "broken", "-X main.broken=1") }

// replaceBehindBack puts src's bytes (plus extra) at dst by rename, as a
// deployment tool that bypasses `strata plugin install` would.
func replaceBehindBack(t testing.TB, src, dst string, extra []byte) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tmp := dst + ".new"
	if err := os.WriteFile(tmp, append(b, extra...), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
}

func installPlugin(t testing.TB, src, dir string) string {
	t.Helper()
	man, path, _, err := pluginhost.Install(context.Background(), src, dir)
	if err != nil {
		t.Fatalf("install %s: %v", src, err)
	}
	if man.GetName() != "testplug" || path != filepath.Join(dir, "testplug") {
		t.Fatalf("installed %s as %s", man.GetName(), path)
	}
	return path
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// strata plugin install's core: the checked file lands in the plugin
// folder through a rename (writing into the running executable, as cp
// does, fails with "text file busy"), its SHA-256 recorded; the running
// server notices the new file and swaps the new version in by itself.
func TestInstallReplacesRunningPlugin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := installPlugin(t, filepath.Join(binDir, "testplugin"), dir)
	sums, err := pluginhost.Checksums(dir)
	if err != nil || len(sums["testplug"]) != 64 {
		t.Fatalf("checksum recorded: %v %v", sums, err)
	}
	logs := &syncBuffer{}
	opts := fastOptions(dir, nil, slog.New(slog.NewTextHandler(logs, nil)))
	opts.ReloadInterval = 50 * time.Millisecond
	m := startManager(t, opts)
	pid := m.PID("testplug")
	if pid == 0 {
		t.Fatalf("not started: %s", logs.String())
	}
	// What cp does: open the running executable for writing.
	if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		f.Close()
		t.Log("this kernel lets a running executable be opened for writing")
	} else if !errors.Is(err, syscall.ETXTBSY) {
		t.Fatalf("open the running executable for writing: %v", err)
	}

	man, _, sum, err := pluginhost.Install(context.Background(), v2Binary(t), dir)
	if err != nil {
		t.Fatalf("install over the running plugin: %v", err)
	}
	if man.GetVersion() != "2.0.0" {
		t.Fatalf("installed version %q", man.GetVersion())
	}
	waitFor(t, "the new version to be swapped in", func() bool {
		in, _ := m.Describe("testplug")
		return in.Version == "2.0.0" && in.State == pluginhost.StateRunning
	})
	in, _ := m.Describe("testplug")
	if in.SHA256 != sum || !slices.Contains(in.Operators, "_v2_ids") || in.ReloadError != "" {
		t.Fatalf("after the reload: %+v (sha256 want %s)", in, sum)
	}
	if m.PID("testplug") == pid {
		t.Fatal("the old process still serves")
	}
	waitFor(t, "the old process to stop", func() bool { return syscall.Kill(pid, 0) != nil })
}

// A reload while records are being saved (the required BeforeSave hook
// runs for each): no save fails, and the new version is listed. Before
// it, a bad new binary is refused: the old process keeps serving and the
// list and the answer say why.
func TestReloadWhileSaving(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		dir := t.TempDir()
		path := installPlugin(t, filepath.Join(binDir, "testplugin"), dir)
		f := newFixture(t, e, dir, func(o *pluginhost.Options) { o.ReloadInterval = -1 })
		f.activate("finds", "labels")

		plugins := func() map[string]any {
			for _, p := range f.json("GET", "/digs/api/plugins", "", f.super, 200)["plugins"].([]any) {
				if p := p.(map[string]any); p["name"] == "testplug" {
					return p
				}
			}
			t.Fatal("testplug not listed")
			return nil
		}

		// A bad binary, its checksum recorded (it passed no install check).
		replaceBehindBack(t, brokenBinary(t), path, nil)
		if _, err := pluginhost.RecordChecksum(path); err != nil {
			t.Fatal(err)
		}
		rec := f.do("POST", "/digs/api/plugins/testplug/reload", "", f.super)
		if rec.Code != http.StatusBadGateway || !strings.Contains(rec.Body.String(), `"code":"plugin_reload_failed"`) ||
			!strings.Contains(rec.Body.String(), "version") {
			t.Fatalf("bad reload: %d %s", rec.Code, rec.Body.String())
		}
		p := plugins()
		if p["version"] != "1.2.3" || p["state"] != "running" || p["reload_error_code"] != "plugin_invalid_manifest" ||
			!strings.Contains(fmt.Sprint(p["reload_error"]), `version ""`) {
			t.Fatalf("after a bad reload: %v", p)
		}
		if !strings.Contains(f.logs.String(), "plugin reload failed") {
			t.Fatalf("no error logged: %s", f.logs.String())
		}
		f.json("POST", "/digs/api/record/finds", `{"core":{"code":"B1","label":"abc"}}`, f.writer, 200)
		if code := f.do("POST", "/digs/api/plugins/testplug/reload", "", f.writer).Code; code != http.StatusForbidden {
			t.Fatalf("reload by a writer: %d", code)
		}

		// The good new version, while a writer saves.
		var saved, failed atomic.Int64
		var firstFailure atomic.Value
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				rec := f.do("POST", "/digs/api/record/finds", fmt.Sprintf(`{"core":{"code":"S%d","label":"abc"}}`, i), f.writer)
				if rec.Code == http.StatusOK {
					saved.Add(1)
				} else {
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, fmt.Sprintf("%d %s", rec.Code, rec.Body.String()))
				}
			}
		}()
		waitFor(t, "saves before the reload", func() bool { return saved.Load() >= 5 })
		installPlugin(t, v2Binary(t), dir)
		body := f.json("POST", "/digs/api/plugins/testplug/reload", "", f.super, 200)
		if body["code"] != "plugin_reloaded" || body["plugin"].(map[string]any)["version"] != "2.0.0" {
			t.Fatalf("reload: %v", body)
		}
		after := saved.Load()
		waitFor(t, "saves after the reload", func() bool { return saved.Load() >= after+10 })
		close(stop)
		<-done
		if n := failed.Load(); n > 0 {
			t.Fatalf("%d saves failed during the reload, the first: %v", n, firstFailure.Load())
		}
		p = plugins()
		if p["version"] != "2.0.0" || p["state"] != "running" || p["reload_error"] != nil {
			t.Fatalf("after the reload: %v", p)
		}
		// Routes are mounted at start: a dropped one is gone, one whose
		// access changed is not served under the old gate, a new one
		// waits for the restart, as restart_needed says.
		for _, c := range []struct {
			path, code string
			status     int
		}{
			{"/digs/api/testplug/teapot", "plugin_route_gone", 404},
			{"/digs/api/testplug/public", "plugin_restart_needed", 503},
		} {
			if status, code := f.code("GET", c.path, "", f.reader); status != c.status || code != c.code {
				t.Errorf("GET %s: %d %s, want %d %s", c.path, status, code, c.status, c.code)
			}
		}
		if rn := fmt.Sprint(p["restart_needed"]); !strings.Contains(rn, "new route GET /testplug/v2only") ||
			!strings.Contains(rn, "route GET /testplug/public changed access") {
			t.Errorf("restart_needed: %q", rn)
		}
		f.json("GET", "/digs/api/testplug/echo/7", "", f.reader, 200) // unchanged routes serve
		// The new manifest's operator resolves.
		list := f.json("POST", "/digs/api/records/finds", `{"filter":{"id":{"_v2_ids":[1]}}}`, f.reader, 200)
		if n := len(list["data"].([]any)); n != 1 {
			t.Fatalf("_v2_ids: %v", list)
		}
	})
}

// An executable changed behind the server's back (bytes appended) is not
// started: at start, and at the restart after a crash, with the code
// plugin_checksum_mismatch in the list, until it is installed again.
func TestChecksumMismatchRefused(t *testing.T) {
	t.Parallel()
	src := filepath.Join(binDir, "testplugin")
	t.Run("start", func(t *testing.T) {
		dir := t.TempDir()
		path := installPlugin(t, src, dir)
		replaceBehindBack(t, path, path, []byte("tampered"))
		logs := &syncBuffer{}
		m := startManager(t, fastOptions(dir, nil, slog.New(slog.NewTextHandler(logs, nil))))
		if m.PID("testplug") != 0 {
			t.Fatal("a tampered executable was started")
		}
		in, err := m.Describe("testplug")
		if err == nil {
			t.Fatalf("tampered plugin loaded: %+v", in)
		}
		list := m.List()
		if len(list) != 1 || list[0].State != pluginhost.StateRefused || list[0].ErrorCode != "plugin_checksum_mismatch" || list[0].File != "testplug" {
			t.Fatalf("list: %+v", list)
		}
		if !strings.Contains(logs.String(), "plugin_checksum_mismatch") {
			t.Fatalf("not logged: %s", logs.String())
		}
	})
	t.Run("restart", func(t *testing.T) {
		dir := t.TempDir()
		path := installPlugin(t, src, dir)
		opts := fastOptions(dir, nil, slog.New(slog.NewTextHandler(&syncBuffer{}, nil)))
		opts.ReloadInterval = -1
		m := startManager(t, opts)
		pid := m.PID("testplug")
		replaceBehindBack(t, path, path, []byte("tampered"))
		if err := killPID(pid); err != nil {
			t.Fatal(err)
		}
		waitGone(t, m, "testplug", pid)
		waitFor(t, "the restart to be refused", func() bool {
			in, _ := m.Describe("testplug")
			return in.ErrorCode == "plugin_checksum_mismatch"
		})
		if m.PID("testplug") != 0 {
			t.Fatal("the tampered executable runs")
		}
		_, err := m.Reload(context.Background(), "testplug")
		if errs.CodeOf(err) != "plugin_checksum_mismatch" {
			t.Fatalf("reload of the tampered executable: %v", err)
		}
		installPlugin(t, src, dir) // installed again: trusted
		if _, err := m.Enable(context.Background(), "testplug"); err != nil {
			t.Fatalf("enable after reinstall: %v", err)
		}
		in, _ := m.Describe("testplug")
		if in.State != pluginhost.StateRunning || in.ErrorCode != "" {
			t.Fatalf("after reinstall: %+v", in)
		}
	})
}

// A plugin needing a newer server protocol is refused, in words; the
// others load.
func TestMinServerProtocol(t *testing.T) {
	t.Parallel()
	want := fmt.Sprintf("plugin needsnew needs server protocol %d; this server speaks %d", pluginsdk.ProtocolVersion+1, pluginsdk.ProtocolVersion)
	dir := pluginDir(t, "needsnew", "testplug")
	logs := &syncBuffer{}
	m := startManager(t, fastOptions(dir, nil, slog.New(slog.NewTextHandler(logs, nil))))
	var refused *pluginhost.Info
	for _, in := range m.List() {
		if in.Name == "needsnew" {
			refused = &in
		}
	}
	if refused == nil || refused.State != pluginhost.StateRefused || refused.ErrorCode != "plugin_protocol_unsupported" || refused.LastError != want {
		t.Fatalf("needsnew: %+v", refused)
	}
	if !strings.Contains(logs.String(), want) {
		t.Fatalf("not logged: %s", logs.String())
	}
	if m.PID("testplug") == 0 {
		t.Fatal("testplug not loaded")
	}
	_, _, _, err := pluginhost.Install(context.Background(), filepath.Join(dir, "needsnew"), t.TempDir())
	if errs.CodeOf(err) != "plugin_protocol_unsupported" || !strings.Contains(err.Error(), want) {
		t.Fatalf("install: %v", err)
	}
}

// Install refuses what is not a plugin, and a plugin whose manifest is
// invalid, and places nothing.
func TestInstallRefuses(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hello\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file, code string
	}{
		{script, "not_a_plugin"},
		{brokenBinary(t), "plugin_invalid_manifest"},
	} {
		dir := t.TempDir()
		_, _, _, err := pluginhost.Install(context.Background(), c.file, dir)
		if errs.CodeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", c.file, err, c.code)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s: the plugin folder has %v", c.file, entries)
		}
	}
}
