package server

import (
	"context"
	"time"
)

// runEvery calls fn every interval (first at once when atStart) until ctx
// ends or stop is called; stop waits for a call under way, so the caller
// may close what fn uses after it.
func runEvery(ctx context.Context, interval time.Duration, atStart bool, fn func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if atStart {
			fn(ctx)
		}
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fn(ctx)
			}
		}
	}()
	return func() { cancel(); <-done }
}
