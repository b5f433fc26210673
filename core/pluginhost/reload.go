package pluginhost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/pluginsdk"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// Installing, upgrading and checking plugin binaries (PLUGINS.md,
// "Installing and upgrading plugins").
//
// Checksums. The SHA-256 of each plugin executable is recorded in
// <plugin dir>/.checksums.json (file name → hex digest), written by
// `strata plugin install` and, for an executable that has no record, by
// the server the first time it sees it (trust on first use). The file
// lives beside the binaries rather than in the registry database because
// it describes those very files: a node with its own plugin directory has
// its own binaries and its own record, and nodes sharing the directory
// share both; and the install command needs no database to write it. A
// plugin whose executable no longer has the recorded digest is not
// started (plugin_checksum_mismatch) until it is installed again.
//
// Reloads. A plugin whose executable changed (the watcher stats the files
// every ReloadInterval; POST /plugins/{name}/reload asks at once) is
// started anew from it and checked; when all is well its manifest becomes
// the plugin's and new calls go to the new process, while the old one
// finishes the calls it has (drain) and stops. When not, the old process
// keeps serving and the reason is logged and shown (reload_error).

// ChecksumFile is the record of the plugin executables' SHA-256 digests,
// in the plugin directory (hidden: discover skips it).
const ChecksumFile = ".checksums.json"

// Errors of installing and reloading plugins.
var (
	ErrChecksumMismatch = errs.New(errs.Conflict, "plugin_checksum_mismatch",
		"the plugin's executable is not the one installed (its SHA-256 changed); install it again with `strata plugin install`")
	ErrProtocolUnsupported = errs.New(errs.Conflict, "plugin_protocol_unsupported", "the plugin needs a newer server protocol")
	ErrReloadFailed        = errs.New(errs.BadGateway, "plugin_reload_failed", "the plugin's new executable was refused; the old one keeps serving")
	ErrNotPlugin           = errs.New(errs.Invalid, "not_a_plugin", "the file is not a Strata plugin")
	ErrInvalidManifest     = errs.New(errs.Invalid, "plugin_invalid_manifest", "the plugin's manifest is invalid")
)

// errChecksum marks a start refused for its checksum, whatever go-plugin
// wrapped around it.
var errChecksum = errors.New("plugin_checksum_mismatch")

// serverProtocol is the plugin protocol this server speaks.
const serverProtocol = pluginsdk.ProtocolVersion

// checkServerProtocol refuses a plugin that needs a newer server protocol
// than this one, in words an admin can act on.
func checkServerProtocol(man *pluginv1.Manifest) error {
	if n := man.GetMinServerProtocol(); n > serverProtocol {
		msg := fmt.Sprintf("plugin %s needs server protocol %d; this server speaks %d", man.GetName(), n, serverProtocol)
		return errs.New(errs.Conflict, ErrProtocolUnsupported.Code, msg).With("plugin", man.GetName())
	}
	return nil
}

// errorCode is the stable code of a start or reload failure.
func errorCode(err error) string {
	if errors.Is(err, errChecksum) {
		return ErrChecksumMismatch.Code
	}
	if e, ok := errs.As(err); ok {
		return e.Code
	}
	return ""
}

// checksums serialises the read-modify-write of ChecksumFile within the
// process; across processes the file is replaced by rename, so a reader
// never sees half of it.
var checksums sync.Mutex

// Checksums reads the recorded digests of dir (none: an empty map).
func Checksums(dir string) (map[string]string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ChecksumFile))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ChecksumFile), err)
	}
	return out, nil
}

// RecordChecksum records the SHA-256 of the executable file in its
// directory's ChecksumFile and returns it (hex).
func RecordChecksum(file string) (string, error) {
	sum, err := FileSHA256(file)
	if err != nil {
		return "", err
	}
	return sum, recordSum(filepath.Dir(file), filepath.Base(file), sum)
}

func recordSum(dir, name, sum string) error {
	checksums.Lock()
	defer checksums.Unlock()
	all, err := Checksums(dir)
	if err != nil {
		return err
	}
	all[name] = sum
	raw, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(dir, ChecksumFile, bytes.NewReader(append(raw, '\n')), 0o644)
}

// FileSHA256 is the hex SHA-256 of a file.
func FileSHA256(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeAtomic writes name in dir through a temporary file of the same
// directory, synced, then renamed over name: a reader (or the exec of a
// plugin) sees the old file or the new one, never a part; and renaming
// over a running executable works where writing into it fails (ETXTBSY).
func writeAtomic(dir, name string, r io.Reader, perm os.FileMode) error {
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := io.Copy(tmp, r); err != nil {
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	done = true
	if d, err := os.Open(dir); err == nil { // the rename itself survives a crash
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// recordedChecksum is the recorded digest of a plugin file ("" if none),
// for the plugin list: the record is read again only when it changed
// (GET /api/info lists the plugins on every call).
func (m *Manager) recordedChecksum(file string) string {
	path := filepath.Join(filepath.Dir(file), ChecksumFile)
	sig, err := statFile(path)
	if err != nil {
		return ""
	}
	m.sumCache.Lock()
	defer m.sumCache.Unlock()
	if m.sumCache.path != path || m.sumCache.sig != sig {
		all, err := Checksums(filepath.Dir(file))
		if err != nil {
			return ""
		}
		m.sumCache.path, m.sumCache.sig, m.sumCache.sums = path, sig, all
	}
	return m.sumCache.sums[filepath.Base(file)]
}

// launchVerified launches a plugin file of the directory with its
// recorded checksum checked at exec; a file without a record is recorded
// first (trust on first use).
func (m *Manager) launchVerified(ctx context.Context, file, label string) (*process, *pluginv1.Manifest, error) {
	if reattachName(file) != "" {
		// A process a developer started: there is no file to check.
		return m.launch(ctx, file, label, nil)
	}
	all, err := Checksums(filepath.Dir(file))
	if err != nil {
		return nil, nil, err
	}
	want, ok := all[filepath.Base(file)]
	if !ok {
		if want, err = FileSHA256(file); err != nil {
			return nil, nil, err
		}
		if err := recordSum(filepath.Dir(file), filepath.Base(file), want); err != nil {
			// A plugin folder the server may not write (a read-only image):
			// the file cannot be pinned for later starts, but this start is
			// still checked against what was just hashed. Record it at
			// build time with strata plugin trust.
			m.log.Warn("plugin executable seen for the first time, and its checksum cannot be recorded: started unpinned (record it with strata plugin trust)",
				"file", file, "sha256", want, "err", err)
		} else {
			m.log.Info("plugin executable seen for the first time: its checksum is recorded (trust on first use)",
				"file", file, "sha256", want)
		}
	}
	sum, err := hex.DecodeString(want)
	if err != nil || len(sum) != sha256.Size {
		return nil, nil, fmt.Errorf("%w: the recorded checksum of %s is not a SHA-256", errChecksum, filepath.Base(file))
	}
	return m.launch(ctx, file, label, sum)
}

// verifyChecksum is go-plugin's SecureConfig check, called by our
// RunnerFunc right before the exec: go-plugin only checks ClientConfig.Cmd
// itself, and the manager needs a RunnerFunc for its socket folders.
func verifyChecksum(file string, want []byte) error {
	if want == nil {
		return nil
	}
	sc := &goplugin.SecureConfig{Checksum: want, Hash: sha256.New()}
	ok, err := sc.Check(file)
	if err != nil {
		return fmt.Errorf("verify the checksum: %w", err)
	}
	if !ok {
		return fmt.Errorf("%w: the SHA-256 of %s is not the recorded one (%s); install it again with `strata plugin install`",
			errChecksum, filepath.Base(file), goplugin.ErrChecksumsDoNotMatch)
	}
	return nil
}

// refuse lists a plugin file Start left out, with the error's code.
func (m *Manager) refuse(file, name string, err error) {
	in := Info{Name: name, State: StateRefused, LastError: err.Error(), ErrorCode: errorCode(err),
		File: filepath.Base(file), SHA256: m.recordedChecksum(file),
		Features: []FeatureInfo{}, Routes: []string{}, Operators: []string{}, Sections: []string{}, RestartsByReason: map[string]int{},
		SectionLabels: map[string]map[string]string{}, Messages: map[string]map[string]string{}}
	if in.Name == "" {
		in.Name = filepath.Base(file)
	}
	if e, ok := errs.As(err); ok {
		in.LastError = e.Message
	}
	m.mu.Lock()
	m.refused[in.File] = in
	m.mu.Unlock()
}

func (m *Manager) refusedList() []Info {
	if m == nil {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]Info, 0, len(m.refused))
	for _, in := range m.refused {
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// manifest is the manifest the plugin serves now.
func (p *plugin) manifest() *pluginv1.Manifest {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.man
}

// checkNew checks the manifest of a new process of the plugin: the
// server's protocol, the rules, the same name.
func (p *plugin) checkNew(man *pluginv1.Manifest) error {
	if err := checkServerProtocol(man); err != nil {
		return err
	}
	if probs := validateManifest(man); len(probs) > 0 {
		return ErrInvalidManifest.With("detail", strings.Join(probs, "; "))
	}
	if man.GetName() != p.name {
		return fmt.Errorf("the executable now serves plugin %q, not %q", man.GetName(), p.name)
	}
	return nil
}

// adopt makes man the plugin's manifest: its features, operators and
// sections take effect for the next requests. Routes are mounted by the
// server at start; a route of the new manifest that is not mounted, or
// whose access changed, waits for a server restart (restart_needed; a
// mounted route whose access changed answers 503 until then, rather than
// serve under the old gate).
func (p *plugin) adopt(man *pluginv1.Manifest) error {
	m := p.m
	m.mu.Lock()
	defer m.mu.Unlock()
	old := p.manifest()
	if proto.Equal(old, man) {
		return nil
	}
	if err := m.collisions(man, p); err != nil {
		return err
	}
	for _, o := range old.GetOperators() {
		m.ops.Unregister(o.GetName())
	}
	var registered []string
	for _, o := range man.GetOperators() {
		if err := m.ops.Register(p.operator(o)); err != nil {
			for _, n := range registered {
				m.ops.Unregister(n)
			}
			for _, o := range old.GetOperators() {
				_ = m.ops.Register(p.operator(o))
			}
			return err
		}
		registered = append(registered, o.GetName())
	}
	for k, f := range m.features {
		if f.plugin == p {
			delete(m.features, k)
		}
	}
	for _, f := range man.GetFeatures() {
		ref := &feature{plugin: p, spec: f}
		m.features[f.GetName()] = ref
		for _, a := range f.GetAliases() {
			m.features[a] = ref
		}
	}
	m.labelsGen.Add(1)
	// New system tables are made on their next use.
	m.sysReady.Range(func(k, _ any) bool {
		if s, ok := k.(string); ok && strings.HasSuffix(s, "\x00"+p.name) {
			m.sysReady.Delete(k)
		}
		return true
	})
	p.mu.Lock()
	p.man = man
	p.restartNeeded = routesPending(p.mounted, man.GetRoutes())
	p.mu.Unlock()
	m.log.Info("plugin manifest replaced", "plugin", p.name, "old_version", old.GetVersion(), "version", man.GetVersion())
	if p.restartNeeded != "" {
		m.log.Warn("plugin routes changed: they take effect when the server restarts", "plugin", p.name, "detail", p.restartNeeded)
	}
	return nil
}

// routesPending says which routes of now differ from the mounted ones.
func routesPending(mounted, now []*pluginv1.Route) string {
	var diff []string
	for _, r := range now {
		i := slices.IndexFunc(mounted, func(o *pluginv1.Route) bool { return o.GetMethod() == r.GetMethod() && o.GetPath() == r.GetPath() })
		switch {
		case i < 0:
			diff = append(diff, "new route "+r.GetMethod()+" "+r.GetPath())
		case mounted[i].GetAccess() != r.GetAccess():
			diff = append(diff, "route "+r.GetMethod()+" "+r.GetPath()+" changed access")
		}
	}
	if len(diff) == 0 {
		return ""
	}
	return strings.Join(diff, "; ") + ": the server mounts plugin routes at start; restart it"
}

// currentRoute is the route of the plugin's manifest now serving method
// and path as mounted: ok false when the reloaded plugin dropped it or
// changed its access (the mounted gate is the old one).
func (p *plugin) currentRoute(rt Route) (*pluginv1.Route, error) {
	for _, r := range p.manifest().GetRoutes() {
		if r.GetMethod() == rt.Method && r.GetPath() == rt.Path {
			if accessByName[r.GetAccess()] != rt.Access {
				return nil, ErrRestartNeeded.With("plugin", p.name).With("route", rt.Method+" "+rt.Path)
			}
			return r, nil
		}
	}
	return nil, ErrRouteGone.With("plugin", p.name).With("route", rt.Method+" "+rt.Path)
}

// Errors of routes a reload changed.
var (
	ErrRouteGone     = errs.New(errs.NotFound, "plugin_route_gone", "the plugin's new version no longer has this route")
	ErrRestartNeeded = errs.New(errs.Unavailable, "plugin_restart_needed", "the plugin's new version changed this route's access; it is served again once the server restarts")
)

func (p *plugin) setErrCode(err error) {
	code := ""
	if err != nil {
		code = errorCode(err)
	}
	p.mu.Lock()
	p.errCode = code
	p.mu.Unlock()
}

func (p *plugin) reloadFailed(err error) {
	p.mu.Lock()
	p.reloadErr = err.Error()
	if e, ok := errs.As(err); ok {
		p.reloadErr = e.Message
		if d, ok := e.Extra["detail"]; ok {
			p.reloadErr += ": " + fmt.Sprint(d)
		}
	}
	p.reloadCode = errorCode(err)
	if p.reloadCode == "" {
		p.reloadCode = ErrReloadFailed.Code
	}
	p.mu.Unlock()
	p.m.log.Error("plugin reload failed: the old executable keeps serving", "plugin", p.name, "file", p.file, "err", err)
}

func (p *plugin) reloaded() {
	p.mu.Lock()
	p.reloadErr, p.reloadCode = "", ""
	p.mu.Unlock()
}

// drainGrace is how long a replaced process is kept before its calls are
// counted: a caller that took the old client just before the swap is
// then inside its call.
const drainGrace = 200 * time.Millisecond

// drain lets the old process of a reloaded plugin finish its calls, at
// most as long as the longest call may last, then stops it.
func (p *plugin) drain(old *process) {
	defer p.m.wg.Done()
	limit := max(p.m.opts.RouteTimeout, p.m.opts.HookTimeout, p.m.opts.CallTimeout)
	for _, r := range p.manifest().GetRoutes() {
		limit = max(limit, time.Duration(r.GetTimeoutMs())*time.Millisecond)
	}
	deadline := time.Now().Add(limit)
	select {
	case <-time.After(drainGrace):
	case <-p.m.stopping:
	}
wait:
	for old.inflight.Load() > 0 {
		if time.Now().After(deadline) {
			p.m.log.Warn("plugin reload: the old process still had calls when its time ran out", "plugin", p.name, "calls", old.inflight.Load())
			break
		}
		select {
		case <-p.m.stopping:
			break wait
		case <-time.After(10 * time.Millisecond):
		}
	}
	old.kill()
}

// count is a client interceptor counting the calls under way.
func (pr *process) count(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	pr.inflight.Add(1)
	defer pr.inflight.Add(-1)
	return invoker(ctx, method, req, reply, cc, opts...)
}

// Reload starts the plugin's executable anew and, when the new process
// passes the checks, swaps it in (the old one drains and stops). On
// failure the old process keeps serving and the error says why
// (plugin_reload_failed, plugin_checksum_mismatch,
// plugin_protocol_unsupported). The answer is the plugin as it is after.
func (m *Manager) Reload(ctx context.Context, name string) (Info, error) {
	p, ok := m.plugin(name)
	if !ok {
		return Info{}, ErrNotFound.With("plugin", name)
	}
	p.mu.Lock()
	p.seen, _ = statFile(p.file)
	p.mu.Unlock()
	w := make(chan error, 1)
	select {
	case p.reloadReq <- w:
	case <-ctx.Done():
		return p.info(), ctx.Err()
	case <-m.stopping:
		return p.info(), ErrUnavailable.With("plugin", name)
	case <-p.quit:
		return p.info(), ErrUnavailable.With("plugin", name)
	}
	var err error
	select {
	case err = <-w:
	case <-ctx.Done():
		return p.info(), ctx.Err()
	}
	in := p.info()
	switch {
	case err == nil:
		return in, nil
	case errors.Is(err, errChecksum):
		return in, ErrChecksumMismatch.With("plugin", name).With("detail", err.Error())
	case errors.Is(err, ErrProtocolUnsupported):
		for e := error(err); e != nil; e = errors.Unwrap(e) {
			if pe, ok := e.(*errs.Error); ok && pe.Code == ErrProtocolUnsupported.Code {
				return in, pe.With("plugin", name)
			}
		}
	}
	detail := in.ReloadError
	if detail == "" {
		detail = err.Error()
	}
	return in, ErrReloadFailed.With("plugin", name).With("detail", detail)
}

// fileSig is what the watcher compares to see an executable replaced.
type fileSig struct {
	size    int64
	modTime time.Time
	ino     uint64
}

func statFile(file string) (fileSig, error) {
	info, err := os.Stat(file)
	if err != nil {
		return fileSig{}, err
	}
	return fileSig{size: info.Size(), modTime: info.ModTime(), ino: inode(info)}, nil
}

// watch reloads the plugins whose executable changed, every ReloadInterval
// until Stop.
func (m *Manager) watch() {
	defer m.wg.Done()
	if m.opts.ReloadInterval < 0 {
		return
	}
	t := time.NewTicker(m.opts.ReloadInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stopping:
			return
		case <-t.C:
		}
		for _, p := range m.loaded() {
			sig, err := statFile(p.file)
			p.mu.RLock()
			same := sig == p.seen
			p.mu.RUnlock()
			if err != nil || same {
				continue
			}
			m.log.Info("plugin executable changed: reloading", "plugin", p.name, "file", p.file)
			ctx, cancel := context.WithTimeout(context.Background(), m.opts.StartTimeout+2*m.opts.DescribeTimeout)
			_, _ = m.Reload(ctx, p.name) // logged and shown by the plugin
			cancel()
		}
	}
}

// Inspect runs a plugin executable as the server would (handshake,
// Describe) and checks its manifest as the server does; the process is
// stopped before it returns. For `strata plugin install`.
func Inspect(ctx context.Context, file string) (*pluginv1.Manifest, error) {
	info, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, ErrNotPlugin.With("detail", file+" is not a regular file")
	}
	if info.Mode().Perm()&0o100 == 0 {
		// A downloaded file has no execute bit: run a copy that has one.
		dir, err := os.MkdirTemp("", "strata-plugin-check-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		err = writeAtomic(dir, filepath.Base(file), f, 0o755)
		f.Close()
		if err != nil {
			return nil, err
		}
		file = filepath.Join(dir, filepath.Base(file))
	}
	m := New(Options{Logger: slog.New(slog.DiscardHandler), ReloadInterval: -1})
	proc, man, err := m.launch(ctx, file, filepath.Base(file), nil)
	if err != nil {
		return nil, ErrNotPlugin.With("detail", err.Error())
	}
	proc.kill()
	if err := checkServerProtocol(man); err != nil {
		return man, err
	}
	if probs := validateManifest(man); len(probs) > 0 {
		return man, ErrInvalidManifest.With("plugin", man.GetName()).With("detail", strings.Join(probs, "; "))
	}
	return man, nil
}

// Install checks the plugin executable src (Inspect) and places it in
// dir as <plugin name>, atomically (a running server's plugin keeps its
// process; the watcher or a reload picks the new file up), recording its
// SHA-256 first so that the server trusts the new file as soon as it
// sees it. The answer is the manifest, the installed path and its digest.
// Trust records the SHA-256 of a plugin executable already in its plugin
// folder, after checking it as Install does (handshake, manifest, protocol),
// without moving it: for binaries built in place (make build), which the
// server would otherwise refuse as changed behind its back.
func Trust(ctx context.Context, file string) (*pluginv1.Manifest, string, error) {
	man, err := Inspect(ctx, file)
	if err != nil {
		return man, "", err
	}
	sum, err := FileSHA256(file)
	if err != nil {
		return man, "", err
	}
	return man, sum, recordSum(filepath.Dir(file), filepath.Base(file), sum)
}

func Install(ctx context.Context, src, dir string) (*pluginv1.Manifest, string, string, error) {
	man, err := Inspect(ctx, src)
	if err != nil {
		return man, "", "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return man, "", "", err
	}
	sum, err := FileSHA256(src)
	if err != nil {
		return man, "", "", err
	}
	f, err := os.Open(src)
	if err != nil {
		return man, "", "", err
	}
	defer f.Close()
	name := man.GetName()
	// The new digest is recorded before the file is renamed into place: a
	// server that looks in between sees the old file mismatch, and keeps
	// serving its process, rather than trust a file it cannot check.
	if err := recordSum(dir, name, sum); err != nil {
		return man, "", "", err
	}
	if err := writeAtomic(dir, name, f, 0o755); err != nil {
		return man, "", "", err
	}
	got, err := FileSHA256(filepath.Join(dir, name))
	if err == nil && got != sum {
		err = fmt.Errorf("%s changed while it was copied", src)
	}
	return man, filepath.Join(dir, name), sum, err
}
