package realplugins_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// buildDendro builds the dendro plugin (plugins/examples/dendro), an
// outside module, as an institution would: against pluginsdk served as a
// released version, with no replace directive; it runs the plugin's own
// tests the same way. It also builds a copy whose manifest says 1.0.1 (the
// upgrade). Both binaries land in dir.
func buildDendro(t *testing.T, dir string) (v100, v101 string) {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "plugins", "examples", "dendro")
	env := testenv.OutsideGoEnv(t)
	work := filepath.Join(t.TempDir(), "dendro")
	if err := os.CopyFS(work, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	testenv.RunOutsideGo(t, env, work, "vet", "./...")
	testenv.RunOutsideGo(t, env, work, "test", "-count=1", "./...")
	v100, v101 = filepath.Join(dir, "dendro"), filepath.Join(dir, "dendro-1.0.1")
	testenv.RunOutsideGo(t, env, work, "build", "-o", v100, ".")
	main := filepath.Join(work, "main.go")
	b, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	up := strings.Replace(string(b), `Version:     "1.0.0"`, `Version:     "1.0.1"`, 1)
	if up == string(b) {
		t.Fatal("dendro's manifest version not found in main.go")
	}
	if err := os.WriteFile(main, []byte(up), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.RunOutsideGo(t, env, work, "build", "-o", v101, ".")
	return v100, v101
}

// newDendroFixture is the fixture with dendro installed beside the real
// plugins and active on a table "samples", and a running job system.
func newDendroFixture(t *testing.T, e store.Engine, bin string, tune func(*pluginhost.Options)) *fixture {
	f := newFixtureWith(t, e, func(o *pluginhost.Options) {
		link(t, bin, filepath.Join(o.Dir, "dendro"))
		if tune != nil {
			tune(o)
		}
	}, true)
	f.table("samples", schema.FieldDef{Name: "code"})
	f.activate("samples", "dendro", "dendro")
	return f
}

// felling is the felling range of a sample under the default sapwood
// model (10 to 50 rings), worked out here from the rule, not by the plugin.
func felling(last, sapwood any, bark bool) (from, to any) {
	l, ok := last.(int64)
	if !ok {
		return nil, nil
	}
	if bark {
		return l, l
	}
	s, ok := sapwood.(int64)
	if !ok {
		return l + 10, nil
	}
	return l + max(0, 10-s), l + max(0, 50-s)
}

// TestDendroScenario is issue 28's outside plugin, end to end on both
// engines.
func TestDendroScenario(t *testing.T) {
	v100, v101 := buildDendro(t, t.TempDir())
	cli := strataBinary(t)
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		var pluginDir string
		f := newDendroFixture(t, e, v100, func(o *pluginhost.Options) {
			pluginDir = o.Dir
			// Time to save while the killed plugin waits to restart.
			o.MinBackoff, o.MaxBackoff = 1500*time.Millisecond, 1500*time.Millisecond
		})
		t.Run("concurrent partial saves", func(t *testing.T) { dendroConcurrentSaves(t, f.on(t)) })
		t.Run("killed during saves", func(t *testing.T) { dendroKilled(t, f.on(t)) })
		t.Run("filter, summary, recomputation", func(t *testing.T) { dendroQueries(t, f.on(t)) })
		t.Run("upgrade while saving", func(t *testing.T) { dendroUpgrade(t, f.on(t), pluginDir, cli, v101) })
	})
}

// dendroConcurrentSaves: two clients update one sample at once, one its
// last ring, the other its sapwood; every stored version's felling range
// must match its own rings.
func dendroConcurrentSaves(t *testing.T, f *fixture) {
	id := f.create("samples", `{"core":{"code":"S1","first_ring":1400,"last_ring":1490,"sapwood":10}}`)
	const saves = 80
	var wg sync.WaitGroup
	var failed atomic.Int64
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range saves {
				body := fmt.Sprintf(`{"core":{"last_ring":%d}}`, 1490+i%30)
				if w == 1 {
					body = fmt.Sprintf(`{"core":{"sapwood":%d}}`, i%40)
				}
				if rec := f.do("POST", fmt.Sprintf("/record/samples/%d", id), body, f.writer); rec.Code != 200 {
					failed.Add(1)
					t.Errorf("save %d/%d: %d %s", w, i, rec.Code, rec.Body)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d saves failed", failed.Load())
	}
	// Every stored version (the record before each update) and the record
	// as it is now.
	states := []map[string]any{}
	for page := 1; ; page++ {
		m := f.json("GET", fmt.Sprintf("/record/samples/%d/versions?per_page=200&page=%d", id, page), "", f.reader, 200)
		rows, _ := m["versions"].([]any)
		for _, r := range rows {
			v := f.json("GET", fmt.Sprintf("/version/%v", r.(map[string]any)["id"]), "", f.reader, 200)
			states = append(states, obj(v, "version", "content", "core"))
		}
		if len(rows) < 200 {
			break
		}
	}
	cur := f.record("samples", id)
	now := map[string]any{}
	for _, c := range []string{"last_ring", "sapwood", "bark_edge", "felling_from", "felling_to"} {
		now[c] = val(cur, c)
	}
	states = append(states, now)
	if len(states) < 2*saves {
		t.Fatalf("%d versions for %d saves", len(states), 2*saves)
	}
	bad := 0
	for _, s := range states {
		bark, _ := s["bark_edge"].(bool)
		from, to := felling(num(s["last_ring"]), num(s["sapwood"]), bark)
		if num(s["felling_from"]) != from || num(s["felling_to"]) != to {
			bad++
			if bad <= 3 {
				t.Errorf("stored %v: felling %v–%v, want %v–%v", s, s["felling_from"], s["felling_to"], from, to)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d stored versions have a felling range that does not match their rings", bad, len(states))
	}
}

// waitRunning waits until the plugin runs as a process other than old.
func waitRunning(t *testing.T, f *fixture, name string, old int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if pid := f.mgr.PID(name); pid != 0 && pid != old && f.mgr.State(name) == pluginhost.StateRunning {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not come back: %s\n%s", name, f.mgr.State(name), f.logs)
		}
	}
}

// uncheckedIDs lists the record ids the unchecked list holds for dendro.
func uncheckedIDs(t *testing.T, f *fixture) map[int64]bool {
	t.Helper()
	m := f.json("GET", "/plugins/dendro/unchecked?per_page=500", "", f.super, 200)
	ids := map[int64]bool{}
	rows, _ := m["data"].([]any)
	for _, r := range rows {
		row := r.(map[string]any)
		if row["tb"] != "samples" || row["feature"] != "dendro" {
			t.Errorf("unchecked row %v", row)
		}
		ids[int64(row["record_id"].(float64))] = true
	}
	return ids
}

// runJob starts a job route and waits for its end, returning the job.
func runJob(t *testing.T, f *fixture, method, url string) map[string]any {
	t.Helper()
	rec := f.do(method, url, "", f.super)
	if rec.Code != 200 && rec.Code != 202 {
		t.Fatalf("%s %s: %d %s", method, url, rec.Code, rec.Body)
	}
	id := rec.Header().Get("X-Strata-Job")
	if id == "" {
		var m map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &m)
		id = fmt.Sprint(obj(m, "job")["id"])
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		j := f.json("GET", "/jobs/"+id, "", f.super, 200)
		if j["state"] == "done" || j["state"] == "failed" {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: %v", id, j)
		}
	}
}

// dendroKilled: the plugin is killed; saves made while it is down are
// stored (the feature is not required) but listed as unchecked; once it is
// back, the revalidation job computes what was missed and reports the row
// the plugin refuses.
func dendroKilled(t *testing.T, f *fixture) {
	before := f.create("samples", `{"core":{"code":"B","first_ring":1400,"last_ring":1480,"sapwood":20}}`)
	pid := f.mgr.PID("dendro")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); f.mgr.PID("dendro") == pid; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the killed plugin is still listed")
		}
	}
	good := f.create("samples", `{"core":{"code":"K1","first_ring":1450,"last_ring":1500,"sapwood":5}}`)
	bad := f.create("samples", `{"core":{"code":"K2","first_ring":1510,"last_ring":1500}}`)
	f.json("POST", fmt.Sprintf("/record/samples/%d", before), `{"core":{"sapwood":0}}`, f.writer, 200)
	if v := val(f.record("samples", good), "felling_from"); v != nil {
		t.Fatalf("computed while down: %v", v)
	}
	if !strings.Contains(f.logs.String(), "dendro") || !strings.Contains(f.logs.String(), fmt.Sprint(bad)) {
		t.Errorf("no log line names the unchecked saves")
	}
	got := uncheckedIDs(t, f)
	if len(got) != 3 || !got[good] || !got[bad] || !got[before] {
		t.Fatalf("unchecked %v, want %d, %d and %d", got, good, bad, before)
	}

	waitRunning(t, f, "dendro", pid)
	j := runJob(t, f, "POST", "/plugins/dendro/revalidate")
	res := obj(j, "result")
	if j["state"] != "done" || res["fixed"] != 2.0 || res["refused_count"] != 1.0 {
		t.Fatalf("revalidation: %v", j)
	}
	refused := res["refused"].([]any)[0].(map[string]any)
	if num(refused["record_id"]) != bad {
		t.Errorf("refused %v, want record %d", refused, bad)
	}
	for id, want := range map[int64][2]any{good: {int64(1505), int64(1545)}, before: {int64(1490), int64(1530)}} {
		rec := f.record("samples", id)
		if num(val(rec, "felling_from")) != want[0] || num(val(rec, "felling_to")) != want[1] {
			t.Errorf("record %d after revalidation: %v–%v, want %v", id, val(rec, "felling_from"), val(rec, "felling_to"), want)
		}
	}
	if got := uncheckedIDs(t, f); len(got) != 1 || !got[bad] {
		t.Errorf("unchecked after revalidation %v, want only %d", got, bad)
	}
}

// The strata command, built once per test process for the plugin commands.
var strataCLI struct {
	once sync.Once
	path string
	err  error
}

func strataBinary(t *testing.T) string {
	t.Helper()
	strataCLI.once.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			strataCLI.err = err
			return
		}
		strataCLI.path = filepath.Join(binDir, "strata")
		cmd := exec.Command("go", "build", "-o", strataCLI.path, "./cmd/strata")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			strataCLI.err = fmt.Errorf("build strata: %v: %s", err, out)
		}
	})
	if strataCLI.err != nil {
		t.Fatal(strataCLI.err)
	}
	return strataCLI.path
}

// dendroUpgrade: `strata plugin install` puts version 1.0.1 in place while
// a client keeps saving, the server reloads it, and no save fails or goes
// unchecked; then a binary changed behind the server's back is refused
// and the running version keeps serving.
func dendroUpgrade(t *testing.T, f *fixture, pluginDir, cli, v101 string) {
	id := f.create("samples", `{"core":{"code":"U","first_ring":1300,"last_ring":1420,"sapwood":3}}`)
	stop := make(chan struct{})
	done := make(chan struct{})
	var saved, failed atomic.Int64
	var firstFailure atomic.Value
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			rec := f.do("POST", fmt.Sprintf("/record/samples/%d", id), fmt.Sprintf(`{"core":{"sapwood":%d}}`, i%40), f.writer)
			if rec.Code != 200 {
				failed.Add(1)
				firstFailure.CompareAndSwap(nil, fmt.Sprintf("save %d: %d %s", i, rec.Code, rec.Body))
			}
			saved.Add(1)
		}
	}()
	stopSaving := sync.OnceFunc(func() { close(stop); <-done })
	defer stopSaving()
	waitSaves := func(n int64) {
		for deadline := time.Now().Add(30 * time.Second); saved.Load() < n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("only %d saves", saved.Load())
			}
		}
	}
	waitSaves(10)
	out, err := exec.Command(cli, "plugin", "install", v101, "--plugin-dir", pluginDir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "1.0.1") {
		t.Fatalf("strata plugin install: %v: %s", err, out)
	}
	m := f.json("POST", "/plugins/dendro/reload", "", f.super, 200)
	if fmt.Sprint(m["version"], obj(m, "plugin")["version"]) == "" || !strings.Contains(fmt.Sprint(m), "1.0.1") {
		t.Errorf("reload answered %v", m)
	}
	n := saved.Load()
	waitSaves(n + 10)

	// A binary changed behind the server's back: refused, the running
	// version serves on.
	// (Moved into place as a careless operator would, without install:
	// the running executable itself cannot be written.)
	b, err := os.ReadFile(v101)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(pluginDir, ".dendro.tmp")
	if err := os.WriteFile(tmp, append(b, "tampered"...), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(pluginDir, "dendro")); err != nil {
		t.Fatal(err)
	}
	if status, code, body := f.code("POST", "/plugins/dendro/reload", "", f.super); status < 400 || !strings.Contains(fmt.Sprint(body), "plugin_checksum_mismatch") {
		t.Errorf("reload of a changed binary: %d %s %v", status, code, body)
	}
	waitSaves(saved.Load() + 10)
	stopSaving()
	if failed.Load() > 0 {
		t.Fatalf("%d of %d saves failed during the upgrade; the first: %v", failed.Load(), saved.Load(), firstFailure.Load())
	}
	if uncheckedIDs(t, f)[id] {
		t.Errorf("saves during the upgrade went unchecked")
	}
	list := f.json("GET", "/plugins", "", f.super, 200)
	if !strings.Contains(fmt.Sprint(list), "1.0.1") {
		t.Errorf("the plugin list does not show 1.0.1: %v", list)
	}
	rec := f.record("samples", id)
	from, to := felling(num(val(rec, "last_ring")), num(val(rec, "sapwood")), false)
	if num(val(rec, "felling_from")) != from || num(val(rec, "felling_to")) != to {
		t.Errorf("after the upgrade: %v", obj(rec, "core"))
	}
}

// dendroQueries: the operator by the plugin's name over HTTP, checked
// against the overlap worked out here from the stored ranges; the summary
// route as a reader; a recomputation job rewriting a stale range as the
// plugin (its version says so).
func dendroQueries(t *testing.T, f *fixture) {
	all := f.json("POST", "/records/samples", `{"fields":["id","felling_from","felling_to"],"per_page":500}`, f.reader, 200)
	want := map[int64]bool{}
	for _, r := range all["data"].([]any) {
		row := r.(map[string]any)
		from, ok := num(row["felling_from"]).(int64)
		to, closed := num(row["felling_to"]).(int64)
		if ok && from <= 1500 && (!closed || to >= 1495) {
			want[num(row["id"]).(int64)] = true
		}
	}
	if len(want) == 0 {
		t.Fatal("no sample overlaps 1495–1500: the test proves nothing")
	}
	for _, q := range []string{
		`/records/samples?filter[dendro][_felled_between]=[1495,1500]&fields=id&per_page=500`,
		`/records/samples?filter[felling_from][_felled_between]=[1495,1500]&fields=id&per_page=500`,
	} {
		got := map[int64]bool{}
		for _, r := range f.json("GET", q, "", f.reader, 200)["data"].([]any) {
			got[num(r.(map[string]any)["id"]).(int64)] = true
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	if status, code, body := f.code("GET", `/records/samples?filter[code][_felled_between]=[1495,1500]`, "", f.reader); status != 400 || code != "invalid_filter" {
		t.Errorf("the operator under a field it does not serve: %d %s %v", status, code, body)
	}

	sum := f.json("GET", "/dendro/summary/samples", "", f.reader, 200)
	if int(sum["samples"].(float64)) != len(all["data"].([]any)) || sum["dated"].(float64) < 3 {
		t.Errorf("summary %v", sum)
	}

	// A stale range (as a changed sapwood model leaves them), rewritten by
	// the recomputation job as the plugin.
	id := f.create("samples", `{"core":{"code":"R","first_ring":1350,"last_ring":1450,"sapwood":30}}`)
	f.sql(fmt.Sprintf(`UPDATE %s SET felling_from = 1, felling_to = 2 WHERE id = %d`, f.app.DB.Qualify("samples"), id))
	j := runJob(t, f, "POST", "/dendro/recompute/samples")
	if j["state"] != "done" || obj(j, "result", "body")["updated"] != 1.0 {
		t.Fatalf("recompute: %v", j)
	}
	rec := f.record("samples", id)
	if num(val(rec, "felling_from")) != int64(1450) || num(val(rec, "felling_to")) != int64(1470) {
		t.Errorf("recomputed %v–%v, want 1450–1470", val(rec, "felling_from"), val(rec, "felling_to"))
	}
	vs := f.json("GET", fmt.Sprintf("/record/samples/%d/versions", id), "", f.reader, 200)["versions"].([]any)
	if len(vs) == 0 || vs[0].(map[string]any)["actor"] != "plugin:dendro" {
		t.Errorf("the recomputation's version: %v", vs)
	}
	if status, _, _ := f.code("POST", "/dendro/recompute/samples", "", f.writer); status != 403 {
		t.Errorf("a writer starts the recomputation: %d", status)
	}
}

// on is the fixture with its requests failing t, a subtest, rather than
// the test that made it.
func (f *fixture) on(t *testing.T) *fixture {
	c := *f
	c.t = t
	return &c
}
