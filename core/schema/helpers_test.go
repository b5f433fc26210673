package schema_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// physicalColumns lists the real columns of a table, sorted.
func physicalColumns(t *testing.T, db *store.DB, table string) []string {
	t.Helper()
	ctx := context.Background()
	var q string
	args := []any{table}
	if db.Engine == store.Postgres {
		q = `SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ?`
		args = []any{db.Schema(), table}
	} else {
		q = `SELECT name FROM pragma_table_info(?)`
	}
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// queryStrings runs q and returns every row as "a|b|c" (NULL as ∅).
func queryStrings(t *testing.T, db *store.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(cols))
		for i, v := range vals {
			parts[i] = "∅"
			if v.Valid {
				parts[i] = v.String
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// snapshot is everything a configuration change may touch, as text: the
// catalog with its version, relations, user indexes, table privileges, and
// the engine's own description of every table, index and constraint.
func snapshot(t *testing.T, db *store.DB) string {
	t.Helper()
	ctx := context.Background()
	cat, err := schema.Load(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	rels, err := schema.ListRelations(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]any{
		"catalog":    cat,
		"relations":  rels,
		"indexes":    queryStrings(t, db, `SELECT id, table_name, name, columns, is_unique FROM `+db.Sys("indexes")+` ORDER BY id`),
		"privileges": queryStrings(t, db, `SELECT user_id, table_name, privilege FROM `+db.Sys("table_privileges")+` ORDER BY user_id, table_name`),
	}
	if db.Engine == store.Postgres {
		parts["columns"] = queryStrings(t, db, `SELECT table_name, column_name, data_type FROM information_schema.columns
			WHERE table_schema = ? ORDER BY table_name, ordinal_position`, db.Schema())
		parts["pg_indexes"] = queryStrings(t, db, `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = ? ORDER BY indexname`, db.Schema())
		parts["constraints"] = queryStrings(t, db, `SELECT c.conname, pg_get_constraintdef(c.oid) FROM pg_constraint c
			JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = ? ORDER BY c.conname`, db.Schema())
	} else {
		parts["sqlite_master"] = queryStrings(t, db, `SELECT type, name, tbl_name, sql FROM sqlite_master
			WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`)
	}
	b, err := json.MarshalIndent(parts, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// expectRefused runs op, which must fail with code, and checks that the
// catalog and the physical schema are exactly as before.
func expectRefused(t *testing.T, db *store.DB, name, code string, op func() error) {
	t.Helper()
	before := snapshot(t, db)
	err := op()
	if got := errs.CodeOf(err); got != code {
		t.Errorf("%s: error %v, want %s", name, err, code)
	}
	if after := snapshot(t, db); after != before {
		t.Errorf("%s: refused change left a trace:\n%s", name, diffLines(before, after))
	}
}

// diffLines shows the lines of b that are not in a and the reverse.
func diffLines(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	am, bm := in(a), in(b)
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if !bm[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if !am[l] {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// fixture is an app with a small archaeological catalog:
//
//	sites  (name text, code int unique, region text)
//	finds  (label text, site → sites lookup, site_ref int with a relation
//	        to sites, colour values from sites:name, weight text,
//	        pieces int, found_on date, complete boolean)
//	finds_radiocarbon, a plugin table of finds (lab text)
//	people (name text)
//
// with two sites, three finds and one radiocarbon row, and a writer
// holding a table privilege on finds.
type fixture struct {
	db      *store.DB
	now     time.Time
	siteRel *schema.Relation
	writer  *auth.User
}

func newFixture(t *testing.T, e store.Engine) *fixture {
	t.Helper()
	ctx := context.Background()
	a := testenv.NewApp(t, testenv.NewRegistry(t, e), "cat")
	fx := &fixture{db: a.DB, now: time.Now().UTC()}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(schema.CreateTable(ctx, fx.db, schema.TableDef{Name: "sites", Label: "Sites"}, fx.now))
	must(schema.AddField(ctx, fx.db, "sites", schema.FieldDef{Name: "name"}, fx.now))
	must(schema.AddField(ctx, fx.db, "sites", schema.FieldDef{Name: "code", DBType: "int", Unique: true}, fx.now))
	must(schema.AddField(ctx, fx.db, "sites", schema.FieldDef{Name: "region"}, fx.now))
	must(schema.CreateTable(ctx, fx.db, schema.TableDef{Name: "finds"}, fx.now))
	for _, f := range []schema.FieldDef{
		{Name: "label"},
		{Name: "site", Type: "select", IDFromTb: "sites"},
		{Name: "site_ref", DBType: "int"},
		{Name: "colour", Type: "combo_select", GetValuesFromTb: "sites:name"},
		{Name: "weight"},
		{Name: "pieces", DBType: "int"},
		{Name: "found_on", Type: "date"},
		{Name: "complete", Type: "boolean"},
	} {
		must(schema.AddField(ctx, fx.db, "finds", f, fx.now))
	}
	must(schema.CreateTable(ctx, fx.db, schema.TableDef{Name: "finds_radiocarbon", PluginOf: "finds"}, fx.now))
	must(schema.AddField(ctx, fx.db, "finds_radiocarbon", schema.FieldDef{Name: "lab"}, fx.now))
	must(schema.CreateTable(ctx, fx.db, schema.TableDef{Name: "people"}, fx.now))
	must(schema.AddField(ctx, fx.db, "people", schema.FieldDef{Name: "name"}, fx.now))
	rel, err := schema.AddRelation(ctx, fx.db, schema.RelationInput{FromTb: "finds", FromCol: "site_ref", ToTb: "sites", ToCol: "id"}, fx.now)
	if err != nil {
		t.Fatal(err)
	}
	fx.siteRel = rel
	fx.exec(t, `INSERT INTO `+fx.db.Qualify("sites")+` (id, name, code, region) VALUES (1, 'Alpha', 10, 'north'), (2, 'Beta', 20, NULL)`)
	fx.exec(t, `INSERT INTO `+fx.db.Qualify("finds")+` (id, label, site, site_ref, colour, weight, pieces, found_on, complete) VALUES
		(1, 'bowl', 1, 1, 'Alpha', '12', 3, '2020-05-01', true),
		(2, 'coin', 2, 2, NULL, ' 7 ', 1, NULL, false),
		(3, 'sherd', NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
	fx.exec(t, `INSERT INTO `+fx.db.Qualify("finds_radiocarbon")+` (id, id_link, lab) VALUES (1, 1, 'OxA-1')`)
	if e == store.Postgres {
		// Rows were inserted with explicit ids: move the sequences on.
		for _, tb := range []string{"sites", "finds", "finds_radiocarbon"} {
			fx.exec(t, `SELECT setval(pg_get_serial_sequence('`+fx.db.Schema()+`.`+tb+`', 'id'), 100)`)
		}
	}
	// Chronology is a plugin feature; density paths must end at a table
	// where it is active, so the fixture records it as active on both.
	for _, tb := range []string{"finds", "finds_radiocarbon"} {
		fx.exec(t, `INSERT INTO `+fx.db.Sys("table_features")+` (table_name, feature, plugin, active, changed_at) VALUES ('`+tb+`', 'chronology', 'chronology', true, CURRENT_TIMESTAMP)`)
	}
	fx.writer = testenv.NewUser(t, a, "Wes", "wes@example.org", auth.Writer)
	if _, err := auth.GrantTablePrivilege(ctx, fx.db, &auth.Actor{Privilege: auth.SuperAdmin}, fx.writer.ID, "finds", auth.Reader, nil, fx.now, nil); err != nil {
		t.Fatal(err)
	}
	return fx
}

func (fx *fixture) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := fx.db.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// catalog loads the current catalog.
func (fx *fixture) catalog(t *testing.T) *schema.Catalog {
	t.Helper()
	cat, err := schema.Load(context.Background(), fx.db)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// table returns a table of the current catalog, failing when absent.
func (fx *fixture) table(t *testing.T, name string) *schema.Table {
	t.Helper()
	tb, ok := fx.catalog(t).Table(name)
	if !ok {
		t.Fatalf("table %s missing from the catalog", name)
	}
	return tb
}

// field returns a field of the current catalog, failing when absent.
func (fx *fixture) field(t *testing.T, table, name string) *schema.Field {
	t.Helper()
	f, ok := fx.table(t, table).Field(name)
	if !ok {
		t.Fatalf("field %s.%s missing from the catalog", table, name)
	}
	return f
}

// values returns column col of table by id, as text.
func (fx *fixture) values(t *testing.T, table, col string) []string {
	t.Helper()
	q := `CAST(` + fx.db.Engine.Quote(col) + ` AS TEXT)`
	return queryStrings(t, fx.db, `SELECT "id", `+q+` FROM `+fx.db.Qualify(table)+` ORDER BY "id"`)
}

// consistent fails unless the physical tables match the catalog.
func (fx *fixture) consistent(t *testing.T, tables ...string) {
	t.Helper()
	for _, tb := range tables {
		diffs, err := schema.ValidateTable(context.Background(), fx.db, tb)
		if err != nil || len(diffs) != 0 {
			t.Errorf("table %s is not consistent with the catalog: %+v %v", tb, diffs, err)
		}
	}
}

// recordRefs stores a version snapshot and a stratigraphic relation of a
// record of table, and a manual link from it to a record of other: the
// system tables of the records layer that name user tables.
func (fx *fixture) recordRefs(t *testing.T, table, other string) {
	t.Helper()
	fx.exec(t, `INSERT INTO `+fx.db.Sys("versions")+` (tb, record_id, time, operation, content) VALUES (?, 1, ?, 'update', '{}')`, table, fx.now)
	fx.exec(t, `INSERT INTO `+fx.db.Sys("rs")+` (tb, first, second, relation, created_at) VALUES (?, 1, 2, 1, ?)`, table, fx.now)
	fx.exec(t, `INSERT INTO `+fx.db.Sys("manual_links")+` (tb_one, id_one, tb_two, id_two, created_at) VALUES (?, 1, ?, 1, ?)`, table, other, fx.now)
}

// recordRefTables lists the tables named by those rows: versions, rs, then
// each manual link as one|two.
func (fx *fixture) recordRefTables(t *testing.T) string {
	t.Helper()
	var out []string
	out = append(out, queryStrings(t, fx.db, `SELECT tb FROM `+fx.db.Sys("versions")+` ORDER BY id`)...)
	out = append(out, queryStrings(t, fx.db, `SELECT tb FROM `+fx.db.Sys("rs")+` ORDER BY id`)...)
	out = append(out, queryStrings(t, fx.db, `SELECT tb_one, tb_two FROM `+fx.db.Sys("manual_links")+` ORDER BY id`)...)
	return strings.Join(out, " ")
}

func ptr[T any](v T) *T { return &v }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// usedBy returns the used_by list of a refusal.
func usedBy(err error) []schema.Usage {
	e, ok := errs.As(err)
	if !ok {
		return nil
	}
	u, _ := e.Extra["used_by"].([]schema.Usage)
	return u
}

// usageKinds returns the sorted kinds of a used_by list.
func usageKinds(uses []schema.Usage) string {
	var k []string
	for _, u := range uses {
		k = append(k, u.Kind)
	}
	slices.Sort(k)
	return strings.Join(k, ",")
}
