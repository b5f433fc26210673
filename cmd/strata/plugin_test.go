package main

import (
	"os"
	"os/exec"
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

// TestPluginTrust: a plugin rebuilt in the plugin folder (make build) is
// refused by the server until its checksum is recorded again; trust checks
// it and records it, and refuses what is no plugin or lies elsewhere.
func TestPluginTrust(t *testing.T) {
	t.Parallel()
	pluginDir := t.TempDir()
	bin := filepath.Join(pluginDir, "example")
	build := exec.Command("go", "build", "-o", bin, "github.com/strata-archaeo/strata/plugins/example")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the example plugin: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(pluginDir, ".checksums.json"), []byte(`{"example":"00"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := envMap{"STRATA_PLUGIN_DIR": pluginDir}
	if _, out, _ := runWith(vars, "plugin", "list"); !strings.Contains(out, "MISMATCH") {
		t.Fatalf("list before trust: %q", out)
	}
	code, out, errOut := runWith(vars, "plugin", "trust", bin)
	if code != 0 || !strings.Contains(out, "trusted plugin munsell 1.0.0") {
		t.Fatalf("trust: %d %q %q", code, out, errOut)
	}
	if _, out, _ := runWith(vars, "plugin", "list"); !strings.Contains(out, "example") || strings.Contains(out, "MISMATCH") || !strings.Contains(out, " ok ") {
		t.Fatalf("list after trust: %q", out)
	}

	script := filepath.Join(pluginDir, "notaplugin")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hello\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "example")
	for _, c := range []struct {
		file, want string
	}{{script, "(not_a_plugin)"}, {elsewhere, "not in the plugin folder"}} {
		if code, _, errOut := runWith(vars, "plugin", "trust", c.file); code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("trust %s: %d %q, want %q", c.file, code, errOut, c.want)
		}
	}
	b, _ := os.ReadFile(filepath.Join(pluginDir, ".checksums.json"))
	if strings.Contains(string(b), "notaplugin") {
		t.Errorf("a refused file was recorded: %s", b)
	}
	if code, _, errOut := runWith(vars, "plugin", "trust"); code != 2 || !strings.Contains(errOut, "strata help plugin trust") {
		t.Errorf("trust without a file: %d %q", code, errOut)
	}
}
