// Package appgate caps the requests one application may have in progress,
// so that a busy app (an import loop, a scraper, a classroom signing in at
// once) cannot take every worker, database connection and CPU slice from
// the other apps of the instance.
//
// A request over its app's cap waits for a slot up to a short time, then is
// refused with 503 app_busy and Retry-After: a queue long enough to absorb
// bursts, short enough that a client learns to back off. Streams (job
// events) do not hold a slot: they wait on others' work, not on the server.
package appgate

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Gate holds one semaphore per application name. The zero limit lets
// everything through. Safe for concurrent use.
type Gate struct {
	limit int
	wait  time.Duration

	mu   sync.Mutex
	sems map[string]chan struct{}

	refused atomic.Int64
}

// New returns a gate allowing limit requests in progress per app, a
// request waiting up to wait for a slot. limit <= 0 disables the gate.
func New(limit int, wait time.Duration) *Gate {
	return &Gate{limit: limit, wait: wait, sems: map[string]chan struct{}{}}
}

// Enabled reports whether the gate caps anything.
func (g *Gate) Enabled() bool { return g != nil && g.limit > 0 }

func (g *Gate) sem(app string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.sems[app]
	if !ok {
		// Only resolved apps reach the gate, so the map grows with the
		// instance's apps, never with what clients type.
		s = make(chan struct{}, g.limit)
		g.sems[app] = s
	}
	return s
}

// Enter takes a slot of app, waiting up to the gate's wait (or until ctx
// ends). ok false: no slot; release is then nil.
func (g *Gate) Enter(ctx context.Context, app string) (release func(), ok bool) {
	if !g.Enabled() {
		return func() {}, true
	}
	s := g.sem(app)
	select {
	case s <- struct{}{}:
		return func() { <-s }, true
	default:
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case s <- struct{}{}:
		return func() { <-s }, true
	case <-t.C:
	case <-ctx.Done():
	}
	g.refused.Add(1)
	return nil, false
}

// InFlight is the number of requests of app holding a slot.
func (g *Gate) InFlight(app string) int {
	if !g.Enabled() {
		return 0
	}
	return len(g.sem(app))
}

// Refused counts the requests refused since the gate was made (metrics).
func (g *Gate) Refused() int64 {
	if g == nil {
		return 0
	}
	return g.refused.Load()
}
