package pluginhost_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// A batch runs the features' hooks as single saves do, batched: BeforeSave
// computes and refuses before the transaction, AfterSave runs once per
// feature after the commit, and never for a batch that was refused.
func TestBatchRunsHooks(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), func(o *pluginhost.Options) {
			o.MinBackoff, o.MaxBackoff = time.Minute, time.Minute // stays down once dead
		})
		f.activate("finds", "labels")
		f.activate("finds", "samples")
		afterSaves := func() float64 {
			return f.json("GET", "/digs/api/testplug/stats", "", f.reader, 200)["after_save"].(float64)
		}
		body := f.json("POST", "/digs/api/batch", `{"requests":[
			{"method":"POST","url":"/record/finds","body":{"core":{"code":"F1","label":"abc","year":999}}},
			{"method":"POST","url":"/record/plain","body":{"code":"P1","label":"abc"}},
			{"method":"POST","url":"/record/finds","body":{"code":"F2","label":"de","plugins":{"finds_samples":[{"fields":{"code":"s1","weight":1.5}}]}}}]}`,
			f.writer, 200)
		res := body["results"].([]any)
		id1, id2 := fmt.Sprint(res[0].(map[string]any)["id"]), fmt.Sprint(res[2].(map[string]any)["id"])
		rec := f.json("GET", "/digs/api/record/finds/"+id1, "", f.reader, 200)
		if core(rec, "label") != "ABC" || core(rec, "year") != float64(3) {
			t.Errorf("computed in a batch: label %v year %v", core(rec, "label"), core(rec, "year"))
		}
		rec = f.json("GET", "/digs/api/record/finds/"+id2, "", f.reader, 200)
		samples := rec["plugins"].(map[string]any)["finds_samples"].(map[string]any)["data"].([]any)
		if core(rec, "label") != "DE" || len(samples) != 1 || samples[0].(map[string]any)["double_weight"].(map[string]any)["val"] != float64(3) {
			t.Errorf("second row: label %v samples %v", core(rec, "label"), samples)
		}
		if got := core(f.json("GET", "/digs/api/record/plain/1", "", f.reader, 200), "label"); got != "abc" {
			t.Errorf("a table without the feature was hooked: %v", got)
		}
		// One AfterSave call for the two finds (one feature with AfterSave).
		if n := afterSaves(); n != 1 {
			t.Errorf("after_save calls after one batch: %v", n)
		}

		// The plugin refuses a row: its index and path are named, nothing
		// is written and no AfterSave runs.
		rec400 := f.do("POST", "/digs/api/batch", `{"requests":[
			{"method":"POST","url":"/record/finds","body":{"code":"F3","label":"ok"}},
			{"method":"POST","url":"/record/finds/`+id1+`","body":{"label":"bad"}}]}`, f.writer)
		if got := rec400.Body.String(); rec400.Code != 400 || !strings.Contains(got, `"index":1,"field":"label"`) ||
			!strings.Contains(got, `"path":"label[0]"`) || !strings.Contains(got, "validation_failed") {
			t.Errorf("plugin field error in a batch: %d %s", rec400.Code, got)
		}
		// A request refused inside the transaction (after the hooks ran):
		// rolled back, and AfterSave is not told.
		if status, code := f.code("POST", "/digs/api/batch", `{"requests":[
			{"method":"POST","url":"/record/finds","body":{"code":"F4","label":"ok"}},
			{"method":"DELETE","url":"/record/finds/9999"}]}`, f.writer); status != 404 || code != "record_not_found" {
			t.Errorf("missing record in a batch: %d %s", status, code)
		}
		if n := f.count("finds"); n != 2 {
			t.Errorf("finds after refused batches: %d", n)
		}
		if got := core(f.json("GET", "/digs/api/record/finds/"+id1, "", f.reader, 200), "label"); got != "ABC" {
			t.Errorf("a refused batch changed the record: %v", got)
		}
		if n := afterSaves(); n != 1 {
			t.Errorf("after_save calls after refused batches: %v", n)
		}

		// The required plugin dies during the batch's hook call, then stays
		// down: 503, nothing written; rows that do not need it still go.
		if status, code := f.code("POST", "/digs/api/batch", `{"requests":[
			{"method":"POST","url":"/record/plain","body":{"code":"P2"}},
			{"method":"POST","url":"/record/finds","body":{"code":"F5","label":"crash"}}]}`, f.writer); status != 503 || code != "plugin_unavailable" {
			t.Errorf("dying hook in a batch: %d %s", status, code)
		}
		waitState(t, f.mgr, "testplug", pluginhost.StateRestarting)
		m := f.json("POST", "/digs/api/batch", `{"requests":[
			{"method":"POST","url":"/record/finds","body":{"code":"F6"}},
			{"method":"POST","url":"/record/finds","body":{"code":"F7","label":"x"}}]}`, f.writer, 503)
		if m["code"] != "plugin_unavailable" || m["index"] != float64(1) {
			t.Errorf("plugin down: %v", m)
		}
		if n, p := f.count("finds"), f.count("plain"); n != 2 || p != 1 {
			t.Errorf("rows after refused batches: %d finds, %d plain", n, p)
		}
		f.json("POST", "/digs/api/batch", `{"create":{"finds":[{"code":"F8"}],"plain":[{"code":"P3"}]}}`, f.writer, 200)
		if n := f.count("finds"); n != 3 {
			t.Errorf("a batch without the feature's columns while the plugin is down: %d finds", n)
		}
	})
}
