package realtime_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// The streams of one user share their scope and the work of each change
// (shared.go); these tests check that each still gets exactly its own
// events.

// checkView builds what stream events show and compares it, row by row,
// with a list and a read as token with filter (query string form, "" for
// none).
func checkView(t *testing.T, h *harness, token, name string, evs []event, filter string) {
	t.Helper()
	view := map[int64]map[string]any{}
	for _, ev := range evs {
		id := int64(ev.data["id"].(float64))
		switch ev.name {
		case "create", "update", "enter":
			rec, _ := ev.data["record"].(map[string]any)
			if rec == nil {
				t.Fatalf("%s: %s without record: %s", name, ev.name, ev.raw)
			}
			view[id] = rec
		case "leave", "delete":
			delete(view, id)
		default:
			t.Fatalf("%s: unexpected event %s", name, ev.raw)
		}
	}
	q := "ids_only=1&per_page=1000"
	if filter != "" {
		q = filter + "&" + q
	}
	code, list := h.do(t, http.MethodGet, "/dig/api/records/finds?"+q, token, "")
	if code != 200 {
		t.Fatalf("list: %d %v", code, list)
	}
	want := map[int64]bool{}
	for _, v := range list["ids"].([]any) {
		want[int64(v.(float64))] = true
	}
	if len(want) != len(view) {
		t.Fatalf("%s: events show %d rows, a list %d (%v)", name, len(view), len(want), list["ids"])
	}
	for id, rec := range view {
		if !want[id] {
			t.Fatalf("%s: events show %d, a list does not", name, id)
		}
		_, read := h.do(t, http.MethodGet, "/dig/api/record/finds/"+strconv.FormatInt(id, 10), token, "")
		delete(read, "status")
		gotJSON, readJSON := recordJSON(rec), recordJSON(read)
		if gotJSON != readJSON {
			t.Fatalf("%s: record %d from events\n%s\nfrom a read\n%s", name, id, gotJSON, readJSON)
		}
	}
}

// TestStreamsOfOneUserGetTheirOwnEvents: a user with a row subset holds
// five streams with different filters (two the same, one with a record
// subscription too); after mixed writes moving rows in and out of the
// subset and the filters, each stream's events are what a list and a
// read with its filter show that user.
func TestStreamsOfOneUserGetTheirOwnEvents(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		h := newHarness(t, e, server.Deps{})
		ctx := context.Background()
		admin := h.login(t, "admin@example.org")
		w := testenv.NewUser(t, h.app, "Writer", "writer@example.org", auth.Writer)
		subset := `{"keep":{"_eq":"yes"}}`
		if err := auth.SaveTablePrivilege(ctx, h.app.DB, &auth.TablePrivilege{UserID: w.ID, TableName: "finds", Privilege: auth.Writer, Subset: &subset}, time.Now()); err != nil {
			t.Fatal(err)
		}
		token := h.login(t, "writer@example.org")
		watched := h.save(t, admin, 0, `{"label":"W","keep":"yes","weight":1}`)
		streams := []struct {
			subs, filter string
		}{
			{`[{"id":"heavy","table":"finds","filter":{"weight":{"_gt":5}}}]`, "filter[weight][_gt]=5"},
			{`[{"id":"heavy2","table":"finds","filter":{"weight":{"_gt":5}}}]`, "filter[weight][_gt]=5"},
			{`[{"id":"l1","table":"finds","filter":{"label":{"_eq":"L1"}}}]`, "filter[label][_eq]=L1"},
			{`[{"id":"noted","table":"finds","filter":{"note":{"_nnull":true}}}]`, "filter[note][_nnull]=true"},
			{`[{"id":"all","table":"finds"},{"id":"one","table":"finds","record":` + strconv.FormatInt(watched, 10) + `}]`, ""},
		}
		cs := make([]*client, len(streams))
		for i, s := range streams {
			cs[i] = openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": token})
			h.subscribe(t, token, cs[i].id, s.subs)
		}
		var ids []int64
		for i := range 12 {
			keep := map[bool]string{true: "yes", false: "no"}[i%3 != 0]
			label := map[bool]string{true: "L1", false: "L2"}[i%2 == 0]
			ids = append(ids, h.save(t, admin, 0, fmt.Sprintf(`{"label":%q,"keep":%q,"weight":%d}`, label, keep, i)))
		}
		h.save(t, admin, ids[1], `{"keep":"no"}`)            // leaves the subset
		h.save(t, admin, ids[0], `{"keep":"yes"}`)           // enters it
		h.save(t, admin, ids[7], `{"weight":1}`)             // leaves the heavy filter
		h.save(t, admin, ids[2], `{"weight":50,"note":"n"}`) // enters it and the noted one
		h.save(t, admin, ids[4], `{"label":"L2"}`)           // leaves l1
		h.save(t, admin, ids[5], `{"label":"L1"}`)           // enters l1
		h.save(t, token, watched, `{"weight":70}`)           // the watched record, by the user
		if code, body := h.do(t, http.MethodDelete, "/dig/api/record/finds/"+strconv.FormatInt(ids[8], 10), admin, ""); code != 200 {
			t.Fatalf("delete: %d %v", code, body)
		}
		last := h.save(t, admin, 0, `{"label":"L1","keep":"yes","weight":99,"note":"end"}`)
		for i, s := range streams {
			evs := cs[i].until(t, func(ev event) bool { return ev.name == "create" && int64(ev.data["id"].(float64)) == last })
			checkView(t, h, token, s.subs, evs, s.filter)
		}
		// The record subscription named itself on the watched record's update.
		// (Its events were checked with the whole table's above.)
	})
}

// TestSharedScopeEndsWithAPrivilegeChange: a user's new stream, opened
// after their row subset changed, is not given the scope built for their
// streams before: its events hold only the rows of the new subset.
func TestSharedScopeEndsWithAPrivilegeChange(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		h := newHarness(t, e, server.Deps{})
		admin := h.login(t, "admin@example.org")
		w := testenv.NewUser(t, h.app, "Writer", "writer@example.org", auth.Writer)
		token := h.login(t, "writer@example.org")
		before := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": token})
		h.subscribe(t, token, before.id, `[{"id":"all","table":"finds"}]`)
		// The override (through the API: its change is logged) ends that stream.
		body := `{"table_name":"finds","privilege":20,"subset":{"keep":{"_eq":"yes"}}}`
		if code, out := h.do(t, http.MethodPost, "/dig/api/user/"+strconv.FormatInt(w.ID, 10)+"/privileges", admin, body); code != 200 {
			t.Fatalf("privileges: %d %v", code, out)
		}
		if ev := before.next(t, 10*time.Second); ev.name != "unauthorized" {
			t.Fatalf("after the override: %+v", ev)
		}
		after := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": token})
		h.subscribe(t, token, after.id, `[{"id":"all","table":"finds"}]`)
		h.save(t, admin, 0, `{"label":"hidden","keep":"no"}`)
		shown := h.save(t, admin, 0, `{"label":"shown","keep":"yes"}`)
		evs := after.until(t, func(ev event) bool { return ev.name == "create" && int64(ev.data["id"].(float64)) == shown })
		if len(evs) != 1 {
			t.Fatalf("events of the new subset: %d, want only the row shown: %v", len(evs), evs[0].raw)
		}
		checkView(t, h, token, "after", evs, url.Values{"filter[keep][_eq]": {"yes"}}.Encode())
	})
}

// TestSharedScopeIsNotReusedAfterAPrivilegeChange: a user's streams share
// a scope only while their privileges are unchanged, even where the scope
// looks the same: an override on another table (what the record's lookup
// label shows) is in no field of it. The stream opened after the change
// shows the label, as a read does.
func TestSharedScopeIsNotReusedAfterAPrivilegeChange(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		h := newHarness(t, e, server.Deps{})
		ctx, now := context.Background(), time.Now().UTC()
		if _, err := schema.CreateTable(ctx, h.app.DB, schema.TableDef{Name: "sites", Label: "Sites"}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.AddField(ctx, h.app.DB, "sites", schema.FieldDef{Name: "name", Label: "Name"}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.PutTable(ctx, h.app.DB, "sites", schema.TableConfig{IDField: schema.Set("name")}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.AddField(ctx, h.app.DB, "finds", schema.FieldDef{Name: "site", Label: "Site", Type: "select", DBType: "int", IDFromTb: "sites"}, now); err != nil {
			t.Fatal(err)
		}
		admin := h.login(t, "admin@example.org")
		w := testenv.NewUser(t, h.app, "Writer", "writer@example.org", auth.Writer)
		override := func(level int) {
			t.Helper()
			body := fmt.Sprintf(`{"table_name":"sites","privilege":%d}`, level)
			if code, out := h.do(t, http.MethodPost, "/dig/api/user/"+strconv.FormatInt(w.ID, 10)+"/privileges", admin, body); code != 200 {
				t.Fatalf("privileges: %d %v", code, out)
			}
		}
		override(40) // the writer may not read sites
		code, out := h.do(t, http.MethodPost, "/dig/api/record/sites", admin, `{"core":{"name":"Pompeii"}}`)
		if code != 200 {
			t.Fatalf("site: %d %v", code, out)
		}
		site := int64(out["id"].(float64))
		token := h.login(t, "writer@example.org")
		before := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": token})
		h.subscribe(t, token, before.id, `[{"id":"all","table":"finds"}]`)
		override(30) // now it may: the stream ends
		if ev := before.next(t, 10*time.Second); ev.name != "unauthorized" {
			t.Fatalf("after the override: %+v", ev)
		}
		after := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": token})
		h.subscribe(t, token, after.id, `[{"id":"all","table":"finds"}]`)
		id := h.save(t, admin, 0, fmt.Sprintf(`{"label":"F","site":%d}`, site))
		evs := after.until(t, func(ev event) bool { return ev.name == "create" && int64(ev.data["id"].(float64)) == id })
		if !strings.Contains(evs[len(evs)-1].raw, "Pompeii") {
			t.Fatalf("the record does not show the site's label: %s", evs[len(evs)-1].raw)
		}
		checkView(t, h, token, "after", evs, "")
	})
}

// TestStreamOutlivesTheBodyTimeout: a stream is not ended by the read
// deadline a request gets for its body (STRATA_BODY_TIMEOUT): an event
// written after it passed still comes.
func TestStreamOutlivesTheBodyTimeout(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		h := newHarness(t, e, server.Deps{}, func(c *config.Config) { c.BodyTimeout = 500 * time.Millisecond })
		admin := h.login(t, "admin@example.org")
		c := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin})
		h.subscribe(t, admin, c.id, `[{"id":"all","table":"finds"}]`)
		time.Sleep(1500 * time.Millisecond) // past the body timeout
		id := h.save(t, admin, 0, `{"label":"late"}`)
		if ev := c.next(t, 10*time.Second); ev.name != "create" || int64(ev.data["id"].(float64)) != id {
			t.Fatalf("after the body timeout: %+v", ev)
		}
	})
}
