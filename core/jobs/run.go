package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/strata-archaeo/strata/core/errs"
)

// Messages a client reads in a job's error when the function's own error
// cannot be shown.
const (
	msgInternal  = "the job failed with an internal error; it has been logged"
	msgCancelled = "the job was cancelled"
	msgStopped   = "the job was interrupted (cancelled, timed out or the server stopped)"
)

// Run is a running job as its function sees it.
type Run struct {
	id   int64
	args taskArgs

	mu          sync.Mutex
	done, total int64
	dirty       bool
}

// ID is the job's id.
func (r *Run) ID() int64 { return r.id }

// Kind is the job's kind.
func (r *Run) Kind() string { return r.args.Task }

// App is the application the job was enqueued for.
func (r *Run) App() string { return r.args.App }

// User is who enqueued it (0: no user).
func (r *Run) User() int64 { return r.args.User }

// Args is the JSON of the arguments given to Enqueue.
func (r *Run) Args() json.RawMessage { return r.args.Args }

// Bind decodes the arguments into dst.
func (r *Run) Bind(dst any) error {
	if len(r.args.Args) == 0 {
		return nil
	}
	return json.Unmarshal(r.args.Args, dst)
}

// Progress reports how far the job is (total 0: unknown). It costs no
// database write: the last report is written at most every
// Options.ProgressInterval, and when the job ends.
func (r *Run) Progress(done, total int64) {
	r.mu.Lock()
	r.done, r.total, r.dirty = done, total, true
	r.mu.Unlock()
}

func (r *Run) progress() (out output, dirty bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out, dirty = output{Done: r.done, Total: r.total}, r.dirty
	r.dirty = false
	return out, dirty
}

// taskWorker is river's only worker: it runs the function registered for
// the job's kind.
type taskWorker struct {
	river.WorkerDefaults[taskArgs]
	sys *System
}

// Timeout is the kind's (Timeout option); -1 is none.
func (w *taskWorker) Timeout(job *river.Job[taskArgs]) time.Duration {
	if k, ok := w.sys.kind(job.Args.Task); ok && k.timeout > 0 {
		return k.timeout
	}
	return -1
}

// Work runs the job's function, writes its progress while it runs and
// its result or error when it ends. The error returned to river is the
// client's message: river keeps it in the job's attempt errors.
func (w *taskWorker) Work(ctx context.Context, job *river.Job[taskArgs]) error {
	s := w.sys
	k, ok := s.kind(job.Args.Task)
	if !ok {
		msg := fmt.Sprintf("no function is registered for job kind %q on the node that ran it", job.Args.Task)
		s.save(ctx, job.ID, output{Error: msg})
		return errors.New(msg) // another node may know it if the kind allows attempts
	}
	run := &Run{id: job.ID, args: job.Args}
	stopFlush := s.flushProgress(ctx, run)
	result, err := s.call(ctx, k.fn, run)
	stopFlush()
	out, _ := run.progress()
	if err == nil {
		raw, merr := json.Marshal(result)
		if merr == nil {
			out.Result = raw
			if merr = river.RecordOutput(ctx, out); merr == nil {
				return nil
			}
		}
		s.log.Error("job result not stored", "job", job.ID, "kind", job.Args.Task, "err", merr)
		err = merr
		out.Result = nil
	}
	out.Error = s.message(ctx, job.ID, job.Args.Task, err)
	if e, ok := errs.As(err); ok && e.Kind != errs.Internal {
		out.Kind, out.Code, out.Extra = int(e.Kind), e.Code, e.Extra
	}
	s.save(ctx, job.ID, out)
	return errors.New(out.Error)
}

// call runs fn, turning a panic into an error.
func (s *System) call(ctx context.Context, fn Func, run *Run) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return fn(ctx, run)
}

// message is what a client may read of err: a coded error's message,
// else a plain sentence (the error itself is logged).
func (s *System) message(ctx context.Context, id int64, kindName string, err error) string {
	if e, ok := errs.As(err); ok && e.Kind != errs.Internal {
		return e.Message
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return msgStopped
	}
	s.log.Error("job failed", "job", id, "kind", kindName, "err", err)
	return msgInternal
}

// flushProgress writes the run's progress every ProgressInterval while it
// changes; the returned stop waits for the writer to end.
func (s *System) flushProgress(ctx context.Context, run *Run) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(s.opts.ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if out, dirty := run.progress(); dirty {
					s.save(ctx, run.id, out)
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// save writes out as the job's output, even when the job's context has
// ended (its last progress, its error).
func (s *System) save(ctx context.Context, id int64, out output) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := s.st.client.JobUpdate(ctx, id, &river.JobUpdateParams{Output: out}); err != nil {
		s.log.Warn("job progress not stored", "job", id, "err", err)
	}
}
