package pluginhost

import (
	"path/filepath"
	"sort"
	"strings"
)

// Reattached plugins (Options.Reattach) go through launch like the
// executables of the plugin directory, under a pseudo file name: the
// supervisor's restarts and the call statistics are keyed by it.
const reattachPrefix = "reattach:"

// reattachName is the plugin name of a reattach pseudo file, else "".
func reattachName(file string) string {
	name, _ := strings.CutPrefix(file, reattachPrefix)
	if name == file {
		return ""
	}
	return name
}

// withReattached puts the reattached plugins first, and drops an
// executable of the plugin directory named like one of them: a developer
// debugging plugin x runs it by hand while bin/plugins/x is installed,
// and the server must use the debugged one.
func (m *Manager) withReattached(files []string) []string {
	if len(m.opts.Reattach) == 0 {
		return files
	}
	names := make([]string, 0, len(m.opts.Reattach))
	for n := range m.opts.Reattach {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]string, 0, len(names)+len(files))
	for _, n := range names {
		out = append(out, reattachPrefix+n)
		m.log.Warn("plugin attached to a running process (debugging), not started", "plugin", n,
			"pid", m.opts.Reattach[n].Pid, "addr", m.opts.Reattach[n].Addr.String())
	}
	for _, f := range files {
		if _, dup := m.opts.Reattach[filepath.Base(f)]; dup {
			m.log.Info("plugin executable not started: a reattached process replaces it", "file", f)
			continue
		}
		out = append(out, f)
	}
	return out
}
