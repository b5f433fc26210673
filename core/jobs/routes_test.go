package jobs_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestRoutes drives /jobs through the real router: visibility (the
// app's jobs, the user's own unless admin), the list, cancel, and the
// event stream.
func TestRoutes(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		reg := testenv.NewRegistry(t, e)
		sys := open(t, reg.Backend())
		release := make(chan struct{})
		sys.Register("count", counter(release, nil))
		inst := testenv.NewInstanceWith(t, e, server.Deps{Apps: reg, Jobs: sys})
		h := inst.Server
		if inst.Server.Jobs() != sys {
			t.Fatal("the server does not expose its job system")
		}
		site := testenv.NewApp(t, reg, "site")
		testenv.NewApp(t, reg, "other")
		reader := testenv.NewUser(t, site, "Reader", "reader@example.org", auth.Reader)
		admin := testenv.Bearer(testenv.Login(t, h, "site", "admin@example.org", testenv.Password))
		readerH := testenv.Bearer(testenv.Login(t, h, "site", "reader@example.org", testenv.Password))
		otherAdmin := testenv.Bearer(testenv.Login(t, h, "other", "admin@example.org", testenv.Password))
		start(t, sys)
		ctx := context.Background()

		adminJob, _ := sys.Enqueue(ctx, "site", 1, "count", countArgs{N: 3})
		readerJob, _ := sys.Enqueue(ctx, "site", reader.ID, "count", countArgs{N: 2, Fail: "no space left for the archive"})
		wait(t, sys, adminJob.ID)
		wait(t, sys, readerJob.ID)
		held, _ := sys.Enqueue(ctx, "site", 1, "count", countArgs{N: 1, Hold: true})
		waitFor(t, "held job running", func() (jobs.Job, error) { return sys.Get(ctx, held.ID) },
			func(j jobs.Job) bool { return j.State == jobs.Running })

		url := func(id int64) string { return fmt.Sprintf("/site/api/jobs/%d", id) }
		for _, sc := range []testenv.Scenario{
			{Name: "admin reads a done job", URL: url(adminJob.ID), Headers: admin, ExpectedStatus: 200,
				ExpectedContent: []string{`"status":"success"`, `"state":"done"`, `"done":3`, `"total":3`, `"kind":"count"`, `"result":{`, `"counted":3`, `"error":null`, `"finished_at":"`}},
			{Name: "user reads own failed job", URL: url(readerJob.ID), Headers: readerH, ExpectedStatus: 200,
				ExpectedContent: []string{`"state":"failed"`, `"error":"no space left for the archive"`, `"result":null`}},
			{Name: "user below admin, someone else's job", URL: url(adminJob.ID), Headers: readerH, ExpectedStatus: 404,
				ExpectedContent: []string{`"code":"job_not_found"`}, NotExpectedContent: []string{`"kind"`}},
			{Name: "another app's job", URL: fmt.Sprintf("/other/api/jobs/%d", adminJob.ID), Headers: otherAdmin, ExpectedStatus: 404,
				ExpectedContent: []string{`"code":"job_not_found"`}},
			{Name: "no such job", URL: url(999999), Headers: admin, ExpectedStatus: 404, ExpectedContent: []string{`"code":"job_not_found"`}},
			{Name: "malformed id", URL: "/site/api/jobs/x", Headers: admin, ExpectedStatus: 404, ExpectedContent: []string{`"code":"job_not_found"`}},
			{Name: "signed out", URL: url(adminJob.ID), ExpectedStatus: 401},
			{Name: "list (admin)", URL: "/site/api/jobs?per_page=2", Headers: admin, ExpectedStatus: 200,
				ExpectedContent: []string{`"total":3`, `"per_page":2`, `"page":1`, fmt.Sprintf(`"id":%d`, held.ID)}},
			{Name: "list page 2", URL: "/site/api/jobs?per_page=2&page=2", Headers: admin, ExpectedStatus: 200,
				ExpectedContent: []string{`"total":3`, fmt.Sprintf(`"id":%d`, adminJob.ID)}},
			{Name: "list of an app without jobs", URL: "/other/api/jobs", Headers: otherAdmin, ExpectedStatus: 200,
				ExpectedContent: []string{`"total":0`, `"data":[]`}},
			{Name: "list bad page", URL: "/site/api/jobs?page=0", Headers: admin, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_parameter"`}},
			{Name: "list (reader)", URL: "/site/api/jobs", Headers: readerH, ExpectedStatus: 403},
			{Name: "cancel someone else's job", Method: http.MethodDelete, URL: url(held.ID), Headers: readerH, ExpectedStatus: 404},
			{Name: "cancel a finished job", Method: http.MethodDelete, URL: url(adminJob.ID), Headers: admin, ExpectedStatus: 409,
				ExpectedContent: []string{`"code":"job_finished"`}},
			{Name: "cancel a running job", Method: http.MethodDelete, URL: url(held.ID), Headers: admin, ExpectedStatus: 200,
				ExpectedContent: []string{fmt.Sprintf(`"id":%d`, held.ID), `"state":"running"`, `"cancel_requested":true`}},
		} {
			t.Run(sc.Name, func(t *testing.T) { sc.Run(t, h) })
		}
		if j := wait(t, sys, held.ID); j.State != jobs.Cancelled {
			t.Fatalf("cancelled through the API: %+v", j)
		}

		t.Run("events", func(t *testing.T) {
			q, _ := sys.Enqueue(ctx, "site", reader.ID, "count", countArgs{N: 5, Hold: true})
			go func() {
				waitFor(t, "running", func() (jobs.Job, error) { return sys.Get(ctx, q.ID) },
					func(j jobs.Job) bool { return j.State == jobs.Running })
				time.Sleep(300 * time.Millisecond)
				release <- struct{}{}
			}()
			req := httptest.NewRequest(http.MethodGet, url(q.ID)+"/events", nil)
			req.Header.Set("Authorization", readerH["Authorization"])
			rec := httptest.NewRecorder()
			done := make(chan struct{})
			go func() { h.ServeHTTP(rec, req); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the stream did not end with the job")
			}
			body := rec.Body.String()
			if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/event-stream" {
				t.Fatalf("%d %s: %s", rec.Code, rec.Header().Get("Content-Type"), body)
			}
			events := strings.Split(strings.TrimSpace(body), "\n\n")
			last := events[len(events)-1]
			if !strings.HasPrefix(last, "event: job\ndata: {") || !strings.Contains(last, `"state":"done"`) || !strings.Contains(last, `"done":5`) {
				t.Fatalf("last event %q of %s", last, body)
			}
			if len(events) < 2 || !strings.Contains(body, `"state":"running"`) {
				t.Fatalf("no running event before the end: %s", body)
			}
		})

		t.Run("events end when the client goes away", func(t *testing.T) {
			q, _ := sys.Enqueue(ctx, "site", 1, "count", countArgs{N: 1, Hold: true})
			cctx, cancel := context.WithCancel(ctx)
			req := httptest.NewRequest(http.MethodGet, url(q.ID)+"/events", nil).WithContext(cctx)
			req.Header.Set("Authorization", admin["Authorization"])
			rec := httptest.NewRecorder()
			done := make(chan struct{})
			go func() { h.ServeHTTP(rec, req); close(done) }()
			time.Sleep(100 * time.Millisecond)
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the stream outlived its client")
			}
			if _, err := sys.Cancel(ctx, q.ID); err != nil {
				t.Fatal(err)
			}
			wait(t, sys, q.ID)
		})

		t.Run("events are neither compressed nor held back", func(t *testing.T) {
			// Over a real connection from a client taking gzip and brotli:
			// the first event arrives while the job is still held, as
			// plain text (a compressor would hold it, or need decoding).
			q, _ := sys.Enqueue(ctx, "site", 1, "count", countArgs{N: 1, Hold: true})
			srv := httptest.NewServer(h)
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodGet, srv.URL+url(q.ID)+"/events", nil)
			req.Header.Set("Authorization", admin["Authorization"])
			req.Header.Set("Accept-Encoding", "gzip, deflate, br, zstd")
			client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 10 * time.Second}
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			first := make([]byte, len("event: job\ndata: {"))
			if _, err := io.ReadFull(res.Body, first); err != nil {
				t.Fatalf("no first event while the job runs: %v", err)
			}
			if res.Header.Get("Content-Encoding") != "" || res.Header.Get("Content-Type") != "text/event-stream" || string(first) != "event: job\ndata: {" {
				t.Fatalf("%q %q %q", res.Header.Get("Content-Encoding"), res.Header.Get("Content-Type"), first)
			}
			if _, err := sys.Cancel(ctx, q.ID); err != nil {
				t.Fatal(err)
			}
			wait(t, sys, q.ID)
		})

		t.Run("another node's events are refused the same way", func(t *testing.T) {
			sc := testenv.Scenario{URL: fmt.Sprintf("/other/api/jobs/%d/events", adminJob.ID), Headers: otherAdmin, ExpectedStatus: 404,
				ExpectedContent: []string{`"code":"job_not_found"`}}
			sc.Run(t, h)
		})
	})
}

// TestRoutesWithoutSystem: a server built without a job system answers
// 503 on the job routes.
func TestRoutesWithoutSystem(t *testing.T) {
	inst := testenv.NewInstance(t, store.SQLite)
	testenv.NewApp(t, inst.Apps, "site")
	admin := testenv.Bearer(testenv.Login(t, inst.Server, "site", "admin@example.org", testenv.Password))
	for _, u := range []string{"/site/api/jobs", "/site/api/jobs/1"} {
		testenv.Scenario{URL: u, Headers: admin, ExpectedStatus: 503, ExpectedContent: []string{`"code":"jobs_unavailable"`}}.Run(t, inst.Server)
	}
}
