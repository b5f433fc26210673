package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/matrix"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// strictDig is the dig fixture with relations on the units, labelled by
// their code; units is created strict (a new table).
func strictDig(t *testing.T, e store.Engine) *digFixture {
	t.Helper()
	f := newDig(t, e)
	if _, err := schema.PutTable(context.Background(), f.app.DB, "units", schema.TableConfig{RS: schema.RSOn(true), IDField: schema.Set("code")}, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	return f
}

func relBody(a int64, r int, b int64) string {
	return fmt.Sprintf(`{"first":%d,"relation":%d,"second":%d}`, a, r, b)
}

// storedGraph is the table's relations as stored, for core/matrix.
func storedGraph(t *testing.T, db *store.DB, tb string) (*matrix.Graph, int) {
	t.Helper()
	rows, err := db.Query(t.Context(), `SELECT first, second, relation FROM `+db.Sys("rs")+` WHERE tb = ?`, tb)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	g, n := matrix.New(), 0
	for rows.Next() {
		var a, b int64
		var r int
		if err := rows.Scan(&a, &b, &r); err != nil {
			t.Fatal(err)
		}
		g.Relate(a, r, b)
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return g, n
}

// TestStrictRelationsRefuseCycles: on a strict table a relation that
// would close a cycle of above/below (through same-as classes too) is
// refused with 409 rs_cycle and the closed path; one that closes nothing
// is saved; a table with rs_strict off takes any.
func TestStrictRelationsRefuseCycles(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := strictDig(t, e)
		rs := "/dig/api/record/units/rs"
		_, cfg := f.do(t, f.super, "GET", "/dig/api/config/table/units", "")
		if !strings.Contains(fmt.Sprint(cfg), "rs_strict:true") {
			t.Fatalf("a new table is strict: %v", cfg)
		}
		type rel struct {
			a string
			r int
			b string
		}
		for _, c := range []struct {
			name     string
			setup    []rel
			try      rel
			status   int
			code     string
			pathText string // the path's labels, as the refusal gives them
		}{
			// A pair is one relation, stored once: its reverse is a
			// duplicate, never a 2-cycle.
			{name: "direct 2-cycle", setup: []rel{{"A", 5, "B"}}, try: rel{"B", 5, "A"},
				status: 409, code: "relation_already_exist"},
			{name: "3-cycle written from below", setup: []rel{{"A", 5, "B"}, {"B", 5, "C"}}, try: rel{"A", 2, "C"},
				status: 409, code: "rs_cycle", pathText: "C → A → B → C"},
			{name: "3-cycle", setup: []rel{{"A", 5, "B"}, {"B", 6, "C"}}, try: rel{"C", 8, "A"},
				status: 409, code: "rs_cycle", pathText: "C → A → B → C"},
			{name: "through a same-as class", setup: []rel{{"A", 5, "B"}, {"B", 9, "C"}, {"C", 7, "D"}}, try: rel{"D", 5, "A"},
				status: 409, code: "rs_cycle", pathText: "D → A → B → C → D"},
			{name: "same as between units above and below each other", setup: []rel{{"A", 5, "B"}, {"B", 5, "C"}}, try: rel{"A", 9, "C"},
				status: 409, code: "rs_cycle", pathText: "A → B → C → A"},
			{name: "bound to between units above and below each other", setup: []rel{{"A", 5, "B"}, {"B", 5, "C"}}, try: rel{"C", 10, "A"},
				status: 409, code: "rs_cycle", pathText: "A → B → C → A"},
			{name: "above a unit of its own class", setup: []rel{{"A", 9, "B"}}, try: rel{"A", 5, "B"},
				status: 409, code: "relation_already_exist"}, // the pair is one relation
			{name: "above a unit of its own class, through a third", setup: []rel{{"A", 9, "B"}, {"B", 10, "C"}}, try: rel{"C", 2, "A"},
				status: 409, code: "rs_cycle", pathText: "A → C → B → A"},
			{name: "clean chain: a relation implied by others", setup: []rel{{"A", 5, "B"}, {"B", 5, "C"}}, try: rel{"A", 5, "C"},
				status: 200, code: "ok_relation_add"},
			{name: "clean chain: below the bottom", setup: []rel{{"A", 5, "B"}, {"B", 5, "C"}}, try: rel{"D", 1, "C"},
				status: 200, code: "ok_relation_add"},
			{name: "same as within one class", setup: []rel{{"A", 9, "B"}, {"B", 9, "C"}}, try: rel{"A", 10, "C"},
				status: 200, code: "ok_relation_add"},
		} {
			t.Run(c.name, func(t *testing.T) {
				// Each case on units of its own, so the cases do not meet.
				ids := map[string]int64{}
				unit := func(l string) int64 {
					if _, ok := ids[l]; !ok {
						ids[l] = f.create(t, f.writer, "units", fmt.Sprintf(`{"code":%q}`, c.name+"/"+l))
					}
					return ids[l]
				}
				for _, r := range c.setup {
					f.must(t, 200, f.writer, "POST", rs, relBody(unit(r.a), r.r, unit(r.b)))
				}
				before, n := storedGraph(t, f.app.DB, "units")
				code, m := f.do(t, f.writer, "POST", rs, relBody(unit(c.try.a), c.try.r, unit(c.try.b)))
				if code != c.status || m["code"] != c.code {
					t.Fatalf("got %d %v, want %d %s", code, m, c.status, c.code)
				}
				if c.pathText == "" {
					return
				}
				want := c.name + "/" + strings.ReplaceAll(c.pathText, " → ", " → "+c.name+"/")
				if m["path_text"] != want {
					t.Fatalf("path_text %q, want %q", m["path_text"], want)
				}
				path := m["path"].([]any)
				first, last := path[0].(map[string]any), path[len(path)-1].(map[string]any)
				if len(path) < 3 || first["id"] != last["id"] || first["label"] == nil {
					t.Fatalf("path not closed: %v", path)
				}
				for _, step := range path {
					s := step.(map[string]any)
					if ids[strings.TrimPrefix(s["label"].(string), c.name+"/")] != int64(s["id"].(float64)) {
						t.Fatalf("step %v does not name its unit (%v)", s, ids)
					}
				}
				// Nothing was written: the refusal leaves the stored graph as it was.
				if _, after := storedGraph(t, f.app.DB, "units"); after != n || len(before.Cycles()) != 0 {
					t.Fatalf("relations %d → %d after a refusal", n, after)
				}
			})
		}

		// With rs_strict off (an admin's choice) the same cycle is saved.
		f.must(t, 200, f.super, "PUT", "/dig/api/config/table/units", `{"rs_strict":false}`)
		if _, cfg = f.do(t, f.super, "GET", "/dig/api/config/table/units", ""); !strings.Contains(fmt.Sprint(cfg), "rs_strict:false") {
			t.Fatalf("rs_strict after turning it off: %v", cfg)
		}
		x := f.create(t, f.writer, "units", `{"code":"loose X"}`)
		y := f.create(t, f.writer, "units", `{"code":"loose Y"}`)
		w := f.create(t, f.writer, "units", `{"code":"loose W"}`)
		f.must(t, 200, f.writer, "POST", rs, relBody(x, 5, y))
		f.must(t, 200, f.writer, "POST", rs, relBody(y, 5, w))
		f.must(t, 200, f.writer, "POST", rs, relBody(w, 5, x))
		if g, _ := storedGraph(t, f.app.DB, "units"); len(g.Cycles()) != 1 {
			t.Fatalf("cycles after a non-strict save: %v", g.Cycles())
		}
		// Turned on again, the check sees what was saved meanwhile: a
		// relation into the loose cycle from outside closes nothing, one
		// across it does.
		f.must(t, 200, f.super, "PUT", "/dig/api/config/table/units", `{"rs_strict":true}`)
		z := f.create(t, f.writer, "units", `{"code":"loose Z"}`)
		f.must(t, 200, f.writer, "POST", rs, relBody(z, 5, x))
		if code, m := f.do(t, f.writer, "POST", rs, relBody(y, 5, z)); code != 409 || m["path_text"] != "loose Y → loose Z → loose X → loose Y" {
			t.Fatalf("cycle through relations saved while not strict: %d %v", code, m)
		}
		for _, s := range []testenv.Scenario{
			{Name: "rs_strict is a flag", Body: `{"rs_strict":"often"}`, ExpectedStatus: 400},
		} {
			s.Method, s.URL, s.Headers = "PUT", "/dig/api/config/table/units", testenv.Bearer(f.super)
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
	})
}

// TestStrictCycleHidesRowsOutsideTheSubset: a unit on the path that the
// caller may not read shows as a placeholder, without its id or label.
func TestStrictCycleHidesRowsOutsideTheSubset(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := strictDig(t, e)
		rs := "/dig/api/record/units/rs"
		top := f.create(t, f.super, "units", `{"code":"open top"}`)
		hidden := f.create(t, f.super, "units", `{"code":"secret middle"}`)
		bottom := f.create(t, f.super, "units", `{"code":"open bottom"}`)
		f.must(t, 200, f.super, "POST", rs, relBody(top, 5, hidden))
		f.must(t, 200, f.super, "POST", rs, relBody(hidden, 5, bottom))
		priv := fmt.Sprintf("/dig/api/user/%d/privileges", f.userID(t, "writer@example.org"))
		f.must(t, 200, f.super, "POST", priv, `{"table_name":"units","privilege":20,"subset":{"code":{"_starts_with":"open"}}}`)
		rec := testenv.Scenario{Method: "POST", URL: rs, Body: relBody(bottom, 5, top), Headers: testenv.Bearer(f.writer),
			ExpectedStatus: 409, ExpectedContent: []string{`"code":"rs_cycle"`, `"path_text":"open bottom → open top → … → open bottom"`, `{"hidden":true}`},
			NotExpectedContent: []string{"secret", fmt.Sprintf(`"id":%d`, hidden)}}.Run(t, f.inst.Server)
		// The admin, who reads every row, sees the whole path.
		code, m := f.do(t, f.super, "POST", rs, relBody(bottom, 5, top))
		if code != 409 || m["path_text"] != "open bottom → open top → secret middle → open bottom" {
			t.Fatalf("admin's refusal: %d %v (writer's: %s)", code, m, rec.Body.String())
		}
		// Deleting a record keeps its relations (the matrix report lists
		// them): they still order the units, and the deleted one, which
		// no one can read, is a placeholder for everyone.
		f.must(t, 200, f.super, "DELETE", fmt.Sprintf("/dig/api/record/units/%d", hidden), "")
		if code, m = f.do(t, f.super, "POST", rs, relBody(bottom, 5, top)); code != 409 || m["path_text"] != "open bottom → open top → … → open bottom" {
			t.Fatalf("refusal through a deleted record: %d %v", code, m)
		}
	})
}

// TestStrictCacheFollowsOtherWrites: the in-memory graph is trusted only
// at the table's rs_gen, so a relation deleted through the API, and
// relations written around it (another node, the command line: straight
// into sys_rs), are seen by the very next check.
func TestStrictCacheFollowsOtherWrites(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f, node2 := twoNodes(t, e)
		rs := "/dig/api/record/units/rs"
		a := f.create(t, f.writer, "units", `{"code":"A"}`)
		b := f.create(t, f.writer, "units", `{"code":"B"}`)
		c := f.create(t, f.writer, "units", `{"code":"C"}`)
		d := f.create(t, f.writer, "units", `{"code":"D"}`)
		_, m := f.do(t, f.writer, "POST", rs, relBody(a, 5, b))
		ab := int64(m["id"].(float64))
		f.must(t, 200, f.writer, "POST", rs, relBody(b, 5, c))
		// The graph is cached now (it answered the saves above).
		if code, m := f.do(t, f.writer, "POST", rs, relBody(c, 5, a)); code != 409 || m["path_text"] != "C → A → B → C" {
			t.Fatalf("cycle before the delete: %d %v", code, m)
		}
		f.must(t, 200, f.writer, "DELETE", fmt.Sprintf("/dig/api/rs/%d", ab), "")
		f.must(t, 200, f.writer, "POST", rs, relBody(c, 5, a)) // no longer a cycle: B, C, A

		// A above D, written by "another node": straight into sys_rs.
		ctx := t.Context()
		if _, err := f.app.DB.Exec(ctx, `INSERT INTO `+f.app.DB.Sys("rs")+` (tb, first, second, relation, created_at) VALUES (?, ?, ?, 5, ?)`,
			"units", a, d, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		if code, m := f.do(t, f.writer, "POST", rs, relBody(d, 5, b)); code != 409 || m["path_text"] != "D → B → C → A → D" {
			t.Fatalf("cycle through a relation written around the API: %d %v", code, m)
		}
		// And a relation removed around the API (C above A, stored as A
		// below C) frees the way again.
		if _, err := f.app.DB.Exec(ctx, `DELETE FROM `+f.app.DB.Sys("rs")+` WHERE tb = ? AND first = ? AND second = ?`, "units", a, c); err != nil {
			t.Fatal(err)
		}
		f.must(t, 200, f.writer, "POST", rs, relBody(d, 5, b))

		// A relation saved by the second node (its own handle and graph):
		// D above B above C... C above E there, E above D here closes
		// D → B → C → E → D on this node, whose graph was cached before.
		e5 := f.create(t, f.writer, "units", `{"code":"E"}`)
		f.must(t, 409, f.writer, "POST", rs, relBody(c, 5, d)) // warm this node's graph: D → B → C
		tok2 := testenv.Login(t, node2, "dig", "writer@example.org", testenv.Password)
		if code, body := post(node2, tok2, rs, relBody(c, 5, e5)); code != 200 {
			t.Fatalf("save on the second node: %d %s", code, body)
		}
		if code, m := f.do(t, f.writer, "POST", rs, relBody(e5, 5, d)); code != 409 || m["path_text"] != "E → D → B → C → E" {
			t.Fatalf("cycle through the second node's relation: %d %v", code, m)
		}
	})
}

// post is one request from a goroutine (testing.T's Fatal is for the
// test's own goroutine): status and body.
func post(h http.Handler, token, url, body string) (int, string) {
	req := httptest.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

// TestStrictConcurrentSavesCloseNoCycle: many relations saved at once,
// each pair of which would close a cycle, through two servers on the same
// storage (two nodes, each with its own handle and graph cache): of each
// opposite pair exactly one is saved, and the stored matrix has no cycle.
func TestStrictConcurrentSavesCloseNoCycle(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f, node2 := twoNodes(t, e)
		tok2 := testenv.Login(t, node2, "dig", "writer@example.org", testenv.Password)
		rs := "/dig/api/record/units/rs"
		const n = 12
		units := make([]int64, n)
		for i := range units {
			units[i] = f.create(t, f.writer, "units", fmt.Sprintf(`{"code":"U%d"}`, i))
		}
		type try struct{ a, b int64 }
		var tries []try
		// Every pair both ways (each pair's two saves would make a
		// 2-cycle), plus a ring's worth of longer cycles among them.
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if (i+j)%3 == 0 {
					tries = append(tries, try{units[i], units[j]}, try{units[j], units[i]})
				}
			}
		}
		var mu sync.Mutex
		codes := map[int]int{}
		saved := map[[2]int64]bool{}
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8) // bounded: eight saves in flight
		for i, tr := range tries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				h, tok := f.inst.Server, f.writer
				if i%2 == 1 {
					h, tok = node2, tok2
				}
				code, body := post(h, tok, rs, relBody(tr.a, 5, tr.b))
				mu.Lock()
				defer mu.Unlock()
				codes[code]++
				if code == 200 {
					saved[[2]int64{tr.a, tr.b}] = true
				} else if code != 409 || !strings.Contains(body, `"code":"rs_cycle"`) && !strings.Contains(body, `"code":"relation_already_exist"`) {
					codes[-1]++
					t.Errorf("save %d above %d: %d %s", tr.a, tr.b, code, body)
				}
			}()
		}
		wg.Wait()
		for k := range saved {
			if saved[[2]int64{k[1], k[0]}] {
				t.Errorf("both %d above %d and the reverse were saved", k[0], k[1])
			}
		}
		g, stored := storedGraph(t, f.app.DB, "units")
		if cy := g.Cycles(); len(cy) != 0 {
			t.Fatalf("stored matrix has cycles: %v", cy)
		}
		if stored != len(saved) || codes[200] == 0 || codes[409] == 0 {
			t.Fatalf("stored %d, saved %d, answers %v", stored, len(saved), codes)
		}
	})
}

// twoNodes is the strict dig fixture and a second server on the same
// storage, as a second node is: its own registry, app handles and caches
// (one instance keyring, as nodes share it).
func twoNodes(t *testing.T, e store.Engine) (*digFixture, *server.Server) {
	t.Helper()
	backend, kr := testenv.NewBackend(t, e), testenv.Keyring(t)
	registry := func() *apps.Registry {
		reg := apps.NewRegistry(backend, apps.Options{PasswordCost: bcrypt.MinCost, Logger: testenv.Logger(), Secrets: kr})
		t.Cleanup(func() { // before the backend's own cleanup (registered first)
			if a, err := reg.Get(context.Background(), "dig"); err == nil {
				_ = a.DB.Close()
			}
		})
		return reg
	}
	f := newDigDeps(t, e, server.Deps{Apps: registry()})
	if _, err := schema.PutTable(context.Background(), f.app.DB, "units", schema.TableConfig{RS: schema.RSOn(true), IDField: schema.Set("code")}, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	return f, testenv.NewInstanceWith(t, e, server.Deps{Apps: registry()}).Server
}
