package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// Errors of the job system (CONTRACT §1 statuses through core/api).
var (
	ErrNotFound    = errs.New(errs.NotFound, "job_not_found", "no job with this id")
	ErrFinished    = errs.New(errs.Conflict, "job_finished", "the job has already finished")
	ErrUnknownKind = errs.New(errs.Invalid, "unknown_job_kind", "no job of this kind is registered")
	ErrUnavailable = errs.New(errs.Unavailable, "jobs_unavailable", "the job system is not running on this server")
)

// Defaults of Options.
const (
	DefaultWorkers          = 4
	DefaultRetention        = 7 * 24 * time.Hour
	DefaultRescueAfter      = 24 * time.Hour
	DefaultPollInterval     = time.Second
	DefaultProgressInterval = 250 * time.Millisecond
	DefaultMaxConns         = 8
)

// Options tune a System; the zero value is production's.
type Options struct {
	// Dir holds the SQLite queue (jobs.db); default the SQLite backend's
	// data folder. Unused with PostgreSQL.
	Dir    string
	Logger *slog.Logger
	// Workers is how many jobs one node runs at once (default 4).
	Workers int
	// PollInterval is how often an idle node looks for new jobs beside
	// the notifications (default 1 s; tests use a few ms).
	PollInterval time.Duration
	// ProgressInterval is the least time between two progress writes of a
	// job (default 250 ms: at most 4 a second).
	ProgressInterval time.Duration
	// Retention is how long finished jobs stay readable (default 7 days).
	Retention time.Duration
	// RescueAfter: a job still running after this long is taken for one
	// whose node died and is failed (default 24 h). Jobs are not retried,
	// so it must exceed the longest job.
	RescueAfter time.Duration
	// MaxConns caps the PostgreSQL pool of the queue (default 8).
	MaxConns int
	// HeartbeatInterval is how often a working node says it is alive and
	// fails the jobs of nodes that are not (default 15 s; nodes.go).
	HeartbeatInterval time.Duration
	// DeadAfter: a node silent this long is gone and its running jobs are
	// failed (default 4 heartbeats: a minute).
	DeadAfter time.Duration
}

// Func is a kind's work. job carries the arguments, the app and the user
// and takes progress reports; ctx is cancelled when the job is cancelled
// (from any node), on its kind's timeout and when the server stops.
// result is stored as JSON and read back by Get. An *errs.Error's Message
// is the error clients read; any other error is logged and shown as a
// plain "internal error" sentence, since its text may carry secrets.
type Func func(ctx context.Context, job *Run) (result any, err error)

// KindOption adjusts how a kind's jobs run.
type KindOption func(*kind)

// Attempts lets a kind's jobs run up to n times (default 1: long data
// operations are not idempotent, a failure is final).
func Attempts(n int) KindOption { return func(k *kind) { k.attempts = max(1, n) } }

// Timeout cancels a job's context after d (default: no limit).
func Timeout(d time.Duration) KindOption { return func(k *kind) { k.timeout = d } }

type kind struct {
	fn       Func
	attempts int
	timeout  time.Duration
}

// System is the server's one job queue: any node enqueues, works and
// reads jobs of the same storage.
type System struct {
	opts  Options
	log   *slog.Logger
	st    *storage
	mu    sync.RWMutex
	kinds map[string]kind

	node string // this node's river client id (nodes.go)

	stateMu  sync.Mutex
	started  bool
	stopped  bool
	stopBeat chan struct{}
	beatDone chan struct{}
	quit     chan struct{} // closed by EndStreams
	quitO    sync.Once
}

// Open opens the queue on the backend's storage (PostgreSQL: schema
// <namespace>__jobs of the same database; SQLite: <data dir>/jobs.db),
// creating or migrating river's tables. The System enqueues and reads at
// once; it works jobs after Start.
func Open(ctx context.Context, b store.Backend, opts Options) (*System, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Workers = cmpOr(opts.Workers, DefaultWorkers)
	opts.PollInterval = cmpOr(opts.PollInterval, DefaultPollInterval)
	opts.ProgressInterval = cmpOr(opts.ProgressInterval, DefaultProgressInterval)
	opts.Retention = cmpOr(opts.Retention, DefaultRetention)
	opts.RescueAfter = cmpOr(opts.RescueAfter, DefaultRescueAfter)
	opts.MaxConns = cmpOr(opts.MaxConns, DefaultMaxConns)
	opts.HeartbeatInterval = cmpOr(opts.HeartbeatInterval, DefaultHeartbeatInterval)
	opts.DeadAfter = cmpOr(opts.DeadAfter, deadAfterBeats*opts.HeartbeatInterval)
	s := &System{opts: opts, log: opts.Logger.With("component", "jobs"), kinds: map[string]kind{}, quit: make(chan struct{})}
	workers := river.NewWorkers()
	river.AddWorker(workers, &taskWorker{sys: s})
	cfg := &river.Config{
		Logger:                      s.log,
		Workers:                     workers,
		Queues:                      map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: opts.Workers}},
		FetchPollInterval:           opts.PollInterval,
		FetchCooldown:               min(opts.PollInterval, 100*time.Millisecond),
		MaxAttempts:                 1,
		JobTimeout:                  -1,
		RescueStuckJobsAfter:        opts.RescueAfter,
		CompletedJobRetentionPeriod: opts.Retention,
		CancelledJobRetentionPeriod: opts.Retention,
		DiscardedJobRetentionPeriod: opts.Retention,
	}
	if opts.PollInterval < time.Second {
		cfg.TestOnly = true // no jittered start-up of the maintenance services
	}
	st, err := openStorage(ctx, b, opts.Dir, opts.MaxConns, cfg)
	if err != nil {
		return nil, err
	}
	s.st = st
	s.node = st.client.ID()
	return s, nil
}

func cmpOr[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// Register names the function that runs jobs of kind. Register every kind
// before Start (and on every node): a job whose kind this node does not
// know fails.
func (s *System) Register(kindName string, fn Func, opts ...KindOption) {
	k := kind{fn: fn, attempts: 1}
	for _, o := range opts {
		o(&k)
	}
	s.mu.Lock()
	s.kinds[kindName] = k
	s.mu.Unlock()
}

func (s *System) kind(name string) (kind, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, ok := s.kinds[name]
	return k, ok
}

// Start makes this node work jobs until Stop.
func (s *System) Start(ctx context.Context) error {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	if s.started || s.stopped {
		return errors.New("jobs: Start called twice or after Stop")
	}
	// The heartbeat first, so no node takes this one for gone; then the
	// jobs of processes that are (on SQLite: every job still running, its
	// server was killed) are failed before any new one starts.
	if err := s.st.beat(ctx, s.node, time.Now()); err != nil {
		return err
	}
	if err := s.reap(ctx); err != nil {
		return err
	}
	// river stops softly when the context it started with ends; Stop
	// decides how a stop goes, so the context's cancellation is not passed on.
	if err := s.st.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("jobs: start: %w", err)
	}
	s.started = true
	s.stopBeat, s.beatDone = make(chan struct{}), make(chan struct{})
	go s.heartbeat(s.stopBeat, s.beatDone)
	return nil
}

// Stop ends the System: running jobs have until ctx is done to finish,
// then their contexts are cancelled (they end failed); the storage is
// closed. SSE streams end too.
func (s *System) Stop(ctx context.Context) error {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	if s.stopped {
		return nil
	}
	s.stopped = true
	s.EndStreams()
	var err error
	if s.started {
		if s.stopBeat != nil {
			close(s.stopBeat)
			<-s.beatDone
		}
		if err = s.st.client.Stop(ctx); err != nil {
			hard, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = s.st.client.StopAndCancel(hard)
			cancel()
		}
		// Its jobs have ended: nothing to reap after this node.
		s.st.forget(context.WithoutCancel(ctx), s.node, time.Now().Add(-s.opts.RescueAfter))
	}
	s.st.close()
	return err
}

// EndStreams ends every open event stream (GET /jobs/{id}/events): call
// it when the HTTP server begins shutting down, so that streams of long
// jobs do not hold the shutdown.
func (s *System) EndStreams() { s.quitO.Do(func() { close(s.quit) }) }

// Enqueue queues a job of kind for app on behalf of user (0: no user, e.g.
// an API key or the CLI); args are stored as JSON and given to the kind's
// function. An unregistered kind is ErrUnknownKind.
func (s *System) Enqueue(ctx context.Context, app string, user int64, kindName string, args any) (Job, error) {
	k, ok := s.kind(kindName)
	if !ok {
		return Job{}, ErrUnknownKind.With("kind", kindName)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return Job{}, fmt.Errorf("jobs: arguments of %s: %w", kindName, err)
	}
	res, err := s.st.client.Insert(ctx, taskArgs{Task: kindName, App: app, User: user, Args: raw},
		&river.InsertOpts{MaxAttempts: k.attempts})
	if err != nil {
		return Job{}, fmt.Errorf("jobs: enqueue %s: %w", kindName, err)
	}
	j, _ := jobOf(res.Job)
	return j, nil
}

// Get reads a job as it is now, whichever node runs it.
func (s *System) Get(ctx context.Context, id int64) (Job, error) {
	row, err := s.st.client.JobGet(ctx, id)
	if errors.Is(err, river.ErrNotFound) {
		return Job{}, ErrNotFound.With("id", id)
	}
	if err != nil {
		return Job{}, fmt.Errorf("jobs: get %d: %w", id, err)
	}
	j, ok := jobOf(row)
	if !ok {
		return Job{}, ErrNotFound.With("id", id)
	}
	return j, nil
}

// Cancel cancels a job: a queued one at once; a running one has its
// context cancelled on the node that runs it (and ends cancelled when its
// function returns). A finished job is ErrFinished.
func (s *System) Cancel(ctx context.Context, id int64) (Job, error) {
	j, err := s.Get(ctx, id)
	if err != nil {
		return Job{}, err
	}
	if j.State.Finished() {
		return j, ErrFinished.With("id", id).With("state", string(j.State))
	}
	row, err := s.st.client.JobCancel(ctx, id)
	if errors.Is(err, river.ErrNotFound) {
		return Job{}, ErrNotFound.With("id", id)
	}
	if err != nil {
		return Job{}, fmt.Errorf("jobs: cancel %d: %w", id, err)
	}
	j, _ = jobOf(row)
	if j.State == Done || j.State == Failed {
		return j, ErrFinished.With("id", id).With("state", string(j.State)) // it ended first
	}
	if j.State == Running {
		// No process will see the request if the job's node is gone: the
		// job is ended here.
		s.stateMu.Lock()
		working := s.started && !s.stopped
		s.stateMu.Unlock()
		dead, err := s.gone(ctx, nodeOf(row), working)
		if err != nil {
			return j, err
		}
		if dead {
			if err := s.end(ctx, row, rivertype.JobStateCancelled, msgCancelled); err != nil {
				return j, err
			}
			return s.Get(ctx, id)
		}
	}
	return j, nil
}

// Wait polls the job until it has finished or ctx is done.
func (s *System) Wait(ctx context.Context, id int64) (Job, error) {
	tick := min(s.opts.PollInterval, 100*time.Millisecond)
	for {
		j, err := s.Get(ctx, id)
		if err != nil || j.State.Finished() {
			return j, err
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-time.After(tick):
		}
	}
}

// List is a page (1-based) of app's jobs, newest first, and their count.
func (s *System) List(ctx context.Context, app string, page, perPage int) ([]Job, int64, error) {
	page, perPage = max(page, 1), min(max(perPage, 1), 100)
	ids, total, err := s.st.page(ctx, app, perPage, (page-1)*perPage)
	if err != nil || len(ids) == 0 {
		return []Job{}, total, err
	}
	res, err := s.st.client.JobList(ctx, river.NewJobListParams().IDs(ids...).First(len(ids)).
		OrderBy(river.JobListOrderByID, river.SortOrderDesc))
	if err != nil {
		return nil, 0, fmt.Errorf("jobs: list: %w", err)
	}
	out := make([]Job, 0, len(res.Jobs))
	for _, row := range res.Jobs {
		if j, ok := jobOf(row); ok {
			out = append(out, j)
		}
	}
	return out, total, nil
}

// CountByState counts the instance's jobs by state (every state present,
// zero included): what the metrics report as jobs by state.
func (s *System) CountByState(ctx context.Context) (map[State]int64, error) {
	raw, err := s.st.countByState(ctx)
	if err != nil {
		return nil, err
	}
	out := map[State]int64{Queued: 0, Running: 0, Done: 0, Failed: 0, Cancelled: 0}
	for rs, n := range raw {
		out[stateOf(rs)] += n
	}
	return out, nil
}
