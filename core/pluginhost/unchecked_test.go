package pluginhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// markers lists the unchecked rows of testmarks as the super admin: total
// and record ids in order.
func (f *fixture) markers(query string) (float64, []int64, []map[string]any) {
	f.t.Helper()
	m := f.json(http.MethodGet, "/digs/api/plugins/testmarks/unchecked"+query, "", f.super, http.StatusOK)
	var ids []int64
	var items []map[string]any
	for _, it := range m["data"].([]any) {
		item := it.(map[string]any)
		ids = append(ids, int64(item["record_id"].(float64)))
		items = append(items, item)
	}
	return m["total"].(float64), ids, items
}

// created saves a new finds record and returns its id.
func (f *fixture) created(body string) int64 {
	f.t.Helper()
	m := f.json(http.MethodPost, "/digs/api/record/finds", body, f.writer, http.StatusOK)
	id, ok := m["id"].(float64)
	if !ok {
		f.t.Fatalf("save answered no id: %v", m)
	}
	return int64(id)
}

func (f *fixture) record(id int64) map[string]any {
	f.t.Helper()
	return f.json(http.MethodGet, fmt.Sprintf("/digs/api/record/finds/%d", id), "", f.super, http.StatusOK)
}

// A non-required BeforeSave feature whose plugin is down: saves go on, but
// each row they leave unchecked gets a marker (creates with their new id,
// batches too, a rolled-back batch none) and a warning naming app, plugin,
// table and record; the unchecked route lists them; once the plugin is
// back its revalidation job recomputes them as the system actor, reports
// the row the plugin refuses and clears the others' markers.
func TestUncheckedSavesRevalidated(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		// The restart waits long enough for the saves made while down.
		f := newFixtureWith(t, e, pluginDir(t, "testmarks"), func(o *pluginhost.Options) { o.MinBackoff, o.MaxBackoff = 4*time.Second, 4*time.Second }, true)
		f.activate("finds", "marks")
		checked := f.created(`{"core":{"code":"C0","mark":"Ok"}}`)
		if got := core(f.record(checked), "mark_len"); fmt.Sprint(got) != "2" {
			t.Fatalf("a checked save: mark_len %v", got)
		}
		plain := f.created(`{"core":{"code":"P0"}}`) // sends no mark: no hook, no marker

		pid := f.mgr.PID("testmarks")
		if err := killPID(pid); err != nil {
			t.Fatal(err)
		}
		waitGone(t, f.mgr, "testmarks", pid)
		if st := f.mgr.State("testmarks"); st == pluginhost.StateRunning {
			t.Fatalf("plugin state after the kill: %s", st)
		}
		// While down: two creates, an update, a committed batch and one
		// rolled back by its invalid second row.
		a := f.created(`{"core":{"code":"A","mark":"Abc"}}`)
		b := f.created(`{"core":{"code":"B","mark":"bad"}}`)
		f.json(http.MethodPost, fmt.Sprintf("/digs/api/record/finds/%d", checked), `{"core":{"mark":"Hello"}}`, f.writer, http.StatusOK)
		if status, code := f.code(http.MethodPost, "/digs/api/batch",
			`{"create":{"finds":[{"code":"R1","mark":"Rolled"},{"code":"R2","nope":1}]}}`, f.writer); status != http.StatusBadRequest {
			t.Fatalf("a batch with an invalid row: %d %s", status, code)
		}
		bm := f.json(http.MethodPost, "/digs/api/batch", `{"create":{"finds":[{"code":"E","mark":"Eeee"}]}}`, f.writer, http.StatusOK)
		batched := batchID(t, bm)
		if st := f.mgr.State("testmarks"); st == pluginhost.StateRunning {
			t.Fatalf("the plugin came back before the saves while down ended (%s): make the backoff longer", st)
		}
		// Revalidating while the plugin is down: 503, nothing changes.
		if status, code := f.code(http.MethodPost, "/digs/api/plugins/testmarks/revalidate", "", f.super); status != http.StatusServiceUnavailable || code != "plugin_unavailable" {
			t.Errorf("revalidate while down: %d %s", status, code)
		}

		total, ids, items := f.markers("")
		want := []int64{a, b, checked, batched}
		if total != 4 || !slices.Equal(ids, want) {
			t.Fatalf("markers: %v of %v, want %v (plain %d)", ids, total, want, plain)
		}
		for _, it := range items {
			if it["plugin"] != "testmarks" || it["feature"] != "marks" || it["tb"] != "finds" || it["row_table"] != "finds" ||
				it["row_id"] != it["record_id"] || it["reason"] != "plugin_not_running" || it["at"] == nil {
				t.Errorf("marker %v", it)
			}
		}
		if total, ids, _ := f.markers("?per_page=2&page=2"); total != 4 || !slices.Equal(ids, want[2:]) {
			t.Errorf("page 2 of 2: %v of %v", ids, total)
		}
		if status, code := f.code(http.MethodGet, "/digs/api/plugins/testmarks/unchecked", "", f.writer); status != http.StatusForbidden {
			t.Errorf("the list as a writer: %d %s", status, code)
		}
		if status, code := f.code(http.MethodGet, "/digs/api/plugins/testmarks/unchecked?per_page=x", "", f.super); status != http.StatusBadRequest || code != "invalid_parameter" {
			t.Errorf("per_page=x: %d %s", status, code)
		}
		logs := f.logs.String()
		for _, id := range want {
			if !strings.Contains(logs, fmt.Sprintf("app=digs plugin=testmarks feature=marks table=finds record_id=%d ", id)) {
				t.Errorf("no warning for record %d in the log:\n%s", id, logs)
			}
		}
		// The unchecked values were stored, the computed one left stale.
		if rec := f.record(a); core(rec, "mark") != "Abc" || core(rec, "mark_len") != nil {
			t.Errorf("record a while down: mark %v, mark_len %v", core(rec, "mark"), core(rec, "mark_len"))
		}

		waitState(t, f.mgr, "testmarks", pluginhost.StateRunning)
		// An admin whose override denies finds neither rewrites nor sees
		// its markers: the job goes through the one gate.
		deniedAdmin := testenv.NewUser(t, f.app, "Denied", "denied@example.org", auth.Admin)
		f.json(http.MethodPost, fmt.Sprintf("/digs/api/user/%d/privileges", deniedAdmin.ID), `{"table_name":"finds","privilege":40}`, f.super, http.StatusOK)
		denied := testenv.Login(t, f.srv, "digs", "denied@example.org", testenv.Password)
		m := f.json(http.MethodPost, "/digs/api/plugins/testmarks/revalidate", "", denied, http.StatusOK)
		if res, _ := m["result"].(map[string]any); res["total"] != 0.0 || res["fixed"] != 0.0 || len(res["refused"].([]any)) != 0 {
			t.Fatalf("revalidation by an admin denied finds: %v", m)
		}
		if n, _, _ := f.markers(""); n != 4 {
			t.Fatalf("markers after the denied admin's revalidation: %v, want 4", n)
		}
		m = f.json(http.MethodPost, "/digs/api/plugins/testmarks/revalidate", "", f.super, http.StatusOK)
		res, _ := m["result"].(map[string]any)
		if m["code"] != "revalidated" || res["total"] != 4.0 || res["fixed"] != 3.0 || res["refused_count"] != 1.0 || res["unchanged"] != 0.0 {
			t.Fatalf("revalidation: %v", m)
		}
		refused := res["refused"].([]any)
		if len(refused) != 1 {
			t.Fatalf("refused: %v", refused)
		}
		r := refused[0].(map[string]any)
		errsOf, _ := r["errors"].([]any)
		if r["record_id"] != float64(b) || len(errsOf) != 1 || errsOf[0].(map[string]any)["field"] != "mark" {
			t.Errorf("refused row: %v", r)
		}
		job, _ := m["job"].(map[string]any)
		if job["done"] != 4.0 || job["total"] != 4.0 {
			t.Errorf("job progress: %v", job)
		}
		for id, wantVals := range map[int64][2]any{a: {"abc", "3"}, checked: {"hello", "5"}, batched: {"eeee", "4"}} {
			rec := f.record(id)
			if core(rec, "mark") != wantVals[0] || fmt.Sprint(core(rec, "mark_len")) != wantVals[1] {
				t.Errorf("record %d after revalidation: mark %v, mark_len %v", id, core(rec, "mark"), core(rec, "mark_len"))
			}
			vs := f.json(http.MethodGet, fmt.Sprintf("/digs/api/record/finds/%d/versions", id), "", f.super, http.StatusOK)
			latest := vs["versions"].([]any)[0].(map[string]any)
			if latest["actor"] != "plugin:testmarks" || latest["userid"] != nil {
				t.Errorf("record %d: latest version %v, want the system actor", id, latest)
			}
		}
		if total, ids, _ := f.markers(""); total != 1 || !slices.Equal(ids, []int64{b}) {
			t.Errorf("markers after revalidation: %v of %v, want the refused row's only", ids, total)
		}
		// The edit history says who changed it.
		h := f.json(http.MethodGet, fmt.Sprintf("/digs/api/history?tb=finds&rowid=%d", a), "", f.super, http.StatusOK)
		if d := h["data"].([]any); len(d) == 0 || d[0].(map[string]any)["user"] != "plugin:testmarks" {
			t.Errorf("edit history of a: %v", h["data"])
		}
		// A second run: the refused row again, nothing else.
		m = f.json(http.MethodPost, "/digs/api/plugins/testmarks/revalidate", "", f.super, http.StatusOK)
		if res := m["result"].(map[string]any); res["total"] != 1.0 || res["refused_count"] != 1.0 || res["fixed"] != 0.0 {
			t.Errorf("second revalidation: %v", res)
		}
		// Deleting the refused record takes its marker with it.
		f.json(http.MethodDelete, fmt.Sprintf("/digs/api/record/finds/%d", b), "", f.super, http.StatusOK)
		if total, ids, _ := f.markers(""); total != 0 {
			t.Errorf("markers after deleting the refused record: %v", ids)
		}
		if status, code := f.code(http.MethodPost, "/digs/api/plugins/nosuch/revalidate", "", f.super); status != http.StatusNotFound || code != "plugin_not_found" {
			t.Errorf("revalidate an unknown plugin: %d %s", status, code)
		}
	})
}

func batchID(t *testing.T, m map[string]any) int64 {
	t.Helper()
	for _, key := range []string{"results", "data"} {
		if list, ok := m[key].([]any); ok && len(list) > 0 {
			if id, ok := list[0].(map[string]any)["id"].(float64); ok {
				return int64(id)
			}
		}
	}
	t.Fatalf("no id in the batch's answer: %v", m)
	return 0
}

// A hook call past its deadline: the save of the non-required feature goes
// on, its row is marked with the timeout, and the timeout's log line names
// the app, the table and the record.
func TestUncheckedHookTimeoutLogged(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testmarks"), nil)
		f.activate("finds", "marks")
		id := f.created(`{"core":{"code":"S","mark":"ok"}}`)
		f.json(http.MethodPost, fmt.Sprintf("/digs/api/record/finds/%d", id), `{"core":{"mark":"slow"}}`, f.writer, http.StatusOK)
		_, ids, items := f.markers("")
		if !slices.Equal(ids, []int64{id}) || items[0]["reason"] != pluginhost.ErrTimeout.Code {
			t.Fatalf("markers after a timed-out hook: %v", items)
		}
		logs := f.logs.String()
		if !strings.Contains(logs, "plugin call timed out") || !strings.Contains(logs, fmt.Sprintf("app=digs table=finds row_table=finds record_ids=[%d]", id)) {
			t.Errorf("the timeout's log line does not name the record:\n%s", logs)
		}
	})
}

// Host.UpdateRecords writes the plugin's own columns, computed ones
// included, as the system actor; any other column refuses the whole call
// with a stable code, before anything is written.
func TestHostUpdateRecords(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testmarks"), nil)
		f.activate("finds", "marks")
		one := f.created(`{"core":{"code":"U1","mark":"ab"}}`)
		two := f.created(`{"core":{"code":"U2","mark":"abc"}}`)
		call := func(rows string) map[string]any {
			rec := f.do(http.MethodPost, "/digs/api/testmarks/sys", `{"op":"update","table":"finds","rows":`+rows+`}`, f.writer)
			var m map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &m)
			return m
		}
		m := call(fmt.Sprintf(`[{"id":%d,"mark_len":42,"mark":"zz"},{"id":%d,"mark_len":7}]`, one, two))
		if m["status"] != "success" || len(m["versions"].([]any)) != 2 {
			t.Fatalf("update: %v", m)
		}
		if rec := f.record(one); fmt.Sprint(core(rec, "mark_len")) != "42" || core(rec, "mark") != "zz" {
			t.Errorf("record one: %v %v", core(rec, "mark"), core(rec, "mark_len"))
		}
		if rec := f.record(two); fmt.Sprint(core(rec, "mark_len")) != "7" || core(rec, "mark") != "abc" {
			t.Errorf("record two: %v %v", core(rec, "mark"), core(rec, "mark_len"))
		}
		vs := f.json(http.MethodGet, fmt.Sprintf("/digs/api/record/finds/%d/versions", one), "", f.super, http.StatusOK)
		if latest := vs["versions"].([]any)[0].(map[string]any); latest["actor"] != "plugin:testmarks" || latest["userid"] != nil || latest["user"] != "plugin:testmarks" {
			t.Errorf("version of the update: %v", latest)
		}
		for _, c := range []struct{ rows, reason string }{
			{fmt.Sprintf(`[{"id":%d,"mark_len":1},{"id":%d,"code":"X"}]`, one, two), "not_plugin_field"},
			{fmt.Sprintf(`[{"id":%d,"label":"X"}]`, one), "not_plugin_field"},
			{`[{"mark_len":1}]`, "invalid_rows"},
			{`[]`, "invalid_rows"},
			{`[{"id":999999,"mark_len":1}]`, "record_not_found"},
		} {
			if m := call(c.rows); m["reason"] != c.reason {
				t.Errorf("update %s: %v, want %s", c.rows, m, c.reason)
			}
		}
		// The refused calls wrote nothing.
		if rec := f.record(one); fmt.Sprint(core(rec, "mark_len")) != "42" {
			t.Errorf("record one after refused calls: mark_len %v", core(rec, "mark_len"))
		}
		var code string
		if err := f.app.DB.QueryRow(context.Background(), `SELECT code FROM `+f.app.DB.Qualify("finds")+` WHERE id = ?`, two).Scan(&code); err != nil || code != "U2" {
			t.Errorf("record two's code: %q %v", code, err)
		}
	})
}

// A child-table feature's rows saved while its plugin is down are marked
// one by one (row_table and row_id the child row, a new one's with the id
// it got), and the revalidation computes their columns.
func TestUncheckedChildRows(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixtureWith(t, e, pluginDir(t, "testplug"), func(o *pluginhost.Options) { o.MinBackoff, o.MaxBackoff = 4*time.Second, 4*time.Second }, true)
		f.activate("finds", "labels")
		f.activate("finds", "samples")
		m := f.json(http.MethodPost, "/digs/api/record/finds", `{"core":{"code":"F1","label":"ab"},
			"plugins":{"finds_samples":[{"fields":{"code":"s0","weight":1}}]}}`, f.writer, http.StatusOK)
		id := int64(m["id"].(float64))
		var first int64
		if err := f.app.DB.QueryRow(context.Background(), `SELECT id FROM `+f.app.DB.Qualify("finds_samples")+` WHERE id_link = ?`, id).Scan(&first); err != nil {
			t.Fatal(err)
		}
		pid := f.mgr.PID("testplug")
		if err := killPID(pid); err != nil {
			t.Fatal(err)
		}
		waitGone(t, f.mgr, "testplug", pid)
		// An update sending child rows only (the required labels feature
		// is not needed): one changed, two new.
		f.json(http.MethodPost, fmt.Sprintf("/digs/api/record/finds/%d", id), fmt.Sprintf(`{"core":{},"plugins":{"finds_samples":[
			{"id":%d,"fields":{"weight":5}},{"fields":{"code":"s1","weight":2}},{"fields":{"code":"s2","weight":3}}]}}`, first), f.writer, http.StatusOK)
		if st := f.mgr.State("testplug"); st == pluginhost.StateRunning {
			t.Fatalf("the plugin came back too soon (%s)", st)
		}
		rows := map[string]int64{}
		dbRows, err := f.app.DB.Query(context.Background(), `SELECT code, id FROM `+f.app.DB.Qualify("finds_samples")+` WHERE id_link = ?`, id)
		if err != nil {
			t.Fatal(err)
		}
		for dbRows.Next() {
			var code string
			var rid int64
			if err := dbRows.Scan(&code, &rid); err != nil {
				t.Fatal(err)
			}
			rows[code] = rid
		}
		dbRows.Close()
		m = f.json(http.MethodGet, "/digs/api/plugins/testplug/unchecked", "", f.super, http.StatusOK)
		got := map[int64]bool{}
		for _, it := range m["data"].([]any) {
			item := it.(map[string]any)
			if item["row_table"] != "finds_samples" || item["record_id"] != float64(id) || item["feature"] != "samples" {
				t.Errorf("marker %v", item)
			}
			got[int64(item["row_id"].(float64))] = true
		}
		if m["total"] != 3.0 || !got[rows["s0"]] || !got[rows["s1"]] || !got[rows["s2"]] {
			t.Fatalf("markers %v, want the child rows %v", m["data"], rows)
		}
		waitState(t, f.mgr, "testplug", pluginhost.StateRunning)
		m = f.json(http.MethodPost, "/digs/api/plugins/testplug/revalidate", "", f.super, http.StatusOK)
		if res := m["result"].(map[string]any); res["fixed"] != 3.0 || res["refused_count"] != 0.0 {
			t.Fatalf("revalidation: %v", m)
		}
		for code, want := range map[string]float64{"s0": 10, "s1": 4, "s2": 6} {
			var dw *float64
			if err := f.app.DB.QueryRow(context.Background(), `SELECT double_weight FROM `+f.app.DB.Qualify("finds_samples")+` WHERE id = ?`, rows[code]).Scan(&dw); err != nil {
				t.Fatal(err)
			}
			if dw == nil || *dw != want {
				t.Errorf("%s: double_weight %v, want %v", code, dw, want)
			}
		}
		if m := f.json(http.MethodGet, "/digs/api/plugins/testplug/unchecked", "", f.super, http.StatusOK); m["total"] != 0.0 {
			t.Errorf("markers after revalidation: %v", m["data"])
		}
	})
}
