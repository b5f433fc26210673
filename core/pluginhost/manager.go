package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"github.com/strata-archaeo/strata/core/ops"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/version"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// Options configure a Manager. Zero durations and counts take the
// defaults named on each field.
type Options struct {
	// Dir holds one executable per plugin (config PluginDir). A missing
	// directory means no plugins.
	Dir string
	// Apps serves the Host service (records, system tables, settings) and
	// gets the plugins' system tables at start-up. Nil: Host calls fail.
	Apps *apps.Registry
	// Logger receives the manager's events and the plugins' stderr.
	Logger *slog.Logger
	// Env is the whole environment of plugin processes (see the package
	// doc); nil gives none besides what go-plugin adds. Environment builds
	// the usual one.
	Env []string
	// ServerVersion is told to plugins at Configure (default version.Version).
	ServerVersion string
	// RunDir holds the folder of this server's plugin sockets,
	// plugins-<pid> (with a sub-folder per Manager), removed by Stop;
	// Start removes those of servers that no longer run. Default <system temp>/strata-run; serve passes
	// RunDir(getenv, data dir), <data-dir>/run.
	RunDir string

	StartTimeout    time.Duration // process start and handshake: 10 s
	DescribeTimeout time.Duration // Describe, and Configure: 5 s each
	HookTimeout     time.Duration // BeforeSave, AfterSave: 2 s
	RouteTimeout    time.Duration // a route without timeout_ms: 30 s
	CallTimeout     time.Duration // ResolveFilter, EnrichRecord: 5 s

	MinBackoff   time.Duration // first restart delay: 0.5 s, doubling
	MaxBackoff   time.Duration // restart delay cap: 30 s
	MaxCrashes   int           // exits within CrashWindow that disable: 5
	CrashWindow  time.Duration // 5 min
	PollInterval time.Duration // how often exits are looked for: 100 ms

	// The health check: each process's gRPC health service is pinged every
	// PingInterval (5 s); one that has answered none for PingTimeout (20 s)
	// is killed and restarted like a crashed one. A negative PingTimeout
	// turns the check off.
	PingInterval time.Duration
	PingTimeout  time.Duration

	// ReloadInterval is how often the plugin executables are looked at
	// (stat) for one replaced, which is then reloaded (reload.go): 2 s; a
	// negative value turns the watch off (POST /plugins/{name}/reload
	// still reloads).
	ReloadInterval time.Duration

	// Reattach are plugin processes a developer started (under a
	// debugger, with pluginsdk.DebugEnv set), by plugin name: the server
	// attaches to each instead of starting an executable, and an
	// executable of Dir with that name is left out. serve reads them from
	// STRATA_PLUGIN_REATTACH (pluginsdk.ParseReattach). No health check
	// runs on them, and the server's exit leaves them running.
	Reattach map[string]*goplugin.ReattachConfig
}

func (o *Options) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&o.StartTimeout, 10*time.Second)
	set(&o.DescribeTimeout, 5*time.Second)
	set(&o.HookTimeout, 2*time.Second)
	set(&o.RouteTimeout, 30*time.Second)
	set(&o.CallTimeout, 5*time.Second)
	set(&o.MinBackoff, 500*time.Millisecond)
	set(&o.MaxBackoff, 30*time.Second)
	set(&o.CrashWindow, 5*time.Minute)
	set(&o.PollInterval, 100*time.Millisecond)
	set(&o.PingInterval, 5*time.Second)
	if o.ReloadInterval == 0 {
		o.ReloadInterval = 2 * time.Second
	}
	if o.PingTimeout == 0 {
		o.PingTimeout = 20 * time.Second
	}
	if o.MaxCrashes <= 0 {
		o.MaxCrashes = 5
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ServerVersion == "" {
		o.ServerVersion = version.Version
	}
	if o.RunDir == "" {
		o.RunDir = filepath.Join(os.TempDir(), "strata-run")
	}
}

// Environment is the environment plugin processes get: STRATA_DATA_DIR
// (dataDir made absolute) and those of passedEnv getenv has. Nothing else
// of the server's environment reaches a plugin.
func Environment(getenv func(string) string, dataDir string) []string {
	var env []string
	if dataDir != "" {
		if abs, err := filepath.Abs(dataDir); err == nil {
			dataDir = abs
		}
		env = append(env, "STRATA_DATA_DIR="+dataDir)
	}
	for _, k := range passedEnv {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// passedEnv are the server's variables a plugin gets as they are: the
// radiocarbon curves, the providers' base URLs (CONTRACT.md §10) and the
// standard proxy settings, which the plugins' HTTP clients honour.
var passedEnv = []string{
	"STRATA_CURVES_DIR",
	"GAZETTEER_PLEIADES_URL", "REFMGR_ZOTERO_URL",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
}

// Errors of plugin calls and administration.
var (
	// ErrUnavailable is records' refusal, so that a save, a route and a
	// filter answer the same 503 when a plugin is down.
	ErrUnavailable = records.ErrPluginUnavailable
	ErrTimeout     = errs.New(errs.Timeout, "plugin_timeout", "the plugin did not answer in time")
	ErrNotFound    = errs.New(errs.NotFound, "plugin_not_found", "no such plugin is loaded")
)

// Manager owns the plugin processes of an instance. A nil *Manager is
// valid and has no plugins.
type Manager struct {
	opts     Options
	log      *slog.Logger
	catalogs *schema.Cache
	ops      *filter.Registry
	stopping chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
	sockDir  string   // <RunDir>/plugins-<pid>/m<n>, once Start made it
	sysReady sync.Map // app + "\x00" + plugin → struct{} once its system tables exist
	// sysMaking serialises the creation of system tables: two first uses
	// at once (two reads of a new app) would race PostgreSQL's CREATE
	// TABLE IF NOT EXISTS, which then fails on its catalog's unique index.
	sysMaking sync.Mutex
	calls     callStatsTable
	jobRuns   sync.Map // job id (text) → *jobCall, while a job route's call runs here

	mu       sync.RWMutex
	plugins  map[string]*plugin // loaded, by name
	features map[string]*feature
	// refused are the plugin files Start left out for a reason an admin
	// must see in GET /plugins (a checksum mismatch, a protocol too old),
	// by file name.
	refused map[string]Info
	// sumCache is the checksum record as last read, for the plugin list.
	sumCache struct {
		sync.Mutex
		path string
		sig  fileSig
		sums map[string]string
	}
	// labelsGen counts the changes of the loaded features (a plugin
	// loaded, removed or reloaded), so catalogs localized with their
	// labels (Labels) are made again after one.
	labelsGen atomic.Uint64
}

// New returns a manager with no plugins; Start loads them.
func New(opts Options) *Manager {
	opts.defaults()
	return &Manager{
		opts: opts, log: opts.Logger, catalogs: schema.NewCache(), ops: filter.NewRegistry(),
		stopping: make(chan struct{}), plugins: map[string]*plugin{}, features: map[string]*feature{},
		refused: map[string]Info{},
	}
}

// Start discovers the executables of the plugin directory, starts them,
// validates their manifests and configures them. Problems with a plugin
// are logged and leave it out; the error is only for an unreadable
// directory. Each loaded plugin is then supervised until Stop.
func (m *Manager) Start(ctx context.Context) error {
	files, err := discover(m.opts.Dir)
	if err != nil {
		return err
	}
	files = m.withReattached(files)
	if files == nil {
		m.log.Info("no plugin directory: no plugins loaded", "dir", m.opts.Dir)
		return nil
	}
	if m.sockDir, err = prepareSocketDir(m.opts.RunDir, m.log); err != nil {
		// go-plugin then uses the system temp folder.
		m.log.Warn("plugin sockets go to the system temp folder", "err", err)
	}
	type started struct {
		proc *process
		man  *pluginv1.Manifest
		err  error
	}
	results := make([]started, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			proc, man, err := m.launchVerified(ctx, f, filepath.Base(f))
			results[i] = started{proc, man, err}
		}()
	}
	wg.Wait()
	for i, f := range files {
		r := results[i]
		if r.err != nil {
			m.log.Error("plugin not loaded: it did not start", "file", f, "err", r.err)
			if errors.Is(r.err, errChecksum) {
				m.refuse(f, "", r.err)
			}
			continue
		}
		if err := m.load(f, r.proc, r.man); err != nil {
			m.log.Error("plugin not loaded", "file", f, "plugin", r.man.GetName(), "err", err)
			r.proc.kill()
		}
	}
	m.ensureAllSystemTables(ctx)
	m.wg.Add(1)
	go m.watch()
	return nil
}

// discover lists the plugin executables of dir in name order: regular
// files (or links to them) with an execute bit, not hidden. nil, nil when
// dir does not exist.
func discover(dir string) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read plugin directory %s: %w", dir, err)
	}
	files := []string{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		info, err := os.Stat(path) // follows links
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
			continue
		}
		files = append(files, path)
	}
	return files, nil
}

// load validates a started plugin against its own rules and the plugins
// already loaded, then registers it and starts its supervisor.
func (m *Manager) load(file string, proc *process, man *pluginv1.Manifest) error {
	if err := checkServerProtocol(man); err != nil {
		m.refuse(file, man.GetName(), err)
		return err
	}
	if probs := validateManifest(man); len(probs) > 0 {
		return fmt.Errorf("invalid manifest: %s", strings.Join(probs, "; "))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.collisions(man, nil); err != nil {
		return err
	}
	p := newPlugin(m, file, man)
	var registered []string
	for _, o := range man.GetOperators() {
		if err := m.ops.Register(p.operator(o)); err != nil {
			for _, name := range registered {
				m.ops.Unregister(name)
			}
			return err
		}
		registered = append(registered, o.GetName())
	}
	m.plugins[p.name] = p
	for _, f := range man.GetFeatures() {
		ref := &feature{plugin: p, spec: f}
		m.features[f.GetName()] = ref
		for _, a := range f.GetAliases() {
			m.features[a] = ref
		}
	}
	m.labelsGen.Add(1)
	if err := p.configure(proc); err != nil {
		// The manifest is good: the supervisor retries as after a crash.
		m.log.Error("plugin did not accept its configuration", "plugin", p.name, "err", err)
		proc.kill()
		proc = nil
		p.crashed(err)
		p.lost(reasonStartFailed)
	}
	if proc != nil {
		p.setRunning(proc) // callable as soon as Start returns
	}
	m.wg.Add(1)
	go p.supervise(proc)
	m.log.Info("plugin loaded", "plugin", p.name, "version", man.GetVersion(), "file", file,
		"features", len(man.GetFeatures()), "routes", len(man.GetRoutes()), "operators", len(man.GetOperators()))
	return nil
}

// collisions reports what man shares with a loaded plugin: the name, a
// feature name or alias, an operator, a section, a system table or a
// route path. self, when not nil, is the loaded plugin man is a new
// version of (a reload): what it has itself is no collision. Called with
// m.mu held.
func (m *Manager) collisions(man *pluginv1.Manifest, self *plugin) error {
	if other, dup := m.plugins[man.GetName()]; dup && other != self {
		return fmt.Errorf("another plugin is called %q", man.GetName())
	}
	for _, f := range man.GetFeatures() {
		for _, n := range append([]string{f.GetName()}, f.GetAliases()...) {
			if other, dup := m.features[n]; dup && other.plugin != self {
				return fmt.Errorf("feature %q: plugin %s has a feature of that name", n, other.plugin.name)
			}
		}
	}
	var mine []string
	if self != nil {
		for _, o := range self.manifest().GetOperators() {
			mine = append(mine, o.GetName())
		}
	}
	for _, o := range man.GetOperators() {
		if slices.Contains(m.ops.Names(), o.GetName()) && !slices.Contains(mine, o.GetName()) {
			return fmt.Errorf("operator %s: another plugin has it", o.GetName())
		}
	}
	for _, other := range m.plugins {
		if other == self {
			continue
		}
		for _, s := range man.GetSections() {
			for _, theirs := range other.manifest().GetSections() {
				if s.GetName() == theirs.GetName() {
					return fmt.Errorf("section %q: plugin %s has it", s.GetName(), other.name)
				}
			}
		}
		for _, t := range man.GetSystemTables() {
			for _, ot := range other.manifest().GetSystemTables() {
				if systemTableName(man.GetName(), t.GetName()) == systemTableName(other.name, ot.GetName()) {
					return fmt.Errorf("system table %s: plugin %s has it", systemTableName(man.GetName(), t.GetName()), other.name)
				}
			}
		}
		for _, r := range man.GetRoutes() {
			for _, or := range other.manifest().GetRoutes() {
				if PathsOverlap(r.GetPath(), or.GetPath()) {
					return fmt.Errorf("route %s %s overlaps %s %s of plugin %s", r.GetMethod(), r.GetPath(), or.GetMethod(), or.GetPath(), other.name)
				}
			}
		}
	}
	return nil
}

// Stop stops every plugin process and waits for the supervisors to end.
// The manager cannot be started again.
func (m *Manager) Stop() {
	if m == nil {
		return
	}
	m.stopOnce.Do(func() { close(m.stopping) })
	m.wg.Wait()
	if m.sockDir != "" {
		removeSocketDir(m.sockDir, m.log)
	}
}

// Reject unloads a plugin the server cannot mount (a route that collides
// with one of the server's own): it is stopped, logged, and no longer
// listed. Only for start-up, before requests are served.
func (m *Manager) Reject(name string, reason error) {
	if m == nil {
		return
	}
	m.mu.Lock()
	p, ok := m.plugins[name]
	if ok {
		delete(m.plugins, name)
		for k, f := range m.features {
			if f.plugin == p {
				delete(m.features, k)
			}
		}
		m.labelsGen.Add(1)
		for _, o := range p.manifest().GetOperators() {
			m.ops.Unregister(o.GetName())
		}
	}
	m.mu.Unlock()
	if !ok {
		return
	}
	m.log.Error("plugin not loaded", "plugin", name, "err", reason)
	p.stop()
}

// plugin returns the loaded plugin called name.
func (m *Manager) plugin(name string) (*plugin, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, ok := m.plugins[name]
	return p, ok
}

// loaded returns the loaded plugins in name order.
func (m *Manager) loaded() []*plugin {
	if m == nil {
		return nil
	}
	m.mu.RLock()
	out := make([]*plugin, 0, len(m.plugins))
	for _, p := range m.plugins {
		out = append(out, p)
	}
	m.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Info is a loaded plugin as GET /plugins and /api/info show it.
type Info struct {
	Name        string        `json:"name"`
	Version     string        `json:"version"`
	Description string        `json:"description"`
	State       State         `json:"state"`
	Restarts    int           `json:"restarts"`
	LastError   string        `json:"last_error,omitempty"`
	Features    []FeatureInfo `json:"features"`
	Routes      []string      `json:"routes"`
	Operators   []string      `json:"operators"`
	Sections    []string      `json:"sections"`
	// SectionLabels are the titles of the sections that have one, by
	// section and language; Messages the plugin's message catalogue, by
	// key and language (pluginsdk v0.5.0).
	SectionLabels map[string]map[string]string `json:"section_labels"`
	Messages      map[string]map[string]string `json:"messages"`

	// RestartsByReason splits Restarts by why the process was lost:
	// exited, unresponsive (killed by the health check), start_failed.
	RestartsByReason map[string]int `json:"restarts_by_reason"`

	// ErrorCode is the stable code of why the plugin is refused or cannot
	// start now: plugin_checksum_mismatch, plugin_protocol_unsupported.
	ErrorCode string `json:"error_code,omitempty"`
	// ReloadError is why the last reload of a new binary failed (the old
	// one kept serving), with its code in ReloadErrorCode; cleared by a
	// successful reload.
	ReloadError     string `json:"reload_error,omitempty"`
	ReloadErrorCode string `json:"reload_error_code,omitempty"`
	// RestartNeeded says what of the reloaded manifest waits for a server
	// restart (plugin routes are mounted at start).
	RestartNeeded string `json:"restart_needed,omitempty"`
	// File is the executable's name in the plugin directory, SHA256 its
	// recorded checksum.
	File   string `json:"file,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// FeatureInfo describes a table feature of a plugin.
type FeatureInfo struct {
	Name       string   `json:"name"`
	Aliases    []string `json:"aliases"`
	Label      string   `json:"label"`
	Columns    []string `json:"columns"`
	ChildTable string   `json:"child_suffix,omitempty"`
	Required   bool     `json:"required"`
	// Labels is Label by language, the default ("en") included;
	// ColumnLabels the same for each column of the feature and of its
	// child table, by name; ChildLabels the child table's label. A plugin
	// built before pluginsdk v0.5.0 has only "en" entries.
	Labels       map[string]string            `json:"labels"`
	ColumnLabels map[string]map[string]string `json:"column_labels"`
	ChildLabels  map[string]string            `json:"child_labels,omitempty"`
}

// List describes the loaded plugins in name order.
func (m *Manager) List() []Info {
	out := []Info{}
	for _, p := range m.loaded() {
		out = append(out, p.info())
	}
	return append(out, m.refusedList()...)
}

// Describe returns one loaded plugin.
func (m *Manager) Describe(name string) (Info, error) {
	p, ok := m.plugin(name)
	if !ok {
		return Info{}, ErrNotFound.With("plugin", name)
	}
	return p.info(), nil
}

// Enable re-enables a plugin the circuit breaker disabled (or one waiting
// for its next restart): its crash count is cleared and it is started
// now. The answer is the plugin as it is afterwards.
func (m *Manager) Enable(ctx context.Context, name string) (Info, error) {
	p, ok := m.plugin(name)
	if !ok {
		return Info{}, ErrNotFound.With("plugin", name)
	}
	err := p.requestStart(ctx)
	info := p.info()
	if err != nil {
		return info, err
	}
	return info, nil
}

// PID is the process id of a running plugin (0 when it is not running),
// for operators and for tests that kill plugins.
func (m *Manager) PID(name string) int {
	p, ok := m.plugin(name)
	if !ok {
		return 0
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.proc == nil {
		return 0
	}
	if p.proc.runner == nil {
		return 0
	}
	return p.proc.runner.pid
}

// State is the state of a plugin named name ("" when not loaded).
func (m *Manager) State(name string) State {
	p, ok := m.plugin(name)
	if !ok {
		return ""
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.state
}

// States is each loaded plugin's state, by name (for readiness).
func (m *Manager) States() map[string]string {
	out := map[string]string{}
	for _, p := range m.loaded() {
		p.mu.RLock()
		out[p.name] = string(p.state)
		p.mu.RUnlock()
	}
	return out
}

// PluginStats are the loaded plugins' states and restarts (for metrics).
func (m *Manager) PluginStats() []ops.PluginStat {
	var out []ops.PluginStat
	for _, p := range m.loaded() {
		info := p.info()
		c := m.calls.of(p.file)
		out = append(out, ops.PluginStat{Name: info.Name, State: string(info.State), Restarts: info.Restarts, RestartsByReason: info.RestartsByReason,
			Calls: c.calls.Load(), Errors: c.errors.Load(), Seconds: time.Duration(c.nanos.Load()).Seconds()})
	}
	return out
}
