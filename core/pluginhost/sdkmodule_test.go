package pluginhost_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const (
	rootModule = "github.com/strata-archaeo/strata"
	sdkModule  = rootModule + "/pluginsdk"
)

// listDeps runs go list -deps -test in dir on patterns and returns each
// package with its imports, test variants named as their package.
func listDeps(t *testing.T, dir string, patterns ...string) map[string][]string {
	t.Helper()
	// -e: a package that does not build yet still has its imports listed.
	cmd := exec.Command(goCommand(), append([]string{"list", "-e", "-deps", "-test", "-json=ImportPath,Imports"}, patterns...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.String())
	}
	name := func(p string) string {
		p, _, _ = strings.Cut(p, " ")
		return strings.TrimSuffix(strings.TrimSuffix(p, ".test"), "_test")
	}
	out := map[string][]string{}
	dec := json.NewDecoder(&stdout)
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		for _, imp := range p.Imports {
			out[name(p.ImportPath)] = append(out[name(p.ImportPath)], name(imp))
		}
		if _, ok := out[name(p.ImportPath)]; !ok {
			out[name(p.ImportPath)] = nil
		}
	}
	if len(out) < 10 {
		t.Fatalf("go list in %s returned only %d packages", dir, len(out))
	}
	return out
}

func goCommand() string {
	if goBin, err := exec.LookPath("go"); err == nil {
		return goBin
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

func under(path, prefix string) bool { return path == prefix || strings.HasPrefix(path, prefix+"/") }

// checkClosure reports each edge of deps into a forbidden package.
func checkClosure(t *testing.T, what string, deps map[string][]string, forbidden func(string) bool) {
	t.Helper()
	for p, imps := range deps {
		for _, imp := range imps {
			if forbidden(imp) && !forbidden(p) {
				t.Errorf("%s: %s imports %s", what, p, imp)
			}
		}
		if forbidden(p) {
			t.Errorf("%s: %s is in the dependency closure", what, p)
		}
	}
}

func serverOnly(path string) bool {
	return under(path, "github.com/gin-gonic/gin") || strings.HasPrefix(path, "gorm.io/")
}

// The SDK is a module of its own that outside plugins require by version:
// its go.mod requires nothing of the server's module and replaces
// nothing, and no package of the server's module reaches its build
// (tests included).
func TestSDKModuleStandsAlone(t *testing.T) {
	sdkDir := filepath.Join("..", "..", "pluginsdk")
	// go mod edit -json: the go.mod as the go command reads it.
	cmd := exec.Command(goCommand(), "mod", "edit", "-json")
	cmd.Dir = sdkDir
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	type mod struct{ Path, Version string }
	var mf struct {
		Module  struct{ Path string }
		Require []struct{ Path string }
		Replace []struct{ Old, New mod }
	}
	if err := json.Unmarshal(raw, &mf); err != nil {
		t.Fatal(err)
	}
	if mf.Module.Path != sdkModule {
		t.Errorf("pluginsdk/go.mod: module %s, want %s", mf.Module.Path, sdkModule)
	}
	for _, r := range mf.Require {
		if under(r.Path, rootModule) {
			t.Errorf("pluginsdk/go.mod requires %s", r.Path)
		}
	}
	if len(mf.Replace) > 0 {
		t.Errorf("pluginsdk/go.mod has replace directives (%v): an outside plugin would not get them", mf.Replace)
	}
	checkClosure(t, "pluginsdk", listDeps(t, sdkDir, "./..."), func(p string) bool {
		return (under(p, rootModule) && !under(p, sdkModule)) || serverOnly(p)
	})
}

// The repository's plugins are built against pluginsdk alone, like an
// outside one: never the server's packages, gin or gorm.
func TestPluginsImportNoServer(t *testing.T) {
	checkClosure(t, "plugins", listDeps(t, filepath.Join("..", ".."), "./plugins/..."), func(p string) bool {
		return (under(p, rootModule) && !under(p, sdkModule) && !under(p, rootModule+"/plugins")) || serverOnly(p)
	})
}
