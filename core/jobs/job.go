package jobs

import (
	"bytes"
	"encoding/json"
	"github.com/strata-archaeo/strata/core/errs"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// State is a job's state on the wire (CONTRACT §10).
type State string

// The states of CONTRACT §10.
const (
	Queued    State = "queued"
	Running   State = "running"
	Done      State = "done"
	Failed    State = "failed"
	Cancelled State = "cancelled"
)

// Finished reports whether the job will not change any more.
func (s State) Finished() bool { return s == Done || s == Failed || s == Cancelled }

// stateOf maps river's states to ours: everything still waiting is queued,
// completed is done, discarded (out of attempts) is failed.
func stateOf(s rivertype.JobState) State {
	switch s {
	case rivertype.JobStateRunning:
		return Running
	case rivertype.JobStateCompleted:
		return Done
	case rivertype.JobStateDiscarded:
		return Failed
	case rivertype.JobStateCancelled:
		return Cancelled
	}
	return Queued // available, pending, scheduled, retryable
}

// Job is what any node can read of a job.
type Job struct {
	ID   int64  `json:"id"`
	App  string `json:"app"`
	User int64  `json:"user"`
	Kind string `json:"kind"`
	// State is queued, running, done, failed or cancelled.
	State State `json:"state"`
	// Done and Total are the last progress the job reported (Total 0:
	// unknown).
	Done  int64 `json:"done"`
	Total int64 `json:"total"`
	// Error is the failure's message (failed or cancelled jobs): safe to
	// show, never a Go error's text.
	Error string `json:"error"`
	// Result is the JSON the job's function returned (done jobs).
	Result json.RawMessage `json:"result"`
	// ErrorCode and ErrorExtra are those of a coded refusal (Err).
	ErrorCode  string         `json:"error_code,omitempty"`
	ErrorExtra map[string]any `json:"error_extra,omitempty"`
	errKind    errs.Kind
	// CancelRequested is set once a cancel reached a running job that has
	// not stopped yet.
	CancelRequested bool       `json:"cancel_requested"`
	CreatedAt       time.Time  `json:"created_at"`
	StartedAt       *time.Time `json:"started_at"`
	FinishedAt      *time.Time `json:"finished_at"`
}

// Err is the coded error a failed job ended with (nil for a job that did
// not fail with one): what a request waiting for it answers.
func (j Job) Err() error {
	if j.ErrorCode == "" || (j.State != Failed && j.State != Cancelled) {
		return nil
	}
	e := errs.New(j.errKind, j.ErrorCode, j.Error)
	for k, v := range j.ErrorExtra {
		e = e.With(k, v)
	}
	return e
}

// taskKind is the one river kind every Strata job is inserted as; our own
// kind travels in the arguments.
const taskKind = "strata_task"

// taskArgs are a job's river arguments.
type taskArgs struct {
	Task string          `json:"kind"`
	App  string          `json:"app"`
	User int64           `json:"user"`
	Args json.RawMessage `json:"args"`
}

// Kind is river's kind of every Strata job.
func (taskArgs) Kind() string { return taskKind }

// output is what a job keeps in river's job output (metadata "output"):
// its progress while it runs, then its result or error.
type output struct {
	Done   int64           `json:"done"`
	Total  int64           `json:"total"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	// A coded refusal (an *errs.Error that is not internal): its kind,
	// code and extra keys, so that the request that waited for the job
	// answers as if it had done the work itself.
	Kind  int            `json:"error_kind,omitempty"`
	Code  string         `json:"error_code,omitempty"`
	Extra map[string]any `json:"error_extra,omitempty"`
}

// jobOf reads a river row as a Job; ok is false for a row that is not
// one of ours.
func jobOf(row *rivertype.JobRow) (Job, bool) {
	if row.Kind != taskKind {
		return Job{}, false
	}
	var a taskArgs
	if err := json.Unmarshal(row.EncodedArgs, &a); err != nil {
		return Job{}, false
	}
	j := Job{
		ID: row.ID, App: a.App, User: a.User, Kind: a.Task, State: stateOf(row.State),
		CreatedAt: row.CreatedAt.UTC(), StartedAt: utc(row.AttemptedAt), FinishedAt: utc(row.FinalizedAt),
	}
	var out output
	if raw := row.Output(); len(raw) > 0 {
		_ = json.Unmarshal(raw, &out) // a malformed output shows no progress
	}
	j.Done, j.Total = out.Done, out.Total
	if j.State == Done && len(out.Result) > 0 {
		// PostgreSQL's jsonb reformats what it stores: answer it compact.
		var buf bytes.Buffer
		if json.Compact(&buf, out.Result) == nil {
			j.Result = buf.Bytes()
		}
	}
	if j.State == Failed || j.State == Cancelled {
		j.Error = out.Error
		if j.Error == "" && len(row.Errors) > 0 {
			// Written by river itself (a job rescued from a vanished node,
			// a kind no node knows): its own plain sentences.
			j.Error = row.Errors[len(row.Errors)-1].Error
		}
		if j.Error == "" && j.State == Cancelled {
			j.Error = msgCancelled
		}
		j.ErrorCode, j.errKind, j.ErrorExtra = out.Code, errs.Kind(out.Kind), out.Extra
	}
	if j.State == Running {
		var meta struct {
			CancelAttemptedAt *time.Time `json:"cancel_attempted_at"`
		}
		_ = json.Unmarshal(row.Metadata, &meta)
		j.CancelRequested = meta.CancelAttemptedAt != nil
	}
	return j, true
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
