package realtime_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/realtime"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// event is one Server-Sent Event as a client reads it.
type event struct {
	id    int64
	name  string
	data  map[string]any
	raw   string
	isEOF bool
}

// client is a real HTTP client reading a stream.
type client struct {
	resp   *http.Response
	events chan event
	id     string // client_id of the connect event
}

// openStream opens GET url and reads its connect event.
func openStream(t *testing.T, hc *http.Client, url string, headers map[string]string) *client {
	t.Helper()
	return openStreamBuffered(t, hc, url, headers, 100000)
}

// openStreamBuffered is openStream whose reader stops reading the socket
// once buffer events wait unread.
func openStreamBuffered(t *testing.T, hc *http.Client, url string, headers map[string]string, buffer int) *client {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	c := &client{resp: resp, events: make(chan event, buffer)}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		r := bufio.NewReader(resp.Body)
		var ev event
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				c.events <- event{isEOF: true}
				close(c.events)
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "":
				if ev.name != "" {
					_ = json.Unmarshal([]byte(ev.raw), &ev.data)
					c.events <- ev
				}
				ev = event{}
			case strings.HasPrefix(line, ":"):
				c.events <- event{name: "#comment"}
			case strings.HasPrefix(line, "id: "):
				ev.id, _ = strconv.ParseInt(line[4:], 10, 64)
			case strings.HasPrefix(line, "event: "):
				ev.name = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.raw = line[6:]
			}
		}
	}()
	first := c.next(t, 10*time.Second)
	if first.name != "connect" || first.data["client_id"] == "" {
		t.Fatalf("first event: %+v", first)
	}
	c.id, _ = first.data["client_id"].(string)
	return c
}

// next is the next event that is not a heartbeat.
func (c *client) next(t *testing.T, within time.Duration) event {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				return event{isEOF: true}
			}
			if ev.name == "#comment" {
				continue
			}
			return ev
		case <-deadline:
			t.Fatalf("no event within %s", within)
		}
	}
}

// until reads events up to and including the first for which stop is true.
func (c *client) until(t *testing.T, stop func(event) bool) []event {
	t.Helper()
	var out []event
	for {
		ev := c.next(t, 30*time.Second)
		if ev.isEOF {
			t.Fatalf("stream ended after %d events", len(out))
		}
		out = append(out, ev)
		if stop(ev) {
			return out
		}
	}
}

// harness is an instance served over real HTTP with an app "dig".
type harness struct {
	inst *testenv.Instance
	srv  *httptest.Server
	app  *apps.App
	hc   *http.Client
}

func newHarness(t *testing.T, e store.Engine, deps server.Deps, opts ...func(*config.Config)) *harness {
	t.Helper()
	inst := testenv.NewInstanceWith(t, e, deps, opts...)
	a := testenv.NewApp(t, inst.Apps, "dig")
	ctx, now := context.Background(), time.Now().UTC()
	if _, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "finds", Label: "Finds"}, now); err != nil {
		t.Fatal(err)
	}
	for _, fd := range []schema.FieldDef{{Name: "label", Label: "Label"}, {Name: "keep", Label: "Keep"}, {Name: "weight", Label: "Weight", DBType: "float"}, {Name: "note", Label: "Note"}} {
		if _, err := schema.AddField(ctx, a.DB, "finds", fd, now); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(inst.Server)
	t.Cleanup(srv.Close)
	return &harness{inst: inst, srv: srv, app: a, hc: &http.Client{}}
}

func (h *harness) do(t *testing.T, method, path, token, body string) (int, map[string]any) {
	t.Helper()
	return doJSON(t, h.hc, method, h.srv.URL+path, token, body)
}

// doJSON sends body as JSON with token and decodes the JSON answer.
func doJSON(t *testing.T, hc *http.Client, method, url, token, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

func (h *harness) subscribe(t *testing.T, token, clientID, subs string) {
	t.Helper()
	code, body := h.do(t, http.MethodPost, "/dig/api/realtime/subscriptions", token, `{"client_id":"`+clientID+`","subscriptions":`+subs+`}`)
	if code != http.StatusOK {
		t.Fatalf("subscribe: %d %v", code, body)
	}
}

// save creates (id 0) or updates a find as token and returns its id.
func (h *harness) save(t *testing.T, token string, id int64, core string) int64 {
	t.Helper()
	path := "/dig/api/record/finds"
	if id != 0 {
		path += "/" + strconv.FormatInt(id, 10)
	}
	code, body := h.do(t, http.MethodPost, path, token, `{"core":`+core+`}`)
	if code >= 300 {
		t.Fatalf("save %d %s: %d %v", id, core, code, body)
	}
	if id == 0 {
		n, _ := body["id"].(float64)
		return int64(n)
	}
	return id
}

func (h *harness) login(t *testing.T, email string) string {
	return testenv.Login(t, h.inst.Server, "dig", email, testenv.Password)
}

func (h *harness) streamURL() string { return h.srv.URL + "/dig/api/realtime" }

// TestEventsAreWhatEachUserMayRead: three users with different privileges
// and row subsets subscribe to finds; after mixed creates, updates (rows
// moving in and out of a subset and of a filter) and deletes, what each
// built from its events is, record by record, what a list and a read as
// that user answer; record events of the subset user only ever hold rows
// of its subset, and leave and delete events hold no field value.
func TestEventsAreWhatEachUserMayRead(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		h := newHarness(t, e, server.Deps{})
		ctx := context.Background()
		admin := h.login(t, "admin@example.org")
		w := testenv.NewUser(t, h.app, "Writer", "writer@example.org", auth.Writer)
		testenv.NewUser(t, h.app, "Reader", "reader@example.org", auth.Reader)
		subset := `{"keep":{"_eq":"yes"}}`
		s := subset
		if err := auth.SaveTablePrivilege(ctx, h.app.DB, &auth.TablePrivilege{UserID: w.ID, TableName: "finds", Privilege: auth.Writer, Subset: &s}, time.Now()); err != nil {
			t.Fatal(err)
		}
		users := []struct {
			email, subs string
		}{
			{"admin@example.org", `[{"id":"all","table":"finds"}]`},
			{"writer@example.org", `[{"id":"mine","table":"finds"}]`},
			{"reader@example.org", `[{"id":"heavy","table":"finds","filter":{"weight":{"_gt":5}}}]`},
		}
		tokens := make([]string, len(users))
		streams := make([]*client, len(users))
		for i, u := range users {
			tokens[i] = h.login(t, u.email)
			streams[i] = openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": tokens[i]})
			h.subscribe(t, tokens[i], streams[i].id, u.subs)
		}
		// Mixed writes by the admin and the writer.
		var ids []int64
		for i := range 12 {
			keep := map[bool]string{true: "yes", false: "no"}[i%3 != 0]
			ids = append(ids, h.save(t, admin, 0, fmt.Sprintf(`{"label":"F%d","keep":%q,"weight":%d}`, i, keep, i)))
		}
		h.save(t, admin, ids[1], `{"keep":"no"}`)     // leaves the writer's subset
		h.save(t, admin, ids[0], `{"keep":"yes"}`)    // enters it
		h.save(t, admin, ids[7], `{"weight":1}`)      // leaves the reader's filter
		h.save(t, admin, ids[2], `{"weight":50}`)     // enters it
		h.save(t, tokens[1], ids[4], `{"note":"w"}`)  // the writer edits its row
		h.save(t, admin, ids[10], `{"label":"F10b"}`) // an update everyone sees
		if code, body := h.do(t, http.MethodDelete, "/dig/api/record/finds/"+strconv.FormatInt(ids[5], 10), admin, ""); code != 200 {
			t.Fatalf("delete: %d %v", code, body)
		}
		if code, body := h.do(t, http.MethodDelete, "/dig/api/record/finds/"+strconv.FormatInt(ids[3], 10), admin, ""); code != 200 {
			t.Fatalf("delete: %d %v", code, body)
		}
		// A last row every subscription shows marks the end.
		last := h.save(t, admin, 0, `{"label":"END","keep":"yes","weight":99}`)
		for i, u := range users {
			evs := streams[i].until(t, func(ev event) bool { return ev.name == "create" && int64(ev.data["id"].(float64)) == last })
			view := map[int64]map[string]any{}
			prev := int64(0)
			for _, ev := range evs {
				if ev.id < prev {
					t.Fatalf("%s: ids go back: %d after %d", u.email, ev.id, prev)
				}
				prev = ev.id
				id := int64(ev.data["id"].(float64))
				switch ev.name {
				case "create", "update", "enter":
					rec, _ := ev.data["record"].(map[string]any)
					if rec == nil {
						t.Fatalf("%s: %s without record: %s", u.email, ev.name, ev.raw)
					}
					if i == 1 {
						if core, _ := rec["core"].(map[string]any); core == nil || core["keep"].(map[string]any)["val"] != "yes" {
							t.Fatalf("writer got a row outside its subset: %s", ev.raw)
						}
					}
					view[id] = rec
				case "leave", "delete":
					for k := range ev.data {
						if k != "table" && k != "id" && k != "subscriptions" {
							t.Fatalf("%s: %s carries %q: %s", u.email, ev.name, k, ev.raw)
						}
					}
					delete(view, id)
				default:
					t.Fatalf("%s: unexpected event %s", u.email, ev.raw)
				}
			}
			// What a list as this user shows.
			filter := ""
			if i == 2 {
				filter = "?filter[weight][_gt]=5"
			}
			sep := "?"
			if filter != "" {
				sep = "&"
			}
			code, list := h.do(t, http.MethodGet, "/dig/api/records/finds"+filter+sep+"ids_only=1&per_page=1000", tokens[i], "")
			if code != 200 {
				t.Fatalf("list: %d %v", code, list)
			}
			want := map[int64]bool{}
			for _, v := range list["ids"].([]any) {
				want[int64(v.(float64))] = true
			}
			if len(want) != len(view) {
				t.Fatalf("%s: events show %d rows, a list %d (%v)", u.email, len(view), len(want), list["ids"])
			}
			for id, rec := range view {
				if !want[id] {
					t.Fatalf("%s: events show %d, a list does not", u.email, id)
				}
				_, read := h.do(t, http.MethodGet, "/dig/api/record/finds/"+strconv.FormatInt(id, 10), tokens[i], "")
				delete(read, "status")
				gotJSON, readJSON := recordJSON(rec), recordJSON(read)
				if gotJSON != readJSON {
					t.Fatalf("%s: record %d from events\n%s\nfrom a read\n%s", u.email, id, gotJSON, readJSON)
				}
			}
		}
	})
}

// TestReplayFromLastEventID: a client that was away resumes with
// Last-Event-ID and gets exactly the 50 changes it missed, in order, with
// the change log's ids; one behind the window gets a single resync.
func TestReplayFromLastEventID(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		h := newHarness(t, e, server.Deps{})
		admin := h.login(t, "admin@example.org")
		c := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin})
		h.subscribe(t, admin, c.id, `[{"id":"all","table":"finds"}]`)
		first := h.save(t, admin, 0, `{"label":"first"}`)
		ev := c.next(t, 10*time.Second)
		if ev.name != "create" || int64(ev.data["id"].(float64)) != first {
			t.Fatalf("first event %+v", ev)
		}
		c.resp.Body.Close()
		var want []int64
		for i := range 50 {
			if i%2 == 0 {
				h.save(t, admin, 0, fmt.Sprintf(`{"label":"R%d"}`, i))
			} else {
				h.save(t, admin, first, fmt.Sprintf(`{"weight":%d}`, i))
			}
		}
		got, err := changes.Since(context.Background(), h.app.DB, ev.id, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range got {
			want = append(want, ch.ID)
		}
		if len(want) != 50 {
			t.Fatalf("%d changes logged, want 50", len(want))
		}
		back := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin, "Last-Event-ID": strconv.FormatInt(ev.id, 10)})
		h.subscribe(t, admin, back.id, `[{"id":"all","table":"finds"}]`)
		for i, id := range want {
			ev := back.next(t, 20*time.Second)
			if ev.id != id || (ev.name != "create" && ev.name != "update") {
				t.Fatalf("replayed event %d: %s id %d, want id %d", i, ev.name, ev.id, id)
			}
		}
		// Behind the window: one resync, then the stream goes on.
		if _, err := changes.Trim(context.Background(), h.app.DB, changes.Retention{MaxAge: time.Hour, MaxEvents: 10}, time.Now()); err != nil {
			t.Fatal(err)
		}
		late := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin, "Last-Event-ID": strconv.FormatInt(ev.id, 10)})
		if rs := late.next(t, 10*time.Second); rs.name != "resync" || rs.id != want[len(want)-1] {
			t.Fatalf("behind the window: %+v", rs)
		}
		h.subscribe(t, admin, late.id, `[{"id":"all","table":"finds"}]`)
		id := h.save(t, admin, 0, `{"label":"after"}`)
		if ev := late.next(t, 10*time.Second); ev.name != "create" || int64(ev.data["id"].(float64)) != id {
			t.Fatalf("after the resync: %+v", ev)
		}
	})
}

// TestStreamAccess: the signed `t` of POST /realtime/token opens the
// stream without a header (for that path only); subscriptions are refused
// with the list's own codes; another user's client_id is unknown; the
// per-user cap answers 429 rate_limited; a revoked session ends the
// stream with unauthorized.
func TestStreamAccess(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		h := newHarness(t, e, server.Deps{RealtimeHeartbeat: 50 * time.Millisecond}, func(c *config.Config) { c.RealtimePerUser = 2 })
		admin := h.login(t, "admin@example.org")
		u := testenv.NewUser(t, h.app, "Reader", "reader@example.org", auth.Reader)
		reader := h.login(t, "reader@example.org")

		code, tok := h.do(t, http.MethodPost, "/dig/api/realtime/token", reader, "")
		if code != 200 || tok["t"] == "" {
			t.Fatalf("token: %d %v", code, tok)
		}
		c := openStream(t, h.hc, h.streamURL()+"?t="+tok["t"].(string), nil)
		// Heartbeats come as comments.
		select {
		case ev := <-c.events:
			if ev.name != "#comment" {
				t.Fatalf("expected a heartbeat, got %+v", ev)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no heartbeat")
		}
		if code, body := h.do(t, http.MethodGet, "/dig/api/records/finds?t="+tok["t"].(string), "", ""); code != http.StatusUnauthorized {
			t.Fatalf("the stream's t opened another path: %d %v", code, body)
		}

		// Refusals, with the codes a list gives for the same filter.
		_, listErr := h.do(t, http.MethodPost, "/dig/api/records/finds", reader, `{"filter":{"colour":{"_eq":"x"}}}`)
		for _, tc := range []struct {
			name, subs string
			status     int
			code       string
		}{
			{"unknown table", `[{"id":"a","table":"nowhere"}]`, 404, "table_not_found"},
			{"unknown field", `[{"id":"a","table":"finds","filter":{"colour":{"_eq":"x"}}}]`, 400, listErr["code"].(string)},
			{"bad operator", `[{"id":"a","table":"finds","filter":{"label":{"_nope":1}}}]`, 400, ""},
			{"no id", `[{"table":"finds"}]`, 400, "invalid_parameter"},
			{"same id twice", `[{"id":"a","table":"finds"},{"id":"a","table":"finds"}]`, 400, "invalid_parameter"},
			{"filter and record", `[{"id":"a","table":"finds","record":1,"filter":{"label":{"_eq":"x"}}}]`, 400, "invalid_parameter"},
			{"bad record id", `[{"id":"a","table":"finds","record":-3}]`, 400, ""},
		} {
			code, body := h.do(t, http.MethodPost, "/dig/api/realtime/subscriptions", reader, `{"client_id":"`+c.id+`","subscriptions":`+tc.subs+`}`)
			if code != tc.status || (tc.code != "" && body["code"] != tc.code) {
				t.Errorf("%s: %d %v, want %d %s", tc.name, code, body, tc.status, tc.code)
			}
		}
		if code, body := h.do(t, http.MethodPost, "/dig/api/realtime/subscriptions", admin, `{"client_id":"`+c.id+`","subscriptions":[]}`); code != 404 || body["code"] != "client_not_found" {
			t.Fatalf("another user's client: %d %v", code, body)
		}

		// Two streams per user here: a third is refused.
		openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": reader})
		if code, body := h.do(t, http.MethodGet, "/dig/api/realtime", reader, ""); code != http.StatusTooManyRequests || body["code"] != "rate_limited" {
			t.Fatalf("third stream: %d %v", code, body)
		}

		// A revoked session ends the stream.
		h.subscribe(t, reader, c.id, `[{"id":"a","table":"finds"}]`)
		if code, body := h.do(t, http.MethodPost, "/dig/api/user/"+strconv.FormatInt(u.ID, 10)+"/revoke", admin, ""); code != 200 {
			t.Fatalf("revoke: %d %v", code, body)
		}
		ev := c.next(t, 10*time.Second)
		if ev.name != "unauthorized" {
			t.Fatalf("after the revoke: %+v", ev)
		}
		if end := c.next(t, 10*time.Second); !end.isEOF {
			t.Fatalf("the stream went on: %+v", end)
		}
	})
}

// TestSlowConsumerIsDropped: a client that stops reading is sent resync
// and dropped once its buffer is full, while saves keep their pace.
func TestSlowConsumerIsDropped(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		h := newHarness(t, e, server.Deps{}, func(c *config.Config) { c.RealtimeBuffer = 4 })
		admin := h.login(t, "admin@example.org")
		// A client that reads little: a small receive buffer, filled once
		// it stops reading, so the server's writes block.
		// (set before connecting, so the window it announces is small).
		dialer := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
			if err != nil {
				return err
			}
			return serr
		}}
		slow := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
		c := openStreamBuffered(t, slow, h.streamURL(), map[string]string{"Authorization": admin}, 1)
		h.subscribe(t, admin, c.id, `[{"id":"all","table":"finds"}]`)
		// Stop reading (the reader goroutine blocks once its channel is
		// full), then write large records.
		big := strings.Repeat("x", 60_000)
		id := h.save(t, admin, 0, `{"label":"big"}`)
		start := time.Now()
		var worst time.Duration
		for i := range 150 {
			t0 := time.Now()
			h.save(t, admin, id, fmt.Sprintf(`{"note":"%d%s"}`, i, big))
			worst = max(worst, time.Since(t0))
		}
		t.Logf("150 saves in %s, slowest %s", time.Since(start), worst)
		deadline := time.After(30 * time.Second)
		got := 0
		for {
			select {
			case ev, ok := <-c.events:
				if !ok || ev.isEOF {
					t.Fatal("the stream ended without resync")
				}
				got++
				if ev.name == "resync" {
					if ev.data["reason"] != "slow_consumer" {
						t.Fatalf("resync %s", ev.raw)
					}
					if end := c.next(t, 10*time.Second); !end.isEOF {
						t.Fatalf("the stream went on after resync: %+v", end)
					}
					return
				}
			case <-deadline:
				t.Fatalf("the slow client was never dropped (%d events read)", got)
			}
		}
	})
}

// TestWriteOnAnotherNode: a change committed by another process (its own
// connection: the record and the log row, as a node's save writes them,
// then the notification it sends after the commit) reaches a stream of
// this node through LISTEN; one whose notification never came (its node
// died in between) reaches it with the listener's periodic wake-up.
func TestWriteOnAnotherNode(t *testing.T) {
	testenv.RequireEngine(t, store.Postgres)
	for _, c := range []struct {
		name   string
		notify bool
	}{{"notified", true}, {"never notified", false}} {
		t.Run(c.name, func(t *testing.T) {
			if !c.notify {
				// Set before the stream opens: the listener starts with it.
				defer realtime.SetMissedWakeEvery(300 * time.Millisecond)()
			}
			h := newHarness(t, store.Postgres, server.Deps{})
			admin := h.login(t, "admin@example.org")
			id := h.save(t, admin, 0, `{"label":"here"}`)
			stream := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin})
			h.subscribe(t, admin, stream.id, `[{"id":"one","table":"finds","record":`+strconv.FormatInt(id, 10)+`}]`)
			url, _ := testenv.PostgresURL()
			ctx := context.Background()
			// Give the listener its moment to connect: it wakes every
			// stream once connected, which would hide a lost notification
			// otherwise.
			time.Sleep(500 * time.Millisecond)
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			schemaName := h.app.DB.Schema()
			q := func(s string) string { return `"` + schemaName + `".` + s }
			start := time.Now()
			tx, err := conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, stmt := range []struct {
				sql  string
				args []any
			}{
				{`UPDATE ` + q(`"finds"`) + ` SET "label" = 'there' WHERE id = $1`, []any{id}},
				{`SELECT pg_advisory_xact_lock(1398031176, hashtext($1))`, []any{h.app.DB.Key()}},
			} {
				if _, err := tx.Exec(ctx, stmt.sql, stmt.args...); err != nil {
					t.Fatal(err)
				}
			}
			var last int64
			if err := tx.QueryRow(ctx, `INSERT INTO `+q(`sys_changes`)+` (tb, record_id, op, version, at) VALUES ('finds', $1, 'update', 0, now()) RETURNING id`, id).Scan(&last); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if c.notify {
				if _, err := conn.Exec(ctx, `SELECT pg_notify('strata_changes', $1)`, schemaName+":"+strconv.FormatInt(last, 10)); err != nil {
					t.Fatal(err)
				}
			}
			ev := stream.next(t, 5*time.Second)
			if ev.name != "update" {
				t.Fatalf("event %+v", ev)
			}
			core := ev.data["record"].(map[string]any)["core"].(map[string]any)
			if core["label"].(map[string]any)["val"] != "there" {
				t.Fatalf("record %v", core)
			}
			t.Logf("delivered in %s", time.Since(start))
		})
	}
}

// node is a second server on the harness's app and database, as another
// process behind a load balancer would be (its own hub, its own node id).
type node struct {
	srv *httptest.Server
	hc  *http.Client
}

func (h *harness) secondNode(t *testing.T, deps server.Deps) *node {
	t.Helper()
	deps.Apps = h.inst.Apps
	inst := testenv.NewInstanceWith(t, h.inst.Engine, deps)
	srv := httptest.NewServer(inst.Server)
	t.Cleanup(srv.Close)
	return &node{srv: srv, hc: &http.Client{}}
}

func (n *node) do(t *testing.T, method, path, token, body string) (int, map[string]any) {
	t.Helper()
	return doJSON(t, n.hc, method, n.srv.URL+path, token, body)
}

func (n *node) login(t *testing.T, email string) string {
	t.Helper()
	code, body := n.do(t, http.MethodPost, "/dig/api/auth/login", "", `{"email":"`+email+`","password":"`+testenv.Password+`"}`)
	if code != 200 {
		t.Fatalf("login on the second node: %d %v", code, body)
	}
	return "Bearer " + body["token"].(string)
}

// TestSubscriptionsFromAnotherNode: the set of a stream open on node A is
// POSTed to node B (PostgreSQL, one database): B validates it for the
// caller with the list's codes and refuses another's client_id; A applies
// it with its own client's scopes (the writer's row subset holds there);
// a write on B reaches A.
func TestSubscriptionsFromAnotherNode(t *testing.T) {
	testenv.RequireEngine(t, store.Postgres)
	h := newHarness(t, store.Postgres, server.Deps{})
	b := h.secondNode(t, server.Deps{})
	ctx := context.Background()
	w := testenv.NewUser(t, h.app, "Writer", "writer@example.org", auth.Writer)
	subset := `{"keep":{"_eq":"yes"}}`
	if err := auth.SaveTablePrivilege(ctx, h.app.DB, &auth.TablePrivilege{UserID: w.ID, TableName: "finds", Privilege: auth.Writer, Subset: &subset}, time.Now()); err != nil {
		t.Fatal(err)
	}
	writerA, writerB := h.login(t, "writer@example.org"), b.login(t, "writer@example.org")
	adminB := b.login(t, "admin@example.org")
	c := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": writerA})

	for _, tc := range []struct {
		name, token, body string
		status            int
		code              string
	}{
		{"another user's client", adminB, `{"client_id":"` + c.id + `","subscriptions":[]}`, 404, "client_not_found"},
		{"unknown client", writerB, `{"client_id":"0123456789abcdef0123456789abcdef","subscriptions":[]}`, 404, "client_not_found"},
		{"unknown table", writerB, `{"client_id":"` + c.id + `","subscriptions":[{"id":"a","table":"nowhere"}]}`, 404, "table_not_found"},
		{"bad JSON", writerB, `{"client_id":`, 400, "invalid_json"},
	} {
		if code, body := b.do(t, http.MethodPost, "/dig/api/realtime/subscriptions", tc.token, tc.body); code != tc.status || body["code"] != tc.code {
			t.Errorf("%s: %d %v, want %d %s", tc.name, code, body, tc.status, tc.code)
		}
	}
	if code, body := b.do(t, http.MethodPost, "/dig/api/realtime/subscriptions", writerB, `{"client_id":"`+c.id+`","subscriptions":[{"id":"mine","table":"finds"}]}`); code != 200 {
		t.Fatalf("subscribe on B: %d %v", code, body)
	}
	// Writes on B: one outside the writer's subset (never shown), one in.
	save := func(core string) int64 {
		code, body := b.do(t, http.MethodPost, "/dig/api/record/finds", adminB, `{"core":`+core+`}`)
		if code != 200 {
			t.Fatalf("save on B: %d %v", code, body)
		}
		return int64(body["id"].(float64))
	}
	save(`{"label":"out","keep":"no"}`)
	in := save(`{"label":"in","keep":"yes"}`)
	ev := c.next(t, 10*time.Second)
	if ev.name != "create" || int64(ev.data["id"].(float64)) != in {
		t.Fatalf("event on A: %s", ev.raw)
	}
	// A second set from B replaces the first: a record subscription.
	other := save(`{"label":"other","keep":"yes"}`)
	if ev := c.next(t, 10*time.Second); ev.name != "create" || int64(ev.data["id"].(float64)) != other {
		t.Fatalf("event on A: %s", ev.raw)
	}
	if code, body := b.do(t, http.MethodPost, "/dig/api/realtime/subscriptions", writerB, `{"client_id":"`+c.id+`","subscriptions":[{"id":"one","table":"finds","record":`+strconv.FormatInt(in, 10)+`}]}`); code != 200 {
		t.Fatalf("second set on B: %d %v", code, body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		// The set reaches A in a moment; until then a save of the other
		// record may still be shown. The first event naming "one" proves it.
		code, body := b.do(t, http.MethodPost, "/dig/api/record/finds/"+strconv.FormatInt(in, 10), adminB, `{"core":{"note":"x"}}`)
		if code != 200 {
			t.Fatalf("update on B: %d %v", code, body)
		}
		ev := c.next(t, 10*time.Second)
		subs, _ := ev.data["subscriptions"].([]any)
		if ev.name == "update" && len(subs) == 1 && subs[0] == "one" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second set never applied on A: %s", ev.raw)
		}
	}
	h.save(t, h.login(t, "admin@example.org"), other, `{"note":"not subscribed"}`)
	last := save(`{"label":"unseen","keep":"yes"}`)
	_ = last
	code, body := b.do(t, http.MethodPost, "/dig/api/record/finds/"+strconv.FormatInt(in, 10), adminB, `{"core":{"note":"end"}}`)
	if code != 200 {
		t.Fatalf("update: %d %v", code, body)
	}
	if ev := c.next(t, 10*time.Second); ev.name != "update" || int64(ev.data["id"].(float64)) != in {
		t.Fatalf("after the record set, another row was shown: %s", ev.raw)
	}
}

// presence posts the caller's presence and answers the status and body.
func (h *harness) presence(t *testing.T, token, body string) (int, map[string]any) {
	t.Helper()
	return h.do(t, http.MethodPost, "/dig/api/realtime/presence", token, body)
}

// nextPresence reads c's events up to the first presence event of the
// record for which ok holds (earlier presence events of a changing set of
// viewers are skipped; any other event fails).
func (c *client) nextPresence(t *testing.T, id int64, ok func(viewers []any) bool) event {
	t.Helper()
	for {
		ev := c.next(t, 20*time.Second)
		if ev.isEOF {
			t.Fatal("the stream ended")
		}
		if ev.name != "presence" || ev.id != 0 {
			t.Fatalf("unexpected event: id %d %s %s", ev.id, ev.name, ev.raw)
		}
		if int64(ev.data["id"].(float64)) != id {
			continue
		}
		viewers, _ := ev.data["viewers"].([]any)
		if ok(viewers) {
			return ev
		}
	}
}

// viewerNames are the names and fields of a viewers list ("name:field").
func viewerNames(viewers []any) []string {
	var out []string
	for _, v := range viewers {
		m := v.(map[string]any)
		s := fmt.Sprint(m["name"])
		if f, ok := m["field"]; ok {
			s += ":" + fmt.Sprint(f)
		}
		out = append(out, s)
	}
	return out
}

// TestPresence: users viewing one record see each other through their
// streams, a field named only as far as the receiver can see it (a user
// denied the record's plugin table never sees its name); a user whose
// row subset leaves the record out is refused and told nothing; an entry
// goes with its stream; hostile bodies are refused with stable codes.
func TestPresence(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		h := newHarness(t, e, server.Deps{})
		ctx, now := context.Background(), time.Now().UTC()
		if _, err := schema.CreateTable(ctx, h.app.DB, schema.TableDef{Name: "finds_samples", Label: "Samples", PluginOf: "finds"}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.AddField(ctx, h.app.DB, "finds_samples", schema.FieldDef{Name: "lab", Label: "Lab"}, now); err != nil {
			t.Fatal(err)
		}
		admin := h.login(t, "admin@example.org")
		testenv.NewUser(t, h.app, "Maria Rossi", "maria@example.org", auth.Writer)
		d := testenv.NewUser(t, h.app, "Denied Samples", "denied@example.org", auth.Reader)
		s := testenv.NewUser(t, h.app, "Subset", "subset@example.org", auth.Writer)
		if err := auth.SaveTablePrivilege(ctx, h.app.DB, &auth.TablePrivilege{UserID: d.ID, TableName: "finds_samples", Privilege: auth.Pending}, now); err != nil {
			t.Fatal(err)
		}
		keep := `{"keep":{"_eq":"yes"}}`
		if err := auth.SaveTablePrivilege(ctx, h.app.DB, &auth.TablePrivilege{UserID: s.ID, TableName: "finds", Privilege: auth.Writer, Subset: &keep}, now); err != nil {
			t.Fatal(err)
		}
		maria, denied, subset := h.login(t, "maria@example.org"), h.login(t, "denied@example.org"), h.login(t, "subset@example.org")
		rec := h.save(t, admin, 0, `{"label":"R","keep":"no"}`)
		other := h.save(t, admin, 0, `{"label":"O","keep":"yes"}`)
		recS, otherS := strconv.FormatInt(rec, 10), strconv.FormatInt(other, 10)
		sA := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin})
		sM := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": maria})
		sD := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": denied})
		sS := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": subset})
		// The subset user subscribes to the record outside its rows: a
		// subscription is no way around the gate.
		h.subscribe(t, subset, sS.id, `[{"id":"r","table":"finds","record":`+recS+`}]`)

		// The admin edits the plugin table's section of the record.
		code, body := h.presence(t, admin, `{"client_id":"`+sA.id+`","table":"finds","record":`+recS+`,"field":"finds_samples"}`)
		if code != 200 || len(body["viewers"].([]any)) != 0 {
			t.Fatalf("first viewer: %d %v", code, body)
		}
		sA.nextPresence(t, rec, func(v []any) bool { return len(v) == 0 })
		// Maria views it, editing label: each sees the other.
		code, body = h.presence(t, maria, `{"client_id":"`+sM.id+`","table":"finds","record":`+recS+`,"field":"label"}`)
		if code != 200 || len(body["viewers"].([]any)) != 1 || !strings.HasSuffix(viewerNames(body["viewers"].([]any))[0], ":finds_samples") {
			t.Fatalf("second viewer: %d %v", code, body)
		}
		ev := sA.nextPresence(t, rec, func(v []any) bool { return len(v) == 1 })
		if got := viewerNames(ev.data["viewers"].([]any)); got[0] != "Maria Rossi:label" {
			t.Fatalf("the admin sees %v", got)
		}
		if uid, _ := ev.data["viewers"].([]any)[0].(map[string]any)["user_id"].(float64); uid == 0 {
			t.Fatalf("no user_id: %s", ev.raw)
		}
		sM.nextPresence(t, rec, func(v []any) bool { return len(v) == 1 })
		// The user denied finds_samples views it: it sees the admin without
		// the field it cannot read, Maria with hers.
		code, body = h.presence(t, denied, `{"client_id":"`+sD.id+`","table":"finds","record":`+recS+`}`)
		raw, _ := json.Marshal(body)
		if code != 200 || len(body["viewers"].([]any)) != 2 || strings.Contains(string(raw), "finds_samples") || !strings.Contains(string(raw), `"field":"label"`) {
			t.Fatalf("the denied user's answer: %d %s", code, raw)
		}
		ev = sD.nextPresence(t, rec, func(v []any) bool { return len(v) == 2 })
		if strings.Contains(ev.raw, "finds_samples") || !strings.Contains(ev.raw, `"field":"label"`) {
			t.Fatalf("the denied user's event: %s", ev.raw)
		}
		ev = sA.nextPresence(t, rec, func(v []any) bool { return len(v) == 2 })
		if !strings.Contains(ev.raw, "Denied Samples") {
			t.Fatalf("the admin's event: %s", ev.raw)
		}
		if code, body := h.presence(t, denied, `{"client_id":"`+sD.id+`","table":"finds","record":`+recS+`,"field":"finds_samples"}`); code != 400 || body["code"] != "field_not_found" {
			t.Fatalf("a field the caller cannot see: %d %v", code, body)
		}

		// Hostile inputs.
		for _, tc := range []struct {
			name, token, body string
			status            int
			code              string
		}{
			{"the subset user on a record outside its rows", subset, `{"client_id":"` + sS.id + `","table":"finds","record":` + recS + `}`, 404, "record_not_found"},
			{"another user's client", maria, `{"client_id":"` + sA.id + `","table":"finds","record":` + recS + `}`, 404, "client_not_found"},
			{"another user's client, viewing nothing", maria, `{"client_id":"` + sA.id + `","table":null}`, 404, "client_not_found"},
			{"unknown client", maria, `{"client_id":"nope","table":null}`, 404, "client_not_found"},
			{"bad JSON", maria, `{"client_id":`, 400, "invalid_json"},
			{"wrong types", maria, `{"client_id":1,"table":["finds"]}`, 400, "invalid_json"},
			{"huge body", maria, `{"client_id":"` + sM.id + `","table":"finds","record":` + recS + `,"field":"` + strings.Repeat("x", 100_000) + `"}`, 400, "invalid_json"},
			{"long unknown field", maria, `{"client_id":"` + sM.id + `","table":"finds","record":` + recS + `,"field":"` + strings.Repeat("x", 5000) + `"}`, 400, "field_not_found"},
			{"unknown table", maria, `{"client_id":"` + sM.id + `","table":"nowhere","record":1}`, 404, "table_not_found"},
			{"bad record id", maria, `{"client_id":"` + sM.id + `","table":"finds","record":-1}`, 400, ""},
			{"unknown record", maria, `{"client_id":"` + sM.id + `","table":"finds","record":99999}`, 404, "record_not_found"},
		} {
			code, body := h.presence(t, tc.token, tc.body)
			if code != tc.status || (tc.code != "" && body["code"] != tc.code) {
				t.Errorf("%s: %d %v, want %d %s", tc.name, code, body, tc.status, tc.code)
			}
		}
		// Maria's entry is unchanged by her refused posts: the admin's
		// next event (Maria's stream closing) still lists her until then.
		sM.resp.Body.Close()
		ev = sA.nextPresence(t, rec, func(v []any) bool { return len(v) == 1 })
		if got := viewerNames(ev.data["viewers"].([]any)); got[0] != "Denied Samples" {
			t.Fatalf("after Maria's stream closed the admin sees %v", got)
		}
		// The admin views nothing: the denied user is alone.
		if code, body := h.presence(t, admin, `{"client_id":"`+sA.id+`","table":null}`); code != 200 {
			t.Fatalf("viewing nothing: %d %v", code, body)
		}
		sD.nextPresence(t, rec, func(v []any) bool { return len(v) == 0 })

		// The subset user was told nothing of the record: its first
		// presence event is of the record it may read.
		if code, body := h.presence(t, subset, `{"client_id":"`+sS.id+`","table":"finds","record":`+otherS+`}`); code != 200 {
			t.Fatalf("subset user on its own row: %d %v", code, body)
		}
		if ev := sS.next(t, 20*time.Second); ev.name != "presence" || int64(ev.data["id"].(float64)) != other {
			t.Fatalf("the subset user's first event: %s %s", ev.name, ev.raw)
		}
	})
}

// TestPresenceExpires: an entry not posted again within its time goes,
// and the record's other viewers are told.
func TestPresenceExpires(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		h := newHarness(t, e, server.Deps{RealtimePresenceTTL: time.Second, RealtimeBeat: 100 * time.Millisecond})
		admin := h.login(t, "admin@example.org")
		testenv.NewUser(t, h.app, "Maria Rossi", "maria@example.org", auth.Writer)
		maria := h.login(t, "maria@example.org")
		rec := h.save(t, admin, 0, `{"label":"R"}`)
		recS := strconv.FormatInt(rec, 10)
		sA := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin})
		sM := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": maria})
		// The admin keeps its entry alive; Maria posts once.
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				// Not h.presence: no t.Fatal off the test's goroutine.
				req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/dig/api/realtime/presence",
					strings.NewReader(`{"client_id":"`+sA.id+`","table":"finds","record":`+recS+`}`))
				req.Header.Set("Authorization", admin)
				if resp, err := h.hc.Do(req); err == nil {
					resp.Body.Close()
				}
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Millisecond):
				}
			}
		}()
		defer func() { close(stop); <-done }()
		if code, body := h.presence(t, maria, `{"client_id":"`+sM.id+`","table":"finds","record":`+recS+`,"field":"label"}`); code != 200 {
			t.Fatalf("presence: %d %v", code, body)
		}
		sA.nextPresence(t, rec, func(v []any) bool { return len(v) == 1 })
		// Past its second, Maria's entry is swept: the admin is told.
		sA.nextPresence(t, rec, func(v []any) bool { return len(v) == 0 })
	})
}

// TestPresenceFromAnotherNode: presence posted to node B for a stream on
// B reaches a viewer whose stream is on node A (PostgreSQL).
func TestPresenceFromAnotherNode(t *testing.T) {
	testenv.RequireEngine(t, store.Postgres)
	h := newHarness(t, store.Postgres, server.Deps{})
	b := h.secondNode(t, server.Deps{})
	admin := h.login(t, "admin@example.org")
	testenv.NewUser(t, h.app, "Maria Rossi", "maria@example.org", auth.Writer)
	mariaB := b.login(t, "maria@example.org")
	rec := h.save(t, admin, 0, `{"label":"R"}`)
	recS := strconv.FormatInt(rec, 10)
	sA := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin})
	sM := openStream(t, b.hc, b.srv.URL+"/dig/api/realtime", map[string]string{"Authorization": mariaB})
	// The admin's presence, posted to B for its stream on A.
	if code, body := b.do(t, http.MethodPost, "/dig/api/realtime/presence", b.login(t, "admin@example.org"), `{"client_id":"`+sA.id+`","table":"finds","record":`+recS+`}`); code != 200 {
		t.Fatalf("presence on B for a stream on A: %d %v", code, body)
	}
	sA.nextPresence(t, rec, func(v []any) bool { return len(v) == 0 })
	if code, body := b.do(t, http.MethodPost, "/dig/api/realtime/presence", mariaB, `{"client_id":"`+sM.id+`","table":"finds","record":`+recS+`,"field":"note"}`); code != 200 || len(body["viewers"].([]any)) != 1 {
		t.Fatalf("presence on B: %d %v", code, body)
	}
	ev := sA.nextPresence(t, rec, func(v []any) bool { return len(v) == 1 })
	if got := viewerNames(ev.data["viewers"].([]any)); got[0] != "Maria Rossi:note" {
		t.Fatalf("A sees %v", got)
	}
	// Maria's stream on B closes: A is told.
	sM.resp.Body.Close()
	sA.nextPresence(t, rec, func(v []any) bool { return len(v) == 0 })
}

// TestCrashedNodeRowsExpire: the rows of a node that died without
// closing its streams (heartbeat old) are no open stream (404
// client_not_found), show no viewer, and are removed by a live node's
// upkeep; a fresh row of another live node is found.
func TestCrashedNodeRowsExpire(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		h := newHarness(t, e, server.Deps{RealtimeBeat: 100 * time.Millisecond})
		ctx := context.Background()
		admin := h.login(t, "admin@example.org")
		rec := h.save(t, admin, 0, `{"label":"R"}`)
		recS := strconv.FormatInt(rec, 10)
		var adminID int64
		if err := h.app.DB.QueryRow(ctx, `SELECT id FROM `+h.app.DB.Sys("users")+` WHERE email = ?`, "admin@example.org").Scan(&adminID); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Minute).UnixMilli()
		if _, err := h.app.DB.Exec(ctx, `INSERT INTO `+h.app.DB.Sys("realtime_clients")+
			` (client_id, node, user_id, name, heartbeat, subs_seq, tb, record_id, seen_at) VALUES (?, 'crashed', ?, 'Ghost', ?, 0, 'finds', ?, ?)`,
			"deadbeefdeadbeefdeadbeefdeadbeef", adminID, old, rec, time.Now().UnixMilli()); err != nil {
			t.Fatal(err)
		}
		if code, body := h.do(t, http.MethodPost, "/dig/api/realtime/subscriptions", admin, `{"client_id":"deadbeefdeadbeefdeadbeefdeadbeef","subscriptions":[]}`); code != 404 || body["code"] != "client_not_found" {
			t.Fatalf("a crashed node's client: %d %v", code, body)
		}
		c := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin})
		if code, body := h.presence(t, admin, `{"client_id":"`+c.id+`","table":"finds","record":`+recS+`}`); code != 200 || len(body["viewers"].([]any)) != 0 {
			t.Fatalf("the crashed node's entry is shown: %d %v", code, body)
		}
		// The live node's upkeep removes the row.
		deadline := time.Now().Add(20 * time.Second)
		for {
			var n int
			if err := h.app.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+h.app.DB.Sys("realtime_clients")+` WHERE node = 'crashed'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the crashed node's row was never removed")
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}
