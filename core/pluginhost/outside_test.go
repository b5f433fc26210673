package pluginhost_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// plugins/example as a module outside the repository: a go.mod requiring
// pluginsdk v0.4.0 and no replace, built offline against this tree's SDK
// served by version; the server loads the binary and serves its route and
// hook.
func TestOutsidePluginBuildsWithoutReplace(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "munsell")
	dir := testenv.BuildOutsidePlugin(t, filepath.Join("..", "..", "plugins", "example"), bin)
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod), testenv.SDKModule+" "+testenv.SDKVersion) || strings.Contains(string(mod), "=>") {
		t.Fatalf("the outside module's go.mod:\n%s", mod)
	}
	if sum, err := os.ReadFile(filepath.Join(dir, "go.sum")); err != nil || !strings.Contains(string(sum), testenv.SDKModule+" "+testenv.SDKVersion+" h1:") {
		t.Fatalf("go.sum has no hash of the SDK: %v\n%s", err, sum)
	}
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		pdir := t.TempDir()
		install(t, bin, filepath.Join(pdir, "munsell"))
		f := newFixture(t, e, pdir, nil)
		if in, err := f.mgr.Describe("munsell"); err != nil || in.State != pluginhost.StateRunning {
			t.Fatalf("outside plugin: %+v %v\n%s", in, err, f.logs)
		}
		if parsed := f.json("GET", "/digs/api/munsell/parse?q=2.5y+6/4", "", f.reader, 200); parsed["notation"] != "2.5Y 6/4" {
			t.Errorf("route: %v", parsed)
		}
		f.activate("finds", "munsell")
		rec := f.json("POST", "/digs/api/record/finds", `{"core":{"code":"a","munsell_colour":"n 5/"}}`, f.writer, 200)
		if got := f.json("GET", fmt.Sprint("/digs/api/record/finds/", rec["id"]), "", f.reader, 200); core(got, "munsell_colour") != "N 5/" {
			t.Errorf("hook: %v", core(got, "munsell_colour"))
		}
	})
}
