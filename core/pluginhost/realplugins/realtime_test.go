package realplugins_test

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

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// sse is a real HTTP client reading a live stream (GET /realtime).
type sse struct {
	id     string
	events chan map[string]any // {"event": name, "data": {...}}
}

func openSSE(t *testing.T, url, token string) *sse {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	t.Cleanup(func() { resp.Body.Close() })
	s := &sse{events: make(chan map[string]any, 1000)}
	go func() {
		defer close(s.events)
		r := bufio.NewReader(resp.Body)
		name := ""
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, "event: "):
				name = line[7:]
			case strings.HasPrefix(line, "data: "):
				var data map[string]any
				_ = json.Unmarshal([]byte(line[6:]), &data)
				s.events <- map[string]any{"event": name, "data": data}
			}
		}
	}()
	first := s.next(t)
	if first["event"] != "connect" {
		t.Fatalf("first event %v", first)
	}
	s.id, _ = first["data"].(map[string]any)["client_id"].(string)
	return s
}

func (s *sse) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no event within 20s")
	}
	return nil
}

// TestRealPluginWritesReachStreams: a radiocarbon row saved with its
// record, and a reference link written by refmgr through its own routes
// (a row of its section's table), are each an update of the record they
// belong to for a subscriber of that record, carrying the record with the
// plugin's section as a read shows it.
func TestRealPluginWritesReachStreams(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		z := pompeiiLibraries(t)
		f := newRefmgrFixture(t, e, z, false)
		f.activate("finds", "radiocarbon", "radiocarbon")
		srv := httptest.NewServer(f.srv)
		t.Cleanup(srv.Close)
		site := f.create("sites", `{"core":{"name":"Pompeii"}}`)
		find := f.create("finds", `{"core":{"code":"C1"}}`)
		s := openSSE(t, srv.URL+"/dig/api/realtime", f.reader)
		sub := fmt.Sprintf(`{"client_id":%q,"subscriptions":[{"id":"s","table":"sites","record":%d},{"id":"f","table":"finds","record":%d}]}`, s.id, site, find)
		f.json("POST", "/realtime/subscriptions", sub, f.reader, 200)

		update := func(what, table string, id int64, check func(rec map[string]any) bool) {
			t.Helper()
			ev := s.next(t)
			data, _ := ev["data"].(map[string]any)
			rec, _ := data["record"].(map[string]any)
			if ev["event"] != "update" || data["table"] != table || data["id"] != float64(id) || rec == nil {
				t.Fatalf("%s: %v", what, ev)
			}
			read := f.json("GET", fmt.Sprintf("/record/%s/%d", table, id), "", f.reader, 200)
			delete(read, "status")
			g, _ := json.Marshal(rec)
			r, _ := json.Marshal(read)
			if string(g) != string(r) {
				t.Fatalf("%s: the event's record\n%s\na read\n%s", what, g, r)
			}
			if !check(rec) {
				t.Fatalf("%s: the record does not show it: %s", what, g)
			}
		}

		// A radiocarbon date, saved with the record.
		f.json("POST", fmt.Sprintf("/record/finds/%d", find), `{"plugins":{"finds_radiocarbon":[{"fields":{"lab_code":"OxA-1","bp":3200,"bp_error":40}}]}}`, f.writer, 200)
		update("radiocarbon row", "finds", find, func(rec map[string]any) bool {
			p, _ := rec["plugins"].(map[string]any)
			rc, _ := p["finds_radiocarbon"].(map[string]any)
			rows, _ := rc["data"].([]any)
			return len(rows) == 1
		})

		// A reference, linked then unlinked through refmgr's routes.
		grp := int64(f.json("POST", "/refmgr/lib", `{"type":"group","refmgr_id":"336647","name":"Pompeii group"}`, f.super, 200)["id"].(float64))
		link := int64(f.json("POST", "/refmgr/link", fmt.Sprintf(`{"tb":"sites","record_id":%d,"lib_id":%d,"refmgr_key":"AAAA1111"}`, site, grp), f.writer, 200)["id"].(float64))
		bibliography := func(n int) func(map[string]any) bool {
			return func(rec map[string]any) bool {
				b, _ := rec["bibliography"].(map[string]any)
				return len(b) == n
			}
		}
		update("reference linked", "sites", site, bibliography(1))
		f.json("DELETE", fmt.Sprintf("/refmgr/link/%d", link), "", f.writer, 200)
		update("reference unlinked", "sites", site, bibliography(0))
	})
}
