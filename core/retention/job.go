package retention

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/jobs"
)

// Kind is the job kind that applies an application's rules.
const Kind = "retention.apply"

// Every is how long the schedule waits between two runs for one
// application.
const Every = 24 * time.Hour

// Register adds the job kind. The job reads the application's rules when
// it runs (a rule changed since it was queued applies) and prunes by them
// at now(). It is safe to run twice (a second run finds less to delete),
// but runs once like every job: the next day's run picks up what a failed
// one left.
func Register(sys *jobs.System, reg *apps.Registry, now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	sys.Register(Kind, func(ctx context.Context, run *jobs.Run) (any, error) {
		a, err := reg.Get(ctx, run.App())
		if err != nil {
			return nil, err
		}
		s, err := Read(ctx, a)
		if err != nil {
			return nil, err
		}
		return Apply(ctx, a.DB, s, now(), run.Progress)
	})
}

// Claim reports whether this node is to start the day's run for a: when
// the last run began Every or longer before now (or never), the one node
// whose conditional write of KeyLastRun succeeds wins; every other node,
// and this one until Every has passed again, gets false.
func Claim(ctx context.Context, a *apps.App, now time.Time) (bool, error) {
	db := a.DB
	st := db.Sys("settings")
	stamp := strconv.FormatInt(now.Unix(), 10)
	last, set, err := a.Setting(ctx, KeyLastRun)
	if err != nil {
		return false, err
	}
	if !set {
		res, err := db.Exec(ctx, `INSERT INTO `+st+` (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`, KeyLastRun, stamp)
		if err != nil {
			return false, fmt.Errorf("claim the retention run of %s: %w", a.Name, err)
		}
		n, err := res.RowsAffected()
		return n == 1, err
	}
	at, err := strconv.ParseInt(last, 10, 64)
	if err == nil && now.Sub(time.Unix(at, 0)) < Every {
		return false, nil
	}
	// Conditional on the value read: of the nodes that read it, one
	// writes.
	res, err := db.Exec(ctx, `UPDATE `+st+` SET value = ? WHERE key = ? AND value = ?`, stamp, KeyLastRun, last)
	if err != nil {
		return false, fmt.Errorf("claim the retention run of %s: %w", a.Name, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
