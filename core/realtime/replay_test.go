package realtime_test

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestReplayEqualsLive: a client that was away for 50 writes (creates and
// updates of rows its filter shows) and resumes with Last-Event-ID gets
// exactly the events a client that stayed connected got: same order, ids,
// names, rows and subscriptions, and nothing more. (Replay reads each row
// as it is when replayed: a row deleted or moved since gives the event its
// present state gives, as docs/api.md says; these writes keep their rows.)
func TestReplayEqualsLive(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		h := newHarness(t, e, server.Deps{})
		admin := h.login(t, "admin@example.org")
		subs := `[{"id":"heavy","table":"finds","filter":{"weight":{"_gt":5}}},{"id":"one","table":"finds","record":1}]`
		live := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin})
		h.subscribe(t, admin, live.id, subs)
		away := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin})
		h.subscribe(t, admin, away.id, subs)
		first := h.save(t, admin, 0, `{"label":"first","weight":10}`)
		var resumeFrom int64
		for _, c := range []*client{live, away} {
			ev := c.next(t, 10*time.Second)
			if ev.name != "create" || int64(ev.data["id"].(float64)) != first {
				t.Fatalf("first event %+v", ev)
			}
			resumeFrom = ev.id
		}
		away.resp.Body.Close()
		ids := []int64{first}
		for i := range 50 {
			if i%2 == 0 {
				ids = append(ids, h.save(t, admin, 0, fmt.Sprintf(`{"label":"R%d","weight":%d}`, i, 6+i)))
			} else {
				h.save(t, admin, ids[i%len(ids)], fmt.Sprintf(`{"note":"n%d"}`, i))
			}
		}
		seen := make([]event, 0, 50)
		for range 50 {
			ev := live.next(t, 20*time.Second)
			if ev.isEOF {
				t.Fatal("the live stream ended")
			}
			seen = append(seen, ev)
		}
		back := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin, "Last-Event-ID": strconv.FormatInt(resumeFrom, 10)})
		h.subscribe(t, admin, back.id, subs)
		for i, want := range seen {
			got := back.next(t, 20*time.Second)
			if got.id != want.id || got.name != want.name || got.data["id"] != want.data["id"] ||
				fmt.Sprint(got.data["subscriptions"]) != fmt.Sprint(want.data["subscriptions"]) {
				t.Fatalf("replayed event %d:\n%s %d %s\nlive:\n%s %d %s", i, got.name, got.id, got.raw, want.name, want.id, want.raw)
			}
		}
		// Nothing more: the next event of both is the next change.
		end := h.save(t, admin, 0, `{"label":"end","weight":99}`)
		for _, c := range []*client{live, back} {
			if ev := c.next(t, 10*time.Second); ev.name != "create" || int64(ev.data["id"].(float64)) != end {
				t.Fatalf("after the replay: %s %s", ev.name, ev.raw)
			}
		}
	})
}

// TestConfiguredWindow: the window set by the service's configuration
// (STRATA_CHANGELOG_MAX_EVENTS, here 10) is the one the log is trimmed to:
// a client resuming from the window's edge gets the 10 changes kept, one
// resuming from behind it a single resync (carrying the newest id), then
// the changes that follow and nothing else.
func TestConfiguredWindow(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Cleanup(func() { changes.SetRetention(changes.DefaultRetention) })
		h := newHarness(t, e, server.Deps{}, func(c *config.Config) { c.ChangeLogMaxEvents = 10 })
		r := changes.CurrentRetention()
		if r.MaxEvents != 10 {
			t.Fatalf("the configured window is %d events, want 10", r.MaxEvents)
		}
		admin := h.login(t, "admin@example.org")
		ctx := t.Context()
		_, before, err := changes.Bounds(ctx, h.app.DB)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			h.save(t, admin, 0, fmt.Sprintf(`{"label":"W%d"}`, i))
		}
		// The periodic trim, with the window in force.
		if _, err := changes.Trim(ctx, h.app.DB, r, time.Now()); err != nil {
			t.Fatal(err)
		}
		oldest, newest, err := changes.Bounds(ctx, h.app.DB)
		if err != nil {
			t.Fatal(err)
		}
		if newest-oldest+1 != 10 || newest != before+30 {
			t.Fatalf("the log holds %d..%d after 30 writes from %d, want the newest 10", oldest, newest, before)
		}
		edge := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin, "Last-Event-ID": strconv.FormatInt(oldest-1, 10)})
		h.subscribe(t, admin, edge.id, `[{"id":"all","table":"finds"}]`)
		for id := oldest; id <= newest; id++ {
			if ev := edge.next(t, 10*time.Second); ev.name != "create" || ev.id != id {
				t.Fatalf("from the edge of the window: %s %d %s, want create %d", ev.name, ev.id, ev.raw, id)
			}
		}
		late := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin, "Last-Event-ID": strconv.FormatInt(oldest-2, 10)})
		if ev := late.next(t, 10*time.Second); ev.name != "resync" || ev.id != newest || ev.data["reason"] != "window" {
			t.Fatalf("behind the window: %s %d %s", ev.name, ev.id, ev.raw)
		}
		h.subscribe(t, admin, late.id, `[{"id":"all","table":"finds"}]`)
		after := h.save(t, admin, 0, `{"label":"after"}`)
		for _, c := range []*client{late, edge} {
			if ev := c.next(t, 10*time.Second); ev.name != "create" || ev.id != newest+1 || int64(ev.data["id"].(float64)) != after {
				t.Fatalf("after the window: %s %d %s", ev.name, ev.id, ev.raw)
			}
		}
	})
}

// TestReplayBoundedOnItsOwn: the change log keeps weeks of changes (for
// offline sync), but a stream resuming from a change older than 15
// minutes, or more than 50,000 changes behind, gets one resync (with the
// newest id), not a replay; one within both bounds gets the replay.
func TestReplayBoundedOnItsOwn(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		var skew atomic.Int64 // how far the server's clock is ahead of the log's
		clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
		h := newHarness(t, e, server.Deps{Now: clock})
		admin := h.login(t, "admin@example.org")
		ctx := t.Context()
		_, from, err := changes.Bounds(ctx, h.app.DB)
		if err != nil {
			t.Fatal(err)
		}
		first := h.save(t, admin, 0, `{"label":"first"}`)
		_, newest, err := changes.Bounds(ctx, h.app.DB)
		if err != nil {
			t.Fatal(err)
		}
		resume := func(t *testing.T) event {
			t.Helper()
			c := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin, "Last-Event-ID": strconv.FormatInt(from, 10)})
			h.subscribe(t, admin, c.id, `[{"id":"all","table":"finds"}]`)
			return c.next(t, 10*time.Second)
		}
		if ev := resume(t); ev.name != "create" || int64(ev.data["id"].(float64)) != first {
			t.Fatalf("within the bounds: %s %s", ev.name, ev.raw)
		}
		skew.Store(int64(16 * time.Minute))
		if ev := resume(t); ev.name != "resync" || ev.id != newest || ev.data["reason"] != "window" {
			t.Fatalf("16 minutes later: %s %d %s", ev.name, ev.id, ev.raw)
		}
		skew.Store(0)
		// 50,001 changes later (one row standing for them: the log's ids
		// only grow, a trim leaves gaps like this one).
		far := newest + 50_001
		if _, err := h.app.DB.Exec(ctx, `INSERT INTO `+h.app.DB.Sys("changes")+` (id, tb, record_id, op, version, at) VALUES (?, 'nowhere', 0, 'update', 0, ?)`, far, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		if ev := resume(t); ev.name != "resync" || ev.id != far {
			t.Fatalf("50,001 changes behind: %s %d %s", ev.name, ev.id, ev.raw)
		}
	})
}
