package pluginhost

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
)

// callStats counts one plugin's gRPC calls, across its restarts: every
// unary call the host makes (hooks, sections, routes, health) passes the
// interceptor, so no call site can forget to count.
type callStats struct {
	calls, errors, nanos atomic.Int64
}

func (c *callStats) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	start := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	c.calls.Add(1)
	c.nanos.Add(int64(time.Since(start)))
	if err != nil {
		c.errors.Add(1)
	}
	return err
}

// callStatsTable holds the stats by executable file, which stays the same
// across a plugin's restarts (its name is known only once it answers).
type callStatsTable struct {
	mu sync.Mutex
	m  map[string]*callStats
}

func (t *callStatsTable) of(file string) *callStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]*callStats{}
	}
	s, ok := t.m[file]
	if !ok {
		s = &callStats{}
		t.m[file] = s
	}
	return s
}
