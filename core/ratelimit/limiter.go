package ratelimit

import (
	"context"
	"sync"
	"time"
)

// maxKeys bounds the memory one Limiter takes. When that many keys are
// tracked and none has expired, a new key is let through untracked: the
// limiter fails open rather than shutting out every new client during a
// flood from many addresses (the account lock still applies).
const maxKeys = 1 << 17

// Limiter allows at most Limit events per Window for each key, with bursts
// up to Limit. It is the generic cell rate algorithm: each key keeps one
// time, the theoretical arrival time of its next event, so memory does not
// grow with the rate. The zero Limit disables it. Safe for concurrent use.
type Limiter struct {
	limit    int
	window   time.Duration
	interval time.Duration // window / limit: the cost of one event
	now      func() time.Time

	mu    sync.Mutex
	tat   map[string]time.Time
	sweep time.Time // next time expired keys are dropped

	shared *Shared // nil: this node's memory only
	name   string  // the limiter's name in the shared store
}

// ShareThrough makes the limit hold across nodes: events this node allows
// are also taken from st's budget, kept under name (Shared says how).
// It returns l.
func (l *Limiter) ShareThrough(st *Shared, name string) *Limiter {
	l.shared, l.name = st, name
	return l
}

// AllowContext is Allow, also taking the event from the shared budget
// when the limiter has one.
func (l *Limiter) AllowContext(ctx context.Context, key string) (bool, time.Duration) {
	return l.takeShared(ctx, key, true)
}

// CheckContext is Check, also asking the shared budget.
func (l *Limiter) CheckContext(ctx context.Context, key string) (bool, time.Duration) {
	return l.takeShared(ctx, key, false)
}

func (l *Limiter) takeShared(ctx context.Context, key string, record bool) (bool, time.Duration) {
	ok, retry := l.take(key, record)
	var err error
	if !ok || l.shared == nil || !l.Enabled() {
		return ok, retry
	}
	ok, retry, err = l.shared.take(ctx, l.name, key, l.interval, l.window, l.now(), record)
	if err != nil {
		l.shared.errors.Add(1)
		return true, 0 // this node's own count allowed it
	}
	return ok, retry
}

// New returns a limiter of limit events per window for each key, reading
// the time from now (time.Now when nil). limit <= 0 allows everything.
func New(limit int, window time.Duration, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	l := &Limiter{limit: limit, window: window, now: now, tat: map[string]time.Time{}}
	if limit > 0 && window > 0 {
		l.interval = window / time.Duration(limit)
	}
	return l
}

// Enabled reports whether the limiter limits anything.
func (l *Limiter) Enabled() bool { return l != nil && l.interval > 0 }

// Allow records one event of key and reports whether it is within the
// limit. When it is not, the event is not recorded and retry is how long
// until one more would be allowed.
func (l *Limiter) Allow(key string) (ok bool, retry time.Duration) {
	return l.take(key, true)
}

// Check reports, without recording anything, whether one more event of key
// would be allowed now. It lets a caller count only failures: Check before
// the attempt, Allow after it fails.
func (l *Limiter) Check(key string) (ok bool, retry time.Duration) {
	return l.take(key, false)
}

func (l *Limiter) take(key string, record bool) (bool, time.Duration) {
	if !l.Enabled() {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropExpired(now)
	tat, tracked := l.tat[key]
	if !tracked || tat.Before(now) {
		tat = now
	}
	next := tat.Add(l.interval)
	if over := next.Sub(now) - l.window; over > 0 {
		return false, over
	}
	if record && (tracked || len(l.tat) < maxKeys) {
		l.tat[key] = next
	}
	return true, 0
}

// dropExpired forgets the keys whose every event has left the window, at
// most once per window (or at once when the map is full).
func (l *Limiter) dropExpired(now time.Time) {
	if now.Before(l.sweep) && len(l.tat) < maxKeys {
		return
	}
	for k, tat := range l.tat {
		if !tat.After(now) {
			delete(l.tat, k)
		}
	}
	l.sweep = now.Add(l.window)
}

// Len is the number of keys tracked (for tests and metrics).
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.tat)
}
