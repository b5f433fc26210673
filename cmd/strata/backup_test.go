package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// An application moves from SQLite to PostgreSQL with app export and app
// import (same instance key: the same data folder), and back over itself.
func TestAppExportImportAcrossEngines(t *testing.T) {
	testenv.RequireEngine(t, store.Postgres)
	ctx := context.Background()
	lite := newCLI(t, store.SQLite)
	pg := newCLI(t, store.Postgres)
	pg.env["STRATA_DATA_DIR"] = lite.env["STRATA_DATA_DIR"]
	archive := filepath.Join(t.TempDir(), "dig.tar.gz")
	steps := []struct {
		name   string
		c      *cli
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"create", lite, []string{"app", "create", "dig", "--email", "a@b.org", "--password", "longenough1", "--definition", "Scavo"}, 0, "created application dig", ""},
		{"export needs a name", lite, []string{"app", "export"}, 2, "", "usage"},
		{"export of an unknown app", lite, []string{"app", "export", "nope", "--out", archive}, 1, "", "app_not_found"},
		{"export", lite, []string{"app", "export", "dig", "--out", archive}, 0, "", "exported dig"},
		{"import into postgres", pg, []string{"app", "import", archive}, 0, "created application dig from dig (sqlite)", ""},
		{"listed with its definition", pg, []string{"app", "list"}, 0, "dig\tScavo", ""},
		{"import under another name", pg, []string{"app", "import", archive, "--as", "copy"}, 0, "created application copy", ""},
		{"import again replaces", pg, []string{"app", "import", archive, "--as", "copy"}, 0, "replaced application copy", ""},
		{"not an archive", pg, []string{"app", "import", os.Args[0], "--as", "xy"}, 1, "", "backup_invalid"},
	}
	for _, s := range steps {
		code, out, errOut := s.c.run(ctx, "", nil, s.args...)
		if code != s.code || !strings.Contains(out, s.stdout) || !strings.Contains(errOut, s.stderr) {
			t.Fatalf("%s: exit %d (want %d)\nstdout: %s\nstderr: %s", s.name, code, s.code, out, errOut)
		}
	}
	// Nothing half-written was left for the failed export.
	if _, err := os.Stat(archive + ".partial"); !os.IsNotExist(err) {
		t.Fatalf("partial archive left: %v", err)
	}
}
