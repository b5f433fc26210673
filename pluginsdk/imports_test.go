package pluginsdk_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// The SDK is a module of its own, required by plugins outside the Strata
// repository: nothing of the server's module (core, config, ...) may reach
// its build, nor gin or gorm, so a server refactor cannot break a plugin
// and plugins stay small. (The root module's plugins are checked by
// core/pluginhost's TestPluginsImportNoServer.)
func forbidden(path string) bool {
	const root = "github.com/strata-archaeo/strata"
	const sdk = root + "/pluginsdk"
	// Test variants: "p [p.test]", p.test, p_test.
	path, _, _ = strings.Cut(path, " ")
	path = strings.TrimSuffix(strings.TrimSuffix(path, ".test"), "_test")
	switch {
	case path == sdk || strings.HasPrefix(path, sdk+"/"):
		return false
	case path == root || strings.HasPrefix(path, root+"/"):
		return true
	}
	return strings.HasPrefix(path, "github.com/gin-gonic/gin") || strings.HasPrefix(path, "gorm.io/")
}

// TestNoServerImports lists, with the go command, every package that the
// SDK and plugintest depend on, tests included.
func TestNoServerImports(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	// Run from this package's directory: ./... is this module's packages.
	cmd := exec.Command(goBin, "list", "-e", "-deps", "-test", "-json=ImportPath,Imports", "./...")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	type pkg struct {
		ImportPath string
		Imports    []string
	}
	dec := json.NewDecoder(&stdout)
	seen := 0
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		// -deps lists every package in the closure: report the importers,
		// which say where the edge is.
		for _, imp := range p.Imports {
			if forbidden(imp) && !forbidden(p.ImportPath) {
				t.Errorf("%s imports %s", p.ImportPath, imp)
			}
		}
		if forbidden(p.ImportPath) {
			t.Errorf("%s is in the dependency closure of pluginsdk", p.ImportPath)
		}
	}
	if seen < 10 {
		t.Fatalf("go list returned only %d packages", seen)
	}
}
