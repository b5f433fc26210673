package server

import (
	"context"
	"time"

	"github.com/strata-archaeo/strata/core/retention"
)

// retentionCheck is how often a node looks for applications whose daily
// retention run is due: cheap (a settings read per application), and the
// run itself starts about once a day (retention.Every).
const retentionCheck = time.Hour

// ScheduleRetention queues, for every application that has a retention
// rule set and whose last run began a day or more ago, the job that
// applies its rules (core/retention). Every node may call it: the
// conditional write of the application's last-run time (retention.Claim)
// lets one node queue each day's job, and any node works it. This, not
// river's periodic jobs, because the rules and the day are per
// application, kept in its own settings, and River's periodic jobs run on
// the elected leader with one set of arguments fixed when the client is
// built, before applications are created or dropped.
func (s *Server) ScheduleRetention(ctx context.Context) {
	if s.apps == nil || s.jobs == nil {
		return
	}
	names, err := s.apps.List(ctx)
	if err != nil {
		s.log.Error("retention: list applications", "err", err)
		return
	}
	for _, name := range names {
		a, err := s.apps.Get(ctx, name)
		if err != nil {
			continue // not a Strata application (yet): it keeps nothing of ours
		}
		set, err := retention.Read(ctx, a)
		if err != nil || !set.Any() {
			continue // nothing to prune: no job, no row in the queue
		}
		ok, err := retention.Claim(ctx, a, s.now())
		if err != nil {
			s.log.Error("retention: claim the day's run", "app", name, "err", err)
			continue
		}
		if !ok {
			continue
		}
		if _, err := s.jobs.Enqueue(ctx, name, 0, retention.Kind, struct{}{}); err != nil {
			s.log.Error("retention: queue the day's run", "app", name, "err", err)
		}
	}
}

// StartRetention runs ScheduleRetention at once and then every hour until
// ctx ends or stop is called; stop waits for a round under way.
func (s *Server) StartRetention(ctx context.Context) (stop func()) {
	return runEvery(ctx, retentionCheck, true, s.ScheduleRetention)
}
