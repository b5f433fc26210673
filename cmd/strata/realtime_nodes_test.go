package main

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// sseEvent is one Server-Sent Event as a client reads it.
type sseEvent struct {
	id   string
	name string
	data map[string]any
	raw  string
	at   time.Time // when the client read it
}

// sseStream is a real HTTP client reading GET /realtime.
type sseStream struct {
	events   chan sseEvent
	clientID string
	close    func()
}

func openSSE(t *testing.T, url, token string) *sseStream {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	s := &sseStream{events: make(chan sseEvent, 10_000), close: func() { resp.Body.Close() }}
	t.Cleanup(s.close)
	go func() {
		defer close(s.events)
		r := bufio.NewReader(resp.Body)
		var ev sseEvent
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "":
				if ev.name != "" {
					ev.at = time.Now()
					_ = json.Unmarshal([]byte(ev.raw), &ev.data)
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.name = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.raw = line[6:]
			}
		}
	}()
	first := s.next(t)
	if first.name != "connect" {
		t.Fatalf("first event %+v", first)
	}
	s.clientID, _ = first.data["client_id"].(string)
	return s
}

// next is the stream's next event, within a generous safety timeout.
func (s *sseStream) next(t *testing.T) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30 s")
	}
	return sseEvent{}
}

// TestRealtimeAcrossTwoProcesses runs two real server processes on one
// PostgreSQL namespace: a stream opened on A gets its subscriptions from
// a POST to B, and the writes made on B (200 updates, the delivery
// latency of each measured from just before its POST to its event read
// on A); presence posted on either node reaches the other's stream.
func TestRealtimeAcrossTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	testenv.RequireEngine(t, store.Postgres)
	c := newCLI(t, store.Postgres)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	envFor := func() map[string]string {
		return map[string]string{"DATABASE_URL": c.env["DATABASE_URL"], "STRATA_PG_NAMESPACE": c.env["STRATA_PG_NAMESPACE"],
			"STRATA_BCRYPT_COST": "4", "STRATA_SECRET_KEY": base64.StdEncoding.EncodeToString(key), "STRATA_DATA_DIR": t.TempDir()}
	}
	a, err := startNode(t, envFor(), "serve", "--addr", "127.0.0.1:0", "--demo")
	if err != nil {
		t.Fatal(err)
	}
	b, err := startNode(t, envFor(), "serve", "--addr", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	adminA, adminB := a.login("demo", demoEmail, demoPassword), b.login("demo", demoEmail, demoPassword)
	b.must(200, "POST", "/demo/api/user", adminB, `{"name":"Maria Rossi","email":"maria@example.org","password":"maria-password-1","privilege":20}`)
	mariaB := b.login("demo", "maria@example.org", "maria-password-1")
	rec := firstID(t, b.must(200, "GET", "/demo/api/records/finds?per_page=1", adminB, ""))

	// The admin's stream on A, its set given to B.
	sA := openSSE(t, a.URL+"/demo/api/realtime", adminA)
	if code, m, err := b.call("POST", "/demo/api/realtime/subscriptions", mariaB, fmt.Sprintf(`{"client_id":%q,"subscriptions":[]}`, sA.clientID)); err != nil || code != 404 || m["code"] != "client_not_found" {
		t.Fatalf("another user's client on B: %d %v %v", code, m, err)
	}
	b.must(200, "POST", "/demo/api/realtime/subscriptions", adminB,
		fmt.Sprintf(`{"client_id":%q,"subscriptions":[{"id":"one","table":"finds","record":%d}]}`, sA.clientID, rec))

	// 200 writes on B, each waited for on A.
	const writes = 200
	lat := make([]time.Duration, 0, writes)
	for i := range writes {
		start := time.Now()
		b.must(200, "POST", fmt.Sprintf("/demo/api/record/finds/%d", rec), adminB, fmt.Sprintf(`{"core":{"description":"write %d on B"}}`, i))
		ev := sA.next(t)
		if ev.name != "update" || ev.id == "" {
			t.Fatalf("write %d: event %s %s", i, ev.name, ev.raw)
		}
		core, _ := ev.data["record"].(map[string]any)["core"].(map[string]any)
		if got := fmt.Sprint(core["description"].(map[string]any)["val"]); got != fmt.Sprintf("write %d on B", i) {
			t.Fatalf("write %d: A shows %q", i, got)
		}
		lat = append(lat, ev.at.Sub(start))
	}
	slices.Sort(lat)
	t.Logf("a write on B reaching a stream on A, %d writes: p50 %s, p99 %s, max %s", writes,
		lat[writes/2], lat[writes*99/100], lat[writes-1])

	// Presence across the two: Maria's stream on B, the admin's on A.
	sM := openSSE(t, b.URL+"/demo/api/realtime", mariaB)
	a.must(200, "POST", "/demo/api/realtime/presence", adminA, fmt.Sprintf(`{"client_id":%q,"table":"finds","record":%d}`, sA.clientID, rec))
	// Maria's presence, posted to A for her stream on B.
	mariaA := a.login("demo", "maria@example.org", "maria-password-1")
	m := a.must(200, "POST", "/demo/api/realtime/presence", mariaA, fmt.Sprintf(`{"client_id":%q,"table":"finds","record":%d,"field":"description"}`, sM.clientID, rec))
	if vs, _ := m["viewers"].([]any); len(vs) != 1 {
		t.Fatalf("Maria's answer: %v", m)
	}
	presence := func(s *sseStream, want string) {
		t.Helper()
		for {
			ev := s.next(t)
			if ev.name != "presence" || ev.id != "" {
				t.Fatalf("event %s (id %q) %s", ev.name, ev.id, ev.raw)
			}
			if strings.Contains(ev.raw, want) {
				return
			}
		}
	}
	presence(sA, `"name":"Maria Rossi","field":"description"`)
	presence(sM, `"viewers":[{"user_id":`)
	// Maria's stream on B closes: A is told she left.
	sM.close()
	presence(sA, `"viewers":[]`)

	for _, n := range []*node{a, b} {
		if code := n.stop(syscall.SIGTERM); code != 0 {
			t.Errorf("node exit %d: %s", code, n.stderr.String())
		}
	}
}
