package pluginhost

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health/grpc_health_v1"
)

// callStats counts one plugin's gRPC calls, across its restarts: every
// unary call the host makes (hooks, sections, routes; not the health check's pings) passes the
// interceptor, so no call site can forget to count.
type callStats struct {
	calls, errors, nanos atomic.Int64
}

func (c *callStats) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if method == grpc_health_v1.Health_Check_FullMethodName {
		// The health check's pings are not work done for anyone; counted,
		// they would only dilute the mean latency.
		return invoker(ctx, method, req, reply, cc, opts...)
	}
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
