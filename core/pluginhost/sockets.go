package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-plugin/runner"

	"github.com/strata-archaeo/strata/core/scratch"
)

// Plugin sockets. go-plugin talks to a plugin over Unix sockets: the
// plugin listens on one (in PLUGIN_UNIX_SOCKET_DIR, else the system temp
// folder), and the server listens on one per brokered service (the Host
// service), in the folder go-plugin made for the process when the client
// has a RunnerFunc, else the system temp folder. A server or plugin that
// is killed leaves its sockets behind, so the manager keeps them all in
// folders of its own: <RunDir>/plugins-<pid> for the server process, and
// in it one folder per Manager (tests run several in one process). Each
// plugin process start gets a sub-folder there (go-plugin's, passed to the
// plugin as PLUGIN_UNIX_SOCKET_DIR and removed when the process is
// killed); Stop removes the Manager's folder, and the process's when it is
// empty; Start removes the folders of servers that no longer run.

// socketDirPrefix names the per-process folders in RunDir.
const socketDirPrefix = "plugins-"

// maxSocketBase bounds the length of a Manager's folder: a Unix socket
// path has at most 107 bytes, and go-plugin adds up to 38
// ("/plugin-dir<n>/plugin<n>").
const maxSocketBase = 69

// RunDir is where a server keeps its plugin sockets: <dataDir>/run, unless
// that path is too long for Unix sockets; then $XDG_RUNTIME_DIR/strata, or
// <system temp>/strata-run.
func RunDir(getenv func(string) string, dataDir string) string {
	if abs, err := filepath.Abs(dataDir); err == nil && dataDir != "" {
		if d := filepath.Join(abs, "run"); fits(d) {
			return d
		}
	}
	if x := getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		if d := filepath.Join(x, "strata"); fits(d) {
			return d
		}
	}
	return filepath.Join(os.TempDir(), "strata-run")
}

func fits(runDir string) bool {
	return len(filepath.Join(runDir, socketDirPrefix+"4194304", "m4294967295")) <= maxSocketBase
}

// ownDirs remembers the process folders this process has cleaned: a
// folder named with our pid that we did not make is a leftover of an
// earlier process that had the same pid (before a reboot).
var ownDirs sync.Map

// prepareSocketDir removes the socket folders of dead servers in runDir
// and creates a Manager's folder in this process's.
func prepareSocketDir(runDir string, log *slog.Logger) (string, error) {
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return "", fmt.Errorf("plugin socket folder: %w", err)
	}
	removeStaleSocketDirs(runDir, log)
	proc := filepath.Join(runDir, socketDirPrefix+strconv.Itoa(os.Getpid()))
	once, _ := ownDirs.LoadOrStore(proc, new(sync.Once))
	once.(*sync.Once).Do(func() { _ = os.RemoveAll(proc) })
	if err := os.MkdirAll(proc, 0o700); err != nil {
		return "", fmt.Errorf("plugin socket folder: %w", err)
	}
	dir, err := scratch.MkdirTemp(proc, "m")
	if err != nil {
		return "", fmt.Errorf("plugin socket folder: %w", err)
	}
	return dir, nil
}

// removeSocketDir removes a Manager's folder, and its process's folder
// when no other Manager uses it.
func removeSocketDir(dir string, log *slog.Logger) {
	if err := os.RemoveAll(dir); err != nil {
		log.Warn("plugin socket folder not removed", "dir", dir, "err", err)
		return
	}
	_ = os.Remove(filepath.Dir(dir)) // fails while not empty
}

// removeStaleSocketDirs removes plugins-<pid> folders whose process is
// gone. A folder of a live process (another server sharing the data
// folder) is left alone.
func removeStaleSocketDirs(runDir string, log *slog.Logger) {
	entries, err := os.ReadDir(runDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), socketDirPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pid, err := strconv.Atoi(rest)
		if err != nil || pid <= 0 || pid == os.Getpid() || pidAlive(pid) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(runDir, e.Name())); err != nil {
			log.Warn("stale plugin socket folder not removed", "dir", filepath.Join(runDir, e.Name()), "err", err)
			continue
		}
		log.Debug("stale plugin socket folder removed", "dir", filepath.Join(runDir, e.Name()))
	}
}

// cmdRunner runs a plugin executable for go-plugin. go-plugin's own runner
// is used when no RunnerFunc is given, but then the server's sockets go to
// the system temp folder; with a RunnerFunc they go to the folder of
// UnixSocketConfig.TempDir.
type cmdRunner struct {
	cmd            *exec.Cmd
	stdout, stderr io.ReadCloser
	pid            int
}

var _ runner.Runner = (*cmdRunner)(nil)

// newCmdRunner prepares cmd to be run by go-plugin.
func newCmdRunner(cmd *exec.Cmd) (*cmdRunner, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	return &cmdRunner{cmd: cmd, stdout: stdout, stderr: plainAsInfo(stderr)}, nil
}

func (r *cmdRunner) Start(context.Context) error {
	if err := r.cmd.Start(); err != nil {
		return err
	}
	r.pid = r.cmd.Process.Pid
	return nil
}

func (r *cmdRunner) Wait(context.Context) error { return r.cmd.Wait() }

func (r *cmdRunner) Kill(context.Context) error {
	if r.cmd.Process == nil {
		return nil
	}
	if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

func (r *cmdRunner) Stdout() io.ReadCloser { return r.stdout }
func (r *cmdRunner) Stderr() io.ReadCloser { return r.stderr }
func (r *cmdRunner) Name() string          { return r.cmd.Path }
func (r *cmdRunner) ID() string            { return strconv.Itoa(r.pid) }

func (r *cmdRunner) Diagnose(context.Context) string {
	return "the executable did not complete the plugin handshake: is it built for this system, " +
		"executable by the server, and does its main call pluginsdk.Serve?"
}

// Sockets are on the same machine: addresses need no translation.
func (r *cmdRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (r *cmdRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}
