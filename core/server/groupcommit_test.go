package server_test

import (
	"fmt"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
)

// TestGroupedSaves sends concurrent saves of every outcome (created,
// refused by a rule, refused by a UNIQUE constraint, updated with the
// current ETag, refused with a stale one) with SQLite's group commit off,
// on and forced, and checks that each got the answer it would have got
// alone and that the versions, the change log and the edit history hold
// exactly the acknowledged saves. With grouping on, groups must form.
func TestGroupedSaves(t *testing.T) {
	for _, mode := range []struct {
		name string
		mode store.GroupMode
	}{{"off", store.GroupOff}, {"on", store.GroupOn}, {"forced", store.GroupForced}} {
		t.Run(mode.name, func(t *testing.T) {
			f := newDig(t, store.SQLite)
			f.app.DB.SetGroupMode(mode.mode)
			groups0, _ := f.app.DB.GroupStats()
			const clients, rounds = 16, 12
			own := make([]int64, clients) // each client updates its own find
			for i := range own {
				own[i] = f.create(t, f.writer, "finds", fmt.Sprintf(`{"label":"F%d","weight":1}`, i))
			}
			var mu sync.Mutex
			created := map[int64]bool{}
			updates := map[int64]int{}
			sites := map[string]int{} // name → creations acknowledged
			var wg sync.WaitGroup
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					url := "/dig/api/record/finds/" + strconv.FormatInt(own[c], 10)
					etag := ""
					for r := range rounds {
						switch r % 5 {
						case 0: // a valid create
							rec, m := f.hdo(t, f.writer, "POST", "/dig/api/record/finds", fmt.Sprintf(`{"core":{"label":"c%d","weight":%d}}`, c, r), nil)
							if rec.Code != 200 {
								t.Errorf("create: %d %v", rec.Code, m)
								continue
							}
							mu.Lock()
							created[int64(m["id"].(float64))] = true
							mu.Unlock()
						case 1: // refused by its rules
							rec, m := f.hdo(t, f.writer, "POST", "/dig/api/record/finds", `{"core":{"label":"bad","weight":500}}`, nil)
							if rec.Code != 400 || m["code"] != "validation_failed" {
								t.Errorf("invalid create: %d %v", rec.Code, m)
							}
						case 2: // a site name everyone wants: one wins
							name := "S" + strconv.Itoa(r)
							rec, m := f.hdo(t, f.writer, "POST", "/dig/api/record/sites", `{"core":{"name":"`+name+`"}}`, nil)
							switch rec.Code {
							case 200:
								mu.Lock()
								sites[name]++
								mu.Unlock()
							case 400, 409:
							default:
								t.Errorf("site %s: %d %v", name, rec.Code, m)
							}
						case 3: // an update with the current ETag
							var rec *httptest.ResponseRecorder
							var m map[string]any
							if etag == "" {
								rec, _ = f.hdo(t, f.writer, "GET", url, "", nil)
								etag = rec.Header().Get("ETag")
							}
							rec, m = f.hdo(t, f.writer, "POST", url, fmt.Sprintf(`{"core":{"weight":%d}}`, r), map[string]string{"If-Match": etag})
							if rec.Code != 200 {
								t.Errorf("update: %d %v", rec.Code, m)
								continue
							}
							stale := etag
							etag = rec.Header().Get("ETag")
							mu.Lock()
							updates[own[c]]++
							mu.Unlock()
							// and one with the ETag it replaced
							rec, m = f.hdo(t, f.writer, "POST", url, `{"core":{"weight":99}}`, map[string]string{"If-Match": stale})
							if rec.Code != 412 {
								t.Errorf("stale update: %d %v", rec.Code, m)
							}
						case 4: // an update of a field to a refused value
							rec, m := f.hdo(t, f.writer, "POST", url, `{"core":{"label":"far too long"}}`, nil)
							if rec.Code != 400 {
								t.Errorf("invalid update: %d %v", rec.Code, m)
							}
						}
					}
				}()
			}
			wg.Wait()
			db, ctx := f.app.DB, t.Context()
			count := func(q string, args ...any) int {
				t.Helper()
				var n int
				if err := db.QueryRow(ctx, q, args...).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			if n := count(`SELECT COUNT(*) FROM finds`); n != clients+len(created) {
				t.Errorf("%d finds, want %d", n, clients+len(created))
			}
			if n := count(`SELECT COUNT(*) FROM finds WHERE weight > 100 OR label = 'bad'`); n != 0 {
				t.Errorf("%d refused finds stored", n)
			}
			for name, n := range sites {
				if n != 1 || count(`SELECT COUNT(*) FROM sites WHERE name = ?`, name) != 1 {
					t.Errorf("site %s: %d acknowledged", name, n)
				}
			}
			for _, id := range own {
				if got, want := count(`SELECT COUNT(*) FROM `+db.Sys("versions")+` WHERE tb = 'finds' AND record_id = ?`, id), updates[id]; got != want {
					t.Errorf("find %d: %d versions, want %d (its updates)", id, got, want)
				}
				if got, want := count(`SELECT COUNT(*) FROM `+db.Sys("changes")+` WHERE tb = 'finds' AND record_id = ? AND op = 'update'`, id), updates[id]; got != want {
					t.Errorf("find %d: %d updates logged, want %d", id, got, want)
				}
				if got := count(`SELECT weight FROM finds WHERE id = ?`, id); got == 99 {
					t.Errorf("find %d took a stale save", id)
				}
			}
			for id := range created {
				if count(`SELECT COUNT(*) FROM `+db.Sys("changes")+` WHERE tb = 'finds' AND record_id = ? AND op = 'create'`, id) != 1 {
					t.Errorf("find %d: creation not logged once", id)
				}
			}
			if n := count(`SELECT COUNT(*) FROM ` + db.Sys("changes") + ` WHERE tb = 'finds'`); n != clients+len(created)+sumCounts(updates) {
				t.Errorf("%d changes of finds logged, want %d", n, clients+len(created)+sumCounts(updates))
			}
			groups, _ := f.app.DB.GroupStats()
			switch {
			case mode.mode == store.GroupOff && groups != groups0:
				t.Errorf("%d groups with grouping off", groups-groups0)
			case mode.mode != store.GroupOff && groups == groups0:
				t.Errorf("no group formed under %d concurrent clients", clients)
			}
			t.Logf("groups: %d", groups-groups0)
		})
	}
}

func sumCounts(m map[int64]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
