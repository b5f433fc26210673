package pluginhost_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func listColumns(body map[string]any) []string {
	var out []string
	for _, f := range body["fields"].([]any) {
		out = append(out, f.(map[string]any)["name"].(string))
	}
	return out
}

func schemaFields(rec map[string]any) []string {
	var out []string
	for _, f := range rec["schema"].(map[string]any)["fields"].([]any) {
		out = append(out, f.(map[string]any)["name"].(string))
	}
	return out
}

// Activation through HTTP; the hook computes its column; the section and
// the schema flag show in the full record; deactivation hides columns,
// data and section (CONTRACT §8) and reactivation brings them back.
func TestActivationHooksSectionsAndFlags(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), nil)
		const cfg = "/digs/api/config/table/"
		for _, c := range []struct {
			method, url, token string
			status             int
			code               string
		}{
			{"POST", cfg + "finds/labels", f.writer, 403, "not_enough_privilege"},
			{"POST", cfg + "finds/nothing", f.super, 404, "feature_not_found"},
			{"POST", cfg + "nowhere/labels", f.super, 404, "table_not_found"},
			{"POST", cfg + "finds/chronology", f.super, 503, "plugin_unavailable"}, // first-party, not installed
			{"DELETE", cfg + "finds/labels", f.super, 404, "feature_not_active"},
			{"POST", cfg + "finds/labels", f.super, 200, "testplug_activated"},
			{"POST", cfg + "finds/label-set", f.super, 200, "testplug_activated"}, // alias, idempotent
			{"POST", cfg + "finds/samples", f.super, 200, "testplug_activated"},
		} {
			if status, code := f.code(c.method, c.url, "", c.token); status != c.status || code != c.code {
				t.Errorf("%s %s: %d %s, want %d %s", c.method, c.url, status, code, c.status, c.code)
			}
		}

		// The plugin computes year (the client's value is ignored) and
		// normalises the label; the child feature's hook computes too.
		body := f.json("POST", "/digs/api/record/finds", `{"core":{"code":"F1","label":"abc","year":999},
			"plugins":{"finds_samples":[{"fields":{"code":"s1","weight":1.5}}]}}`, f.writer, 200)
		id := fmt.Sprint(body["id"])
		rec := f.json("GET", "/digs/api/record/finds/"+id, "", f.reader, 200)
		if core(rec, "label") != "ABC" || core(rec, "year") != float64(3) {
			t.Errorf("computed: label %v year %v", core(rec, "label"), core(rec, "year"))
		}
		samples := rec["plugins"].(map[string]any)["finds_samples"].(map[string]any)["data"].([]any)
		if len(samples) != 1 || samples[0].(map[string]any)["double_weight"].(map[string]any)["val"] != float64(3) {
			t.Errorf("child hook: %v", samples)
		}
		info, _ := rec["label_info"].(map[string]any)
		if info["note"] != "from testplug" || info["table"] != "finds" || fmt.Sprint(info["id"]) != id {
			t.Errorf("section: %v", rec["label_info"])
		}
		if rec["schema"].(map[string]any)["has_labels"] != true || !slices.Contains(schemaFields(rec), "label") {
			t.Errorf("schema: %v", rec["schema"])
		}
		// The plugin's field errors refuse the save, with the path inside.
		rec400 := f.do("POST", "/digs/api/record/finds/"+id, `{"core":{"label":"bad","code":"changed"}}`, f.writer)
		if rec400.Code != 400 || !strings.Contains(rec400.Body.String(), `"path":"label[0]"`) ||
			!strings.Contains(rec400.Body.String(), "validation_failed") {
			t.Errorf("plugin field error: %d %s", rec400.Code, rec400.Body)
		}
		if got := core(f.json("GET", "/digs/api/record/finds/"+id, "", f.reader, 200), "code"); got != "F1" {
			t.Errorf("a refused save wrote: %v", got)
		}
		// AfterSave ran once for the save that went through (one per feature touched).
		if stats := f.json("GET", "/digs/api/testplug/stats", "", f.reader, 200); stats["after_save"] != float64(1) {
			t.Errorf("after_save calls: %v", stats["after_save"])
		}
		list := f.json("GET", "/digs/api/records/finds", "", f.reader, 200)
		if !slices.Contains(listColumns(list), "label") {
			t.Errorf("list columns: %v", listColumns(list))
		}
		plugins := f.json("GET", "/digs/api/plugins", "", f.super, 200)["plugins"].([]any)
		active := plugins[0].(map[string]any)["active_tables"].(map[string]any)
		if len(plugins) != 1 || fmt.Sprint(active["labels"]) != "[finds]" || fmt.Sprint(active["samples"]) != "[finds]" {
			t.Errorf("GET /plugins: %v", plugins)
		}

		// Deactivation: kept, hidden, not writable.
		if status, code := f.code("DELETE", cfg+"finds/labels", "", f.super); status != 200 || code != "testplug_deactivated" {
			t.Fatalf("deactivate: %d %s", status, code)
		}
		f.code("DELETE", cfg+"finds/samples", "", f.super)
		list = f.json("GET", "/digs/api/records/finds", "", f.reader, 200)
		if cols := listColumns(list); slices.Contains(cols, "label") || slices.Contains(cols, "year") {
			t.Errorf("inactive columns listed: %v", cols)
		}
		rec = f.json("GET", "/digs/api/record/finds/"+id, "", f.reader, 200)
		if core(rec, "label") != nil || slices.Contains(schemaFields(rec), "label") || rec["label_info"] != nil ||
			rec["schema"].(map[string]any)["has_labels"] != nil || rec["plugins"].(map[string]any)["finds_samples"] != nil {
			t.Errorf("inactive feature shows in the full record: %v", rec)
		}
		if status, code := f.code("POST", "/digs/api/record/finds/"+id, `{"core":{"label":"x"}}`, f.writer); status != 400 || code != "invalid_field" {
			t.Errorf("write to an inactive column: %d %s", status, code)
		}
		if status, code := f.code("POST", "/digs/api/record/finds/"+id, `{"core":{},"plugins":{"finds_samples":[{"fields":{"code":"s2"}}]}}`, f.writer); status != 400 || code != "invalid_field" {
			t.Errorf("write to an inactive child table: %d %s", status, code)
		}
		// Saves without the feature call no plugin and need none.
		f.json("POST", "/digs/api/record/finds", `{"core":{"code":"F2"}}`, f.writer, 200)

		// Reactivation: the old data is back.
		f.activate("finds", "labels")
		f.activate("finds", "samples")
		rec = f.json("GET", "/digs/api/record/finds/"+id, "", f.reader, 200)
		samples = rec["plugins"].(map[string]any)["finds_samples"].(map[string]any)["data"].([]any)
		if core(rec, "label") != "ABC" || core(rec, "year") != float64(3) || len(samples) != 1 || rec["label_info"] == nil {
			t.Errorf("after reactivation: %v", rec)
		}
	})
}

// A required hook whose plugin is down, slow, or dies during the call
// refuses the save with 503 and nothing is written.
func TestRequiredHookDownRefusesSaves(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), func(o *pluginhost.Options) {
			o.HookTimeout = 500 * time.Millisecond
			o.MinBackoff, o.MaxBackoff = time.Minute, time.Minute // stays down once killed
		})
		f.activate("finds", "labels")
		f.activate("finds", "samples")
		f.json("POST", "/digs/api/record/finds", `{"core":{"code":"F1","label":"a"}}`, f.writer, 200)
		start := time.Now()
		if status, code := f.code("POST", "/digs/api/record/finds", `{"core":{"code":"F2","label":"slow"}}`, f.writer); status != 503 || code != "plugin_unavailable" {
			t.Errorf("slow hook: %d %s", status, code)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("the hook deadline did not hold: %v", took)
		}
		if n := f.count("finds"); n != 1 {
			t.Errorf("rows after a timed-out hook: %d", n)
		}
		// The process dies in the middle of the hook call.
		if status, code := f.code("POST", "/digs/api/record/finds", `{"core":{"code":"F3","label":"crash"},
			"plugins":{"finds_samples":[{"fields":{"code":"s1","weight":2}}]}}`, f.writer); status != 503 || code != "plugin_unavailable" {
			t.Errorf("dying hook: %d %s", status, code)
		}
		if n, m := f.count("finds"), f.count("finds_samples"); n != 1 || m != 0 {
			t.Errorf("rows after a hook died: %d finds, %d samples", n, m)
		}
		waitState(t, f.mgr, "testplug", pluginhost.StateRestarting)
		if status, code := f.code("POST", "/digs/api/record/finds", `{"core":{"code":"F4","label":"b"}}`, f.writer); status != 503 || code != "plugin_unavailable" {
			t.Errorf("plugin down: %d %s", status, code)
		}
		// Updates that do not touch the feature's columns go on, and the
		// full record still reads (its section is null).
		f.json("POST", "/digs/api/record/finds/1", `{"core":{"code":"F1b"}}`, f.writer, 200)
		rec := f.json("GET", "/digs/api/record/finds/1", "", f.reader, 200)
		if v, ok := rec["label_info"]; !ok || v != nil || core(rec, "code") != "F1b" {
			t.Errorf("read while down: %v", rec)
		}
		if n := f.count("finds"); n != 1 {
			t.Errorf("rows: %d", n)
		}
	})
}

// Plugin filter operators: a filter result, an id result through the
// Host service, only on tables with their feature, bad operands.
func TestFilterOperators(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), func(o *pluginhost.Options) { o.MinBackoff, o.MaxBackoff = time.Minute, time.Minute })
		f.activate("finds", "labels")
		for i, l := range []string{"a", "bb", "cc", "ddd"} {
			f.json("POST", "/digs/api/record/finds", fmt.Sprintf(`{"core":{"code":"F%d","label":%q}}`, i, l), f.writer, 200)
		}
		f.json("POST", "/digs/api/record/other", `{"core":{"code":"O1","label":"bb"}}`, f.writer, 200)
		list := func(table, filter string) (int, []string) {
			rec := f.do("POST", "/digs/api/records/"+table, `{"filter":`+filter+`,"sort_field":"code"}`, f.reader)
			var codes []string
			if rec.Code == 200 {
				for _, r := range testenv.CheckEnvelope(t, rec)["data"].([]any) {
					codes = append(codes, r.(map[string]any)["code"].(string))
				}
			}
			return rec.Code, codes
		}
		for _, c := range []struct {
			table, filter string
			want          string
		}{
			{"finds", `{"label":{"_label_len":2}}`, "[F1 F2]"},
			{"finds", `{"label":{"_label_len":"3"}}`, "[F3]"},
			{"finds", `{"label":{"_label_pick":["BB","A"]}}`, "[F0 F1]"},
			{"finds", `{"_or":[{"label":{"_label_len":1}},{"code":{"_eq":"F3"}}]}`, "[F0 F3]"},
			{"finds", `{"id":{"_any_ids":[2,4,99]}}`, "[F1 F3]"},
			{"plain", `{"id":{"_any_ids":[]}}`, "[]"}, // no feature needed: any table
		} {
			if status, got := list(c.table, c.filter); status != 200 || fmt.Sprint(got) != c.want {
				t.Errorf("%s %s: %d %v, want %s", c.table, c.filter, status, got, c.want)
			}
		}
		for _, c := range []struct{ table, filter, code string }{
			{"other", `{"label":{"_label_len":2}}`, "invalid_filter"}, // a user field "label", no feature
			{"finds", `{"code":{"_label_len":2}}`, "invalid_filter"},  // not a field of the operator
			{"finds", `{"label":{"_label_len":"x"}}`, "invalid_filter"},
			{"finds", `{"label":{"_nope":1}}`, "invalid_filter"},
		} {
			rec := f.do("POST", "/digs/api/records/"+c.table, `{"filter":`+c.filter+`}`, f.reader)
			if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"code":"`+c.code+`"`) {
				t.Errorf("%s %s: %d %s", c.table, c.filter, rec.Code, rec.Body)
			}
		}
		f.code("DELETE", "/digs/api/config/table/finds/labels", "", f.super)
		if status, _ := list("finds", `{"label":{"_label_len":2}}`); status != 400 {
			t.Errorf("operator on a deactivated feature: %d", status)
		}
		f.activate("finds", "labels")
		// The plugin down: 503, not a wrong answer.
		if err := killPlugin(f.mgr, "testplug"); err != nil {
			t.Fatal(err)
		}
		waitState(t, f.mgr, "testplug", pluginhost.StateRestarting)
		rec := f.do("POST", "/digs/api/records/finds", `{"filter":{"label":{"_label_len":2}}}`, f.reader)
		if rec.Code != 503 || !strings.Contains(rec.Body.String(), "plugin_unavailable") {
			t.Errorf("operator while down: %d %s", rec.Code, rec.Body)
		}
		if status, got := list("finds", `{"code":{"_eq":"F0"}}`); status != 200 || fmt.Sprint(got) != "[F0]" {
			t.Errorf("built-in filter while the plugin is down: %d %v", status, got)
		}
	})
}

func killPlugin(m *pluginhost.Manager, name string) error {
	pid := m.PID(name)
	if pid == 0 {
		return fmt.Errorf("%s is not running", name)
	}
	return killPID(pid)
}

// The config helper's static routes are not shadowed by the activation
// route /config/table/:tb/:feature.
func TestActivationRouteDoesNotShadowConfigRoutes(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), nil)
		const cfg = "/digs/api/config/table/finds"
		for _, c := range []struct {
			method, url, body string
			status            int
			code              string
		}{
			{"GET", cfg + "/fields", "", 200, ""},
			{"POST", cfg + "/field", `{"name":"weight","label":"Weight","type":"text"}`, 200, "field_created"},
			{"GET", cfg + "/indexes", "", 200, ""},
			{"GET", cfg + "/validation", "", 200, ""},
			{"POST", cfg + "/fields/sort", `{"sort":["weight","code"]}`, 200, ""},
			{"POST", cfg + "/fields", "", 404, "feature_not_found"},
		} {
			if status, code := f.code(c.method, c.url, c.body, f.super); status != c.status || (c.code != "" && code != c.code) {
				t.Errorf("%s %s: %d %s, want %d %s", c.method, c.url, status, code, c.status, c.code)
			}
		}
	})
}
