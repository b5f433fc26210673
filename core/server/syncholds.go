package server

import (
	"context"
	"time"

	"github.com/strata-archaeo/strata/core/fieldsync"
)

// syncSweepBatch bounds the devices one sweep of an application serves.
const syncSweepBatch = 200

// SweepSyncHolds applies, in every application, the held offline
// mutations whose wait (STRATA_SYNC_HOLD) is over (core/fieldsync,
// hold.go). A push does it for its own application; this is for the
// devices that never come back, so their mutations do not wait for ever.
// Every node may run it: a mutation is claimed in its save's transaction.
// An application that fails (not migrated yet, awaiting its major
// upgrade) is logged and skipped.
func (s *Server) SweepSyncHolds(ctx context.Context) {
	if s.apps == nil {
		return
	}
	names, err := s.apps.List(ctx)
	if err != nil {
		s.log.Error("sync holds: list applications", "err", err)
		return
	}
	d := fieldsync.Deps{Host: s, Now: s.now, Hold: s.cfg.SyncHold}
	for _, name := range names {
		a, err := s.apps.Get(ctx, name)
		if err != nil {
			continue // not a Strata application (yet): nothing of it is held
		}
		if n, err := d.ApplyExpiredHolds(ctx, a, syncSweepBatch); err != nil {
			s.log.Error("sync holds: apply expired", "app", name, "err", err)
		} else if n > 0 {
			s.log.Info("sync holds: applied mutations whose wait was over", "app", name, "mutations", n)
		}
	}
}

// StartSyncHolds runs SweepSyncHolds every minute (more often for a
// shorter STRATA_SYNC_HOLD) until ctx ends or stop is called; stop waits
// for a sweep under way, so the caller may close the applications after.
func (s *Server) StartSyncHolds(ctx context.Context) (stop func()) {
	every := min(time.Minute, max(s.cfg.SyncHold/4, 5*time.Second))
	if s.cfg.SyncHold <= 0 {
		every = time.Minute
	}
	return runEvery(ctx, every, false, s.SweepSyncHolds)
}
