package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/testenv"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// strata plugin new writes a module that, as generated, passes go vet and
// its own tests (conformance included) and builds without a replace
// against pluginsdk by version; the server loads the binary.
func TestPluginNewBuildsAndPasses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trench")
	code, out, errOut := runWith(envMap{}, "plugin", "new", "trench_notes", "--dir", dir, "--module", "example.org/digs/trench")
	if code != 0 || errOut != "" {
		t.Fatalf("plugin new: exit %d, stderr %q", code, errOut)
	}
	for _, f := range []string{"main.go", "main_test.go", "go.mod", "Makefile", "README.md", ".gitignore"} {
		if !strings.Contains(out, filepath.Join(dir, f)+"\n") {
			t.Errorf("the output does not list %s:\n%s", f, out)
		}
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "module example.org/digs/trench\n"; !strings.HasPrefix(string(mod), want) ||
		!strings.Contains(string(mod), "require github.com/strata-archaeo/strata/pluginsdk v"+pluginsdk.Version+"\n") {
		t.Fatalf("go.mod:\n%s", mod)
	}
	env := testenv.OutsideGoEnv(t)
	testenv.RunOutsideGo(t, env, dir, "vet", "./...")
	// make test, as the generated README says, on a fresh module without
	// go.sum; its tests include the conformance check.
	if src, err := os.ReadFile(filepath.Join(dir, "main_test.go")); err != nil || !strings.Contains(string(src), "plugintest.Conformance(t, plugin{})") {
		t.Fatalf("main_test.go: %v\n%s", err, src)
	}
	mk := exec.Command("make", "test")
	mk.Dir, mk.Env = dir, env
	if out, err := mk.CombinedOutput(); err != nil || !strings.Contains(string(out), "ok  \texample.org/digs/trench") {
		t.Fatalf("make test: %v\n%s", err, out)
	}
	if out := testenv.RunOutsideGo(t, env, dir, "run", "cmd/gofmt", "-l", "."); strings.TrimSpace(out) != "" {
		t.Errorf("gofmt -l: %s", out)
	}

	// go test completed go.sum; a hash of the SDK as it was once (a
	// committed go.sum, the SDK changed since) must not break the build.
	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil || !strings.Contains(string(sum), testenv.SDKModule+" ") {
		t.Fatalf("go.sum: %v\n%s", err, sum)
	}
	stale := regexp.MustCompile(`(?m)^(`+regexp.QuoteMeta(testenv.SDKModule)+` v\S+) h1:\S+$`).
		ReplaceAllString(string(sum), "$1 h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "plugins", "trench_notes")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.BuildOutsidePlugin(t, dir, bin)
	// A short folder: a unix socket's path has at most 107 bytes.
	run, err := os.MkdirTemp("", "strata-run-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(run) })
	m := pluginhost.New(pluginhost.Options{Dir: filepath.Dir(bin), RunDir: run, StartTimeout: 30 * time.Second})
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	info, err := m.Describe("trench_notes")
	if err != nil || info.State != pluginhost.StateRunning || len(info.Routes) != 1 || len(info.Operators) != 1 ||
		len(info.Features) != 1 || info.Features[0].Columns[0] != "trench_notes_note" {
		t.Fatalf("the generated plugin in the server: %+v %v", info, err)
	}
}

func TestPluginNewMistakes(t *testing.T) {
	existing := t.TempDir()
	if err := os.WriteFile(filepath.Join(existing, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"plugin"}, 2, "plugin needs a subcommand"},
		{[]string{"plugin", "frobnicate"}, 2, `unknown plugin subcommand "frobnicate"`},
		{[]string{"plugin", "new"}, 2, "usage: strata plugin new NAME"},
		{[]string{"plugin", "new", "Bad-Name", "--dir", t.TempDir()}, 2, `plugin name "Bad-Name"`},
		{[]string{"plugin", "new", "x", "--dir", t.TempDir()}, 2, `plugin name "x"`},
		{[]string{"plugin", "new", "ok_name", "extra"}, 2, "unexpected arguments"},
		{[]string{"plugin", "new", "ok_name", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"plugin", "new", "ok_name", "--dir", t.TempDir(), "--module", "bad module"}, 1, `module path "bad module"`},
		{[]string{"plugin", "new", "ok_name", "--dir", existing}, 1, "already holds a file"},
	} {
		code, out, errOut := runWith(envMap{}, c.args...)
		if code != c.code || out != "" || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, out, errOut, c.code, c.msg)
		}
	}
	// Nothing was written over the existing file, nor beside it.
	if b, _ := os.ReadFile(filepath.Join(existing, "main.go")); string(b) != "package main\n" {
		t.Errorf("main.go was overwritten: %q", b)
	}
	if _, err := os.Stat(filepath.Join(existing, "go.mod")); err == nil {
		t.Error("go.mod was written beside an existing main.go")
	}
}
