package scratch_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-archaeo/strata/core/scratch"
)

// What a killed process left (a restore's tables in clear) is removed
// when the next one opens the folder; a running process's folder is not;
// every folder is 0700 and goes with Close.
func TestOpenSweepsWhatDeadProcessesLeft(t *testing.T) {
	data := t.TempDir()
	live, err := scratch.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	liveFile := filepath.Join(live.Path(), "strata-restore-1", "sys_users.ndjson")
	dead := filepath.Join(data, scratch.FolderName, "pdead", "strata-restore-2", "sys_users.ndjson")
	stray := filepath.Join(data, scratch.FolderName, "strata-photos-3.zip")
	for _, p := range []string{liveFile, dead, stray} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(`{"password":"$2a$..."}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	next, err := scratch.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Dir(filepath.Dir(dead)), stray} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s survived the next start: %v", p, err)
		}
	}
	if _, err := os.Stat(liveFile); err != nil {
		t.Fatalf("a running process's file was removed: %v", err)
	}
	for _, p := range []string{filepath.Join(data, scratch.FolderName), next.Path()} {
		info, err := os.Stat(p)
		if err != nil || info.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v %v, want 0700", p, info.Mode(), err)
		}
	}
	f, err := scratch.CreateTemp(next.Path(), "x-*")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := next.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(next.Path()); !os.IsNotExist(err) {
		t.Fatalf("Close left %s: %v", next.Path(), err)
	}
}
