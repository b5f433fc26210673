package pluginhost_test

import (
	"bufio"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/testenv"
)

// socketsIn lists the Unix sockets under dir.
func socketsIn(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSocket != 0 {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// socketPathsOf lists the paths of the Unix sockets process pid holds
// (Linux: its fds matched against /proc/net/unix); nil elsewhere.
func socketPathsOf(t *testing.T, pid int) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return nil
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name()); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/net/unix")
	if err != nil {
		return nil
	}
	defer f.Close()
	var paths []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// Num RefCount Protocol Flags Type St Inode [Path]
		fields := strings.Fields(sc.Text())
		if len(fields) == 8 && inodes[fields[6]] && strings.HasPrefix(fields[7], "/") {
			paths = append(paths, fields[7])
		}
	}
	return paths
}

// A plugin's sockets, the server's and the plugin's, live in the server's
// folder under the data folder, not in the system temp folder, and are
// gone after Stop; Start removes the folder a dead server left.
func TestPluginSocketsLiveUnderTheDataDir(t *testing.T) {
	// A short data folder: Unix socket paths are limited to 107 bytes.
	data, err := os.MkdirTemp("", "sd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(data) })
	// The server side would use the temp folder of this process: point it
	// at an empty one to see that nothing lands there.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	run := pluginhost.RunDir(func(string) string { return "" }, data)
	if run != filepath.Join(data, "run") {
		t.Fatalf("RunDir = %s, want %s/run", run, data)
	}

	// A folder left by a server that was killed (a pid that has exited),
	// one of a server still running (our parent), and one that is not
	// ours at all.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(run, "plugins-"+strconv.Itoa(dead.Process.Pid))
	live := filepath.Join(run, "plugins-"+strconv.Itoa(os.Getppid()))
	other := filepath.Join(run, "notes")
	for _, d := range []string{filepath.Join(stale, "m1", "plugin-dir1"), live, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(stale, "m1", "plugin-dir1", "plugin1"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	reg := testenv.NewRegistry(t, "sqlite")
	logs := &syncBuffer{}
	opts := fastOptions(pluginDir(t, "testplug"), reg, slog.New(slog.NewTextHandler(logs, nil)))
	opts.RunDir = run
	m := pluginhost.New(opts)
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			m.Stop()
		}
	})
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale folder %s is still there: %v", stale, err)
	}
	for _, d := range []string{live, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}

	own := filepath.Join(run, "plugins-"+strconv.Itoa(os.Getpid()))
	socks := socketsIn(t, own)
	// The plugin's listener and the server's Host service listener.
	if len(socks) < 2 {
		t.Errorf("sockets in %s: %v, want the plugin's and the server's", own, socks)
	}
	pid := m.PID("testplug")
	if pid == 0 {
		t.Fatalf("the plugin is not running: %s", logs)
	}
	held := socketPathsOf(t, pid)
	if runtime.GOOS == "linux" && len(held) == 0 {
		t.Errorf("no socket found for the plugin process %d", pid)
	}
	for _, p := range held {
		if !strings.HasPrefix(p, own+string(filepath.Separator)) {
			t.Errorf("the plugin holds a socket outside %s: %s", own, p)
		}
	}
	if s := socketsIn(t, tmp); len(s) > 0 {
		t.Errorf("sockets in the temp folder: %v", s)
	}

	m.Stop()
	stopped = true
	if _, err := os.Stat(own); !os.IsNotExist(err) {
		t.Errorf("after Stop, %s is still there: %v", own, err)
	}
	for _, p := range append(socks, held...) {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("after Stop, %s is still there", p)
		}
	}
	if s := socketsIn(t, tmp); len(s) > 0 {
		t.Errorf("sockets in the temp folder: %v", s)
	}
}

func TestRunDirFallsBackForLongPaths(t *testing.T) {
	t.Parallel()
	long := "/" + strings.Repeat("d", 80)
	env := map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}
	if got := pluginhost.RunDir(func(k string) string { return env[k] }, long); got != "/run/user/1000/strata" {
		t.Errorf("with XDG_RUNTIME_DIR: %s", got)
	}
	if got := pluginhost.RunDir(func(string) string { return "" }, long); got != filepath.Join(os.TempDir(), "strata-run") {
		t.Errorf("without: %s", got)
	}
	if got := pluginhost.RunDir(func(k string) string { return env[k] }, "/srv/strata"); got != "/srv/strata/run" {
		t.Errorf("short data dir: %s", got)
	}
}
