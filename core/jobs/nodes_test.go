package jobs_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// A job whose server was killed does not read "running" for a day: the
// next server fails it at start (with SQLite every job still running is a
// dead process's; with PostgreSQL, one of a node whose heartbeat
// stopped), a node that dies while others work has its jobs failed within
// a few heartbeats, and a cancel ends a job whose node is gone instead of
// waiting for it. Read over HTTP.
func TestJobsOfAVanishedServer(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		reg := testenv.NewRegistry(t, e)
		b := reg.Backend()
		testenv.NewApp(t, reg, "site")

		// The first server's nodes take four jobs and die: killed (two
		// minutes ago) while running the first and the last, still alive
		// when the next server starts for the two others.
		first := open(t, b)
		first.Register("count", counter(nil, nil))
		var killed, cancelLater, dies, cancelNow int64
		for _, c := range []struct {
			id   *int64
			node string
			seen time.Time
		}{
			{&killed, "killed-node", time.Now().Add(-2 * time.Minute)},
			{&cancelLater, "node-a", time.Now()},
			{&dies, "node-b", time.Now()},
			{&cancelNow, "node-c", time.Now().Add(-2 * time.Minute)},
		} {
			j, err := first.Enqueue(ctx, "site", 1, "count", countArgs{N: 1, Hold: true})
			if err != nil {
				t.Fatal(err)
			}
			if *c.id, err = jobs.ClaimAsNode(ctx, first, c.node, c.seen); err != nil || *c.id != j.ID {
				t.Fatalf("claim by %s: %d %v", c.node, *c.id, err)
			}
		}
		if err := first.Stop(ctx); err != nil {
			t.Fatal(err)
		}

		// The next server, before it works jobs.
		opts := fastOptions()
		opts.HeartbeatInterval, opts.DeadAfter = 50*time.Millisecond, 2*time.Second
		second, err := jobs.Open(ctx, b, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			second.Stop(ctx)
		})
		second.Register("count", counter(nil, nil))
		inst := testenv.NewInstanceWith(t, e, server.Deps{Apps: reg, Jobs: second})
		h := inst.Server
		admin := testenv.Bearer(testenv.Login(t, h, "site", "admin@example.org", testenv.Password))
		url := func(id int64) string { return fmt.Sprintf("/site/api/jobs/%d", id) }
		testenv.Scenario{Name: "running while no server works", URL: url(killed), Headers: admin, ExpectedStatus: 200,
			ExpectedContent: []string{`"state":"running"`}}.Run(t, h)
		// The live nodes beat once more (setting up the server took time).
		for _, node := range []string{"node-a", "node-b"} {
			if err := jobs.BeatAs(ctx, second, node, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		testenv.Scenario{Name: "cancel a job of a live node", Method: http.MethodDelete, URL: url(cancelLater), Headers: admin, ExpectedStatus: 200,
			ExpectedContent: []string{`"state":"running"`, `"cancel_requested":true`}}.Run(t, h)
		if e == store.Postgres {
			// A node silent for two minutes is gone: nothing would ever see
			// the request, so the cancel ends the job itself.
			testenv.Scenario{Name: "cancel a job of a dead node", Method: http.MethodDelete, URL: url(cancelNow), Headers: admin, ExpectedStatus: 200,
				ExpectedContent: []string{`"state":"cancelled"`, `"finished_at":"`}}.Run(t, h)
		} else {
			testenv.Scenario{Name: "cancel before the start", Method: http.MethodDelete, URL: url(cancelNow), Headers: admin, ExpectedStatus: 200}.Run(t, h)
		}

		start(t, second)
		testenv.Scenario{Name: "failed at the next start, with the reason", URL: url(killed), Headers: admin, ExpectedStatus: 200,
			ExpectedContent: []string{`"state":"failed"`, `"error":"the server running this job stopped before it finished`, `"finished_at":"`}}.Run(t, h)
		// The others end within a few heartbeats (SQLite: at the start).
		for id, want := range map[int64]jobs.State{cancelLater: jobs.Cancelled, dies: jobs.Failed, cancelNow: jobs.Cancelled} {
			j := waitFor(t, "a job of a node that died", func() (jobs.Job, error) { return second.Get(ctx, id) },
				func(j jobs.Job) bool { return j.State.Finished() })
			if j.State != want {
				t.Fatalf("job %d: %+v, want %s", id, j, want)
			}
		}
		testenv.Scenario{Name: "the reason is read over HTTP", URL: url(dies), Headers: admin, ExpectedStatus: 200,
			ExpectedContent: []string{`"state":"failed"`, `"error":"the server running this job stopped`}}.Run(t, h)
	})
}
