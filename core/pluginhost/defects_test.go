package pluginhost_test

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestPluginDownMessages: with its plugin down, a read (a GET route, a
// list filtered by the plugin's operator) answers 503 plugin_unavailable
// saying the plugin is not running, without talking about saving; a save
// the plugin must check still says nothing was saved.
func TestPluginDownMessages(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), func(o *pluginhost.Options) { o.MinBackoff, o.MaxBackoff = time.Minute, time.Minute })
		f.activate("finds", "labels")
		f.activate("finds", "samples")
		if err := syscall.Kill(f.mgr.PID("testplug"), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitState(t, f.mgr, "testplug", pluginhost.StateRestarting)
		message := func(method, url, body, token string) string {
			t.Helper()
			rec := f.do(method, url, body, token)
			var m map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &m)
			if rec.Code != 503 || m["code"] != "plugin_unavailable" {
				t.Errorf("%s %s: %d %s, want 503 plugin_unavailable", method, url, rec.Code, rec.Body)
			}
			msg, _ := m["message"].(string)
			return msg
		}
		for _, c := range []struct{ method, url string }{
			{"GET", "/digs/api/testplug/echo/1"},
			{"GET", "/digs/api/testplug/stats"},
			{"GET", "/digs/api/records/finds?filter[label][_label_len]=3"},
		} {
			msg := message(c.method, c.url, "", f.reader)
			if strings.Contains(msg, "sav") || !strings.Contains(msg, "not running") {
				t.Errorf("%s %s: message %q must say the plugin is not running, and nothing of saving", c.method, c.url, msg)
			}
		}
		if msg := message("POST", "/digs/api/record/finds", `{"core":{"code":"F1","label":"a"}}`, f.writer); !strings.Contains(msg, "nothing was saved") {
			t.Errorf("save refused: message %q must say nothing was saved", msg)
		}
	})
}

// TestPluginFilterTimeout: a plugin filter operator that does not answer
// in time is 504 plugin_timeout, as for a plugin route (and the docs).
func TestPluginFilterTimeout(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), func(o *pluginhost.Options) { o.CallTimeout = 300 * time.Millisecond })
		rec := f.do("GET", "/digs/api/records/finds?filter[id][_slow_ids]=1", "", f.reader)
		var m map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &m)
		if rec.Code != 504 || m["code"] != "plugin_timeout" {
			t.Errorf("slow filter: %d %s, want 504 plugin_timeout", rec.Code, rec.Body)
		}
	})
}
