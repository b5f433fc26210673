package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// strata plugin install refuses a file that is not a plugin, in words and
// with the code, and places nothing; strata plugin list shows the
// executables of the folder with their checksum state; a missing or
// unknown subcommand is a usage error. (The install of real plugin
// binaries is tested in core/pluginhost, which builds them.)
func TestPluginCommand(t *testing.T) {
	t.Parallel()
	pluginDir := t.TempDir()
	script := filepath.Join(t.TempDir(), "notaplugin")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hello\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	vars := envMap{"STRATA_PLUGIN_DIR": pluginDir}
	code, _, errOut := runWith(vars, "plugin", "install", script)
	if code != 1 || !strings.Contains(errOut, "not a Strata plugin") || !strings.Contains(errOut, "(not_a_plugin)") {
		t.Fatalf("install of a script: %d %q", code, errOut)
	}
	if entries, _ := os.ReadDir(pluginDir); len(entries) != 0 {
		t.Fatalf("placed: %v", entries)
	}

	// list: a copied executable without a record, then with a wrong one.
	if err := os.WriteFile(filepath.Join(pluginDir, "gazetteer"), []byte("bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runWith(vars, "plugin", "list")
	if code != 0 || !strings.Contains(out, "gazetteer") || !strings.Contains(out, "unrecorded") {
		t.Fatalf("list: %d %q %q", code, out, errOut)
	}
	if err := os.WriteFile(filepath.Join(pluginDir, ".checksums.json"), []byte(`{"gazetteer":"00"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, out, _ = runWith(vars, "plugin", "list", "--plugin-dir", pluginDir); !strings.Contains(out, "MISMATCH") {
		t.Fatalf("list: %q", out)
	}

	for _, args := range [][]string{{"plugin"}, {"plugin", "frobnicate"}, {"plugin", "install"}} {
		if code, _, errOut := runWith(vars, args...); code != 2 || !strings.Contains(errOut, "strata help plugin") {
			t.Errorf("%v: %d %q", args, code, errOut)
		}
	}
}
