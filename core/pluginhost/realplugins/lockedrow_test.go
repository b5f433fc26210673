package realplugins_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// versionContents returns the content ({core, plugins}) of every stored
// version of a record (GET /record/{tb}/{id}/versions, then
// GET /version/{id} each), oldest first.
func (f *fixture) versionContents(table string, id int64) []map[string]any {
	f.t.Helper()
	list := f.json("GET", fmt.Sprintf("/record/%s/%d/versions?per_page=200", table, id), "", f.reader, 200)
	vs, _ := list["versions"].([]any)
	if total, _ := list["total"].(float64); int(total) != len(vs) {
		f.t.Fatalf("versions: %d of %v listed", len(vs), list["total"])
	}
	out := make([]map[string]any, 0, len(vs))
	for i := len(vs) - 1; i >= 0; i-- {
		got := f.json("GET", fmt.Sprintf("/version/%v", vs[i].(map[string]any)["id"]), "", f.reader, 200)
		out = append(out, obj(got, "version", "content"))
	}
	return out
}

// hammer runs one goroutine per body maker, each sending n updates of
// the record at url (maker(k) is the k-th body, k from 1), and returns
// how the server answered them ("200 success_saved": count …).
func (f *fixture) hammer(url string, n int, makers ...func(k int) string) map[string]int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[string]int{}
	for _, body := range makers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 1; k <= n; k++ {
				rec := f.do("POST", url, body(k), f.writer)
				var m map[string]any
				_ = json.Unmarshal(rec.Body.Bytes(), &m)
				key := fmt.Sprint(rec.Code, " ", m["code"])
				if rec.Code == 400 {
					if errs, _ := m["errors"].([]any); len(errs) > 0 {
						key += fmt.Sprint(" ", errs[0].(map[string]any)["rule"])
					}
				}
				mu.Lock()
				answers[key]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return answers
}

// Two clients move one record's bounds at once, one chrono_from (between
// -100 and 50), the other chrono_to (between 100 and 10), each sending its
// bound alone: the plugin checks from ≤ to against the stored other
// bound, which is the row's Record, exactly what is stored when the save
// is written. No stored version (nor the record) ends up dated from after
// to, and every save is either written or refused with the order rule.
func TestRealPluginChronologyConcurrentPartialUpdates(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, nil)
		f.activate("finds", "chronology", "chronology")
		id := f.create("finds", `{"core":{"code":"A","chrono_from":-100,"chrono_to":100}}`)
		const n = 60
		answers := f.hammer(fmt.Sprintf("/record/finds/%d", id), n,
			func(k int) string { return fmt.Sprintf(`{"core":{"chrono_from":%d}}`, []int{-100, 50}[k%2]) },
			func(k int) string { return fmt.Sprintf(`{"core":{"chrono_to":%d}}`, []int{100, 10}[k%2]) })
		saved := answers["200 success_saved"]
		if saved+answers["400 validation_failed order"] != 2*n || saved == 0 {
			t.Errorf("answers: %v", answers)
		}
		contents := f.versionContents("finds", id)
		if len(contents) != saved {
			t.Errorf("%d versions after %d saves", len(contents), saved)
		}
		cur := f.record("finds", id)
		rows := append(contents, map[string]any{"core": map[string]any{
			"chrono_from": val(cur, "chrono_from"), "chrono_to": val(cur, "chrono_to")}})
		wrong := 0
		for i, c := range rows {
			core := obj(c, "core")
			from, okFrom := core["chrono_from"].(float64)
			to, okTo := core["chrono_to"].(float64)
			if okFrom && okTo && from > to {
				if wrong++; wrong <= 3 {
					t.Errorf("row %d of %d (the last is the record): dated %v to %v", i, len(rows), from, to)
				}
			}
		}
		if wrong > 0 {
			t.Errorf("%d of %d stored rows are dated from after to", wrong, len(rows))
		}
	})
}

// Two clients update one radiocarbon row at once, one sending bp, the
// other bp_error: the plugin calibrates from the row's Record, so every
// stored version of the record (and the record) has the ranges of its own
// stored bp and bp_error, as the calibration route gives them.
func TestRealPluginRadiocarbonConcurrentPartialUpdates(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, nil)
		f.activate("finds", "radiocarbon", "radiocarbon")
		id := f.create("finds", `{"core":{"code":"C1"},"plugins":{"finds_radiocarbon":[{"fields":{"lab_code":"OxA-1","bp":2000,"bp_error":30}}]}}`)
		data := obj(f.record("finds", id), "plugins", "finds_radiocarbon")["data"].([]any)
		rowID := fmt.Sprint(num(obj(data[0].(map[string]any), "id")["val"]))
		const n = 60
		answers := f.hammer(fmt.Sprintf("/record/finds/%d", id), n,
			func(k int) string {
				return fmt.Sprintf(`{"plugins":{"finds_radiocarbon":[{"id":%s,"fields":{"bp":%d}}]}}`, rowID, 2000+10*k)
			},
			func(k int) string {
				return fmt.Sprintf(`{"plugins":{"finds_radiocarbon":[{"id":%s,"fields":{"bp_error":%d}}]}}`, rowID, 20+k)
			})
		if answers["200 success_saved"] != 2*n {
			t.Errorf("answers: %v, want %d saves", answers, 2*n)
		}
		contents := f.versionContents("finds", id)
		if len(contents) != 2*n {
			t.Errorf("%d versions after %d saves", len(contents), 2*n)
		}
		// The stored rows: each version's, then the record's.
		var rows []map[string]any
		for _, c := range contents {
			list, _ := obj(c, "plugins")["finds_radiocarbon"].([]any)
			if len(list) != 1 {
				t.Fatalf("version plugins: %v", obj(c, "plugins"))
			}
			rows = append(rows, list[0].(map[string]any))
		}
		cur := obj(f.record("finds", id), "plugins", "finds_radiocarbon")["data"].([]any)[0].(map[string]any)
		last := map[string]any{}
		for k := range cur {
			last[k] = obj(cur, k)["val"]
		}
		rows = append(rows, last)
		if num(last["bp"]) != int64(2000+10*n) || num(last["bp_error"]) != int64(20+n) {
			t.Errorf("current inputs: bp %v ± %v, want the last of each client", last["bp"], last["bp_error"])
		}

		ranges := map[[2]int64][4]any{} // (bp, error) → the route's ranges
		wrong := 0
		for i, r := range rows {
			bp, bpErr := num(r["bp"]).(int64), num(r["bp_error"]).(int64)
			key := [2]int64{bp, bpErr}
			want, ok := ranges[key]
			if !ok {
				cal := f.json("GET", fmt.Sprintf("/radiocarbon/calibrate?bp=%d&error=%d", bp, bpErr), "", f.reader, 200)
				s1, s2 := obj(cal, "sigma1"), obj(cal, "sigma2")
				want = [4]any{num(s1["from"]), num(s1["to"]), num(s2["from"]), num(s2["to"])}
				ranges[key] = want
			}
			got := [4]any{num(r["cal_1s_from"]), num(r["cal_1s_to"]), num(r["cal_2s_from"]), num(r["cal_2s_to"])}
			if got != want {
				if wrong++; wrong <= 3 {
					t.Errorf("row %d of %d (the last is the record): %d ± %d stored with %v, calibrates to %v", i, len(rows), bp, bpErr, got, want)
				}
			}
		}
		if wrong > 0 {
			t.Errorf("%d of %d stored rows have ranges that do not match their bp and bp_error", wrong, len(rows))
		}
	})
}
