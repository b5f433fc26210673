package backup_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/nodelock"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// Half a backup left by a server killed while writing it (password hashes
// in it) is removed, and its name is no longer "in progress" for ever;
// one still being written (its writer holds its lock) is left alone.
func TestAbandonedPartialBackupsAreRemoved(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		inst := testenv.NewInstance(t, e)
		testenv.NewApp(t, inst.Apps, "dig")
		admin := testenv.Bearer(testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password))
		dir := filepath.Join(inst.Config.DataDir, "backups", "dig")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		const dead, live = "dig_20260101_000000_abcdef.tar.gz", "dig_20260101_000001_abcdef.tar.gz"
		old := time.Now().Add(-10 * time.Minute)
		for _, n := range []string{dead, live} {
			p := filepath.Join(dir, "."+n+".partial")
			if err := os.WriteFile(p, []byte("half an archive: sys_users ..."), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
		f, err := os.Open(filepath.Join(dir, "."+live+".partial"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if held, err := nodelock.TryLockFile(f); err != nil || held {
			t.Fatalf("lock: %v %v", held, err)
		}
		for _, s := range []testenv.Scenario{
			{Name: "a backup being written", Method: "DELETE", URL: "/dig/api/backup/" + live, Headers: admin,
				ExpectedStatus: 409, ExpectedContent: []string{"backup_in_progress"}},
			{Name: "a backup whose writer is gone", Method: "DELETE", URL: "/dig/api/backup/" + dead, Headers: admin,
				ExpectedStatus: 404, ExpectedContent: []string{"backup_not_found"}},
			{Name: "list", URL: "/dig/api/backups", Headers: admin, ExpectedStatus: 200, ExpectedContent: []string{`"backups":[]`}},
		} {
			s.Run(t, inst.Server)
		}
		if _, err := os.Stat(filepath.Join(dir, "."+dead+".partial")); !os.IsNotExist(err) {
			t.Fatalf("the abandoned partial backup is still there: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "."+live+".partial")); err != nil {
			t.Fatalf("the partial backup being written was removed: %v", err)
		}
	})
}
