package realtime

import (
	"context"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/store"
)

// behindReplay reports whether a client resuming after id after gets
// resync rather than a replay: the log no longer holds what it missed
// (changes.Missed), or it missed more than a stream replays
// (Config.ReplayMaxEvents), or the first change it missed is older than
// Config.ReplayMaxAge. The log's own window is long (offline sync reads
// it weeks later); a live stream's replay stays short on its own.
func (h *Hub) behindReplay(ctx context.Context, db *store.DB, after, oldest, newest int64) (bool, error) {
	if changes.Missed(after, oldest, newest) {
		return true, nil
	}
	if after >= newest {
		return false, nil
	}
	if newest-after > h.cfg.ReplayMaxEvents {
		return true, nil
	}
	first, err := changes.Since(ctx, db, after, 1)
	if err != nil {
		return false, err
	}
	return len(first) > 0 && first[0].At.Before(h.now().Add(-h.cfg.ReplayMaxAge)), nil
}
