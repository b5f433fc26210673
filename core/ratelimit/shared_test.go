package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/ratelimit"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// TestSharedLimitHoldsAcrossNodes: two nodes' limiters sharing one
// PostgreSQL store give an address the limit once in all, not once per
// node; the budget refills at the limit's rate; other keys and other
// limiters keep their own budgets.
func TestSharedLimitHoldsAcrossNodes(t *testing.T) {
	b := testenv.NewBackend(t, store.Postgres).(*store.PostgresBackend)
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
	node := func() (*ratelimit.Limiter, *ratelimit.Shared) {
		st, err := ratelimit.NewShared(ctx, b.Pool(), b.ServiceSchema("limits"))
		if err != nil {
			t.Fatal(err)
		}
		return ratelimit.New(5, time.Minute, clk.now).ShareThrough(st, "signin_addr"), st
	}
	a, stA := node()
	bb, _ := node()
	for i, l := range []*ratelimit.Limiter{a, bb, a, bb, a} {
		if ok, _ := l.AllowContext(ctx, "10.0.0.1"); !ok {
			t.Fatalf("event %d of 5 refused", i+1)
		}
	}
	for _, l := range []*ratelimit.Limiter{a, bb} {
		// Each node has seen 2 or 3 events, under its own limit of 5: only
		// the shared budget refuses.
		if ok, retry := l.AllowContext(ctx, "10.0.0.1"); ok || retry != 12*time.Second {
			t.Fatalf("sixth event: ok %v retry %v, want refused for 12s", ok, retry)
		}
		if ok, retry := l.CheckContext(ctx, "10.0.0.1"); ok || retry != 12*time.Second {
			t.Fatalf("check: ok %v retry %v", ok, retry)
		}
	}
	if ok, _ := bb.AllowContext(ctx, "10.0.0.2"); !ok {
		t.Fatal("another address has its own budget")
	}
	other, _ := node()
	other.ShareThrough(stA, "reset_addr")
	if ok, _ := other.AllowContext(ctx, "10.0.0.1"); !ok {
		t.Fatal("another limiter has its own budget")
	}
	clk.t = clk.t.Add(12 * time.Second)
	if ok, _ := a.AllowContext(ctx, "10.0.0.1"); !ok {
		t.Fatal("one event is allowed again after window/limit")
	}
	if ok, _ := bb.AllowContext(ctx, "10.0.0.1"); ok {
		t.Fatal("and only one, whichever node it reaches")
	}
	if stA.Errors() != 0 {
		t.Fatalf("%d database errors", stA.Errors())
	}
	// Nothing readable about the client is stored.
	var n int
	if err := b.Pool().QueryRowContext(ctx, `SELECT count(*) FROM "`+b.ServiceSchema("limits")+`".rate_limits WHERE k LIKE '%10.0.0%'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("plain keys stored: %d %v", n, err)
	}
}

// TestSharedFallsBackToTheNode: with the database gone, the node's own
// limit still applies and the failures are counted.
func TestSharedFallsBackToTheNode(t *testing.T) {
	b := testenv.NewBackend(t, store.Postgres).(*store.PostgresBackend)
	ctx := context.Background()
	st, err := ratelimit.NewShared(ctx, b.Pool(), b.ServiceSchema("limits"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Pool().ExecContext(ctx, `DROP SCHEMA "`+b.ServiceSchema("limits")+`" CASCADE`); err != nil {
		t.Fatal(err)
	}
	l := ratelimit.New(2, time.Minute, nil).ShareThrough(st, "x")
	for range 2 {
		if ok, _ := l.AllowContext(ctx, "k"); !ok {
			t.Fatal("refused while the node's own budget allows")
		}
	}
	if ok, _ := l.AllowContext(ctx, "k"); ok {
		t.Fatal("the node's own limit no longer applies")
	}
	if st.Errors() == 0 {
		t.Fatal("database failures not counted")
	}
}
