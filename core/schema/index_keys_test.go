package schema_test

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
	"github.com/strata-archaeo/strata/migrations"
)

// TestIndexesServeTheListOrder: a list filtered by equality on an indexed
// field and ordered by id (the default order) reads its page off the
// index, with no sort of the matches, on both engines: on PostgreSQL the
// non-unique indexes end with id (SQLite's end with the rowid), those made
// through the index API and those lookup fields imply; unique ones keep
// their columns. Migration 0026 rebuilds older PostgreSQL indexes so.
func TestIndexesServeTheListOrder(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		ix, err := schema.CreateIndex(ctx, fx.db, "finds", schema.IndexInput{Columns: []string{"colour"}}, fx.now)
		if err != nil {
			t.Fatal(err)
		}
		uq, err := schema.CreateIndex(ctx, fx.db, "finds", schema.IndexInput{Columns: []string{"label"}, Unique: true}, fx.now)
		if err != nil {
			t.Fatal(err)
		}
		fx.consistent(t, "finds")
		lookup := lookupIndexName(t, fx)
		for _, c := range []struct {
			index, column string
			value         any
		}{{ix.Name, "colour", "red"}, {lookup, "site", 1}} {
			q := `SELECT "id" FROM ` + fx.db.Qualify("finds") + ` WHERE "` + c.column + `" = ? ORDER BY "id" LIMIT 30`
			if p := queryPlan(t, fx.db, q, c.value); !strings.Contains(p, c.index) || planSorts(e, p) {
				t.Errorf("%s: the page is not read off %s in order:\n%s", c.column, c.index, p)
			}
		}
		if e != store.Postgres {
			return
		}
		want := map[string]string{ix.Name: `(colour, id)`, lookup: `(site, id)`, uq.Name: `(label)`}
		for name, cols := range want {
			if def := indexDef(t, fx.db, name); !strings.HasSuffix(def, cols) {
				t.Errorf("index %s: %s, want the columns %s", name, def, cols)
			}
		}

		// Indexes made before 0026, on the columns alone, are rebuilt.
		for _, name := range []string{ix.Name, lookup} {
			fx.exec(t, `DROP INDEX `+fx.db.Qualify(name))
		}
		fx.exec(t, `CREATE INDEX `+store.Postgres.Quote(ix.Name)+` ON `+fx.db.Qualify("finds")+` ("colour")`)
		fx.exec(t, `CREATE INDEX `+store.Postgres.Quote(lookup)+` ON `+fx.db.Qualify("finds")+` ("site")`)
		step, err := migrations.FS.ReadFile("postgres/0026_index_id_key.sql")
		if err != nil {
			t.Fatal(err)
		}
		err = fx.db.Tx(ctx, func(tx *store.DB) error {
			if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+store.Postgres.Quote(fx.db.Schema())); err != nil {
				return err
			}
			_, err := tx.SQL.ExecContext(ctx, string(step))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for name, cols := range want {
			if def := indexDef(t, fx.db, name); !strings.HasSuffix(def, cols) {
				t.Errorf("after 0026, index %s: %s, want the columns %s", name, def, cols)
			}
		}
		fx.consistent(t, "finds")
	})
}

// lookupIndexName is the name of the index the fixture's lookup field
// (finds.site → sites) implies.
func lookupIndexName(t *testing.T, fx *fixture) string {
	t.Helper()
	got := queryStrings(t, fx.db, `SELECT 'ix_' || f.table_id || '_f' || f.id FROM `+fx.db.Sys("fields")+` f JOIN `+
		fx.db.Sys("tables")+` t ON t.id = f.table_id WHERE t.name = 'finds' AND f.name = 'site'`)
	if len(got) != 1 {
		t.Fatalf("lookup field: %v", got)
	}
	return got[0]
}

// queryPlan is the engine's plan of q, one line per node; sequential scans
// are ruled out on PostgreSQL (the fixture's tables are tiny).
func queryPlan(t *testing.T, db *store.DB, q string, args ...any) string {
	t.Helper()
	var lines []string
	err := db.Tx(context.Background(), func(tx *store.DB) error {
		explain := `EXPLAIN QUERY PLAN ` + q
		if tx.Engine == store.Postgres {
			if _, err := tx.Exec(context.Background(), `SET LOCAL enable_seqscan = off`); err != nil {
				return err
			}
			explain = `EXPLAIN ` + q
		}
		lines = queryStrings(t, tx, explain, args...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// planSorts reports whether a plan sorts rows (rather than reading them in
// order off an index).
func planSorts(e store.Engine, plan string) bool {
	if e == store.Postgres {
		return strings.Contains(plan, "Sort")
	}
	return strings.Contains(plan, "TEMP B-TREE")
}

// indexDef is PostgreSQL's definition of an index of the app's schema.
func indexDef(t *testing.T, db *store.DB, name string) string {
	t.Helper()
	got := queryStrings(t, db, `SELECT indexdef FROM pg_indexes WHERE schemaname = ? AND indexname = ?`, db.Schema(), name)
	if len(got) != 1 {
		t.Fatalf("index %s: %v", name, got)
	}
	return got[0]
}
