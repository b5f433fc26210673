package pluginhost_test

import (
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestPluginCallStats: every call the host makes to a real plugin process
// is counted and timed, for the metrics (strata_plugin_calls_total and
// strata_plugin_call_seconds_total).
func TestPluginCallStats(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		f := newFixture(t, e, pluginDir(t, "testplug"), nil)
		f.activate("finds", "labels")
		before := f.mgr.PluginStats()
		if len(before) != 1 || before[0].Name != "testplug" {
			t.Fatalf("stats: %+v", before)
		}
		if status, code := f.code("POST", "/digs/api/record/finds", `{"core":{"label":"x"}}`, f.writer); status != 200 {
			t.Fatalf("save: %d %s", status, code)
		}
		after := f.mgr.PluginStats()[0]
		if after.Calls <= before[0].Calls || after.Seconds <= before[0].Seconds {
			t.Fatalf("a save through the plugin's hooks was not counted: before %+v, after %+v", before[0], after)
		}
		if after.Errors != 0 {
			t.Fatalf("errors counted on a good save: %+v", after)
		}
	})
}
