package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
)

// A job is claimed by one node, whose river client id river records in
// the job's attempted_by. A node that is killed never finishes its jobs,
// and river's rescuer only steps in after RescueAfter (24 h, as a job may
// legitimately run that long), so such jobs read "running" for a day and
// a cancel only asks the vanished node to stop. Liveness is therefore
// tracked apart from how long a job runs:
//
//   - with SQLite there is one node (core/nodelock), so at Start every job
//     still running belongs to a process that is gone: it is failed;
//   - with PostgreSQL every working node writes a heartbeat
//     (strata_job_node) each HeartbeatInterval and fails the running jobs
//     of nodes whose heartbeat is older than DeadAfter. A node with no
//     heartbeat at all (an older version in a rolling upgrade) is left to
//     river's rescuer.
//
// A cancel of a running job whose node is gone ends it at once.

// Defaults of the liveness options.
const (
	DefaultHeartbeatInterval = 15 * time.Second
	deadAfterBeats           = 4 // DeadAfter default: this many missed beats
)

// msgNodeGone is the reason a job of a vanished server reads.
const msgNodeGone = "the server running this job stopped before it finished (it was killed or lost its database); start the job again"

// nodeTable is the heartbeat table, beside river's.
const nodeTable = "strata_job_node"

func (st *storage) createNodeTable(ctx context.Context) error {
	_, err := st.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+st.nodes+` (id text PRIMARY KEY, seen_at bigint NOT NULL)`)
	if err != nil {
		return fmt.Errorf("jobs: heartbeat table: %w", err)
	}
	return nil
}

// beat records that node is alive now (unix milliseconds: the same on
// both engines, with no time zone to get wrong).
func (st *storage) beat(ctx context.Context, node string, now time.Time) error {
	_, err := st.db.ExecContext(ctx, `INSERT INTO `+st.nodes+` (id, seen_at) VALUES (`+st.arg(1)+`, `+st.arg(2)+`)
		ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`, node, now.UnixMilli())
	if err != nil {
		return fmt.Errorf("jobs: heartbeat: %w", err)
	}
	return nil
}

// lastSeen is node's last heartbeat; ok is false for a node that never
// wrote one.
func (st *storage) lastSeen(ctx context.Context, node string) (time.Time, bool, error) {
	var ms int64
	err := st.db.QueryRowContext(ctx, `SELECT seen_at FROM `+st.nodes+` WHERE id = `+st.arg(1), node).Scan(&ms)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("jobs: heartbeat of %s: %w", node, err)
	}
	return time.UnixMilli(ms), true, nil
}

// forget removes node's heartbeat, and those of nodes silent for longer
// than old (their jobs were failed long ago).
func (st *storage) forget(ctx context.Context, node string, old time.Time) {
	_, _ = st.db.ExecContext(ctx, `DELETE FROM `+st.nodes+` WHERE id = `+st.arg(1)+` OR seen_at < `+st.arg(2), node, old.UnixMilli())
}

// nodeOf is the node that runs (or last ran) a job.
func nodeOf(row *rivertype.JobRow) string {
	if len(row.AttemptedBy) == 0 {
		return ""
	}
	return row.AttemptedBy[len(row.AttemptedBy)-1]
}

// gone reports whether the node that runs a job is no longer alive;
// working says whether this node works jobs (started, not stopped).
func (s *System) gone(ctx context.Context, node string, working bool) (bool, error) {
	if node == "" || node == s.node {
		return false, nil
	}
	if s.st.single && working {
		return true, nil // one node per SQLite folder, and it is this one
	}
	seen, ok, err := s.st.lastSeen(ctx, node)
	if err != nil || !ok {
		return false, err
	}
	return time.Since(seen) > s.opts.DeadAfter, nil
}

// reap fails the running jobs of nodes that are gone (this one works).
func (s *System) reap(ctx context.Context) error {
	res, err := s.st.client.JobList(ctx, river.NewJobListParams().Kinds(taskKind).
		States(rivertype.JobStateRunning).First(10000))
	if err != nil {
		return fmt.Errorf("jobs: running jobs: %w", err)
	}
	for _, row := range res.Jobs {
		dead, err := s.gone(ctx, nodeOf(row), true)
		if err != nil {
			return err
		}
		if dead {
			state, reason := rivertype.JobStateDiscarded, msgNodeGone
			if cancelRequested(row) {
				state, reason = rivertype.JobStateCancelled, msgCancelled
			}
			if err := s.end(ctx, row, state, reason); err != nil {
				return err
			}
			s.log.Warn("job of a vanished server failed", "job", row.ID, "node", nodeOf(row))
		}
	}
	return nil
}

// end finishes a running job in state (discarded: failed; cancelled) with
// reason as its error, keeping the progress it reported, as river's
// completer would have had its node lived. A job that ended meanwhile is
// left as it is.
func (s *System) end(ctx context.Context, row *rivertype.JobRow, state rivertype.JobState, reason string) error {
	var out output
	if raw := row.Output(); len(raw) > 0 {
		_ = json.Unmarshal(raw, &out)
	}
	out.Result, out.Error, out.Kind, out.Code, out.Extra = nil, reason, 0, "", nil
	meta, err := json.Marshal(map[string]any{rivertype.MetadataKeyOutput: out})
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	errData, err := json.Marshal(rivertype.AttemptError{At: now, Attempt: max(row.Attempt, 1), Error: reason})
	if err != nil {
		return err
	}
	_, err = s.st.exec.JobSetStateIfRunningMany(ctx, &riverdriver.JobSetStateIfRunningManyParams{
		ID: []int64{row.ID}, Attempt: []*int{nil}, ErrData: [][]byte{errData}, FinalizedAt: []*time.Time{&now},
		MetadataDoMerge: []bool{true}, MetadataUpdates: [][]byte{meta}, Now: &now, ScheduledAt: []*time.Time{nil},
		Schema: s.st.schema, State: []rivertype.JobState{state},
	})
	if err != nil {
		return fmt.Errorf("jobs: end job %d: %w", row.ID, err)
	}
	return nil
}

// heartbeat beats and reaps every HeartbeatInterval until stop is closed.
func (s *System) heartbeat(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(s.opts.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.HeartbeatInterval)
		err := s.st.beat(ctx, s.node, time.Now())
		if err == nil {
			err = s.reap(ctx)
		}
		cancel()
		if err != nil {
			s.log.Warn("job heartbeat", "err", err)
		}
	}
}

// cancelRequested reports whether a cancel reached the running job.
func cancelRequested(row *rivertype.JobRow) bool {
	var meta struct {
		CancelAttemptedAt *time.Time `json:"cancel_attempted_at"`
	}
	_ = json.Unmarshal(row.Metadata, &meta)
	return meta.CancelAttemptedAt != nil
}
