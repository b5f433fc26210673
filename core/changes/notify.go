package changes

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// On PostgreSQL a node tells the others of its commits to an app's log
// with a notification on NotifyChannel, which their realtime listeners
// hear. It is sent after the commit, not by the committing transaction:
// PostgreSQL serializes the commits of the transactions that notify (a
// cluster-wide lock taken before their commit record and held until it is
// flushed), which cost saves 10-20% of their rate on the 2-core machine
// (docs/performance.md). The commits that come together are told
// together: one goroutine at a time sends, for each app, one notification
// of the last id committed since its previous pass, and waits notifyPace
// before the next pass. A notification is a transaction with its own
// commit: sent for every save, they took what the saves gained.
//
// A node that dies between a commit and its notification leaves the
// other nodes' streams to learn of that change with the app's next one or
// their listener's periodic wake-up (realtime).

// notifyTimeout bounds one notification's statement.
const notifyTimeout = 10 * time.Second

// notifyPace is the least time between two passes of the sender: what a
// change on one node may wait more before the streams of the others hear
// of it, under a steady flow of commits (the first after a quiet moment is
// told at once).
const notifyPace = 10 * time.Millisecond

// toTell holds, by app (its DB key), the last id committed and not yet
// told; at most one entry per app, so it is bounded by the apps. The ids
// told are not always increasing (a commit's AfterCommit may run after a
// later commit's was told): a listener reads the log from where it is,
// whatever the id.
var toTell = struct {
	sync.Mutex
	pending map[string]told
	sending bool // a goroutine is sending
}{}

type told struct {
	db   *store.DB
	last int64
}

// tellNodes queues the notification of base's commit up to id last and
// starts the sender if none runs.
func tellNodes(base *store.DB, last int64) {
	toTell.Lock()
	defer toTell.Unlock()
	if toTell.pending == nil {
		toTell.pending = map[string]told{}
	}
	key := base.Key()
	if t, ok := toTell.pending[key]; !ok || t.last < last {
		toTell.pending[key] = told{db: base, last: last}
	}
	if !toTell.sending {
		toTell.sending = true
		go sendNotifications()
	}
}

// sendNotifications sends what is queued, pass after pass (notifyPace
// apart), until nothing is.
func sendNotifications() {
	for pass := 0; ; pass++ {
		if pass > 0 {
			time.Sleep(notifyPace)
		}
		toTell.Lock()
		batch := toTell.pending
		toTell.pending = nil
		if len(batch) == 0 {
			toTell.sending = false
			toTell.Unlock()
			return
		}
		toTell.Unlock()
		for key, t := range batch {
			ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
			_, err := t.db.Exec(ctx, `SELECT pg_notify(?, ?)`, NotifyChannel, t.db.Schema()+":"+strconv.FormatInt(t.last, 10))
			cancel()
			if err != nil {
				slog.Warn("change log: notify the other nodes", "app", key, "error", err)
			}
		}
	}
}
