package jobs_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestEventsOutliveTheBodyTimeout: a job's progress stream stays open past
// STRATA_BODY_TIMEOUT. The time a request is given to send its body once
// ended every event stream (the server's read deadline on the idle
// connection cancelled the request), so a job running longer than it
// lost its progress stream.
func TestEventsOutliveTheBodyTimeout(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		reg := testenv.NewRegistry(t, e)
		sys := open(t, reg.Backend())
		release := make(chan struct{})
		sys.Register("count", counter(release, nil))
		inst := testenv.NewInstanceWith(t, e, server.Deps{Apps: reg, Jobs: sys},
			func(c *config.Config) { c.BodyTimeout = 300 * time.Millisecond })
		testenv.NewApp(t, reg, "site")
		admin := testenv.Bearer(testenv.Login(t, inst.Server, "site", "admin@example.org", testenv.Password))
		start(t, sys)
		ctx := context.Background()
		q, err := sys.Enqueue(ctx, "site", 1, "count", countArgs{N: 1, Hold: true})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(inst.Server)
		defer srv.Close()
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/site/api/jobs/%d/events", srv.URL, q.ID), nil)
		req.Header.Set("Authorization", admin["Authorization"])
		res, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		lines := make(chan string, 100)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(res.Body)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		time.Sleep(1200 * time.Millisecond) // four times the body timeout
		if _, err := sys.Cancel(ctx, q.ID); err != nil {
			t.Fatal(err)
		}
		wait(t, sys, q.ID)
		// The stream, still open, tells the end of the job.
		for l := range lines {
			if strings.HasPrefix(l, "data: ") && strings.Contains(l, fmt.Sprintf(`"state":%q`, jobs.Cancelled)) {
				return
			}
		}
		t.Fatal("the stream ended before it told the job's end")
	})
}
