package pluginhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// versionCores returns the core of every stored version of a record
// (GET /record/{tb}/{id}/versions, then GET /version/{id} each), oldest
// first, with the plugin rows of each under "plugins".
func (f *fixture) versionContents(table string, id any) []map[string]any {
	f.t.Helper()
	list := f.json("GET", fmt.Sprintf("/digs/api/record/%s/%v/versions?per_page=200", table, id), "", f.reader, 200)
	vs, _ := list["versions"].([]any)
	if total, _ := list["total"].(float64); int(total) != len(vs) {
		f.t.Fatalf("versions: %d of %v listed", len(vs), list["total"])
	}
	out := make([]map[string]any, 0, len(vs))
	for i := len(vs) - 1; i >= 0; i-- {
		v := vs[i].(map[string]any)
		got := f.json("GET", fmt.Sprintf("/digs/api/version/%v", v["id"]), "", f.reader, 200)
		content, _ := got["version"].(map[string]any)["content"].(map[string]any)
		out = append(out, content)
	}
	return out
}

// fieldErrors are the errors of a 400 validation_failed answer.
func fieldErrors(t testing.TB, body []byte) []map[string]any {
	t.Helper()
	var m struct {
		Code   string           `json:"code"`
		Errors []map[string]any `json:"errors"`
	}
	if err := json.Unmarshal(body, &m); err != nil || m.Code != "validation_failed" {
		t.Fatalf("not validation_failed: %s", body)
	}
	return m.Errors
}

// num reads a JSON number (nil when absent or null).
func num(v any) (float64, bool) {
	n, ok := v.(float64)
	return n, ok
}

// ringsWrong reports why a stored rings row's computed range does not
// match its inputs ("" when it does).
func ringsWrong(core map[string]any) string {
	last, okLast := num(core["last_ring"])
	sap, okSap := num(core["sapwood"])
	from, _ := num(core["felling_from"])
	to, _ := num(core["felling_to"])
	if !okLast || !okSap {
		if core["felling_from"] != nil || core["felling_to"] != nil {
			return fmt.Sprintf("a range without its inputs: %v", core)
		}
		return ""
	}
	margin := 10.0
	if core["species"] == "pine" {
		margin = 30
	}
	if from != last+sap || to != last+sap+margin {
		return fmt.Sprintf("last_ring %v + sapwood %v (%v): felling %v–%v", last, sap, core["species"], core["felling_from"], core["felling_to"])
	}
	return ""
}

// The rings hook computes from the row's Record only: two clients
// updating one record at once, one sending last_ring, the other sapwood,
// leave every stored version (and the record) with a felling range that
// matches its stored inputs. The hooks run outside the save's
// transaction, so the server checks the record's version under its lock
// and runs the hooks again when another save slipped in.
func TestHookRecordConcurrentPartialUpdates(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), nil)
		if _, err := schema.AddField(context.Background(), f.app.DB, "finds", schema.FieldDef{Name: "species"}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		f.activate("finds", "rings")
		body := f.json("POST", "/digs/api/record/finds", `{"core":{"code":"R1","species":"oak","first_ring":1,"last_ring":100,"sapwood":0}}`, f.writer, 200)
		id := fmt.Sprint(body["id"])

		const n = 60
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := map[string]int{}
		for g, field := range []string{"last_ring", "sapwood"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 1; k <= n; k++ {
					rec := f.do("POST", "/digs/api/record/finds/"+id, fmt.Sprintf(`{"core":{%q:%d}}`, field, 100*g+k), f.writer)
					var m map[string]any
					_ = json.Unmarshal(rec.Body.Bytes(), &m)
					mu.Lock()
					codes[fmt.Sprint(rec.Code, " ", m["code"])]++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if codes["200 success_saved"] != 2*n {
			t.Errorf("answers: %v, want %d saves", codes, 2*n)
		}
		contents := f.versionContents("finds", id)
		if len(contents) < 2*n {
			t.Fatalf("%d versions after %d updates", len(contents), 2*n)
		}
		wrong := 0
		for i, c := range contents {
			if why := ringsWrong(c["core"].(map[string]any)); why != "" {
				wrong++
				if wrong <= 3 {
					t.Errorf("version %d: %s", i, why)
				}
			}
		}
		cur := f.json("GET", "/digs/api/record/finds/"+id, "", f.reader, 200)
		current := map[string]any{}
		for _, k := range []string{"last_ring", "sapwood", "felling_from", "felling_to", "species"} {
			current[k] = core(cur, k)
		}
		if why := ringsWrong(current); why != "" {
			wrong++
			t.Errorf("current record: %s", why)
		}
		if current["last_ring"] != float64(n) || current["sapwood"] != float64(100+n) {
			t.Errorf("current inputs: %v, want the last of each client", current)
		}
		if wrong > 0 {
			t.Errorf("%d of %d stored rows have a range that does not match their inputs", wrong, len(contents)+1)
		}
	})
}

// A create calls the hook even when it sends none of the feature's
// columns (the rings hook wants a first ring on a new row); an update
// calls it when it sends a DependsOn field (species: the margin), not
// when it sends other fields; a DependsOn name the table lacks is simply
// absent from the Record.
func TestHookOnCreatesAndDependsOn(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), nil)
		if _, err := schema.AddField(context.Background(), f.app.DB, "finds", schema.FieldDef{Name: "species"}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		f.activate("finds", "rings")
		calls := func() float64 {
			return f.json("GET", "/digs/api/testplug/stats", "", f.reader, 200)["rings_calls"].(float64)
		}

		rec := f.do("POST", "/digs/api/record/finds", `{"core":{"code":"X1"}}`, f.writer)
		if rec.Code != 400 {
			t.Fatalf("create without the feature's columns: %d %s, want 400 from the hook", rec.Code, rec.Body)
		}
		if fes := fieldErrors(t, rec.Body.Bytes()); len(fes) != 1 || fes[0]["field"] != "first_ring" || fes[0]["rule"] != "required" {
			t.Errorf("errors: %v", fes)
		}
		if got := f.count("finds"); got != 0 {
			t.Errorf("rows after the refused create: %d", got)
		}

		body := f.json("POST", "/digs/api/record/finds", `{"core":{"code":"R1","species":"oak","first_ring":1,"last_ring":50,"sapwood":5}}`, f.writer, 200)
		id := fmt.Sprint(body["id"])
		read := func() (any, any) {
			r := f.json("GET", "/digs/api/record/finds/"+id, "", f.reader, 200)
			return core(r, "felling_from"), core(r, "felling_to")
		}
		if from, to := read(); from != float64(55) || to != float64(65) {
			t.Errorf("after create: %v–%v, want 55–65", from, to)
		}
		before := calls()
		f.json("POST", "/digs/api/record/finds/"+id, `{"core":{"code":"R1b"}}`, f.writer, 200)
		if got := calls(); got != before {
			t.Errorf("an update sending neither the feature's columns nor its dependencies called the hook (%v → %v)", before, got)
		}
		f.json("POST", "/digs/api/record/finds/"+id, `{"core":{"species":"pine"}}`, f.writer, 200)
		if got := calls(); got != before+1 {
			t.Errorf("an update sending a DependsOn field: hook calls %v → %v", before, got)
		}
		if from, to := read(); from != float64(55) || to != float64(85) {
			t.Errorf("after the species changed: %v–%v, want 55–85 (the pine margin)", from, to)
		}
	})
}

// When the plugin refuses a value the server's own check refuses too (an
// int column sent text), the client gets one error for it, the plugin's:
// on the record's columns and on child rows, on create and update.
func TestOneErrorPerRefusedValue(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, pluginDir(t, "testplug"), nil)
		f.activate("finds", "rings")
		f.activate("finds", "samples")
		body := f.json("POST", "/digs/api/record/finds", `{"core":{"code":"R1","first_ring":1},
			"plugins":{"finds_samples":[{"fields":{"code":"s1","pieces":2}}]}}`, f.writer, 200)
		id := fmt.Sprint(body["id"])
		rec := f.json("GET", "/digs/api/record/finds/"+id, "", f.reader, 200)
		sample := rec["plugins"].(map[string]any)["finds_samples"].(map[string]any)["data"].([]any)[0].(map[string]any)
		sampleID := fmt.Sprint(sample["id"].(map[string]any)["val"])
		for _, c := range []struct {
			name, url, body, field, rule, table string
		}{
			{"column, create", "/digs/api/record/finds", `{"core":{"code":"R2","first_ring":1,"sapwood":"abc"}}`, "sapwood", "rings", ""},
			{"column, update", "/digs/api/record/finds/" + id, `{"core":{"sapwood":"abc"}}`, "sapwood", "rings", ""},
			{"child row, create", "/digs/api/record/finds/" + id, `{"core":{},"plugins":{"finds_samples":[{"fields":{"code":"s2","pieces":"abc"}}]}}`,
				"pieces", "whole_number", "finds_samples"},
			{"child row, update", "/digs/api/record/finds/" + id, `{"core":{},"plugins":{"finds_samples":[{"id":` + sampleID + `,"fields":{"pieces":"abc"}}]}}`,
				"pieces", "whole_number", "finds_samples"},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := f.do(http.MethodPost, c.url, c.body, f.writer)
				if r.Code != 400 {
					t.Fatalf("%d %s", r.Code, r.Body)
				}
				fes := fieldErrors(t, r.Body.Bytes())
				if len(fes) != 1 || fes[0]["field"] != c.field || fes[0]["rule"] != c.rule || (c.table != "" && fes[0]["table"] != c.table) {
					t.Errorf("errors %v, want the plugin's one on %s", fes, c.field)
				}
			})
		}
		if strings.Contains(f.logs.String(), "panic") {
			t.Errorf("logs: %s", f.logs.String())
		}
	})
}
