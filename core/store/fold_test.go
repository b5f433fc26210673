package store_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"unicode"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestFold(t *testing.T) {
	cases := map[string]string{
		"":               "",
		"plain":          "plain",
		"ÄÖÜ äöü":        "äöü äöü",
		"STRAẞE Straße":  "straße straße", // simple mapping: ẞ → ß, never "ss"
		"ΣΊΣΥΦΟΣ σς":     "σίσυφοσ σς",    // final sigma stays as it is
		"ЖУК жук":        "жук жук",
		"\u0130 \u212a":  "i k", // dotted I and the Kelvin sign map to ASCII
		"a%B_c\\D":       "a%b_c\\d",
		"bad \xff UTF-8": "bad \xff utf-8", // invalid bytes kept as they are
	}
	for in, want := range cases {
		if got := store.Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

// allUpper is every character unicode.ToLower changes, and its folding.
func allUpper() (string, string) {
	var up, low strings.Builder
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		if l := unicode.ToLower(r); l != r {
			up.WriteRune(r)
			low.WriteRune(l)
		}
	}
	return up.String(), low.String()
}

// TestFoldFunction runs strata_fold on both engines: the SQLite function
// registered from Go and the PostgreSQL function of migration 0005 must
// fold every character exactly as Fold does, and keep NULL.
func TestFoldFunction(t *testing.T) {
	up, low := allUpper()
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		db := testenv.NewApp(t, testenv.NewRegistry(t, e), "fold").DB
		var got sql.NullString
		for _, in := range []string{up, "Ä ẞ Σ Ж mixed ÀÉÎ", "100% _x_ \\"} {
			if err := db.QueryRow(ctx, `SELECT `+db.FoldSQL("?"), in).Scan(&got); err != nil {
				t.Fatal(err)
			}
			want := store.Fold(in)
			if in == up && want != low {
				t.Fatal("Fold disagrees with unicode.ToLower")
			}
			if got.String != want {
				t.Errorf("strata_fold differs from Fold on %d bytes of input", len(in))
			}
		}
		if err := db.QueryRow(ctx, `SELECT `+db.FoldSQL("NULL")).Scan(&got); err != nil || got.Valid {
			t.Errorf("strata_fold(NULL) = %v, %v; want NULL", got, err)
		}
	})
}
