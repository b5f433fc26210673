package realtime_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// The zero-leak test (issue 31, "Done when", first bullet). Three users
// with different privileges and row subsets each hold a real stream with a
// filter subscription and a record subscription on finds. After every one
// of 1,000 seeded random operations (creates, updates that move rows into
// and out of filters and subsets, deletes, privilege changes), what each
// user should be told is computed without the realtime code: a list and a
// read as that user over HTTP, diffed with the previous snapshot, give the
// expected create/update/enter/leave/delete events and their records; the
// stream must then deliver exactly those, event by event.

// leakUser is one subscriber and what the test last saw as them.
type leakUser struct {
	name   string
	id     int64
	email  string
	token  string
	filter string // the filter subscription's filter (JSON)
	pinned int64  // the record subscription's record
	stream *client
	denied bool // the table is refused to them now
	state  int  // which of the user's privilege variants is in force
	// the snapshot: ids the filtered list shows, and whether the pinned
	// record is among their rows.
	listed    map[int64]bool
	pinnedOK  bool
	lastEvent int64
}

// want is one expected event.
type want struct {
	name string
	tb   string
	id   int64
	subs []string
	rec  map[string]any // nil for leave and delete (and the beacon, not compared)
	ver  string         // the ETag a read gave, for record events
}

type leakRun struct {
	t       *testing.T
	h       *harness
	admin   string
	users   []*leakUser
	beacon  int64 // a record of "marks" everyone reads: see barrier
	lastIDs map[int64]bool
}

// privilege variants each user cycles through (POST /user/{id}/privileges).
var leakVariants = [][]string{
	// the whole table, as reader then as writer: still every row.
	{`{"table_name":"finds","privilege":30}`, `{"table_name":"finds","privilege":20}`},
	// a row subset by a field value, two different ones.
	{`{"table_name":"finds","privilege":30,"subset":{"keep":{"_eq":"yes"}}}`, `{"table_name":"finds","privilege":30,"subset":{"weight":{"_gte":5}}}`},
	// allowed, then the table denied by a per-table override.
	{`{"table_name":"finds","privilege":30}`, `{"table_name":"finds","privilege":40}`},
}

func TestZeroLeak(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		seed := time.Now().UnixNano()
		if s := strings.TrimSpace(testSeed()); s != "" {
			seed, _ = strconv.ParseInt(s, 10, 64)
		}
		t.Logf("seed %d (STRATA_LEAK_SEED=%d repeats this run)", seed, seed)
		rng := rand.New(rand.NewSource(seed))
		h := newHarness(t, e, server.Deps{})
		r := &leakRun{t: t, h: h, admin: h.login(t, "admin@example.org")}
		ctx := t.Context()
		now := time.Now().UTC()
		if _, err := schema.CreateTable(ctx, h.app.DB, schema.TableDef{Name: "marks", Label: "Marks"}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.AddField(ctx, h.app.DB, "marks", schema.FieldDef{Name: "n", Label: "N"}, now); err != nil {
			t.Fatal(err)
		}
		r.beacon = r.write(http.MethodPost, "/dig/api/record/marks", `{"core":{"n":"0"}}`)

		var live []int64
		for i := range 20 {
			live = append(live, r.write(http.MethodPost, "/dig/api/record/finds", r.findBody(rng, "init"+strconv.Itoa(i))))
		}
		filters := []string{`{"weight":{"_gt":10}}`, `{"weight":{"_lt":20}}`, `{"keep":{"_eq":"no"}}`}
		for i, name := range []string{"whole", "subset", "denied"} {
			email := name + "@example.org"
			u := testenv.NewUser(t, h.app, name, email, auth.Reader)
			lu := &leakUser{name: name, id: u.ID, email: email, filter: filters[i], pinned: live[i]}
			r.setPrivilege(lu, 0)
			lu.token = h.login(t, email)
			r.users = append(r.users, lu)
			r.open(lu, "")
		}

		counts := map[string]int{}
		spent := map[string]time.Duration{}
		for step := range 1000 {
			var kind string
			switch x := rng.Intn(100); {
			case len(live) < 10 || (x < 22 && len(live) < 60):
				kind = "create"
			case x < 70:
				kind = "update"
			case x < 88:
				kind = "delete"
			default:
				kind = "privilege"
			}
			counts[kind]++
			t0 := time.Now()
			tag := "s" + strconv.Itoa(step)
			switch kind {
			case "create":
				id := r.write(http.MethodPost, "/dig/api/record/finds", r.findBody(rng, tag))
				live = append(live, id)
				r.expectChange("create", id)
			case "update":
				id := live[rng.Intn(len(live))]
				var fields []string
				if rng.Intn(3) > 0 {
					fields = append(fields, fmt.Sprintf(`"weight":%d`, rng.Intn(31)))
				}
				if rng.Intn(2) == 0 {
					fields = append(fields, fmt.Sprintf(`"keep":%q`, []string{"yes", "no"}[rng.Intn(2)]))
				}
				// A note that is new each time: every update changes the record.
				fields = append(fields, fmt.Sprintf(`"note":%q`, tag))
				r.write(http.MethodPost, "/dig/api/record/finds/"+strconv.FormatInt(id, 10), `{"core":{`+strings.Join(fields, ",")+`}}`)
				r.expectChange("update", id)
			case "delete":
				// The pinned records stay: their subscriptions would see
				// nothing more.
				i := rng.Intn(len(live))
				id := live[i]
				if id == r.users[0].pinned || id == r.users[1].pinned || id == r.users[2].pinned {
					counts[kind]--
					counts["update"]++
					r.write(http.MethodPost, "/dig/api/record/finds/"+strconv.FormatInt(id, 10), fmt.Sprintf(`{"core":{"weight":%d,"note":%q}}`, rng.Intn(31), tag))
					r.expectChange("update", id)
					break
				}
				r.write(http.MethodDelete, "/dig/api/record/finds/"+strconv.FormatInt(id, 10), "")
				live = append(live[:i], live[i+1:]...)
				r.expectChange("delete", id)
			case "privilege":
				r.privilegeChange(r.users[rng.Intn(len(r.users))])
			}
			spent[kind] += time.Since(t0)
			if t.Failed() {
				t.Fatalf("step %d (%s), seed %d", step, kind, seed)
			}
		}
		t.Logf("operations: %v %v", counts, spent)
	})
}

// testSeed lets a failing run be repeated.
func testSeed() string { return os.Getenv("STRATA_LEAK_SEED") }

func (r *leakRun) findBody(rng *rand.Rand, tag string) string {
	return fmt.Sprintf(`{"core":{"label":%q,"keep":%q,"weight":%d,"note":%q}}`, "L"+tag, []string{"yes", "no"}[rng.Intn(2)], rng.Intn(31), tag)
}

// write makes a change as the admin and returns the record id it names.
func (r *leakRun) write(method, path, body string) int64 {
	r.t.Helper()
	code, out := r.h.do(r.t, method, path, r.admin, body)
	if code >= 300 {
		r.t.Fatalf("%s %s %s: %d %v", method, path, body, code, out)
	}
	n, _ := out["id"].(float64)
	return int64(n)
}

// setPrivilege puts variant v of u's privileges in force, over HTTP.
func (r *leakRun) setPrivilege(u *leakUser, v int) {
	r.t.Helper()
	idx := map[string]int{"whole": 0, "subset": 1, "denied": 2}[u.name]
	code, out := r.h.do(r.t, http.MethodPost, "/dig/api/user/"+strconv.FormatInt(u.id, 10)+"/privileges", r.admin, leakVariants[idx][v])
	if code != 200 {
		r.t.Fatalf("privileges of %s: %d %v", u.name, code, out)
	}
	u.state = v
	u.denied = idx == 2 && v == 1
}

// open (re)opens u's stream (resuming after lastEventID when given),
// subscribes as the docs say, and takes u's snapshot.
func (r *leakRun) open(u *leakUser, lastEventID string) {
	t := r.t
	t.Helper()
	hd := map[string]string{"Authorization": u.token}
	if lastEventID != "" {
		hd["Last-Event-ID"] = lastEventID
	}
	u.stream = openStream(t, r.h.hc, r.h.streamURL(), hd)
	beacon := `{"id":"b","table":"marks","record":` + strconv.FormatInt(r.beacon, 10) + `}`
	full := `[{"id":"f","table":"finds","filter":` + u.filter + `},{"id":"r","table":"finds","record":` + strconv.FormatInt(u.pinned, 10) + `},` + beacon + `]`
	if u.denied {
		// Refused with the code a list of the table gives, and nothing
		// of the table is delivered afterwards (the expectations say none).
		lc, list := r.h.do(t, http.MethodGet, "/dig/api/records/finds", u.token, "")
		code, body := r.h.do(t, http.MethodPost, "/dig/api/realtime/subscriptions", u.token, `{"client_id":"`+u.stream.id+`","subscriptions":`+full+`}`)
		if code != lc || code != http.StatusForbidden || body["code"] != list["code"] {
			t.Fatalf("%s denied the table: subscribe %d %v, list %d %v", u.name, code, body, lc, list)
		}
		r.h.subscribe(t, u.token, u.stream.id, `[`+beacon+`]`)
	} else {
		r.h.subscribe(t, u.token, u.stream.id, full)
	}
	u.listed, u.pinnedOK = r.snapshot(u, true)
}

// snapshot is what a list (with the subscription's filter) and, with
// pinned, a read of the pinned record as u show now (a change of another
// record leaves the read as it was).
func (r *leakRun) snapshot(u *leakUser, pinned bool) (map[int64]bool, bool) {
	t := r.t
	t.Helper()
	if u.denied {
		return map[int64]bool{}, false
	}
	code, out := r.h.do(t, http.MethodPost, "/dig/api/records/finds", u.token, `{"filter":`+u.filter+`,"ids_only":true,"per_page":200,"total":false}`)
	if code != 200 {
		t.Fatalf("list as %s: %d %v", u.name, code, out)
	}
	ids := map[int64]bool{}
	raw, _ := out["ids"].([]any)
	for _, v := range raw {
		ids[int64(v.(float64))] = true
	}
	if len(ids) >= 200 {
		t.Fatalf("the list outgrew a page")
	}
	if !pinned {
		return ids, u.pinnedOK
	}
	_, ok, _ := r.read(u, "finds", u.pinned)
	return ids, ok
}

// read is GET /record/{tb}/{id} as u: the record (without the envelope's
// status), whether u may see it, and its ETag.
func (r *leakRun) read(u *leakUser, tb string, id int64) (map[string]any, bool, string) {
	t := r.t
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.h.srv.URL+"/dig/api/record/"+tb+"/"+strconv.FormatInt(id, 10), nil)
	req.Header.Set("Authorization", u.token)
	resp, err := r.h.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		if resp.StatusCode >= 500 || resp.StatusCode == 401 {
			t.Fatalf("read %s %d as %s: %d %s", tb, id, u.name, resp.StatusCode, b)
		}
		return nil, false, ""
	}
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	delete(rec, "status")
	return rec, true, resp.Header.Get("ETag")
}

// expectChange derives, for each user, the events change op of record id
// should give from the snapshots before and after, and checks the streams.
func (r *leakRun) expectChange(op string, id int64) {
	t := r.t
	t.Helper()
	perUser := make([][]want, len(r.users))
	for i, u := range r.users {
		listed, pinnedOK := r.snapshot(u, id == u.pinned)
		// Only the record changed may have changed what u sees.
		for x := range listed {
			if x != id && !u.listed[x] {
				t.Fatalf("%s: %d appeared in the list though %d changed", u.name, x, id)
			}
		}
		for x := range u.listed {
			if x != id && !listed[x] {
				t.Fatalf("%s: %d left the list though %d changed", u.name, x, id)
			}
		}
		type subView struct {
			sub      string
			was, is  bool
			relevant bool
		}
		views := []subView{{"f", u.listed[id], listed[id], true}, {"r", u.pinnedOK, pinnedOK, id == u.pinned}}
		var order []string
		by := map[string][]string{}
		for _, v := range views {
			if !v.relevant {
				continue
			}
			ev := ""
			switch {
			case op == "delete":
				if v.was {
					ev = "delete"
				}
			case v.is && op == "create":
				ev = "create"
			case v.is && v.was:
				ev = "update"
			case v.is:
				ev = "enter"
			case v.was:
				ev = "leave"
			}
			if ev == "" {
				continue
			}
			if _, ok := by[ev]; !ok {
				order = append(order, ev)
			}
			by[ev] = append(by[ev], v.sub)
		}
		var rec map[string]any
		var etag string
		for _, ev := range order {
			w := want{name: ev, tb: "finds", id: id, subs: by[ev]}
			if ev != "leave" && ev != "delete" {
				if rec == nil {
					var ok bool
					if rec, ok, etag = r.read(u, "finds", id); !ok {
						t.Fatalf("%s: the list shows %d, a read refuses it", u.name, id)
					}
				}
				w.rec, w.ver = rec, etag
			}
			perUser[i] = append(perUser[i], w)
		}
		u.listed, u.pinnedOK = listed, pinnedOK
	}
	r.deliver(perUser)
}

// deliver checks each stream's next events against want; when some user
// is expected to get nothing, a change of the beacon (every user's third
// subscription) follows, and its update closes every user's list: an
// event that should not have come would come before it.
func (r *leakRun) deliver(perUser [][]want) {
	t := r.t
	t.Helper()
	barrier := false
	for _, w := range perUser {
		barrier = barrier || len(w) == 0
	}
	for i, u := range r.users {
		r.check(u, perUser[i])
	}
	if barrier {
		r.write(http.MethodPost, "/dig/api/record/marks/"+strconv.FormatInt(r.beacon, 10), fmt.Sprintf(`{"core":{"n":"%d"}}`, time.Now().UnixNano()))
		for _, u := range r.users {
			r.check(u, []want{{name: "update", tb: "marks", id: r.beacon, subs: []string{"b"}}})
		}
	}
}

// check reads len(ws) events of u's stream and compares them.
func (r *leakRun) check(u *leakUser, ws []want) {
	t := r.t
	t.Helper()
	changeID := int64(0)
	for k, w := range ws {
		ev := u.stream.next(t, 20*time.Second)
		if ev.isEOF {
			t.Fatalf("%s: the stream ended; want %s %s %d", u.name, w.name, w.tb, w.id)
		}
		if k == 0 {
			changeID = ev.id
			if ev.id <= u.lastEvent {
				t.Fatalf("%s: event id %d after %d", u.name, ev.id, u.lastEvent)
			}
			u.lastEvent = ev.id
		} else if ev.id != changeID {
			t.Fatalf("%s: the events of one change have ids %d and %d", u.name, changeID, ev.id)
		}
		gotSubs, _ := ev.data["subscriptions"].([]any)
		subs := make([]string, len(gotSubs))
		for j, s := range gotSubs {
			subs[j], _ = s.(string)
		}
		id, _ := ev.data["id"].(float64)
		if ev.name != w.name || ev.data["table"] != w.tb || int64(id) != w.id || !reflect.DeepEqual(subs, w.subs) {
			t.Fatalf("%s: got %s %s, want %s %s %d %v", u.name, ev.name, ev.raw, w.name, w.tb, w.id, w.subs)
		}
		switch w.name {
		case "leave", "delete":
			for key := range ev.data {
				if key != "table" && key != "id" && key != "subscriptions" {
					t.Fatalf("%s: %s carries %q: %s", u.name, w.name, key, ev.raw)
				}
			}
		default:
			rec, _ := ev.data["record"].(map[string]any)
			if rec == nil {
				t.Fatalf("%s: %s without a record: %s", u.name, w.name, ev.raw)
			}
			if w.rec == nil {
				continue
			}
			got, _ := json.Marshal(rec)
			exp, _ := json.Marshal(w.rec)
			if string(got) != string(exp) {
				t.Fatalf("%s: %s of %d\nthe event: %s\na read:    %s", u.name, w.name, w.id, got, exp)
			}
			if v, _ := ev.data["version"].(float64); `"`+strconv.FormatInt(int64(v), 10)+`"` != w.ver {
				t.Fatalf("%s: %s of %d has version %v, a read's ETag is %s", u.name, w.name, w.id, ev.data["version"], w.ver)
			}
		}
	}
}

// privilegeChange moves u to its other privilege variant: u's stream ends
// with unauthorized; u reopens it from that event's id with a fresh set
// and a fresh snapshot (docs/api.md: reload what you show); the others get
// nothing.
func (r *leakRun) privilegeChange(u *leakUser) {
	t := r.t
	t.Helper()
	r.setPrivilege(u, 1-u.state)
	ev := u.stream.next(t, 20*time.Second)
	if ev.name != "unauthorized" || ev.data["code"] != "token_invalidated" || ev.id <= u.lastEvent {
		t.Fatalf("%s after a privilege change: %s %s (id %d, last %d)", u.name, ev.name, ev.raw, ev.id, u.lastEvent)
	}
	u.lastEvent = ev.id
	if end := u.stream.next(t, 20*time.Second); !end.isEOF {
		t.Fatalf("%s: the stream went on after unauthorized: %+v", u.name, end)
	}
	u.stream.resp.Body.Close()
	// The session may still hold (a table override keeps the token):
	// sign in again only when it does not.
	if code, _ := r.h.do(t, http.MethodPost, "/dig/api/realtime/token", u.token, ""); code == http.StatusUnauthorized {
		u.token = r.h.login(t, u.email)
	}
	r.open(u, strconv.FormatInt(ev.id, 10))
	perUser := make([][]want, len(r.users))
	r.deliver(perUser)
}
