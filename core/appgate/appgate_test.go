package appgate

import (
	"context"
	"testing"
	"time"
)

func TestGateCapsEachAppOnItsOwn(t *testing.T) {
	g := New(2, 30*time.Millisecond)
	ctx := context.Background()
	r1, ok1 := g.Enter(ctx, "dig")
	r2, ok2 := g.Enter(ctx, "dig")
	if !ok1 || !ok2 || g.InFlight("dig") != 2 {
		t.Fatalf("two slots of dig: %v %v, in flight %d", ok1, ok2, g.InFlight("dig"))
	}
	start := time.Now()
	if _, ok := g.Enter(ctx, "dig"); ok {
		t.Fatal("a third request of dig got a slot")
	}
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Fatalf("refused after %v, before the wait", waited)
	}
	// Another app is not held up by dig.
	r3, ok := g.Enter(ctx, "museum")
	if !ok {
		t.Fatal("museum waited for dig")
	}
	r3()
	// A slot freed while a request waits goes to it.
	go func() { time.Sleep(5 * time.Millisecond); r1() }()
	r4, ok := g.Enter(ctx, "dig")
	if !ok {
		t.Fatal("the freed slot was not taken")
	}
	r2()
	r4()
	if g.InFlight("dig") != 0 || g.Refused() != 1 {
		t.Fatalf("in flight %d, refused %d", g.InFlight("dig"), g.Refused())
	}
}

func TestGateGivesUpWithTheRequest(t *testing.T) {
	g := New(1, time.Hour)
	rel, _ := g.Enter(context.Background(), "dig")
	defer rel()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(5 * time.Millisecond); cancel() }()
	if _, ok := g.Enter(ctx, "dig"); ok {
		t.Fatal("slot taken after the request ended")
	}
}

func TestZeroLimitLetsEverythingThrough(t *testing.T) {
	for _, g := range []*Gate{nil, New(0, time.Second)} {
		for i := 0; i < 100; i++ {
			if _, ok := g.Enter(context.Background(), "dig"); !ok {
				t.Fatal("disabled gate refused")
			}
		}
	}
}
