package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// fastOptions keep tests quick: a node looks for jobs every 10 ms and
// writes progress every 20 ms.
func fastOptions() jobs.Options {
	return jobs.Options{Logger: testenv.Logger(), PollInterval: 10 * time.Millisecond, ProgressInterval: 20 * time.Millisecond, MaxConns: 4}
}

// open opens a System on b, stopped at cleanup.
func open(t *testing.T, b store.Backend) *jobs.System {
	t.Helper()
	sys, err := jobs.Open(context.Background(), b, fastOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sys.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return sys
}

func start(t *testing.T, sys *jobs.System) {
	t.Helper()
	if err := sys.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func wait(t *testing.T, sys *jobs.System, id int64) jobs.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	j, err := sys.Wait(ctx, id)
	if err != nil {
		t.Fatalf("wait for job %d: %v (last seen %+v)", id, err, j)
	}
	return j
}

// waitFor polls get until ok holds.
func waitFor(t *testing.T, what string, get func() (jobs.Job, error), ok func(jobs.Job) bool) jobs.Job {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j, err := get()
		if err != nil {
			t.Fatal(err)
		}
		if ok(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: gave up; last seen %+v", what, j)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type countArgs struct {
	N    int64  `json:"n"`
	Fail string `json:"fail"`
	// Hold keeps the job running at N until released (or cancelled).
	Hold bool `json:"hold"`
}

// counter counts to N reporting progress; it fails with Fail when set,
// and with Hold waits for release or its context.
func counter(release <-chan struct{}, sawCancel chan<- struct{}) jobs.Func {
	return func(ctx context.Context, job *jobs.Run) (any, error) {
		var a countArgs
		if err := job.Bind(&a); err != nil {
			return nil, err
		}
		for i := int64(1); i <= a.N; i++ {
			job.Progress(i, a.N)
			time.Sleep(time.Millisecond)
		}
		if a.Fail == "internal" {
			return nil, errors.New("pq: password authentication failed for user secret")
		}
		if a.Fail != "" {
			return nil, errs.New(errs.Invalid, "bad_archive", a.Fail)
		}
		if a.Hold {
			select {
			case <-release:
			case <-ctx.Done():
				if sawCancel != nil {
					sawCancel <- struct{}{}
				}
				return nil, ctx.Err()
			}
		}
		return map[string]any{"counted": a.N, "app": job.App(), "user": job.User()}, nil
	}
}

func TestJobs(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		b := testenv.NewBackend(t, e)
		sys := open(t, b)
		sys.Register("count", counter(nil, nil))
		start(t, sys)
		ctx := context.Background()

		cases := []struct {
			name   string
			args   countArgs
			state  jobs.State
			result string // JSON the result must equal
			err    string // fragment of the error
			hidden string // what the error must not show
		}{
			{"counts to N", countArgs{N: 50}, jobs.Done, `{"app":"site","counted":50,"user":7}`, "", ""},
			{"nothing to count", countArgs{N: 0}, jobs.Done, `{"app":"site","counted":0,"user":7}`, "", ""},
			{"fails with its message", countArgs{N: 5, Fail: "the archive is not a tar.gz"}, jobs.Failed, "", "the archive is not a tar.gz", ""},
			{"internal failure shown plainly", countArgs{N: 3, Fail: "internal"}, jobs.Failed, "", "internal error", "secret"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				q, err := sys.Enqueue(ctx, "site", 7, "count", tc.args)
				if err != nil {
					t.Fatal(err)
				}
				if q.ID == 0 || q.Kind != "count" || q.App != "site" || q.User != 7 || q.State != jobs.Queued {
					t.Fatalf("enqueued %+v", q)
				}
				j := wait(t, sys, q.ID)
				if j.State != tc.state {
					t.Fatalf("state %s, want %s (%+v)", j.State, tc.state, j)
				}
				if j.Done != tc.args.N || j.Total != tc.args.N {
					t.Errorf("progress %d/%d, want %d/%d", j.Done, j.Total, tc.args.N, tc.args.N)
				}
				if tc.result != "" && !sameJSON(j.Result, tc.result) {
					t.Errorf("result %s, want %s", j.Result, tc.result)
				}
				if !strings.Contains(j.Error, tc.err) || (tc.err == "") != (j.Error == "") {
					t.Errorf("error %q, want %q", j.Error, tc.err)
				}
				if tc.hidden != "" && strings.Contains(j.Error, tc.hidden) {
					t.Errorf("error shows %q: %q", tc.hidden, j.Error)
				}
				if j.StartedAt == nil || j.FinishedAt == nil || j.CreatedAt.IsZero() {
					t.Errorf("times %+v", j)
				}
			})
		}

		t.Run("unknown kind is refused", func(t *testing.T) {
			_, err := sys.Enqueue(ctx, "site", 7, "nope", nil)
			if !errors.Is(err, jobs.ErrUnknownKind) {
				t.Fatalf("err %v", err)
			}
		})
		t.Run("missing job", func(t *testing.T) {
			if _, err := sys.Get(ctx, 999999); !errors.Is(err, jobs.ErrNotFound) {
				t.Fatalf("err %v", err)
			}
		})
		t.Run("cancelling a finished job", func(t *testing.T) {
			q, _ := sys.Enqueue(ctx, "site", 7, "count", countArgs{N: 1})
			wait(t, sys, q.ID)
			if _, err := sys.Cancel(ctx, q.ID); !errors.Is(err, jobs.ErrFinished) {
				t.Fatalf("err %v", err)
			}
		})
		t.Run("list", func(t *testing.T) {
			other, _ := sys.Enqueue(ctx, "other", 1, "count", countArgs{N: 1})
			wait(t, sys, other.ID)
			all, total, err := sys.List(ctx, "site", 1, 100)
			if err != nil {
				t.Fatal(err)
			}
			if total < 5 || int64(len(all)) != total {
				t.Fatalf("total %d, %d jobs", total, len(all))
			}
			for i, j := range all {
				if j.App != "site" || (i > 0 && j.ID >= all[i-1].ID) {
					t.Fatalf("list not the app's, newest first: %+v", all)
				}
			}
			p2, total2, err := sys.List(ctx, "site", 2, 2)
			if err != nil || total2 != total || len(p2) != 2 || p2[0].ID != all[2].ID {
				t.Fatalf("page 2: %+v, %d, %v", p2, total2, err)
			}
		})
	})
}

func TestCancel(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		b := testenv.NewBackend(t, e)
		sys := open(t, b)
		release, saw := make(chan struct{}), make(chan struct{}, 1)
		sys.Register("count", counter(release, saw))
		ctx := context.Background()

		// Queued: nothing works jobs yet.
		q, err := sys.Enqueue(ctx, "site", 1, "count", countArgs{N: 1})
		if err != nil {
			t.Fatal(err)
		}
		c, err := sys.Cancel(ctx, q.ID)
		if err != nil || c.State != jobs.Cancelled {
			t.Fatalf("cancel queued: %+v, %v", c, err)
		}
		start(t, sys)

		cases := []struct {
			name  string
			other bool // cancel through a second System on the same storage
		}{{"same node", false}, {"another node", true}}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r, err := sys.Enqueue(ctx, "site", 1, "count", countArgs{N: 3, Hold: true})
				if err != nil {
					t.Fatal(err)
				}
				waitFor(t, "running", func() (jobs.Job, error) { return sys.Get(ctx, r.ID) },
					func(j jobs.Job) bool { return j.State == jobs.Running && j.Done == 3 })
				via := sys
				if tc.other {
					via = open(t, b)
				}
				if _, err := via.Cancel(ctx, r.ID); err != nil {
					t.Fatal(err)
				}
				select {
				case <-saw:
				case <-time.After(20 * time.Second):
					t.Fatal("the job's context was not cancelled")
				}
				j := wait(t, sys, r.ID)
				if j.State != jobs.Cancelled || j.Error == "" || j.Done != 3 {
					t.Fatalf("after cancel: %+v", j)
				}
			})
		}
	})
}

// TestAnyNode: a second System on the same storage (another node) reads a
// running job's progress and its result; a node that does not know a
// job's kind fails it with a clear error.
func TestAnyNode(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		b := testenv.NewBackend(t, e)
		worker := open(t, b)
		release := make(chan struct{})
		worker.Register("count", counter(release, nil))
		start(t, worker)
		reader := open(t, b)
		ctx := context.Background()

		q, err := worker.Enqueue(ctx, "site", 1, "count", countArgs{N: 40, Hold: true})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "progress seen by another node", func() (jobs.Job, error) { return reader.Get(ctx, q.ID) },
			func(j jobs.Job) bool { return j.State == jobs.Running && j.Done == 40 && j.Total == 40 })
		close(release)
		j := wait(t, reader, q.ID)
		if j.State != jobs.Done || !strings.Contains(string(j.Result), `"counted":40`) {
			t.Fatalf("read by another node: %+v", j)
		}

		// A node knowing "archive" enqueues it; only worker, which does
		// not, is working.
		reader.Register("archive", counter(nil, nil))
		u, err := reader.Enqueue(ctx, "site", 1, "archive", countArgs{N: 1})
		if err != nil {
			t.Fatal(err)
		}
		j = wait(t, reader, u.ID)
		if j.State != jobs.Failed || !strings.Contains(j.Error, `"archive"`) {
			t.Fatalf("unknown kind: %+v", j)
		}
	})
}

func TestSQLiteFile(t *testing.T) {
	dir := t.TempDir()
	b, err := store.OpenSQLite(dir)
	if err != nil {
		t.Fatal(err)
	}
	open(t, b)
	fi, err := os.Stat(filepath.Join(dir, jobs.SQLiteFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("jobs.db mode %v", fi.Mode().Perm())
	}
}

func TestJobJSON(t *testing.T) {
	raw, err := json.Marshal(jobs.Job{ID: 1, Kind: "k", State: jobs.Queued})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"id":1`, `"kind":"k"`, `"state":"queued"`, `"done":0`, `"total":0`, `"error":""`, `"result":null`, `"created_at"`, `"started_at":null`, `"finished_at":null`} {
		if !strings.Contains(string(raw), k) {
			t.Errorf("%s lacks %s", raw, k)
		}
	}
}

func sameJSON(got json.RawMessage, want string) bool {
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestStopInterrupts: a node stopping gives its running jobs until the
// deadline, then cancels them; they end failed, as another node reads.
func TestStopInterrupts(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		b := testenv.NewBackend(t, e)
		reader := open(t, b)
		sys, err := jobs.Open(context.Background(), b, fastOptions())
		if err != nil {
			t.Fatal(err)
		}
		sys.Register("count", counter(make(chan struct{}), nil))
		start(t, sys)
		ctx := context.Background()
		q, err := sys.Enqueue(ctx, "site", 1, "count", countArgs{N: 2, Hold: true})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "running", func() (jobs.Job, error) { return reader.Get(ctx, q.ID) },
			func(j jobs.Job) bool { return j.State == jobs.Running })
		stopCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		began := time.Now()
		_ = sys.Stop(stopCtx)
		if d := time.Since(began); d > 5*time.Second {
			t.Fatalf("stop took %s", d)
		}
		j, err := reader.Get(ctx, q.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != jobs.Failed || !strings.Contains(j.Error, "interrupted") || j.Done != 2 {
			t.Fatalf("after stop: %+v", j)
		}
	})
}
