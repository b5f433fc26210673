package pluginhost

import (
	"context"
	"errors"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/strata-archaeo/strata/core/errs"
)

// Why a plugin's process was lost, the reasons its restarts are counted by.
const (
	reasonExited       = "exited"       // the process ended (a crash, a kill from outside)
	reasonUnresponsive = "unresponsive" // alive but no answer to the health check: killed
	reasonStartFailed  = "start_failed" // loaded, but it did not accept its configuration
)

// ErrUnresponsive answers the calls that were in flight when a plugin was
// killed for not answering its health check: the plugin, not the request,
// was at fault, and it is being restarted.
var ErrUnresponsive = errs.New(errs.Unavailable, "plugin_unresponsive", "the plugin stopped answering and is being restarted; try again shortly")

// errHung marks the error of a call broken by a health-check kill.
var errHung = errors.New("the plugin process was killed for not answering")

// health pings the process over go-plugin's gRPC health service, which
// every go-plugin server (so every pluginsdk plugin) serves beside the
// plugin's own service, every interval; when none has been answered for
// timeout (each ping waits at most that long) it closes unresponsive and
// stops. A crash is the exit watcher's business: a process that is gone
// is seen to exit long before its pings run out. timeout <= 0 turns the
// check off.
//
// The health service answers as long as the process's gRPC server does:
// the check finds a process that is frozen or wedged as a whole (stopped,
// its threads blocked, its server stalled), not one handler stuck in a
// loop of its own, which the call's deadline already bounds.
func (pr *process) health(every, timeout time.Duration) {
	if timeout <= 0 || every <= 0 || pr.conn == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-pr.stop: // a ping in flight ends with the process
			cancel()
		case <-ctx.Done():
		}
	}()
	hc := grpc_health_v1.NewHealthClient(pr.conn)
	lastOK := time.Now()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-pr.stop:
			return
		case <-t.C:
		}
		pctx, pcancel := context.WithTimeout(ctx, timeout)
		_, err := hc.Check(pctx, &grpc_health_v1.HealthCheckRequest{Service: goplugin.GRPCServiceName})
		pcancel()
		if ctx.Err() != nil {
			return
		}
		if answered(err) {
			lastOK = time.Now()
			continue
		}
		if time.Since(lastOK) >= timeout {
			close(pr.unresponsive)
			return
		}
	}
}

// answered reports whether a ping got an answer from the process: any
// status but a deadline, a broken connection or a cancellation proves it
// alive (a plugin whose server lacked the health service would answer
// Unimplemented, quickly: not stuck).
func answered(err error) bool {
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.Unavailable, codes.Canceled:
		return false
	}
	return true
}

// forceKill sends SIGKILL to the process. A hung process never answers
// go-plugin's graceful shutdown, which Client.Kill would wait for without
// end; once it is dead, kill releases the rest at once.
func (pr *process) forceKill() {
	if pr.runner != nil {
		_ = pr.runner.Kill(context.Background())
	}
}

// markHung is a client interceptor: a call that fails once its process
// was found hung carries errHung, so callers answer plugin_unresponsive
// instead of a bare plugin_unavailable.
func (pr *process) markHung(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err != nil && pr.hung.Load() {
		return errors.Join(errHung, err)
	}
	return err
}

// lost records why the process went, for the count of the restart that
// follows.
func (p *plugin) lost(reason string) {
	p.mu.Lock()
	p.lostBy = reason
	p.mu.Unlock()
}
