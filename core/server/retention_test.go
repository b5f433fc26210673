package server_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/retention"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// retFix is an instance with a job system on a clock the test moves, in
// which each case makes its own application (the rules are per app).
type retFix struct {
	inst  *testenv.Instance
	clock *clock
}

// retApp is one application with a table "finds" (label, notes), its
// admin and a writer, ann.
type retApp struct {
	f          *retFix
	app        *apps.App
	name       string
	admin, ann string // bearer values
}

func newRetFix(t *testing.T, e store.Engine) *retFix {
	t.Helper()
	c := &clock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	inst := testenv.NewInstanceWithJobsDeps(t, e, server.Deps{Now: c.Now})
	return &retFix{inst: inst, clock: c}
}

func (f *retFix) newApp(t *testing.T, name string) *retApp {
	t.Helper()
	a := testenv.NewApp(t, f.inst.Apps, name)
	ctx, now := t.Context(), f.clock.Now()
	if _, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "finds", Label: "Finds"}, now); err != nil {
		t.Fatal(err)
	}
	for _, fd := range []schema.FieldDef{{Name: "label", Label: "Label"}, {Name: "notes", Label: "Notes"}} {
		if _, err := schema.AddField(ctx, a.DB, "finds", fd, now); err != nil {
			t.Fatal(err)
		}
	}
	testenv.NewUser(t, a, "ann", "ann@example.org", auth.Writer)
	r := &retApp{f: f, app: a, name: name}
	r.login(t)
	return r
}

// login signs both in again (after the clock moved past their tokens).
func (r *retApp) login(t *testing.T) {
	t.Helper()
	r.admin = testenv.Login(t, r.f.inst.Server, r.name, "admin@example.org", testenv.Password)
	r.ann = testenv.Login(t, r.f.inst.Server, r.name, "ann@example.org", testenv.Password)
}

// advance moves the clock and signs in again.
func (r *retApp) advance(t *testing.T, d time.Duration) {
	t.Helper()
	r.f.clock.Advance(d)
	r.login(t)
}

func (r *retApp) do(t *testing.T, who, method, path, body string) (int, map[string]any) {
	t.Helper()
	return testenv.Do(t, r.f.inst.Server, method, "/"+r.name+"/api"+path, body, testenv.Bearer(who))
}

func (r *retApp) must(t *testing.T, want int, who, method, path, body string) map[string]any {
	t.Helper()
	code, m := r.do(t, who, method, path, body)
	if code != want {
		t.Fatalf("%s %s: %d, want %d: %v", method, path, code, want, m)
	}
	return m
}

// create makes a find as who and returns its id.
func (r *retApp) create(t *testing.T, who, label string) int64 {
	t.Helper()
	m := r.must(t, 200, who, "POST", "/record/finds", fmt.Sprintf(`{"core":{"label":%q,"notes":"n0"}}`, label))
	return int64(m["id"].(float64))
}

// update saves core (JSON object text) on find id as who.
func (r *retApp) update(t *testing.T, who string, id int64, core string) {
	t.Helper()
	r.must(t, 200, who, "POST", fmt.Sprintf("/record/finds/%d", id), `{"core":`+core+`}`)
}

// versions are the ids of find id's stored versions, oldest first.
func (r *retApp) versions(t *testing.T, id int64) []int64 {
	t.Helper()
	rows, err := r.app.DB.Query(t.Context(), `SELECT id FROM `+r.app.DB.Sys("versions")+` WHERE tb = 'finds' AND record_id = ? ORDER BY id`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// etag is find id's ETag as GET /record gives it.
func (r *retApp) etag(t *testing.T, id int64) string {
	t.Helper()
	rec := testenv.Scenario{Name: "read", Method: "GET", URL: fmt.Sprintf("/%s/api/record/finds/%d", r.name, id),
		Headers: testenv.Bearer(r.admin), ExpectedStatus: 200}.Run(t, r.f.inst.Server)
	return rec.Header().Get("ETag")
}

// count is the answer of one COUNT(*) query.
func (r *retApp) count(t *testing.T, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := r.app.DB.QueryRow(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// retJob is a finished retention job as GET /jobs/{id} answers it.
type retJob struct {
	State  string           `json:"state"`
	Kind   string           `json:"kind"`
	Done   int64            `json:"done"`
	Total  int64            `json:"total"`
	Result retention.Result `json:"result"`
}

// apply starts the job as the admin and waits for it to end (the job
// system works it on another goroutine; the wait is bounded only so that
// a hung job fails the test instead of the run).
func (r *retApp) apply(t *testing.T) retJob {
	t.Helper()
	m := r.must(t, 202, r.admin, "POST", "/retention/apply", "")
	if m["code"] != "retention_started" {
		t.Fatalf("apply: %v", m)
	}
	id := int64(m["job"].(map[string]any)["id"].(float64))
	return r.await(t, id)
}

func (r *retApp) await(t *testing.T, id int64) retJob {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, m := r.do(t, r.admin, "GET", fmt.Sprintf("/jobs/%d", id), "")
		switch m["state"] {
		case "done":
			var j retJob
			raw, _ := json.Marshal(m)
			if err := json.Unmarshal(raw, &j); err != nil {
				t.Fatal(err)
			}
			return j
		case "failed", "cancelled":
			t.Fatalf("job %d: %v", id, m)
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d still %v", id, m["state"])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// put sets the rules as the admin (200 expected).
func (r *retApp) put(t *testing.T, body string) {
	t.Helper()
	m := r.must(t, 200, r.admin, "PUT", "/retention", body)
	if m["code"] != "retention_saved" {
		t.Fatalf("put %s: %v", body, m)
	}
}

func TestRetention(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		f := newRetFix(t, e)

		// Nothing set: GET shows zeros, and the job deletes (and reads)
		// nothing.
		t.Run("defaults keep everything", func(t *testing.T) {
			r := f.newApp(t, "ret_default")
			m := r.must(t, 200, r.admin, "GET", "/retention", "")
			if got, _ := json.Marshal(m["retention"]); string(got) != `{"history_days":0,"log_days":0,"versions_days":0,"versions_keep":0}` {
				t.Fatalf("defaults: %s", got)
			}
			id := r.create(t, r.admin, "F1")
			for i := range 5 {
				r.update(t, r.admin, id, fmt.Sprintf(`{"notes":"n%d"}`, i+1))
			}
			r.advance(t, 400*24*time.Hour)
			j := r.apply(t)
			if j.Kind != retention.Kind || j.Result.VersionsDeleted != 0 || j.Result.HistoryDeleted != 0 || j.Result.VersionsExamined != 0 || j.Done != j.Total {
				t.Fatalf("job: %+v", j)
			}
			if n := len(r.versions(t, id)); n != 5 {
				t.Fatalf("%d versions, want 5", n)
			}
			if n := r.count(t, `SELECT COUNT(*) FROM `+r.app.DB.Sys("history")); n != 1 {
				t.Fatalf("%d history rows, want 1", n)
			}
		})

		// versions_keep N: exactly the N newest of each record stay, a
		// record with fewer keeps all, the ETag does not move; with 1
		// only the latest stays.
		t.Run("keep N", func(t *testing.T) {
			r := f.newApp(t, "ret_keep")
			a, b, c := r.create(t, r.admin, "A"), r.create(t, r.admin, "B"), r.create(t, r.admin, "C")
			for i := range 6 {
				r.update(t, r.admin, a, fmt.Sprintf(`{"notes":"a%d"}`, i))
			}
			for i := range 2 {
				r.update(t, r.admin, b, fmt.Sprintf(`{"notes":"b%d"}`, i))
			}
			va, vb := r.versions(t, a), r.versions(t, b)
			etag := r.etag(t, a)
			r.put(t, `{"versions_keep":3}`)
			j := r.apply(t)
			if j.Result.VersionsDeleted != 3 || j.Result.VersionsExamined != 8 || j.Result.Settings.VersionsKeep != 3 {
				t.Fatalf("job: %+v", j)
			}
			if got := r.versions(t, a); !slices.Equal(got, va[3:]) {
				t.Fatalf("A keeps %v, want %v", got, va[3:])
			}
			if got := r.versions(t, b); !slices.Equal(got, vb) {
				t.Fatalf("B keeps %v, want %v", got, vb)
			}
			if got := r.versions(t, c); len(got) != 0 {
				t.Fatalf("C has versions %v", got)
			}
			if got := r.etag(t, a); got != etag {
				t.Fatalf("ETag moved: %s → %s", etag, got)
			}
			if n := r.count(t, `SELECT upto FROM `+r.app.DB.Sys("versions_pruned")+` WHERE tb = 'finds' AND record_id = ?`, a); n != va[2] {
				t.Fatalf("pruned mark %d, want %d", n, va[2])
			}
			// The versions list shows what is kept.
			m := r.must(t, 200, r.admin, "GET", fmt.Sprintf("/record/finds/%d/versions", a), "")
			if m["total"] != float64(3) {
				t.Fatalf("versions list: %v", m)
			}
			r.put(t, `{"versions_keep":1}`)
			if j := r.apply(t); j.Result.VersionsDeleted != 3 {
				t.Fatalf("keep 1: %+v", j)
			}
			if got := r.versions(t, a); !slices.Equal(got, va[5:]) {
				t.Fatalf("A keeps %v, want its latest %v", got, va[5:])
			}
			if got := r.versions(t, b); !slices.Equal(got, vb[1:]) {
				t.Fatalf("B keeps %v, want its latest %v", got, vb[1:])
			}
			// A second run finds nothing more.
			if j := r.apply(t); j.Result.VersionsDeleted != 0 {
				t.Fatalf("second run: %+v", j)
			}
		})

		// versions_days N on the server's clock: versions older than N
		// days go, a record's latest stays however old.
		t.Run("days", func(t *testing.T) {
			r := f.newApp(t, "ret_days")
			a, old := r.create(t, r.admin, "A"), r.create(t, r.admin, "Old")
			r.update(t, r.admin, old, `{"notes":"once"}`) // its only version, at t0
			var va []int64
			for i := range 3 { // at t0, t0+1d, t0+2d
				r.update(t, r.admin, a, fmt.Sprintf(`{"notes":"d%d"}`, i))
				va = r.versions(t, a)
				r.advance(t, 24*time.Hour)
			}
			vold := r.versions(t, old)
			r.advance(t, time.Hour) // t0+3d+1h: the cutoff of 2 days is t0+1d+1h
			r.put(t, `{"versions_days":2}`)
			j := r.apply(t)
			if j.Result.VersionsDeleted != 2 {
				t.Fatalf("job: %+v", j)
			}
			if got := r.versions(t, a); !slices.Equal(got, va[2:]) {
				t.Fatalf("A keeps %v, want %v", got, va[2:])
			}
			if got := r.versions(t, old); !slices.Equal(got, vold) {
				t.Fatalf("Old keeps %v, want its latest %v", got, vold)
			}
		})

		// history_days N: the recent-records entries older than N days
		// go, of every user; newer ones stay.
		t.Run("history days", func(t *testing.T) {
			r := f.newApp(t, "ret_history")
			x := r.create(t, r.ann, "X") // ann's entry at t0
			r.advance(t, 2*24*time.Hour)
			y := r.create(t, r.ann, "Y") // at t0+2d
			r.update(t, r.admin, x, `{"notes":"admin's"}`)
			r.advance(t, time.Hour)
			r.put(t, `{"history_days":1}`)
			j := r.apply(t)
			if j.Result.HistoryDeleted != 1 || j.Result.VersionsDeleted != 0 || j.Done != j.Total || j.Total != 1 {
				t.Fatalf("job: %+v", j)
			}
			h := r.app.DB.Sys("history")
			if n := r.count(t, `SELECT COUNT(*) FROM `+h+` WHERE tb = 'finds' AND record_id = ?`, x); n != 1 {
				t.Fatalf("X has %d entries, want the admin's only", n)
			}
			if n := r.count(t, `SELECT COUNT(*) FROM `+h+` WHERE tb = 'finds' AND record_id = ?`, y); n != 1 {
				t.Fatalf("Y has %d entries, want 1", n)
			}
			// A version is no history entry: none went.
			if n := len(r.versions(t, x)); n != 1 {
				t.Fatalf("X has %d versions", n)
			}
		})

		// log_days N: application log entries older than N days go,
		// the oldest first; newer ones stay.
		t.Run("log days", func(t *testing.T) {
			r := f.newApp(t, "ret_log")
			lt := r.app.DB.Sys("app_log")
			now := f.clock.Now()
			for i, age := range []time.Duration{40 * 24 * time.Hour, 31 * 24 * time.Hour, 29 * 24 * time.Hour, time.Hour} {
				if _, err := r.app.DB.Exec(t.Context(), `INSERT INTO `+lt+` (time, level, channel, action, message) VALUES (?, 200, 'app', 'test', ?)`,
					now.Add(-age), fmt.Sprint("entry ", i)); err != nil {
					t.Fatal(err)
				}
			}
			r.put(t, `{"log_days":30}`)
			j := r.apply(t)
			if j.Result.LogDeleted != 2 || j.Total != 2 || j.Done != 2 {
				t.Fatalf("job: %+v", j)
			}
			if n := r.count(t, `SELECT COUNT(*) FROM `+lt+` WHERE action = 'test'`); n != 2 {
				t.Fatalf("%d entries left, want 2", n)
			}
		})

		// A sync push merges against the record as the device last saw
		// it. When that state was pruned, the push conflicts on every
		// field it changes and the server changed too, instead of
		// merging against a later state (which would overwrite the
		// server's change unseen). A base still kept merges as before.
		t.Run("sync push on a pruned base", func(t *testing.T) {
			r := f.newApp(t, "ret_sync")
			rec := r.create(t, r.admin, "a") // the device reads it at version 0
			r.update(t, r.admin, rec, `{"label":"b"}`)
			r.update(t, r.admin, rec, `{"notes":"n1"}`)
			kept := r.create(t, r.admin, "k")
			r.update(t, r.admin, kept, `{"label":"k2"}`)
			base := r.versions(t, kept)[0] // the device read it after that change
			r.update(t, r.admin, kept, `{"notes":"m1"}`)
			r.put(t, `{"versions_keep":1}`)
			if j := r.apply(t); j.Result.VersionsDeleted != 2 {
				t.Fatalf("job: %+v", j)
			}
			body, _ := json.Marshal(map[string]any{"mutations": []map[string]any{
				{"mutation_id": "m1", "device_id": "tab", "seq": 1, "table": "finds", "id": rec, "base_version": 0,
					"set": map[string]any{"label": "mine", "notes": "n1"}},
				{"mutation_id": "m2", "device_id": "tab", "seq": 2, "table": "finds", "id": kept, "base_version": base,
					"set": map[string]any{"label": "mine too"}},
			}})
			m := r.must(t, 200, r.ann, "POST", "/sync/push", string(body))
			res := m["results"].([]any)
			first, second := res[0].(map[string]any), res[1].(map[string]any)
			if first["status"] != "conflict" || len(first["conflicts"].([]any)) != 1 {
				t.Fatalf("pruned base: %v", first)
			}
			if second["status"] != "applied" {
				t.Fatalf("kept base: %v", second)
			}
			read := func(id int64) map[string]any {
				m := r.must(t, 200, r.admin, "GET", fmt.Sprintf("/record/finds/%d", id), "")
				return m["core"].(map[string]any)
			}
			if got := read(rec)["label"].(map[string]any)["val"]; got != "b" {
				t.Fatalf("the server's label was overwritten: %v", got)
			}
			if got := read(kept)["label"].(map[string]any)["val"]; got != "mine too" {
				t.Fatalf("the merge on a kept base: %v", got)
			}
			c := r.must(t, 200, r.admin, "GET", "/sync/conflicts", "")
			raw, _ := json.Marshal(c)
			if !json.Valid(raw) || !containsAll(string(raw), `"field":"label"`, `"mine":"mine"`, `"theirs":"b"`) {
				t.Fatalf("conflicts: %s", raw)
			}
		})

		// Values that are not whole numbers within bounds, and keys that
		// are not settings, are refused with a code and change nothing;
		// only admins reach the routes.
		t.Run("hostile settings", func(t *testing.T) {
			r := f.newApp(t, "ret_hostile")
			r.put(t, `{"versions_keep":7}`)
			for _, c := range []struct{ body, setting string }{
				{`{"versions_keep":-1}`, "versions_keep"},
				{`{"versions_keep":100001}`, "versions_keep"},
				{`{"versions_days":36501}`, "versions_days"},
				{`{"history_days":-36500}`, "history_days"},
				{`{"history_days":1.5}`, "history_days"},
				{`{"log_days":36501}`, "log_days"},
				{`{"versions_keep":true}`, "versions_keep"},
				{`{"versions_keep":"ten"}`, "versions_keep"},
				{`{"versions_keep":"٣"}`, "versions_keep"},
				{`{"versions_keep":"1e400"}`, "versions_keep"},
				{`{"versions_keep":123456789012345678901234567890}`, "versions_keep"},
				{`{"versions_keep":[1]}`, "versions_keep"},
				{`{"versions_keep":{"n":1}}`, "versions_keep"},
				{`{"versions_keep":1,"history_days":-1}`, "history_days"},
				{`{"versions_kept":1}`, "versions_kept"},
				{`{"<script>":1}`, "<script>"},
			} {
				m := r.must(t, 400, r.admin, "PUT", "/retention", c.body)
				if m["code"] != "invalid_setting" || m["setting"] != c.setting {
					t.Errorf("%s: %v", c.body, m)
				}
			}
			for _, body := range []string{``, `[]`, `7`, `{"versions_keep":`} {
				if code, m := r.do(t, r.admin, "PUT", "/retention", body); code != 400 {
					t.Errorf("%q: %d %v", body, code, m)
				}
			}
			m := r.must(t, 200, r.admin, "GET", "/retention", "")
			if got, _ := json.Marshal(m["retention"]); string(got) != `{"history_days":0,"log_days":0,"versions_days":0,"versions_keep":7}` {
				t.Fatalf("after refusals: %s", got)
			}
			// Null and "" clear; a numeric string is read; the GET shape is accepted.
			r.put(t, `{"retention":{"versions_keep":null,"versions_days":"30","history_days":""}}`)
			m = r.must(t, 200, r.admin, "GET", "/retention", "")
			if got, _ := json.Marshal(m["retention"]); string(got) != `{"history_days":0,"log_days":0,"versions_days":30,"versions_keep":0}` {
				t.Fatalf("after clearing: %s", got)
			}
			for _, rt := range []struct{ method, path, body string }{
				{"GET", "/retention", ""}, {"PUT", "/retention", `{"versions_keep":1}`}, {"POST", "/retention/apply", ""},
			} {
				if m := r.must(t, 403, r.ann, rt.method, rt.path, rt.body); m["code"] != "not_enough_privilege" {
					t.Errorf("%s %s as a writer: %v", rt.method, rt.path, m)
				}
			}
		})

		// Many versions: the job goes through them in batches of
		// retention.BatchFor(e), reporting its progress; the function reports
		// each batch, never backwards, and ends at its total.
		t.Run("progress", func(t *testing.T) {
			r := f.newApp(t, "ret_progress")
			const perRecord, records = 1001, 12
			_, err := r.app.DB.Exec(t.Context(), `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
				INSERT INTO `+r.app.DB.Sys("versions")+` (tb, record_id, time, operation, content)
				SELECT 'finds', 1 + (i % ?), ?, 'update', '{"core":{}}' FROM n`, perRecord*records, records, f.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			var calls [][2]int64
			res, err := retention.Apply(t.Context(), r.app.DB, retention.Settings{VersionsKeep: 1000}, f.clock.Now(),
				func(done, total int64) { calls = append(calls, [2]int64{done, total}) })
			if err != nil {
				t.Fatal(err)
			}
			total := int64(perRecord * records)
			if res.VersionsDeleted != records || res.VersionsExamined != total {
				t.Fatalf("result %+v", res)
			}
			want := [][2]int64{{0, total}}
			for done, b := int64(0), int64(retention.BatchFor(e)); done < total; {
				done = min(done+b, total)
				want = append(want, [2]int64{done, total})
			}
			want = append(want, [2]int64{total, total})
			if !slices.Equal(calls, want) {
				t.Fatalf("progress %v, want %v", calls, want)
			}
			r.put(t, `{"versions_keep":1}`)
			j := r.apply(t)
			if j.Done != j.Total || j.Total != total-records || j.Result.VersionsDeleted != total-2*records {
				t.Fatalf("job: %+v", j)
			}
			if n := r.count(t, `SELECT COUNT(*) FROM `+r.app.DB.Sys("versions")); n != records {
				t.Fatalf("%d versions left, want one per record", n)
			}
		})

		// The schedule queues a job for an application with a rule, once
		// a day whatever the number of calls (nodes), and none for one
		// without.
		t.Run("schedule", func(t *testing.T) {
			ruled, plain := f.newApp(t, "ret_sched"), f.newApp(t, "ret_plain")
			ruled.put(t, `{"history_days":30}`)
			jobsOf := func(r *retApp) int {
				m := r.must(t, 200, r.admin, "GET", "/jobs?per_page=100", "")
				n := 0
				for _, j := range m["data"].([]any) {
					if j.(map[string]any)["kind"] == retention.Kind {
						n++
					}
				}
				return n
			}
			for range 3 {
				f.inst.Server.ScheduleRetention(t.Context())
			}
			if a, b := jobsOf(ruled), jobsOf(plain); a != 1 || b != 0 {
				t.Fatalf("first day: %d and %d jobs, want 1 and 0", a, b)
			}
			ruled.advance(t, 23*time.Hour)
			f.inst.Server.ScheduleRetention(t.Context())
			if n := jobsOf(ruled); n != 1 {
				t.Fatalf("23 h later: %d jobs", n)
			}
			ruled.advance(t, time.Hour)
			f.inst.Server.ScheduleRetention(t.Context())
			f.inst.Server.ScheduleRetention(t.Context())
			if n := jobsOf(ruled); n != 2 {
				t.Fatalf("a day later: %d jobs", n)
			}
		})
	})
}

// containsAll reports whether s contains every part.
func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
