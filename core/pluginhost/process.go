package pluginhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/pluginsdk"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// State is where a loaded plugin is in its life.
type State string

const (
	StateStarting   State = "starting"   // a process is being started
	StateRunning    State = "running"    // calls are served
	StateRestarting State = "restarting" // it exited; a restart is due after the backoff
	StateDisabled   State = "disabled"   // too many exits: waits for an admin (Enable)
	StateRefused    State = "refused"    // not loaded: see error_code (checksum, protocol)
	StateStopped    State = "stopped"    // the server is shutting down
)

// ErrFailed is a plugin call that failed inside the plugin (an error it
// returned, a panic it recovered from): the detail is logged, not shown.
var ErrFailed = errs.New(errs.BadGateway, "plugin_error", "the plugin failed to answer; the failure has been logged")

// plugin is a loaded plugin: its manifest (that of the process serving
// it, replaced by a reload) and the process serving it now, if any.
type plugin struct {
	m        *Manager
	name     string
	file     string
	settings []byte

	mu       sync.RWMutex
	man      *pluginv1.Manifest // read with manifest()
	mounted  []*pluginv1.Route  // the routes of the manifest loaded at start: those the server mounted
	state    State
	proc     *process
	crashes  []time.Time // exits (and failed starts) within the crash window
	restarts int
	lastErr  string
	// lostBy is why the process was last lost (a reason* constant), and
	// restartsBy the restarts by that reason, for GET /plugins and the
	// metrics: a plugin restarted for hanging is another problem than one
	// that crashes.
	lostBy     string
	restartsBy map[string]int

	// errCode is the stable code of the last failed start (a checksum
	// mismatch), reloadErr and reloadCode those of the last failed reload,
	// restartNeeded what of the current manifest waits for a server restart.
	errCode, reloadErr, reloadCode, restartNeeded string
	// seen is the plugin file as the watcher last looked at it (reload.go).
	seen fileSig

	startReq  chan chan error // Enable asks the supervisor for a start now
	reloadReq chan chan error // Reload asks it to start the binary anew and swap
	quit      chan struct{}   // closed by stop (Reject)
	quitOnce  sync.Once
}

func newPlugin(m *Manager, file string, man *pluginv1.Manifest) *plugin {
	p := &plugin{m: m, name: man.GetName(), file: file, man: man, mounted: man.GetRoutes(), state: StateStarting,
		startReq: make(chan chan error), reloadReq: make(chan chan error), quit: make(chan struct{}), restartsBy: map[string]int{}}
	p.seen, _ = statFile(file)
	p.settings = m.readSettings(p.name)
	return p
}

// readSettings returns the instance's settings for a plugin: the JSON
// object in <plugin dir>/<name>.json when there is one, else {}.
func (m *Manager) readSettings(name string) []byte {
	raw, err := os.ReadFile(filepath.Join(m.opts.Dir, name+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return []byte("{}")
	}
	var obj map[string]any
	if err == nil {
		err = json.Unmarshal(raw, &obj)
		if err == nil && obj == nil {
			err = errors.New("not a JSON object")
		}
	}
	if err != nil {
		m.log.Error("plugin settings ignored", "plugin", name, "file", name+".json", "err", err)
		return []byte("{}")
	}
	return bytes.TrimSpace(raw)
}

// process is one running plugin process.
type process struct {
	client   *goplugin.Client
	runner   *cmdRunner
	rpc      pluginv1.PluginClient
	broker   *goplugin.GRPCBroker
	exited   chan struct{} // closed when the process is seen to have exited
	stop     chan struct{}
	stopOnce sync.Once

	conn         *grpc.ClientConn // the connection the health check pings over
	unresponsive chan struct{}    // closed when the health check gives up (health.go)
	hung         atomic.Bool      // set before a hung process is killed: its broken calls say so
	inflight     atomic.Int64     // calls under way, which a reload lets finish (reload.go)
}

// launch starts the executable file with go-plugin and asks for its
// manifest, each step with its deadline.
//
// want, when not nil, is the SHA-256 the executable must have: go-plugin's
// SecureConfig checks it right before the exec (reload.go).
func (m *Manager) launch(ctx context.Context, file, label string, want []byte) (*process, *pluginv1.Manifest, error) {
	var run *cmdRunner
	proc := &process{exited: make(chan struct{}), stop: make(chan struct{}), unresponsive: make(chan struct{})}
	cfg := &goplugin.ClientConfig{
		HandshakeConfig:  pluginsdk.Handshake,
		Plugins:          goplugin.PluginSet{pluginsdk.PluginKey: &pluginsdk.GRPCPlugin{}},
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		SkipHostEnv:      true,
		// With a RunnerFunc (instead of a Cmd), go-plugin makes a folder
		// per process in TempDir for the server's broker sockets, passes
		// it to the plugin as PLUGIN_UNIX_SOCKET_DIR for its own, and
		// removes it on Kill (sockets.go). spec carries go-plugin's
		// variables (handshake, certificate, socket folder).
		RunnerFunc: func(_ hclog.Logger, spec *exec.Cmd, _ string) (runner.Runner, error) {
			if err := verifyChecksum(file, want); err != nil {
				return nil, err
			}
			cmd := exec.Command(file)
			// Ours, then go-plugin's; nothing of the server's own
			// environment (SkipHostEnv).
			cmd.Env = append(append([]string{}, m.opts.Env...), spec.Env...)
			cmd.Stdin = spec.Stdin
			orphanGuard(cmd)
			r, err := newCmdRunner(cmd)
			run = r
			return r, err
		},
		UnixSocketConfig: &goplugin.UnixSocketConfig{TempDir: m.sockDir},
		StartTimeout:     m.opts.StartTimeout,
		Logger:           newSlogLogger(m.log, label),
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(pluginsdk.MaxMessageSize), grpc.MaxCallSendMsgSize(pluginsdk.MaxMessageSize)),
			grpc.WithUnaryInterceptor(m.calls.of(file).intercept), grpc.WithChainUnaryInterceptor(proc.markHung, proc.count)},
		// What the plugin writes to os.Stderr/os.Stdout once serving
		// (stderr.go).
		SyncStderr: newLineLogger(m.log, label, "stderr"),
		SyncStdout: newLineLogger(m.log, label, "stdout"),
	}
	rc, reattached := m.opts.Reattach[reattachName(file)]
	if reattached {
		// A process started by a developer (under a debugger): attach to
		// it rather than start the executable. go-plugin allows neither a
		// runner nor AutoMTLS with Reattach.
		cfg.RunnerFunc, cfg.AutoMTLS, cfg.Reattach = nil, false, rc
	}
	client := goplugin.NewClient(cfg)
	proc.client = client
	rpcClient, err := client.Client()
	if err != nil {
		proc.kill()
		if errors.Is(err, errChecksum) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("start: %w", err)
	}
	proc.runner = run // set by RunnerFunc, inside Client
	if gc, ok := rpcClient.(*goplugin.GRPCClient); ok {
		proc.conn = gc.Conn
	}
	raw, err := rpcClient.Dispense(pluginsdk.PluginKey)
	if err != nil {
		proc.kill()
		return nil, nil, fmt.Errorf("dispense: %w", err)
	}
	c, ok := raw.(*pluginsdk.Client)
	if !ok {
		proc.kill()
		return nil, nil, fmt.Errorf("dispense: unexpected %T", raw)
	}
	proc.rpc, proc.broker = c.Plugin, c.Broker
	dctx, cancel := context.WithTimeout(ctx, m.opts.DescribeTimeout)
	defer cancel()
	man, err := c.Plugin.Describe(dctx, &pluginv1.DescribeRequest{})
	if err != nil {
		proc.kill()
		return nil, nil, fmt.Errorf("describe: %w", err)
	}
	go proc.watch(m.opts.PollInterval)
	if !reattached {
		// A process stopped at a breakpoint answers no ping: the health
		// check would kill (and so detach) it.
		go proc.health(m.opts.PingInterval, m.opts.PingTimeout)
	}
	return proc, man, nil
}

// watch closes exited when go-plugin sees the process gone.
func (pr *process) watch(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-pr.stop:
			return
		case <-t.C:
			if pr.client.Exited() {
				close(pr.exited)
				return
			}
		}
	}
}

// kill ends the process (gracefully when it still answers) and releases
// what go-plugin holds for it.
func (pr *process) kill() {
	pr.stopOnce.Do(func() { close(pr.stop) })
	done := make(chan struct{})
	go func() {
		pr.client.Kill()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(killGrace):
		// go-plugin's graceful shutdown waits for an answer a wedged
		// process never gives: SIGKILL ends the wait.
		pr.forceKill()
		<-done
	}
}

// killGrace is how long a process is given to shut down gracefully
// (go-plugin itself waits up to 2 s for the exit once asked).
const killGrace = 5 * time.Second

// configure serves the Host service to the process over the broker and
// tells it the broker id and its settings.
func (p *plugin) configure(proc *process) error {
	id := proc.broker.NextId()
	host := &hostServer{m: p.m, p: p}
	go proc.broker.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
		s := grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(pluginsdk.MaxMessageSize), grpc.MaxSendMsgSize(pluginsdk.MaxMessageSize))...)
		pluginv1.RegisterHostServer(s, host)
		return s
	})
	ctx, cancel := context.WithTimeout(context.Background(), p.m.opts.DescribeTimeout)
	defer cancel()
	_, err := proc.rpc.Configure(ctx, &pluginv1.ConfigureRequest{
		HostBrokerId: id, Settings: p.settings, ServerVersion: p.m.opts.ServerVersion,
	})
	return err
}

// supervise runs for the life of the plugin: it watches the running
// process, restarts it after an exit with a growing backoff, opens the
// circuit breaker after too many exits and starts it again on Enable.
func (p *plugin) supervise(proc *process) {
	defer p.m.wg.Done()
	var waiting []chan error // Enable calls waiting for the next start
	answer := func(err error) {
		for _, w := range waiting {
			w <- err
		}
		waiting = nil
	}
	for {
		if proc != nil {
			p.setRunning(proc)
			answer(nil)
			select {
			case <-proc.exited:
				p.down(proc)
				proc.kill()
				p.crashed(errors.New("the process exited"))
				p.lost(reasonExited)
				p.m.log.Error("plugin process exited", "plugin", p.name)
				proc = nil
			case <-proc.unresponsive:
				// Alive but stuck: handled like a crash (backoff, breaker).
				proc.hung.Store(true)
				p.down(proc)
				proc.forceKill()
				proc.kill()
				p.crashed(fmt.Errorf("no answer to the health check for %s: killed", p.m.opts.PingTimeout))
				p.lost(reasonUnresponsive)
				p.m.log.Error("plugin unresponsive: process killed, to be restarted", "plugin", p.name, "ping_timeout", p.m.opts.PingTimeout)
				proc = nil
			case w := <-p.startReq:
				w <- nil // already running
				continue
			case w := <-p.reloadReq:
				next, err := p.restart()
				if err != nil {
					p.reloadFailed(err)
					w <- err
					continue
				}
				// New calls go to next from here; the old process
				// finishes those it has, then stops.
				old := proc
				proc = next
				p.setRunning(next)
				p.setErrCode(nil)
				p.reloaded()
				p.m.wg.Add(1)
				go p.drain(old)
				w <- nil
				continue
			case <-p.m.stopping:
				p.shutdown(proc)
				return
			case <-p.quit:
				p.shutdown(proc)
				return
			}
		}
		var timer <-chan time.Time // nil while disabled: only Enable or shutdown
		var t *time.Timer
		if p.breakerOpen() {
			p.setState(StateDisabled)
			p.m.log.Error("plugin disabled after repeated crashes; an admin re-enables it with POST /<app>/api/plugins/"+p.name+"/enable",
				"plugin", p.name, "crashes", p.m.opts.MaxCrashes, "window", p.m.opts.CrashWindow)
		} else {
			p.setState(StateRestarting)
			t = time.NewTimer(p.backoff())
			timer = t.C
		}
		quit := false
		select {
		case <-timer:
		case w := <-p.startReq:
			p.resetCrashes()
			waiting = append(waiting, w)
		case w := <-p.reloadReq:
			// Not running: a reload is a start now, of the new binary.
			p.resetCrashes()
			waiting = append(waiting, w)
		case <-p.m.stopping:
			quit = true
		case <-p.quit:
			quit = true
		}
		if t != nil {
			t.Stop()
		}
		if quit {
			p.shutdown(nil)
			answer(ErrUnavailable.With("plugin", p.name))
			return
		}
		p.setState(StateStarting)
		next, err := p.restart()
		p.setErrCode(err)
		if err != nil {
			p.crashed(err)
			p.m.log.Error("plugin restart failed", "plugin", p.name, "err", err)
			answer(ErrUnavailable.With("plugin", p.name).With("detail", err.Error()).Wrap(err))
			continue
		}
		p.reloaded()
		p.mu.Lock()
		p.restarts++
		reason := p.lostBy
		p.restartsBy[reason]++
		p.mu.Unlock()
		p.m.log.Info("plugin restarted", "plugin", p.name, "reason", reason)
		proc = next
	}
}

// restart starts a new process for the plugin from its executable (after
// a crash, or a reload), checks it (checksum, protocol, manifest, same
// name, no collision), configures it and makes its manifest the plugin's
// (adopt). The caller makes it the running process.
func (p *plugin) restart() (*process, error) {
	proc, man, err := p.m.launchVerified(context.Background(), p.file, p.name)
	if err != nil {
		return nil, err
	}
	if err := p.checkNew(man); err != nil {
		proc.kill()
		return nil, err
	}
	if err := p.configure(proc); err != nil {
		proc.kill()
		return nil, fmt.Errorf("configure: %w", err)
	}
	if err := p.adopt(man); err != nil {
		proc.kill()
		return nil, err
	}
	return proc, nil
}

func (p *plugin) shutdown(proc *process) {
	p.mu.Lock()
	p.state, p.proc = StateStopped, nil
	p.mu.Unlock()
	if proc != nil {
		proc.kill()
	}
}

func (p *plugin) stop() { p.quitOnce.Do(func() { close(p.quit) }) }

func (p *plugin) setRunning(proc *process) {
	p.mu.Lock()
	p.state, p.proc = StateRunning, proc
	p.mu.Unlock()
}

func (p *plugin) setState(s State) {
	p.mu.Lock()
	p.state = s
	p.mu.Unlock()
}

// down forgets proc as soon as its exit is seen, so calls fail fast.
func (p *plugin) down(proc *process) {
	p.mu.Lock()
	if p.proc == proc {
		p.proc = nil
	}
	p.state = StateRestarting
	p.mu.Unlock()
}

// crashed records an exit or a failed start.
func (p *plugin) crashed(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.crashes = append(p.recentCrashesLocked(), time.Now())
	p.lastErr = err.Error()
}

func (p *plugin) recentCrashesLocked() []time.Time {
	cut := time.Now().Add(-p.m.opts.CrashWindow)
	kept := p.crashes[:0]
	for _, t := range p.crashes {
		if t.After(cut) {
			kept = append(kept, t)
		}
	}
	p.crashes = kept
	return kept
}

func (p *plugin) resetCrashes() {
	p.mu.Lock()
	p.crashes = nil
	p.mu.Unlock()
}

func (p *plugin) breakerOpen() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.recentCrashesLocked()) >= p.m.opts.MaxCrashes
}

// backoff is the delay before the next restart: MinBackoff doubled per
// recent exit, at most MaxBackoff.
func (p *plugin) backoff() time.Duration {
	p.mu.Lock()
	n := len(p.recentCrashesLocked())
	p.mu.Unlock()
	d := p.m.opts.MinBackoff
	for i := 1; i < n && d < p.m.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, p.m.opts.MaxBackoff)
}

// requestStart asks the supervisor for a start now and waits for it.
func (p *plugin) requestStart(ctx context.Context) error {
	w := make(chan error, 1)
	select {
	case p.startReq <- w:
	case <-ctx.Done():
		return ctx.Err()
	case <-p.m.stopping:
		return ErrUnavailable.With("plugin", p.name)
	case <-p.quit:
		return ErrUnavailable.With("plugin", p.name)
	}
	select {
	case err := <-w:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *plugin) info() Info {
	p.mu.RLock()
	state, restarts, lastErr := p.state, p.restarts, p.lastErr
	by := maps.Clone(p.restartsBy)
	man := p.man
	in := Info{ErrorCode: p.errCode, ReloadError: p.reloadErr, ReloadErrorCode: p.reloadCode, RestartNeeded: p.restartNeeded}
	p.mu.RUnlock()
	in.Name, in.Version, in.Description, in.State = p.name, man.GetVersion(), man.GetDescription(), state
	in.Restarts, in.RestartsByReason, in.LastError = restarts, by, lastErr
	in.Features, in.Routes, in.Operators, in.Sections = []FeatureInfo{}, []string{}, []string{}, []string{}
	in.File, in.SHA256 = filepath.Base(p.file), p.m.recordedChecksum(p.file)
	for _, f := range man.GetFeatures() {
		fi := FeatureInfo{Name: f.GetName(), Aliases: append([]string{}, f.GetAliases()...), Label: f.GetLabel(),
			Columns: []string{}, Required: f.GetRequired()}
		fi.Labels, fi.ColumnLabels = withDefault(f.GetLabel(), f.GetLabels()), map[string]map[string]string{}
		for _, c := range f.GetColumns() {
			fi.Columns = append(fi.Columns, c.GetName())
			fi.ColumnLabels[c.GetName()] = withDefault(c.GetLabel(), c.GetLabels())
		}
		if ch := f.GetChild(); ch != nil {
			fi.ChildTable = ch.GetSuffix()
			fi.ChildLabels = withDefault(ch.GetLabel(), ch.GetLabels())
			for _, c := range ch.GetColumns() {
				fi.ColumnLabels[c.GetName()] = withDefault(c.GetLabel(), c.GetLabels())
			}
		}
		in.Features = append(in.Features, fi)
	}
	for _, r := range man.GetRoutes() {
		in.Routes = append(in.Routes, r.GetMethod()+" "+r.GetPath())
	}
	for _, o := range man.GetOperators() {
		in.Operators = append(in.Operators, o.GetName())
	}
	in.SectionLabels, in.Messages = sectionLabels(man), messages(man)
	for _, s := range man.GetSections() {
		in.Sections = append(in.Sections, s.GetName())
	}
	return in
}

// client returns the running process's client, or fails at once.
func (p *plugin) client() (pluginv1.PluginClient, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.state != StateRunning || p.proc == nil {
		return nil, ErrUnavailable.With("plugin", p.name).With("state", string(p.state))
	}
	return p.proc.rpc, nil
}

// callError turns a failed call into the error callers answer with: the
// plugin's own client error (a 400 with its code), a timeout, the plugin
// being down, or a failure inside it (logged).
func (p *plugin) callError(call string, err error, attrs ...any) error {
	if errors.Is(err, errHung) {
		return ErrUnresponsive.With("plugin", p.name)
	}
	if e, ok := pluginsdk.ErrorFromStatus(err); ok {
		return errs.New(errs.Invalid, e.Code, e.Message).With("plugin", p.name)
	}
	switch status.Code(err) {
	case codes.DeadlineExceeded:
		p.m.log.Warn("plugin call timed out", append([]any{"plugin", p.name, "call", call}, attrs...)...)
		return ErrTimeout.With("plugin", p.name).Wrap(err)
	case codes.Unavailable, codes.Canceled:
		return ErrUnavailable.With("plugin", p.name).Wrap(err)
	}
	p.m.log.Error("plugin call failed", append([]any{"plugin", p.name, "call", call, "err", err}, attrs...)...)
	return ErrFailed.With("plugin", p.name).Wrap(err)
}
