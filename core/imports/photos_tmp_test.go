package imports_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/demo"
	"github.com/strata-archaeo/strata/core/scratch"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// A photo preview's spooled ZIPs live in the server's temporary folder
// under the data folder and none outlives the request, however many ZIP
// parts the form sends; none goes to the system's temp folder.
func TestPhotoPreviewLeavesNoTempFiles(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		data := t.TempDir()
		tmp, err := scratch.Open(data)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tmp.Close() })
		inst := testenv.NewInstanceWith(t, e, server.Deps{Scratch: tmp}, func(c *config.Config) { c.DataDir = data })
		a := testenv.NewApp(t, inst.Apps, "dig")
		if err := demo.Seed(t.Context(), a, demo.Small, 1, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		admin := testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password)
		systemBefore, _ := filepath.Glob(filepath.Join(os.TempDir(), "strata-photos-*"))
		photos := buildZip(t, []zipEntry{{name: "US_1_a.png", size: 10, fill: func(p []byte) { copy(p, "png bytes!") }}})
		for _, parts := range []int{1, 3} {
			var zips []testenv.FormFile
			for range parts {
				zips = append(zips, testenv.FormFile{Field: "zip", Name: "photos.zip", Data: photos})
			}
			code, out := testenv.DoMultipart(t, inst.Server, "/dig/api/import/preview-photos", admin,
				map[string]string{"tb": "units", "pattern": "US_{code}_*.png"}, zips...)
			if code != 200 || out["count"] != float64(1) {
				t.Fatalf("%d ZIP parts: %d %v", parts, code, out)
			}
			left, _ := filepath.Glob(filepath.Join(tmp.Path(), "*"))
			for _, p := range left {
				if filepath.Base(p) != "strata.lock" {
					t.Fatalf("%d ZIP parts: left in the temporary folder: %v", parts, left)
				}
			}
		}
		systemAfter, _ := filepath.Glob(filepath.Join(os.TempDir(), "strata-photos-*"))
		if len(systemAfter) > len(systemBefore) {
			t.Fatalf("spooled to the system's temp folder: %v", systemAfter)
		}
	})
}
