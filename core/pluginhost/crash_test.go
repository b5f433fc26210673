package pluginhost_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// The plugin process is SIGKILLed while saves run: saves on its required
// feature answer 503 with nothing (not even part of a record) written,
// the server keeps serving, and after the supervisor restarts the plugin
// saves work again.
func TestPluginKilledMidRun(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		// A second's backoff leaves time to see saves refused while down.
		f := newFixture(t, e, pluginDir(t, "testplug"), func(o *pluginhost.Options) { o.MinBackoff, o.MaxBackoff = time.Second, time.Second })
		f.activate("finds", "labels")
		f.activate("finds", "samples")
		save := func(i int) (int, string) {
			return f.code("POST", "/digs/api/record/finds", fmt.Sprintf(`{"core":{"code":"F%d","label":"l%d"},
				"plugins":{"finds_samples":[{"fields":{"code":"s%d","weight":1}}]}}`, i, i, i), f.writer)
		}
		if status, _ := save(0); status != 200 {
			t.Fatalf("first save: %d", status)
		}
		firstPID := f.mgr.PID("testplug")

		// Writers keep saving while the process is killed.
		var ok, unavailable, other atomic.Int64
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					switch status, code := save(1000*(w+1) + i); {
					case status == 200:
						ok.Add(1)
					case status == 503 && code == "plugin_unavailable":
						unavailable.Add(1)
					default:
						other.Add(1)
						t.Errorf("save during the crash: %d %s", status, code)
					}
				}
			}()
		}
		time.Sleep(100 * time.Millisecond)
		if err := killPID(firstPID); err != nil {
			t.Fatal(err)
		}
		waitState(t, f.mgr, "testplug", pluginhost.StateRestarting)
		// The writers stop (a save whose hook answered before the kill may
		// still commit); then saves fail fast while down, nothing written.
		for deadline := time.Now().Add(5 * time.Second); unavailable.Load() == 0 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		close(stop)
		wg.Wait()
		before := f.count("finds")
		for i := range 5 {
			if status, code := save(9000 + i); status != 503 || code != "plugin_unavailable" {
				t.Errorf("save while down: %d %s", status, code)
			}
		}
		if n := f.count("finds"); n != before {
			t.Errorf("saves refused while down wrote %d rows", n-before)
		}
		waitState(t, f.mgr, "testplug", pluginhost.StateRunning)
		if unavailable.Load() == 0 || ok.Load() < 2 {
			t.Errorf("during the crash: %d saved, %d refused, %d other", ok.Load(), unavailable.Load(), other.Load())
		}
		// Every record that was written is whole: the required feature's
		// computed column and its child row; as many as the 201s. (The
		// child feature's hook is optional: a save it missed while the
		// process died went on without its computed value, as designed.)
		var finds, complete, samples int
		db := f.app.DB
		ctx := context.Background()
		if err := db.QueryRow(ctx, `SELECT COUNT(*), COUNT(year) FROM `+db.Qualify("finds")).Scan(&finds, &complete); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Qualify("finds_samples")+` s JOIN `+db.Qualify("finds")+
			` f ON f.id = s.id_link AND s.code = 's' || substr(f.code, 2)`).Scan(&samples); err != nil {
			t.Fatal(err)
		}
		if want := int(ok.Load()) + 1; finds != want || complete != want || samples != want || f.count("finds_samples") != want {
			t.Errorf("%d saves answered 200; rows: %d finds, %d with year, %d samples", want, finds, complete, samples)
		}

		// Restarted: a new process, saves work, the state says so.
		if pid := f.mgr.PID("testplug"); pid == 0 || pid == firstPID {
			t.Errorf("pid after restart: %d (was %d)", pid, firstPID)
		}
		if status, _ := save(5); status != 200 {
			t.Errorf("save after the restart: %d", status)
		}
		in, _ := f.mgr.Describe("testplug")
		if in.Restarts < 1 || in.State != pluginhost.StateRunning || in.LastError == "" {
			t.Errorf("after the restart: %+v", in)
		}
	})
}

// After MaxCrashes exits within the window the plugin is disabled until a
// super admin re-enables it.
func TestCircuitBreaker(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), func(o *pluginhost.Options) {
			o.MaxCrashes, o.CrashWindow, o.MinBackoff = 3, time.Minute, 20*time.Millisecond
		})
		f.activate("finds", "labels")
		for range 3 {
			waitState(t, f.mgr, "testplug", pluginhost.StateRunning)
			pid := f.mgr.PID("testplug")
			if err := killPID(pid); err != nil {
				t.Fatal(err)
			}
			waitGone(t, f.mgr, "testplug", pid)
		}
		waitState(t, f.mgr, "testplug", pluginhost.StateDisabled)
		time.Sleep(200 * time.Millisecond) // well past the backoff: no restart
		if s := f.mgr.State("testplug"); s != pluginhost.StateDisabled {
			t.Fatalf("state %s", s)
		}
		if p := f.json("GET", "/digs/api/plugins", "", f.super, 200)["plugins"].([]any)[0].(map[string]any); p["state"] != "disabled" || p["restarts"] != float64(2) {
			t.Errorf("GET /plugins: %v", p)
		}
		// A plugin waiting for an administrator makes the server not ready.
		if r := f.json("GET", "/readyz", "", "", 503); r["code"] != "not_ready" ||
			fmt.Sprint(r["checks"].(map[string]any)["plugins"].(map[string]any)["not_running"]) != "[testplug]" {
			t.Errorf("/readyz: %v", r)
		}
		if p := f.json("GET", "/api/info", "", "", 200)["plugins"].([]any)[0].(map[string]any); p["state"] != "disabled" {
			t.Errorf("/api/info: %v", p)
		}
		if status, code := f.code("POST", "/digs/api/record/finds", `{"core":{"label":"x"}}`, f.writer); status != 503 || code != "plugin_unavailable" {
			t.Errorf("save while disabled: %d %s", status, code)
		}
		if status, code := f.code("POST", "/digs/api/plugins/testplug/enable", "", f.writer); status != 403 || code != "not_enough_privilege" {
			t.Errorf("enable as a writer: %d %s", status, code)
		}
		if status, code := f.code("POST", "/digs/api/plugins/nope/enable", "", f.super); status != 404 || code != "plugin_not_found" {
			t.Errorf("enable an unknown plugin: %d %s", status, code)
		}
		body := f.json("POST", "/digs/api/plugins/testplug/enable", "", f.super, 200)
		if body["code"] != "plugin_enabled" || body["plugin"].(map[string]any)["state"] != "running" {
			t.Errorf("enable: %v", body)
		}
		if status, _ := f.code("POST", "/digs/api/record/finds", `{"core":{"label":"x"}}`, f.writer); status != 200 {
			t.Errorf("save after enable: %d", status)
		}
		// Enabling a running plugin is harmless.
		f.json("POST", "/digs/api/plugins/testplug/enable", "", f.super, 200)
		// The count starts again: one more crash restarts it.
		pid := f.mgr.PID("testplug")
		if err := killPID(pid); err != nil {
			t.Fatal(err)
		}
		waitGone(t, f.mgr, "testplug", pid)
		waitState(t, f.mgr, "testplug", pluginhost.StateRunning)
	})
}
