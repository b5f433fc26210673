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

// forbiddenImports may never reach a plugin's build: plugins are built
// against pluginsdk alone, so a server refactor cannot break them, and
// they stay small.
var forbiddenImports = []string{
	"github.com/strata-archaeo/strata/core",
	"github.com/gin-gonic/gin",
	"gorm.io/",
}

// TestNoServerImports lists, with the go command, every package that the
// SDK, plugintest and the plugins (tests included) depend on.
func TestNoServerImports(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	// Run from this package's directory: the patterns are relative to it.
	// -e: a package of another plugin that does not build yet still has
	// its imports listed, rather than failing this test.
	cmd := exec.Command(goBin, "list", "-e", "-deps", "-test", "-json=ImportPath,Imports",
		"./...", "../plugins/...")
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
		// -deps lists every package in the closure: a forbidden one in the
		// list, or any package importing one, is a violation. Report the
		// importers, which say where the edge is.
		for _, imp := range p.Imports {
			if forbidden(imp) && !forbidden(p.ImportPath) {
				t.Errorf("%s imports %s", p.ImportPath, imp)
			}
		}
		if forbidden(p.ImportPath) {
			t.Errorf("%s is in the dependency closure of pluginsdk or a plugin", p.ImportPath)
		}
	}
	if seen < 10 {
		t.Fatalf("go list returned only %d packages", seen)
	}
}

func forbidden(path string) bool {
	for _, f := range forbiddenImports {
		if path == f || strings.HasPrefix(path, f+"/") || (strings.HasSuffix(f, "/") && strings.HasPrefix(path, f)) {
			return true
		}
	}
	return false
}
