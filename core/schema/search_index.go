package schema

import (
	"context"
	"errors"
	"fmt"
	"log"
	"regexp"
	"sort"
	"strconv"
	"sync"

	"github.com/strata-archaeo/strata/core/store"
)

// Search indexes serve the substring operators (_contains, _icontains,
// _ncontains, _starts_with and the quick search) on text fields: trigrams
// of the folded text (store.Fold), so that a query only compares the rows
// the index names instead of folding every row.
//
//   - PostgreSQL: a GIN index USING gin (strata_fold(col) gin_trgm_ops)
//     of the pg_trgm extension. Without the extension (not installed and
//     not installable by this role) there are none and filters scan.
//   - SQLite: a contentless FTS5 table with the trigram tokenizer holding
//     strata_fold(col) under the row's id, kept by AFTER INSERT, UPDATE and
//     DELETE triggers on the user table, so no write path can forget it.
//
// Both are named sys_search_<table id>_<field id>: renames of the table or
// the field keep them (SQLite rewrites the triggers). Which fields have one
// follows the catalog: a text field's search_index setting, or, when it is
// not set, whether the field is one of the table's preview fields.
// Every catalog change brings the physical indexes in step (syncSearch).

// SettingSearchIndex is the field setting (kept in Field.Extra) that asks
// for a search index (true) or refuses one (false); unset follows preview.
const SettingSearchIndex = "search_index"

var searchIndexPattern = regexp.MustCompile(`^sys_search_([0-9]+)_([0-9]+)$`)

// SearchIndexName is the name of f's search index (SQLite: FTS table).
func SearchIndexName(f *Field) string { return fmt.Sprintf("sys_search_%d_%d", f.TableID, f.ID) }

// SearchIndexSetting returns f's search_index setting and whether it is set.
func (f *Field) SearchIndexSetting() (on, set bool) {
	on, set = f.Extra[SettingSearchIndex].(bool)
	return on, set
}

// WantsSearchIndex reports whether the catalog asks for a search index on
// f of t: only text storage (not lookups) can have one; then the setting
// decides, or, unset, membership of the preview.
func (t *Table) WantsSearchIndex(f *Field) bool {
	if f.DBType != DBText || f.IDFromTb != "" {
		return false
	}
	if on, set := f.SearchIndexSetting(); set {
		return on
	}
	for _, p := range t.Preview {
		if p == f.Name {
			return true
		}
	}
	return false
}

// physicalSearchIndexes lists the search indexes that exist in db.
func physicalSearchIndexes(ctx context.Context, db *store.DB) (map[string]bool, error) {
	var q string
	var args []any
	if db.Engine == store.Postgres {
		q = `SELECT indexname FROM pg_indexes WHERE schemaname = ? AND indexname LIKE 'sys\_search\_%'`
		args = []any{db.Schema()}
	} else {
		q = `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'sys\_search\_%' ESCAPE '\'`
	}
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("search indexes: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("search indexes: %w", err)
		}
		if searchIndexPattern.MatchString(n) { // not the FTS shadow tables
			out[n] = true
		}
	}
	return out, rows.Err()
}

// markSearchIndexes records on every field whether its search index exists.
func markSearchIndexes(ctx context.Context, db *store.DB, tables []*Table) error {
	have, err := physicalSearchIndexes(ctx, db)
	if err != nil {
		return err
	}
	for _, t := range tables {
		for _, f := range t.Fields {
			f.SearchIndexed = have[SearchIndexName(f)]
		}
	}
	return nil
}

// trgmWarned logs the absence of pg_trgm once per process.
var trgmWarned sync.Once

// trgmOpclass returns the schema-qualified gin_trgm_ops operator class,
// creating the pg_trgm extension when it is missing and this role may; ""
// when it is not available (filters then scan, logged once per process).
// A failed CREATE EXTENSION is undone to a savepoint, so the transaction
// goes on.
func trgmOpclass(ctx context.Context, tx *store.DB) string {
	find := func() string {
		var ns string
		err := tx.QueryRow(ctx, `SELECT n.nspname FROM pg_catalog.pg_extension e
			JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`).Scan(&ns)
		if err != nil {
			return ""
		}
		return store.Postgres.Quote(ns) + ".gin_trgm_ops"
	}
	if c := find(); c != "" {
		return c
	}
	var err error
	if _, err = tx.Exec(ctx, `SAVEPOINT strata_trgm`); err == nil {
		if _, err = tx.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public`); err != nil {
			_, _ = tx.Exec(ctx, `ROLLBACK TO SAVEPOINT strata_trgm`)
		}
		_, _ = tx.Exec(ctx, `RELEASE SAVEPOINT strata_trgm`)
	}
	if c := find(); c != "" {
		return c
	}
	if err == nil {
		err = errors.New("extension not found after CREATE EXTENSION")
	}
	trgmWarned.Do(func() {
		log.Printf("strata: pg_trgm is not available (%v): substring filters scan their tables", err)
	})
	return ""
}

// createSearchIndex builds f's search index over the rows t holds.
func createSearchIndex(ctx context.Context, tx *store.DB, t *Table, f *Field, opclass string) error {
	name := SearchIndexName(f)
	col := tx.Engine.Quote(f.Name)
	var stmts []string
	if tx.Engine == store.Postgres {
		stmts = []string{`CREATE INDEX ` + tx.Engine.Quote(name) + ` ON ` + tx.Qualify(t.Name) +
			` USING gin (` + tx.FoldSQL(col) + ` ` + opclass + `)`}
	} else {
		fts, tb, id := tx.Engine.Quote(name), tx.Engine.Quote(t.Name), tx.Engine.Quote(ColID)
		fold := store.FoldFunction
		stmts = []string{
			`CREATE VIRTUAL TABLE ` + fts + ` USING fts5(v, tokenize = 'trigram case_sensitive 1', content = '', contentless_delete = 1)`,
			`INSERT INTO ` + fts + ` (rowid, v) SELECT ` + id + `, ` + fold + `(` + col + `) FROM ` + tb + ` WHERE ` + col + ` IS NOT NULL`,
			`CREATE TRIGGER ` + tx.Engine.Quote(name+"_ai") + ` AFTER INSERT ON ` + tb + ` WHEN new.` + col + ` IS NOT NULL BEGIN ` +
				`INSERT INTO ` + fts + ` (rowid, v) VALUES (new.` + id + `, ` + fold + `(new.` + col + `)); END`,
			`CREATE TRIGGER ` + tx.Engine.Quote(name+"_au") + ` AFTER UPDATE OF ` + col + `, ` + id + ` ON ` + tb + ` BEGIN ` +
				`DELETE FROM ` + fts + ` WHERE rowid = old.` + id + `; ` +
				`INSERT INTO ` + fts + ` (rowid, v) SELECT new.` + id + `, ` + fold + `(new.` + col + `) WHERE new.` + col + ` IS NOT NULL; END`,
			`CREATE TRIGGER ` + tx.Engine.Quote(name+"_ad") + ` AFTER DELETE ON ` + tb + ` BEGIN ` +
				`DELETE FROM ` + fts + ` WHERE rowid = old.` + id + `; END`,
		}
	}
	return execAll(ctx, tx, "search index of "+t.Name+"."+f.Name, stmts...)
}

// dropSearchIndexSQL drops the search index called name (and, on SQLite,
// its triggers); nothing when there is none.
func dropSearchIndexSQL(tx *store.DB, name string) []string {
	if tx.Engine == store.Postgres {
		return []string{dropIndexSQL(tx, name)}
	}
	q := tx.Engine.Quote
	return []string{
		`DROP TRIGGER IF EXISTS ` + q(name+"_ai"), `DROP TRIGGER IF EXISTS ` + q(name+"_au"),
		`DROP TRIGGER IF EXISTS ` + q(name+"_ad"), `DROP TABLE IF EXISTS ` + q(name),
	}
}

// dropSearchIndex drops f's search index, if any: before its column is
// dropped or converted (SQLite refuses to drop a column its triggers use).
func dropSearchIndex(ctx context.Context, tx *store.DB, f *Field) error {
	return execAll(ctx, tx, "drop search index of "+f.Name, dropSearchIndexSQL(tx, SearchIndexName(f))...)
}

// searchPlan compares the search indexes the catalog asks for with those
// that exist.
func searchPlan(cat *Catalog, have map[string]bool) (missing []*Field, extra []string) {
	want := map[string]bool{}
	for _, t := range cat.Tables {
		for _, f := range t.Fields {
			if t.WantsSearchIndex(f) {
				n := SearchIndexName(f)
				want[n] = true
				if !have[n] {
					missing = append(missing, f)
				}
			}
		}
	}
	for n := range have {
		if !want[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	return missing, extra
}

// syncSearch brings the search indexes in step with the catalog, inside
// the transaction of a change: drops those no longer asked for (including
// those of dropped tables and fields) and builds the missing ones.
func syncSearch(ctx context.Context, tx *store.DB) error {
	cat, err := load(ctx, tx, shapeless...) // also at a restore's older step (Materialize)
	if err != nil {
		return err
	}
	have, err := physicalSearchIndexes(ctx, tx)
	if err != nil {
		return err
	}
	missing, extra := searchPlan(cat, have)
	for _, n := range extra {
		if err := execAll(ctx, tx, "drop search index "+n, dropSearchIndexSQL(tx, n)...); err != nil {
			return err
		}
	}
	if len(missing) == 0 {
		return nil
	}
	opclass := ""
	if tx.Engine == store.Postgres {
		if opclass = trgmOpclass(ctx, tx); opclass == "" {
			return nil
		}
	}
	byID := map[int64]*Table{}
	for _, t := range cat.Tables {
		byID[t.ID] = t
	}
	cols := map[int64]map[string]bool{}
	for _, f := range missing {
		// A field whose column is missing from the database (drift the
		// configuration check reports, GET /config/validation) gets its
		// index when the column is back; meanwhile other changes proceed.
		t := byID[f.TableID]
		if cols[t.ID] == nil {
			pc, err := physicalColumns(ctx, tx, t.Name)
			if err != nil {
				return err
			}
			cols[t.ID] = map[string]bool{}
			for _, c := range pc {
				cols[t.ID][c.Name] = true
			}
		}
		if !cols[t.ID][f.Name] {
			continue
		}
		if err := createSearchIndex(ctx, tx, t, f, opclass); err != nil {
			return err
		}
	}
	return nil
}

// SyncSearchIndexes builds the search indexes an application's catalog
// asks for and drops the others, when they differ (an application created
// before search indexes, or one whose PostgreSQL lacked pg_trgm). It runs
// as a catalog change only when there is something to do.
func SyncSearchIndexes(ctx context.Context, db *store.DB) error {
	cat, err := Load(ctx, db)
	if err != nil {
		return err
	}
	have, err := physicalSearchIndexes(ctx, db)
	if err != nil {
		return err
	}
	missing, extra := searchPlan(cat, have)
	if len(missing) == 0 && len(extra) == 0 {
		return nil
	}
	if db.Engine == store.Postgres && len(extra) == 0 {
		var n int
		if db.QueryRow(ctx, `SELECT count(*) FROM pg_catalog.pg_extension WHERE extname = 'pg_trgm'`).Scan(&n) == nil && n == 0 {
			var avail int
			_ = db.QueryRow(ctx, `SELECT count(*) FROM pg_catalog.pg_available_extensions WHERE name = 'pg_trgm'`).Scan(&avail)
			if avail == 0 {
				return nil // nothing can be built: no change, no version bump
			}
		}
	}
	return change(ctx, db, func(*store.DB, *state) error { return nil })
}

// searchIndexDifferences lists t's search indexes that are missing or
// extra (validation): missing ones only where the engine can build them.
func searchIndexDifferences(ctx context.Context, db *store.DB, t *Table) ([]Difference, error) {
	have, err := physicalSearchIndexes(ctx, db)
	if err != nil {
		return nil, err
	}
	canBuild := true
	if db.Engine == store.Postgres {
		var n int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM pg_catalog.pg_extension WHERE extname = 'pg_trgm'`).Scan(&n); err != nil {
			return nil, fmt.Errorf("pg_trgm: %w", err)
		}
		canBuild = n > 0
	}
	var out []Difference
	ids := map[string]bool{}
	for _, f := range t.Fields {
		n := SearchIndexName(f)
		ids[n] = true
		if t.WantsSearchIndex(f) && !have[n] && canBuild {
			out = append(out, Difference{Kind: "search_index_missing", Column: f.Name, Index: n})
		}
		if !t.WantsSearchIndex(f) && have[n] {
			out = append(out, Difference{Kind: "search_index_extra", Column: f.Name, Index: n})
		}
	}
	prefix := "sys_search_" + strconv.FormatInt(t.ID, 10) + "_"
	for n := range have {
		if !ids[n] && len(n) > len(prefix) && n[:len(prefix)] == prefix {
			out = append(out, Difference{Kind: "search_index_extra", Index: n})
		}
	}
	return out, nil
}
