package ratelimit

import (
	"sync"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestLimiterBurstThenRate(t *testing.T) {
	clk := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := New(5, time.Minute, clk.now)
	for i := 0; i < 5; i++ {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("event %d of a burst of 5 refused", i+1)
		}
	}
	ok, retry := l.Allow("a")
	if ok || retry != 12*time.Second {
		t.Fatalf("sixth event: ok %v retry %v, want refused for 12s", ok, retry)
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Fatal("another key has its own budget")
	}
	clk.advance(11 * time.Second)
	if ok, retry := l.Check("a"); ok || retry != time.Second {
		t.Fatalf("after 11s: ok %v retry %v", ok, retry)
	}
	clk.advance(time.Second)
	if ok, _ := l.Allow("a"); !ok {
		t.Fatal("one event is allowed again after window/limit")
	}
	if ok, _ := l.Allow("a"); ok {
		t.Fatal("and only one")
	}
	clk.advance(time.Minute)
	for i := 0; i < 5; i++ {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("after a quiet window, event %d refused", i+1)
		}
	}
}

func TestLimiterCheckRecordsNothing(t *testing.T) {
	clk := &fakeClock{t: time.Unix(0, 0)}
	l := New(2, time.Hour, clk.now)
	for i := 0; i < 10; i++ {
		if ok, _ := l.Check("k"); !ok {
			t.Fatal("Check must not consume the budget")
		}
	}
	l.Allow("k")
	l.Allow("k")
	if ok, retry := l.Check("k"); ok || retry != 30*time.Minute {
		t.Fatalf("after two events: ok %v retry %v", ok, retry)
	}
}

func TestLimiterDisabledAndExpiry(t *testing.T) {
	clk := &fakeClock{t: time.Unix(0, 0)}
	off := New(0, time.Minute, clk.now)
	for i := 0; i < 1000; i++ {
		if ok, _ := off.Allow("k"); !ok {
			t.Fatal("a zero limit disables the limiter")
		}
	}
	if off.Enabled() || off.Len() != 0 {
		t.Fatal("a disabled limiter tracks nothing")
	}
	l := New(3, time.Minute, clk.now)
	l.Allow("x")
	l.Allow("y")
	clk.advance(2 * time.Minute)
	l.Allow("z")
	if l.Len() != 1 {
		t.Fatalf("expired keys are dropped: %d tracked", l.Len())
	}
}

func TestLimiterConcurrent(t *testing.T) {
	clk := &fakeClock{t: time.Unix(0, 0)}
	l := New(10, time.Minute, clk.now)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ok, _ := l.Allow("k"); ok {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if allowed != 10 {
		t.Fatalf("%d of 50 concurrent events allowed, want 10", allowed)
	}
}
