package filter_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/filter/internal/foldsql"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
	"github.com/strata-archaeo/strata/migrations"
)

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// TestFoldIsInlinedAndIndexed checks on PostgreSQL that strata_fold costs
// no function call per row (the planner inlines it: migration 0025) and
// that the search index on strata_fold(col) still serves the filter's
// condition once both are inlined; and that folding keeps its answers,
// NULL included. It fails on 0009's STRICT function, whose plans call
// strata_fold.
func TestFoldIsInlinedAndIndexed(t *testing.T) {
	testenv.RequireEngine(t, store.Postgres)
	ctx := context.Background()
	fx := newFixtureWith(t, store.Postgres, true)
	plan := func(c querier, q string, args ...any) string {
		t.Helper()
		rows, err := c.QueryContext(ctx, store.Postgres.Rebind(`EXPLAIN (VERBOSE, COSTS OFF) `+q), args...)
		if err != nil {
			t.Fatalf("explain %s: %v", q, err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			b.WriteString(line + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	finds, _ := fx.cat.Table("finds")
	label, _ := finds.Field("label")
	for _, op := range []string{"_icontains", "_starts_with", "_contains"} {
		n, err := filter.ParseJSON([]byte(`{"label":{"` + op + `":"Ä-TYPE"}}`))
		if err != nil {
			t.Fatal(err)
		}
		where, args, err := filter.RenderWith(ctx, fx.db, fx.cat, "finds", n, filter.Options{})
		if err != nil {
			t.Fatal(err)
		}
		q := `SELECT "id" FROM ` + fx.db.Qualify("finds") + ` WHERE ` + where
		err = fx.db.Tx(ctx, func(tx *store.DB) error {
			// Twelve rows: a scan is cheaper; the index must still be
			// usable when a scan is ruled out.
			if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
				return err
			}
			p := plan(tx.SQL, q, args...)
			if strings.Contains(p, "strata_fold(") {
				t.Errorf("%s: strata_fold is called per row, not inlined:\n%s", op, p)
			}
			if !strings.Contains(p, schema.SearchIndexName(label)) {
				t.Errorf("%s: the search index %s does not serve the filter:\n%s", op, schema.SearchIndexName(label), p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	// An app migrated while a connection has used its search index under
	// 0009's function: that connection sees the index inlined afterwards.
	conn, err := fx.db.Pool().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	old, err := migrations.FS.ReadFile("postgres/0009_fold_ascii.sql")
	if err != nil {
		t.Fatal(err)
	}
	// The old function, and the indexes loaded again under it (the
	// migration's own invalidation), as before 0025.
	inlineSQL := foldsql.InlineMigrationSQL()
	inval := inlineSQL[strings.Index(inlineSQL, "DO $inval$"):]
	for _, q := range []string{`SET search_path TO ` + store.Postgres.Quote(fx.db.Schema()), string(old), inval,
		`SET search_path TO pg_catalog`, `SET enable_seqscan = off`} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	n, _ := filter.ParseJSON([]byte(`{"label":{"_icontains":"Ä-TYPE"}}`))
	where, args, err := filter.RenderWith(ctx, fx.db, fx.cat, "finds", n, filter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q := `SELECT "id" FROM ` + fx.db.Qualify("finds") + ` WHERE ` + where
	if p := plan(conn, q, args...); !strings.Contains(p, "strata_fold(") || !strings.Contains(p, schema.SearchIndexName(label)) {
		t.Fatalf("under 0009's function the plan should call strata_fold through the index:\n%s", p)
	}
	err = fx.db.Tx(ctx, func(tx *store.DB) error {
		if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+store.Postgres.Quote(fx.db.Schema())); err != nil {
			return err
		}
		_, err := tx.SQL.ExecContext(ctx, inlineSQL)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := plan(conn, q, args...); strings.Contains(p, "strata_fold(") || !strings.Contains(p, schema.SearchIndexName(label)) {
		t.Errorf("after 0025, a connection that had used the index should see it inlined:\n%s", p)
	}

	// The inlined function answers as Go's fold, NULL as NULL.
	fold := fx.db.FoldSQL("CAST(? AS text)")
	for _, in := range []any{nil, "", "ABC xyz", "Amphora Ä-TYPE", "STRAẞE", "ΣΊΣΥΦΟΣ", "ЖУК", "𐐀x"} {
		var got *string
		if err := fx.db.QueryRow(ctx, `SELECT `+fold, in).Scan(&got); err != nil {
			t.Fatal(err)
		}
		switch s, ok := in.(string); {
		case !ok && got != nil:
			t.Errorf("strata_fold(NULL) = %q, want NULL", *got)
		case ok && (got == nil || *got != store.Fold(s)):
			t.Errorf("strata_fold(%q) = %v, want %q", s, got, store.Fold(s))
		}
	}
}
