package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The data folder, the app folders and the SQLite files are the service's
// alone: 0700 folders, 0600 files, also when an older version made them
// wider (issue 11: app.db was 0644 and holds the app's secrets).
func TestSQLiteFileModes(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	b, err := OpenSQLite(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx, "dig", func(ctx context.Context, db *DB) error {
		_, err := db.Exec(ctx, `CREATE TABLE t (id INTEGER)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	db, err := b.Open(ctx, "dig")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO t (id) VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for path, want := range map[string]os.FileMode{data: 0o700, filepath.Join(data, "apps"): 0o700, b.AppDir("dig"): 0o700} {
			if st, err := os.Stat(path); err != nil || st.Mode().Perm() != want {
				t.Errorf("%s: %s mode %v, want %04o (%v)", when, path, st.Mode().Perm(), want, err)
			}
		}
		entries, _ := os.ReadDir(b.AppDir("dig"))
		for _, e := range entries {
			st, _ := os.Stat(filepath.Join(b.AppDir("dig"), e.Name()))
			if st.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s: %s mode %v, want 0600", when, e.Name(), st.Mode().Perm())
			}
		}
	}
	check("new")
	db.Close()

	// Files left wide by an older version are tightened when opened.
	for _, p := range []string{data, filepath.Join(data, "apps"), b.AppDir("dig")} {
		os.Chmod(p, 0o755)
	}
	os.Chmod(filepath.Join(b.AppDir("dig"), "app.db"), 0o644)
	b, err = OpenSQLite(data)
	if err != nil {
		t.Fatal(err)
	}
	db, err = b.Open(ctx, "dig")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check("reopened")
}
