// Package jobs is the server's one job system: long operations (backup
// creation, restores, imports, exports, syncs) run as jobs that any node
// enqueues, any node works and any node reads, with their progress, result
// and error, and that any node cancels.
//
// An area registers a function per kind of job on the System the server
// exposes (server.Jobs), then enqueues jobs of that kind:
//
//	sys.Register("backup", func(ctx context.Context, job *jobs.Run) (any, error) {
//		var a backupArgs
//		if err := job.Bind(&a); err != nil { return nil, err }
//		for i, t := range tables { job.Progress(int64(i), int64(len(tables))); ... }
//		return gin.H{"file": name}, nil
//	})
//	j, err := sys.Enqueue(ctx, app.Name, actor.UserID, "backup", backupArgs{...})
//
// and answers {job: j.ID}; clients follow it at GET /jobs/{id} or its
// event stream (routes.go, events.go; CONTRACT §10).
//
// # Why river
//
// Several stateless nodes may share one PostgreSQL, so a job must be
// claimed by exactly one node, survive the node that enqueued it, be
// cancellable from another node, and stay readable after it ends. River
// (github.com/riverqueue/river) does this with the database we already
// have: jobs are rows locked with SKIP LOCKED, nodes learn of new jobs and
// cancellations by LISTEN/NOTIFY (PostgreSQL) or a polled notification
// table (SQLite), one elected leader rescues jobs of dead nodes and deletes
// old ones, and it has a SQLite driver over database/sql, so the embedded
// engine runs the same code. No broker to deploy, no second store to back
// up.
//
// # Where the queue lives
//
//   - PostgreSQL: the apps' database, schema <namespace>__jobs
//     (store.PostgresBackend.ServiceSchema), through a small pgx pool of its
//     own (river's pgx driver holds a connection to LISTEN). Namespaces keep
//     instances and test runs apart; DestroyNamespace drops it.
//   - SQLite: <data dir>/jobs.db, mode 0600, WAL, one connection, as river's
//     SQLite driver asks (SQLite has one writer at a time).
//
// River's tables are created and upgraded by rivermigrate at Open (nodes
// take turns on an advisory lock).
//
// # One river kind
//
// Every job is river kind "strata_task" with arguments {kind, app, user,
// args}: the System dispatches on our kind, so areas register plain
// functions, kinds can be added without touching river's worker bundle,
// and the app a job belongs to is in its row (lists filter on it). A kind
// this node does not know fails the job with a sentence naming it (a node
// of an older version in a rolling upgrade); Enqueue refuses a kind not
// registered here.
//
// # States, attempts, retention
//
// River's available, pending, scheduled and retryable are queued; running
// is running; completed is done; discarded is failed; cancelled is
// cancelled. Jobs run once (MaxAttempts 1; Attempts(n) for a kind that is
// safe to repeat): a backup half written must not start over unseen. Jobs
// have no timeout unless their kind sets one (Timeout). A job whose node
// died is failed at the next start (SQLite) or once the node's heartbeat
// is older than Options.DeadAfter (PostgreSQL; nodes.go). A job still
// running after Options.RescueAfter (24 h) is failed by river's rescuer. Finished jobs are kept Options.Retention
// (7 days), then river's cleaner deletes them.
//
// # Progress, result and error
//
// They live in the job's own row, in river's job output (metadata
// "output": {done, total, result?, error?}), so no table of ours has to be
// kept in step with river's, any node reads them with the job, and they go
// when the job goes. Run.Progress only records the numbers; a goroutine per
// running job writes them at most every Options.ProgressInterval (250 ms:
// 4 writes a second) while they change, and the last values are written
// with the result (river.RecordOutput, in the same update that completes
// the job) or with the error.
//
// The error a client reads is never a Go error's text, which may carry a
// connection string or a path: an *errs.Error's Message is shown (the
// house's safe message), anything else is logged with the job's id and
// shown as "the job failed with an internal error; it has been logged". A
// panic in a job's function is recovered, logged and shown the same way.
//
// # Cancel
//
// Cancel of a queued job marks it cancelled at once. For a running job
// river records the request and tells the node that runs it (NOTIFY, or
// the SQLite notification table polled every 50 ms), which cancels the
// job's context; the job ends cancelled when its function returns. Until
// then Get shows running with CancelRequested. A finished job answers
// ErrFinished (409 job_finished).
//
// # Lifecycle
//
// Open (storage, migrations; the System can enqueue and read), Register
// (while the server is built), Start (this node works jobs), Stop (running
// jobs have until the context's deadline to finish, then their contexts are
// cancelled and they end failed; the storage is closed). cmd/strata serve
// does this around the HTTP server, and calls EndStreams when the HTTP
// shutdown begins so that event streams do not hold it.
package jobs
