package filter_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"unicode"

	"github.com/strata-archaeo/strata/core/filter/internal/foldsql"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/migrations"
)

var update = flag.Bool("update", false, "rewrite generated files (migrations/postgres/0005_fold.sql)")

// TestFoldMigration keeps the PostgreSQL function in step with Go's
// tables, which the SQLite function uses live.
func TestFoldMigration(t *testing.T) {
	for file, want := range map[string]string{
		"0005_fold.sql":        foldsql.MigrationSQL(),
		"0009_fold_ascii.sql":  foldsql.FastPathMigrationSQL(),
		"0025_fold_inline.sql": foldsql.InlineMigrationSQL(),
	} {
		if *update {
			path := filepath.Join("..", "..", "migrations", "postgres", file)
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", path)
			continue
		}
		got, err := migrations.FS.ReadFile("postgres/" + file)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("migrations/postgres/%s is not what foldsql generates from this Go's Unicode tables; "+
				"on a Go upgrade add a migration that replaces strata_fold (go test ./core/filter -run TestFoldMigration -update shows the text)", file)
		}
	}
}

func TestFoldPairsMatchStoreFold(t *testing.T) {
	upper, lower := foldsql.Pairs()
	if len(upper) != len(lower) || len(upper) < 1000 {
		t.Fatalf("%d upper, %d lower", len(upper), len(lower))
	}
	for i, r := range upper {
		if got := store.Fold(string(r)); got != string(lower[i]) {
			t.Fatalf("store.Fold(%q) = %q, table says %q", r, got, lower[i])
		}
	}
	// Characters outside the table are left alone.
	for _, r := range []rune{'a', 'ß', 'σ', 'ς', 'ж', '1', '%', '𝔄'} {
		if unicode.ToLower(r) == r && store.Fold(string(r)) != string(r) {
			t.Errorf("store.Fold changed %q", r)
		}
	}
}
