package changes

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// Retention bounds the log of each app: rows older than MaxAge go, and
// all but the newest MaxEvents. A reader that fell further behind gets a
// resync instead of a replay.
type Retention struct {
	MaxAge    time.Duration
	MaxEvents int64
	// Every is how often, at most, a commit trims its app's log (in the
	// background, after the commit).
	Every time.Duration
}

// DefaultRetention is 30 days or 1,000,000 events: offline sync
// (core/fieldsync) resumes a device's pull from the log after weeks in the
// field; a device further behind starts its pull again. Live streams
// bound their own replay far shorter (core/realtime Config.ReplayMaxAge).
var DefaultRetention = Retention{MaxAge: 30 * 24 * time.Hour, MaxEvents: 1_000_000, Every: 30 * time.Second}

var retention atomic.Pointer[Retention]

// SetRetention sets the window for every app of the process (config).
func SetRetention(r Retention) {
	if r.MaxAge <= 0 {
		r.MaxAge = DefaultRetention.MaxAge
	}
	if r.MaxEvents <= 0 {
		r.MaxEvents = DefaultRetention.MaxEvents
	}
	if r.Every <= 0 {
		r.Every = DefaultRetention.Every
	}
	retention.Store(&r)
}

// CurrentRetention is the window in force.
func CurrentRetention() Retention {
	if r := retention.Load(); r != nil {
		return *r
	}
	return DefaultRetention
}

var lastTrim sync.Map // DB key → time.Time of the last trim started

// maybeTrim trims base's log in the background when its last trim is
// older than Retention.Every.
func maybeTrim(base *store.DB) {
	r := CurrentRetention()
	now := time.Now()
	key := base.Key()
	if v, ok := lastTrim.Load(key); ok && now.Sub(v.(time.Time)) < r.Every {
		return
	}
	lastTrim.Store(key, now)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = Trim(ctx, base, r, now)
	}()
}

// Trim deletes the rows outside the window r at now, and returns how many
// went. The newest row always stays, and only rows below a kept one go,
// so that Missed can tell a reader that missed rows (see Missed).
func Trim(ctx context.Context, db *store.DB, r Retention, now time.Time) (int64, error) {
	_, newest, err := Bounds(ctx, db)
	if err != nil || newest == 0 {
		return 0, err
	}
	// The first id kept: within the count, and not older than MaxAge.
	keep := max(newest-r.MaxEvents+1, 1)
	var firstRecent *int64
	if err := db.QueryRow(ctx, `SELECT MIN(id) FROM `+db.Sys("changes")+` WHERE at >= ?`, now.Add(-r.MaxAge).UTC()).Scan(&firstRecent); err != nil {
		return 0, err
	}
	recent := newest // none recent: keep the newest only
	if firstRecent != nil {
		recent = *firstRecent
	}
	keep = max(keep, recent)
	keep = min(keep, newest)
	res, err := db.Exec(ctx, `DELETE FROM `+db.Sys("changes")+` WHERE id < ?`, keep)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return n, nil
}
