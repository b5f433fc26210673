package bradypus

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFolderRootRefuses: what the folder's reader refuses, and why, for
// the cases an HTTP test cannot stage: a folder on the way that is a link
// to outside, a FIFO (reading it would block the upgrade), a file swapped
// after its check, and each kind of bad name.
func TestFolderRootRefuses(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	dir := filepath.Join(base, "app")
	for _, d := range []string{outside, filepath.Join(dir, "files"), filepath.Join(dir, "db")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(outside, "secret.key"), "SECRET")
	write(filepath.Join(dir, "files", "1.txt"), "one")
	write(filepath.Join(dir, "files", "2.txt"), "two")
	if err := os.Symlink(outside, filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "files", "3.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The folder itself may be a link (adopt makes one).
	link := filepath.Join(base, "adopted")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	r, err := openFolder(link)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	if b, err := r.readFile("files/1.txt"); err != nil || string(b) != "one" {
		t.Fatalf("a regular file: %q %v", b, err)
	}
	for name, want := range map[string]string{
		"linked/secret.key":      ReasonSymlink,
		"files/../../outside/x":  ReasonInvalidName,
		"/etc/passwd":            ReasonInvalidName,
		"files//1.txt":           ReasonInvalidName,
		"files/./1.txt":          ReasonInvalidName,
		"files/1.txt\x00":        ReasonInvalidName,
		"files/3.txt":            ReasonNotRegular,
		"files":                  ReasonNotRegular,
		"files/1.txt/not-a-file": ReasonNotRegular,
	} {
		_, err := r.readFile(name)
		if got, ok := asRefused(err); !ok || got.Reason != want {
			t.Errorf("%q: %v, want refused %s", name, err, want)
		}
	}
	if err := checkBase("files", "1.txt/../../x"); err == nil {
		t.Error("a stored name with a slash was taken as one entry")
	}
	// A file swapped after its check is not the one checked.
	_, checked, err := r.sqlitePath("files/1.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "files", "2.txt"), filepath.Join(dir, "files", "1.txt")); err != nil {
		t.Fatal(err)
	}
	if got, ok := asRefused(r.sameAsChecked("files/1.txt", checked)); !ok || got.Reason != ReasonChanged {
		t.Errorf("a swapped file: %v, want refused %s", got, ReasonChanged)
	}
}
