package pluginhost_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// A plugin's log lines reach the server's log at their level, tagged with
// the plugin: pluginsdk.Logger's (hclog JSON on stderr), a plain stderr
// line before go-plugin serves (go-plugin alone logs it at debug: it must
// be info) and plain stderr and stdout lines once serving (go-plugin
// alone drops them).
func TestPluginLogsReachServerLog(t *testing.T) {
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := startManager(t, fastOptions(pluginDir(t, "chatty"), nil, log))
	want := []struct {
		msg, level, stream string
	}{
		{"chatty debug line", "DEBUG", ""},
		{"chatty info line", "INFO", ""},
		{"chatty warn line", "WARN", ""},
		{"chatty error line", "ERROR", ""},
		{"chatty plain line before serving", "INFO", "stderr"},
		{"chatty plain line while serving", "INFO", "stderr"},
		{"chatty stdout line while serving", "INFO", "stdout"},
	}
	find := func() (map[string]map[string]any, bool) {
		got := map[string]map[string]any{}
		for _, line := range strings.Split(logs.String(), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) != nil {
				continue
			}
			if msg, _ := rec["msg"].(string); strings.HasPrefix(msg, "chatty ") {
				got[msg] = rec
			}
		}
		return got, len(got) >= len(want)
	}
	// The lines written while serving come over go-plugin's stdio stream,
	// after Start returns.
	deadline := time.Now().Add(10 * time.Second)
	got, ok := find()
	for !ok && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		got, ok = find()
	}
	m.Stop()
	for _, w := range want {
		rec, ok := got[w.msg]
		if !ok {
			t.Errorf("%q is not in the server's log", w.msg)
			continue
		}
		if rec["level"] != w.level || rec["plugin"] != "chatty" {
			t.Errorf("%q: level %v plugin %v, want %s chatty", w.msg, rec["level"], rec["plugin"], w.level)
		}
		if w.stream != "" && rec["stream"] != w.stream {
			t.Errorf("%q: stream %v, want %s", w.msg, rec["stream"], w.stream)
		}
		if w.stream == "" && fmt.Sprint(rec["n"]) == "" {
			t.Errorf("%q: its field n is lost: %v", w.msg, rec)
		}
	}
	if t.Failed() {
		t.Logf("server log:\n%s", logs)
	}
}

// startForDebugger runs a plugin binary as a developer would under dlv
// (STRATA_PLUGIN_DEBUG=1) and returns the reattach value it prints.
func startForDebugger(t *testing.T, bin string) string {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = []string{pluginsdk.DebugEnv + "=1"}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	select {
	case line, ok := <-lines:
		value, found := strings.CutPrefix(line, pluginsdk.ReattachEnv+"='")
		if !ok || !found || !strings.HasSuffix(value, "'") {
			t.Fatalf("the plugin printed %q, not a reattach line; stderr:\n%s", line, stderr)
		}
		return strings.TrimSuffix(value, "'")
	case <-time.After(20 * time.Second):
		t.Fatalf("no reattach line; stderr:\n%s", stderr)
	}
	return ""
}

// A plugin started by hand for a debugger is attached to, not started:
// plugins/example run with STRATA_PLUGIN_DEBUG=1 prints its reattach
// config; a server given it (STRATA_PLUGIN_REATTACH) serves the plugin's
// route, hook and operator through that process, and leaves out the
// installed executable of the same name.
func TestPluginReattach(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		value := startForDebugger(t, exampleBinary(t))
		rc, err := pluginsdk.ParseReattach(value)
		if err != nil {
			t.Fatalf("parse %s: %v", value, err)
		}
		if rc["munsell"] == nil || !rc["munsell"].Test {
			t.Fatalf("reattach config: %+v", rc)
		}
		dir := t.TempDir()
		install(t, exampleBinary(t), filepath.Join(dir, "munsell")) // must not be started
		f := newFixture(t, e, dir, func(o *pluginhost.Options) { o.Reattach = rc })
		if in, err := f.mgr.Describe("munsell"); err != nil || in.State != pluginhost.StateRunning {
			t.Fatalf("reattached plugin: %+v %v\n%s", in, err, f.logs)
		}
		if pid := f.mgr.PID("munsell"); pid != 0 {
			t.Errorf("the server started the installed executable (pid %d)", pid)
		}
		parsed := f.json("GET", "/digs/api/munsell/parse?q=10yr+5/3", "", f.reader, 200)
		if parsed["notation"] != "10YR 5/3" {
			t.Errorf("route through the reattached process: %v", parsed)
		}
		f.activate("finds", "munsell")
		rec := f.json("POST", "/digs/api/record/finds", `{"core":{"code":"a","munsell_colour":"10yr5/3"}}`, f.writer, 200)
		got := f.json("GET", fmt.Sprintf("/digs/api/record/finds/%v", rec["id"]), "", f.reader, 200)
		if core(got, "munsell_colour") != "10YR 5/3" {
			t.Errorf("BeforeSave through the reattached process: %v", core(got, "munsell_colour"))
		}
		if !strings.Contains(f.logs.String(), "attached to a running process") {
			t.Errorf("the server's log does not say the plugin is reattached:\n%s", f.logs)
		}
	})
}

// A bad STRATA_PLUGIN_REATTACH is refused with the plugin named.
func TestParseReattachErrors(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{`[]`, "not a JSON object"},
		{`{"x":{"Protocol":"grpc","Pid":1,"Addr":{"Network":"pipe","String":"/tmp/s"}}}`, `plugin "x": network "pipe"`},
		{`{"x":{"Protocol":"grpc","Addr":{"Network":"unix","String":"/tmp/s"}}}`, `plugin "x": no Pid`},
		{`{"x":{"Protocol":"netrpc","Pid":1,"Addr":{"Network":"unix","String":"/tmp/s"}}}`, `protocol "netrpc"`},
		{`{"x":{"Protocol":"grpc","Pid":1,"Addr":{"Network":"unix","String":""}}}`, "no address"},
		{`{"":{"Protocol":"grpc","Pid":1,"Addr":{"Network":"unix","String":"/tmp/s"}}}`, "no plugin name"},
	} {
		_, err := pluginsdk.ParseReattach(tc.value)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.value, err, tc.want)
		}
	}
	if rc, err := pluginsdk.ParseReattach(""); err != nil || rc != nil {
		t.Errorf("empty: %v %v", rc, err)
	}
}
