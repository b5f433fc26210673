package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// gateEvent is one event of a live stream as a real client reads it.
type gateEvent struct {
	name, raw string
	eof       bool
}

// openGateStream opens GET /realtime over real HTTP and returns the
// client_id of its connect event and its events.
func openGateStream(t *testing.T, url, who string) (string, <-chan gateEvent) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/dig/api/realtime", nil)
	req.Header.Set("Authorization", who)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	t.Cleanup(func() { resp.Body.Close() })
	ch := make(chan gateEvent, 1000)
	go func() {
		r := bufio.NewReader(resp.Body)
		var ev gateEvent
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				ch <- gateEvent{eof: true}
				close(ch)
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.raw = line[6:]
			case line == "" && ev.name != "":
				ch <- ev
				ev = gateEvent{}
			}
		}
	}()
	first := nextGateEvent(t, ch)
	id := strings.TrimSuffix(strings.TrimPrefix(first.raw, `{"client_id":"`), `"}`)
	if first.name != "connect" || id == "" {
		t.Fatalf("first event %+v", first)
	}
	return id, ch
}

func nextGateEvent(t *testing.T, ch <-chan gateEvent) gateEvent {
	t.Helper()
	select {
	case ev := <-ch:
		if ev.eof {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no event within 20s")
	}
	return gateEvent{}
}

// TestStreamIsGated is the gate walk's variant for GET /realtime (which
// the walk skips: it stays open): an admin denied finds by a per-table
// override is refused a subscription to finds, by filter or by record,
// with the code and status a list of finds gives them, and their stream
// carries nothing of finds; an admin whose finds are cut to a row subset
// is told only of the rows in it (a row leaving it is a leave without its
// values), never of the row outside, even subscribed to it by id.
func TestStreamIsGated(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		f := newDig(t, e)
		srv := httptest.NewServer(f.inst.Server)
		t.Cleanup(srv.Close)
		const api = "/dig/api"
		inside := f.create(t, f.super, "finds", `{"label":"in","notes":"`+gateInside+`"}`)
		outside := f.create(t, f.super, "finds", `{"label":"out","notes":"`+gateOutside+`"}`)
		site := f.create(t, f.super, "sites", `{"name":"Gate"}`)
		account := func(email, override string) string {
			u := testenv.NewUser(t, f.app, email, email, auth.Admin)
			f.must(t, 200, f.super, "POST", fmt.Sprintf("%s/user/%d/privileges", api, u.ID), override)
			return testenv.Login(t, f.inst.Server, "dig", email, testenv.Password)
		}
		denied := account("denied@example.org", `{"table_name":"finds","privilege":40}`)
		subset := account("subset@example.org", `{"table_name":"finds","privilege":10,"subset":{"label":{"_eq":"in"}}}`)

		// Denied: refused as a list is, and nothing changes.
		listCode, list := f.do(t, denied, "GET", api+"/records/finds", "")
		if listCode != 403 && listCode != 404 {
			t.Fatalf("a list as the denied admin: %d %v", listCode, list)
		}
		did, dch := openGateStream(t, srv.URL, denied)
		for _, subs := range []string{
			`[{"id":"s","table":"sites"},{"id":"f","table":"finds"}]`,
			fmt.Sprintf(`[{"id":"r","table":"finds","record":%d}]`, inside),
			`[{"id":"f","table":"finds","filter":{"label":{"_eq":"in"}}}]`,
		} {
			code, body := f.do(t, denied, "POST", api+"/realtime/subscriptions", `{"client_id":"`+did+`","subscriptions":`+subs+`}`)
			if code != listCode || body["code"] != list["code"] {
				t.Fatalf("subscribe %s as the denied admin: %d %v, a list %d %v", subs, code, body, listCode, list)
			}
		}
		f.must(t, 200, denied, "POST", api+"/realtime/subscriptions", `{"client_id":"`+did+`","subscriptions":[{"id":"s","table":"sites"}]}`)

		// Subset: every row of finds, and the outside row by id.
		sid, sch := openGateStream(t, srv.URL, subset)
		f.must(t, 200, subset, "POST", api+"/realtime/subscriptions", fmt.Sprintf(`{"client_id":"%s","subscriptions":[{"id":"all","table":"finds"},{"id":"out","table":"finds","record":%d},{"id":"s","table":"sites"}]}`, sid, outside))

		// Each write of finds by the super admin is followed by one of
		// sites, which both streams get: what the subset admin got in
		// between is exactly what that write shows them, and the denied
		// admin got nothing else.
		n := 0
		outsideHidden := true
		step := func(what string, write func(), want ...string) {
			t.Helper()
			write()
			n++
			f.must(t, 200, f.super, "POST", fmt.Sprintf("%s/record/sites/%d", api, site), fmt.Sprintf(`{"core":{"name":"Gate %d"}}`, n))
			if ev := nextGateEvent(t, dch); ev.name != "update" || !strings.HasPrefix(ev.raw, `{"table":"sites"`) || strings.Contains(ev.raw, "zqx") {
				t.Fatalf("%s: the denied admin got %s %.300s", what, ev.name, ev.raw)
			}
			for _, w := range append(want, `update {"table":"sites"`) {
				ev := nextGateEvent(t, sch)
				got := ev.name + " " + ev.raw
				if !strings.HasPrefix(got, w) {
					t.Fatalf("%s: the subset admin got %.300s, want %s…", what, got, w)
				}
				var data struct {
					Table string `json:"table"`
					ID    int64  `json:"id"`
				}
				_ = json.Unmarshal([]byte(ev.raw), &data)
				if outsideHidden && (strings.Contains(ev.raw, gateOutside) || (data.Table == "finds" && data.ID == outside)) {
					t.Fatalf("%s: the subset admin is shown the outside row: %s", what, ev.raw)
				}
			}
		}
		save := func(id int64, core string) func() {
			return func() {
				f.must(t, 200, f.super, "POST", fmt.Sprintf("%s/record/finds/%d", api, id), `{"core":`+core+`}`)
			}
		}
		row := func(ev string, id int64) string { return fmt.Sprintf(`%s {"table":"finds","id":%d`, ev, id) }
		step("the inside row changes", save(inside, `{"notes":"`+gateInside+` 2"}`), row("update", inside))
		step("the outside row changes", save(outside, `{"notes":"`+gateOutside+` 2"}`))
		var newOut, newIn int64
		step("a row outside is created", func() { newOut = f.create(t, f.super, "finds", `{"label":"out","notes":"`+gateOutside+` 3"}`) })
		step("a row inside is created", func() { newIn = f.create(t, f.super, "finds", `{"label":"in","notes":"`+gateInside+` 3"}`) }, `create {"table":"finds"`)
		step("it leaves the subset", save(newIn, `{"label":"out"}`), row("leave", newIn)+`,"subscriptions":["all"]}`)
		del := func(id int64) func() {
			return func() { f.must(t, 200, f.super, "DELETE", fmt.Sprintf("%s/record/finds/%d", api, id), "") }
		}
		step("the row outside is deleted", del(newOut))
		step("the row that left is deleted", del(newIn))
		// The outside row enters the subset: both subscriptions show it.
		outsideHidden = false
		step("the outside row enters it", save(outside, `{"label":"in"}`), row("enter", outside)+`,"record":`)
		step("and leaves it", save(outside, `{"label":"out"}`), row("leave", outside)+`,"subscriptions":["all","out"]}`)
	})
}
