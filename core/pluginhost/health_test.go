package pluginhost_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/ops"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// pidAlive reports whether process pid exists.
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// fastPings make the health check quick enough for tests.
func fastPings(o *pluginhost.Options) {
	o.PingInterval, o.PingTimeout = 50*time.Millisecond, 400*time.Millisecond
}

// A plugin whose process is alive but whose gRPC server answers nothing
// any more (the test plugin after POST /testplug/freeze) is found by the
// health check, killed and restarted like a crashed one: the call it was
// serving gets 503 plugin_unresponsive, a new process serves again, and
// the restart is counted under its reason.
func TestStuckPluginRestarted(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), fastPings)
		f.activate("finds", "labels")
		pid := f.mgr.PID("testplug")
		if body := f.json("POST", "/digs/api/testplug/freeze", "{}", f.writer, 200); int(body["pid"].(float64)) != pid {
			t.Fatalf("freeze answered from another process: %v (pid %d)", body, pid)
		}
		if !pidAlive(pid) {
			t.Fatal("the frozen process is gone")
		}

		// Calls made to the frozen process hang until the health check
		// kills it (the route's own timeout, 30 s, is far off), then say
		// why they failed.
		started := time.Now()
		type answer struct {
			status int
			code   string
		}
		echo := make(chan answer, 1)
		go func() {
			s, c := f.code("GET", "/digs/api/testplug/echo/1", "", f.reader)
			echo <- answer{s, c}
		}()
		saveStatus, saveCode := f.code("POST", "/digs/api/record/finds", `{"core":{"label":"x"}}`, f.writer)
		if saveStatus != 503 || (saveCode != "plugin_unresponsive" && saveCode != "plugin_unavailable") {
			t.Errorf("save while frozen: %d %s", saveStatus, saveCode)
		}
		select {
		case a := <-echo:
			if a.status != 503 || a.code != "plugin_unresponsive" {
				t.Errorf("route in flight when the process was killed: %d %s", a.status, a.code)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the call in flight was not ended by the health check")
		}
		if d := time.Since(started); d > 5*time.Second {
			t.Errorf("the stuck process was found after %s", d)
		}

		waitGone(t, f.mgr, "testplug", pid)
		waitState(t, f.mgr, "testplug", pluginhost.StateRunning)
		if newPID := f.mgr.PID("testplug"); newPID == 0 || newPID == pid {
			t.Fatalf("pid after the restart: %d (was %d)", newPID, pid)
		}
		for deadline := time.Now().Add(5 * time.Second); pidAlive(pid); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the stuck process %d still runs", pid)
			}
		}
		// It serves again: a route and a save through its required hook.
		if body := f.json("GET", "/digs/api/testplug/echo/2", "", f.reader, 200); body["route"] != "/testplug/echo/:id" {
			t.Errorf("echo after the restart: %v", body)
		}
		if status, code := f.code("POST", "/digs/api/record/finds", `{"core":{"label":"y"}}`, f.writer); status != 200 {
			t.Errorf("save after the restart: %d %s", status, code)
		}

		in, _ := f.mgr.Describe("testplug")
		if in.Restarts != 1 || in.RestartsByReason["unresponsive"] != 1 || len(in.RestartsByReason) != 1 ||
			!strings.Contains(in.LastError, "health check") {
			t.Errorf("after the restart: %+v", in)
		}
		p := f.json("GET", "/digs/api/plugins", "", f.super, 200)["plugins"].([]any)[0].(map[string]any)
		if by, _ := p["restarts_by_reason"].(map[string]any); by["unresponsive"] != float64(1) {
			t.Errorf("GET /plugins: %v", p)
		}
		if st := f.mgr.PluginStats()[0]; st.RestartsByReason["unresponsive"] != 1 {
			t.Errorf("stats: %+v", st)
		}
		rec := httptest.NewRecorder()
		ops.NewMetrics(nil, f.mgr).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		if want := `strata_plugin_restarts_by_reason_total{plugin="testplug",reason="unresponsive"} 1`; !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s:\n%s", want, rec.Body.String())
		}
		if logs := f.logs.String(); !strings.Contains(logs, "plugin unresponsive") || !strings.Contains(logs, "reason=unresponsive") {
			t.Errorf("logs: %s", logs)
		}
	})
}

// A plugin that is busy, even past its call's deadline, still answers its
// health check: it is not restarted; only a crash counts as "exited".
func TestBusyPluginNotRestarted(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), fastPings)
		pid := f.mgr.PID("testplug")
		// /testplug/slow sleeps 2 s against a 300 ms deadline.
		if status, code := f.code("GET", "/digs/api/testplug/slow", "", f.reader); status != 504 || code != "plugin_timeout" {
			t.Errorf("slow route: %d %s", status, code)
		}
		time.Sleep(time.Second) // past the ping timeout, while the handler still sleeps
		if got := f.mgr.PID("testplug"); got != pid {
			t.Fatalf("a busy plugin was restarted: pid %d, was %d", got, pid)
		}
		if err := killPID(pid); err != nil {
			t.Fatal(err)
		}
		waitGone(t, f.mgr, "testplug", pid)
		waitState(t, f.mgr, "testplug", pluginhost.StateRunning)
		if in, _ := f.mgr.Describe("testplug"); in.RestartsByReason["exited"] != 1 || in.RestartsByReason["unresponsive"] != 0 {
			t.Errorf("restarts by reason: %v", in.RestartsByReason)
		}
	})
}

// The stats that feed the metrics do not count the health check's pings.
func TestPingsNotCounted(t *testing.T) {
	f := newFixture(t, store.SQLite, pluginDir(t, "testplug"), fastPings)
	before := f.mgr.PluginStats()[0].Calls
	time.Sleep(300 * time.Millisecond) // several pings
	if after := f.mgr.PluginStats()[0].Calls; after != before {
		t.Errorf("calls went from %d to %d with no request", before, after)
	}
}

// Stopping the server does not hang on a wedged plugin (here with the
// health check off, so nothing killed it before): go-plugin's graceful
// shutdown would wait for it without end; the host kills it after a grace.
func TestStopWithFrozenPlugin(t *testing.T) {
	f := newFixture(t, store.SQLite, pluginDir(t, "testplug"), func(o *pluginhost.Options) { o.PingTimeout = -1 })
	pid := f.mgr.PID("testplug")
	f.json("POST", "/digs/api/testplug/freeze", "{}", f.writer, 200)
	stopped := make(chan struct{})
	go func() {
		f.mgr.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(15 * time.Second):
		t.Fatal("Stop hangs on a frozen plugin")
	}
	if pidAlive(pid) {
		t.Errorf("the frozen process %d outlived Stop", pid)
	}
}
