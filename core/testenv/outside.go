package testenv

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/pluginsdk"
)

// SDKModule is the SDK's module path, which outside plugins require.
const SDKModule = "github.com/strata-archaeo/strata/pluginsdk"

// SDKVersion is the version the local SDK is served as: "v" +
// pluginsdk.Version.
var SDKVersion = "v" + pluginsdk.Version

// A plugin outside the repository requires pluginsdk by version and has
// no replace directive. The tests prove that such a module builds against
// the SDK of this tree, offline: the SDK is served as SDKVersion by a
// module proxy in a folder (GOPROXY=file://...), every other module (gRPC,
// protobuf, go-plugin, hclog) comes from the download cache of the local
// module cache, and the checksum database is not asked (the module is
// not published; go.sum gets the local hashes).

// repoRoot is the repository's folder, from this file's path.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		t.Fatalf("testenv: cannot locate the repository (built with -trimpath?)")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func goCommand() string {
	if goBin, err := exec.LookPath("go"); err == nil {
		return goBin
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// OutsideGoEnv is the environment for go commands in an outside plugin's
// module: GOPROXY is a folder proxy serving this tree's pluginsdk as
// SDKVersion, then the local module cache's downloads; a module cache of
// the test's own (the SDK's content changes without its version, so it
// must never enter the shared cache); no checksum database; -mod=mod, so
// go.mod and go.sum are completed. Both folders live as long as the test.
func OutsideGoEnv(t testing.TB) []string {
	t.Helper()
	proxy := t.TempDir()
	writeSDKProxy(t, filepath.Join(repoRoot(t), "pluginsdk"), proxy)
	out, err := exec.Command(goCommand(), "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	downloads := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GONOPROXY", "GOFLAGS", "GOMODCACHE", "GOWORK", "GOTOOLCHAIN":
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(downloads),
		"GOSUMDB=off", "GONOSUMDB=github.com/strata-archaeo", "GOPRIVATE=", "GONOPROXY=",
		// -modcacherw: the test's module cache can be removed with its
		// temporary folder. -trimpath: the compiled packages do not name
		// that folder, so the build cache serves them from one test to the
		// next (it would compile gRPC again each time).
		"GOFLAGS=-mod=mod -modcacherw -trimpath",
		"GOMODCACHE="+t.TempDir(),
		"GOWORK=off", "GOTOOLCHAIN=local",
	)
}

// RunOutsideGo runs the go command with args in dir under env
// (OutsideGoEnv) and returns its output; it fails the test on an error.
func RunOutsideGo(t testing.TB, env []string, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(goCommand(), args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// BuildOutsidePlugin builds the plugin whose sources are in srcDir into the
// executable out as a module outside this repository would be built: in a
// copy of srcDir whose go.mod requires SDKModule at SDKVersion, with no
// replace. A srcDir without go.mod gets one (module example.com/<name>);
// one with a go.mod must require the SDK and must not replace it; go.sum
// may be missing (it is completed), and its lines for the SDK are dropped:
// they hash the SDK as it was when they were written, and the SDK served
// is this tree's. It returns the copy's folder.
func BuildOutsidePlugin(t testing.TB, srcDir, out string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), filepath.Base(srcDir))
	if err := os.CopyFS(dir, os.DirFS(srcDir)); err != nil {
		t.Fatalf("copy %s: %v", srcDir, err)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	switch {
	case os.IsNotExist(err):
		mod = []byte(OutsideGoMod("example.com/"+filepath.Base(srcDir), pluginsdk.Version))
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), mod, 0o644); err != nil {
			t.Fatal(err)
		}
	case err != nil:
		t.Fatal(err)
	}
	if !bytes.Contains(mod, []byte(SDKModule+" ")) {
		t.Fatalf("%s/go.mod does not require %s", srcDir, SDKModule)
	}
	for _, line := range strings.Split(string(mod), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "replace") || strings.Contains(line, "=>") {
			t.Fatalf("%s/go.mod replaces a module (%q): an outside plugin builds without", srcDir, strings.TrimSpace(line))
		}
	}
	dropSDKSums(t, filepath.Join(dir, "go.sum"))
	abs, err := filepath.Abs(out)
	if err != nil {
		t.Fatal(err)
	}
	RunOutsideGo(t, OutsideGoEnv(t), dir, "build", "-o", abs, ".")
	return dir
}

// OutsideGoMod is the go.mod of an outside plugin module requiring the
// SDK at version (without "v"), as PLUGINS.md shows it.
func OutsideGoMod(module, version string) string {
	return fmt.Sprintf("module %s\n\ngo 1.26.0\n\nrequire %s v%s\n", module, SDKModule, version)
}

// writeSDKProxy lays out a GOPROXY folder serving the module in sdkDir as
// SDKVersion: @v/list, .info, .mod and the module zip, whose entries are
// prefixed module@version/. Left out, as the go command's own zips leave
// them out: nested modules (a folder with a go.mod), hidden files and
// folders, and anything but regular files.
func writeSDKProxy(t testing.TB, sdkDir, proxy string) {
	t.Helper()
	at := filepath.Join(proxy, filepath.FromSlash(SDKModule), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(sdkDir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`, SDKVersion, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339))
	for name, data := range map[string][]byte{"list": []byte(SDKVersion + "\n"), SDKVersion + ".info": []byte(info), SDKVersion + ".mod": mod} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	prefix := SDKModule + "@" + SDKVersion + "/"
	err = filepath.WalkDir(sdkDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(sdkDir, path)
		if err != nil {
			return err
		}
		if rel != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); rel != "." && err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		w, err := zw.Create(prefix + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(at, SDKVersion+".zip"), buf.Bytes(), 0o644)
	}
	if err != nil {
		t.Fatalf("the SDK's module zip: %v", err)
	}
}

// dropSDKSums removes the SDK's lines from the go.sum at path, if any.
func dropSDKSums(t testing.TB, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(line, SDKModule+" ") {
			kept = append(kept, line)
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}
