package filter_test

import (
	"context"
	"fmt"
	"github.com/strata-archaeo/strata/core/errs"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// fixture is a small archaeological catalog with awkward data, on one
// engine:
//
//	sites(name, region)
//	finds(label, description, notes, material, weight float, count int,
//	      found_on date, complete bool, site → sites)
//	finds_dates   plugin of finds (period, year int)
//	biblio(title)  backlink "finds:finds_biblio:ref"
//	finds_biblio  plugin of finds (ref → biblio, pages)
//	museums(name)  backlink "finds:loans:museum"
//	loans(find → finds, museum → museums)  a normal table
type fixture struct {
	db  *store.DB
	cat *schema.Catalog
}

type row map[string]any

var fixtureData = []struct {
	table string
	rows  []row
}{
	{"sites", []row{
		{"name": "Pompeii", "region": "Campania"},
		{"name": "Herculaneum", "region": "Campania"},
		{"name": "Ostia", "region": "Lazio"},
		{"name": nil, "region": nil},
	}},
	{"finds", []row{
		/* 1 */ {"label": "Amphora Ä-type", "description": "Rim sherd", "material": "pottery", "weight": 12.5, "count": 3, "found_on": "2020-05-01", "complete": true, "site": 1},
		/* 2 */ {"label": "amphora ä-type", "description": nil, "material": "Pottery", "weight": nil, "count": nil, "found_on": nil, "complete": nil, "site": 2},
		/* 3 */ {"label": "", "description": "", "material": nil, "weight": 0.0, "count": 0, "found_on": "2019-12-31", "complete": false, "site": nil},
		/* 4 */ {"label": nil, "description": "100% pure", "material": "glass", "weight": 7.25, "count": 10, "found_on": "2021-01-15", "complete": false, "site": 1},
		/* 5 */ {"label": "snake_case", "description": `back\slash`, "material": "metal", "weight": 1.0, "count": 5, "found_on": "2020-05-01", "complete": true, "site": 3},
		/* 6 */ {"label": "Straße", "description": "STRASSE", "material": "stone", "weight": 2.5, "count": 12, "found_on": "2020-06-30", "complete": nil, "site": 2},
		/* 7 */ {"label": "STRAẞE", "description": "Σίσυφος", "material": "bone", "weight": 3.0, "count": 7, "found_on": "1999-01-01", "complete": true, "site": 4},
		/* 8 */ {"label": "σίσυφος", "description": "ЖУК", "material": nil, "weight": nil, "count": -2, "found_on": nil, "complete": false, "site": nil},
		/* 9 */ {"label": "жук", "description": "a%b", "material": "pottery", "weight": 4.0, "count": 1, "found_on": "2020-05-02", "complete": true, "site": 3},
		/* 10 */ {"label": "a%b", "description": "axb", "material": "", "weight": 5.0, "count": 100, "found_on": "2000-02-29", "complete": false, "site": 1},
		/* 11 */ {"label": "a_b", "description": "x_y", "material": "glass", "weight": 6.0, "count": 20, "found_on": "2010-10-10", "complete": true, "site": nil},
		/* 12 */ {"label": `a\b`, "description": nil, "material": "metal", "weight": 6.0, "count": 21, "found_on": "2011-11-11", "complete": nil, "site": 2},
	}},
	{"finds_dates", []row{
		{"id_link": 1, "period": "Roman", "year": -50},
		{"id_link": 1, "period": "Late Roman", "year": 300},
		{"id_link": 2, "period": "Greek", "year": -400},
		{"id_link": 5, "period": nil, "year": nil},
		{"id_link": 9, "period": "roman", "year": 10},
	}},
	{"biblio", []row{{"title": "Smith 1990"}, {"title": "Rossi 2001"}, {"title": "Unused"}}},
	{"finds_biblio", []row{
		{"id_link": 1, "ref": 1, "pages": "12"},
		{"id_link": 2, "ref": 1, "pages": "13-15"},
		{"id_link": 5, "ref": 2, "pages": nil},
		{"id_link": 7, "ref": 2, "pages": "7"},
	}},
	{"museums", []row{{"name": "Naples"}, {"name": "Rome"}, {"name": "Empty"}}},
	{"loans", []row{
		{"find": 1, "museum": 1},
		{"find": 6, "museum": 1},
		{"find": 9, "museum": 2},
		{"find": nil, "museum": 2},
	}},
}

func newFixture(t testing.TB, e store.Engine) *fixture {
	t.Helper()
	return newFixtureWith(t, e, false)
}

// indexedFields are the text fields newFixtureWith gives a search index
// when asked: the first ones before the rows are written (kept by the
// database's triggers or index), the others after (built from the rows).
var indexedFields = [][2]string{{"finds", "label"}, {"sites", "name"}, {"finds", "description"}, {"finds", "notes"},
	{"finds", "material"}, {"sites", "region"}, {"finds_dates", "period"}, {"biblio", "title"}, {"finds_biblio", "pages"}, {"museums", "name"}}

// newFixtureWith is newFixture, with search indexes on the text fields
// when indexed is true.
func newFixtureWith(t testing.TB, e store.Engine, indexed bool) *fixture {
	t.Helper()
	ctx := context.Background()
	db := testenv.NewApp(t, testenv.NewRegistry(t, e), "flt").DB
	now := time.Now().UTC()
	mustTable := func(def schema.TableDef) {
		if _, err := schema.CreateTable(ctx, db, def, now); err != nil {
			t.Fatalf("create %s: %v", def.Name, err)
		}
	}
	mustField := func(table string, def schema.FieldDef) {
		if indexed && slices.Contains(indexedFields[:2], [2]string{table, def.Name}) {
			def.SearchIndex = &indexed
		}
		if _, err := schema.AddField(ctx, db, table, def, now); err != nil {
			t.Fatalf("add %s.%s: %v", table, def.Name, err)
		}
	}
	mustTable(schema.TableDef{Name: "sites"})
	mustField("sites", schema.FieldDef{Name: "name", Type: "text"})
	mustField("sites", schema.FieldDef{Name: "region", Type: "select"})
	mustTable(schema.TableDef{Name: "finds"})
	for _, f := range []schema.FieldDef{
		{Name: "label", Type: "text"},
		{Name: "description", Type: "long_text"},
		{Name: "notes", Type: "md"},
		{Name: "material", Type: "select"},
		{Name: "weight", Type: "text", DBType: "float"},
		{Name: "count", Type: "slider"},
		{Name: "found_on", Type: "date"},
		{Name: "complete", Type: "boolean"},
		{Name: "site", Type: "select", IDFromTb: "sites"},
	} {
		mustField("finds", f)
	}
	mustTable(schema.TableDef{Name: "finds_dates", PluginOf: "finds"})
	mustField("finds_dates", schema.FieldDef{Name: "period", Type: "text"})
	mustField("finds_dates", schema.FieldDef{Name: "year", Type: "slider"})
	mustTable(schema.TableDef{Name: "biblio"})
	mustField("biblio", schema.FieldDef{Name: "title", Type: "text"})
	mustTable(schema.TableDef{Name: "finds_biblio", PluginOf: "finds"})
	mustField("finds_biblio", schema.FieldDef{Name: "ref", Type: "select", IDFromTb: "biblio"})
	mustField("finds_biblio", schema.FieldDef{Name: "pages", Type: "text"})
	mustTable(schema.TableDef{Name: "museums"})
	mustField("museums", schema.FieldDef{Name: "name", Type: "text"})
	mustTable(schema.TableDef{Name: "loans"})
	mustField("loans", schema.FieldDef{Name: "find", Type: "select", IDFromTb: "finds"})
	mustField("loans", schema.FieldDef{Name: "museum", Type: "select", IDFromTb: "museums"})

	load := func() *schema.Catalog {
		cat, err := schema.Load(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		// Backlinks are table configuration; set on the loaded catalog.
		biblio, _ := cat.Table("biblio")
		biblio.Backlinks = []string{"finds:finds_biblio:ref"}
		museums, _ := cat.Table("museums")
		museums.Backlinks = []string{"finds:loans:museum", "nowhere:bad"}
		return cat
	}

	fx := &fixture{db: db, cat: load()}
	for _, tb := range fixtureData {
		for i, r := range tb.rows {
			fx.insert(t, tb.table, int64(i+1), r)
		}
	}
	if indexed {
		for _, tf := range indexedFields[2:] {
			if _, err := schema.PutField(ctx, db, tf[0], tf[1], schema.FieldUpdate{SearchIndex: schema.Set(&indexed)}, now); err != nil {
				t.Fatalf("search index on %s.%s: %v", tf[0], tf[1], err)
			}
		}
		fx.cat = load()
		for _, tf := range indexedFields {
			tb, _ := fx.cat.Table(tf[0])
			if f, _ := tb.Field(tf[1]); !f.SearchIndexed {
				t.Fatalf("%s.%s has no search index", tf[0], tf[1])
			}
		}
	}
	return fx
}

func (fx *fixture) insert(t testing.TB, table string, id int64, r row) {
	t.Helper()
	tb, _ := fx.cat.Table(table)
	cols := []string{fx.db.Engine.Quote("id")}
	marks := []string{"?"}
	args := []any{id}
	names := make([]string, 0, len(r))
	for k := range r {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := r[k]
		mark := "?"
		if f, ok := tb.Field(k); ok {
			switch {
			case f.DBType == schema.DBBool && fx.db.Engine == store.SQLite && v != nil:
				v = map[bool]int{false: 0, true: 1}[v.(bool)]
			case f.DBType == schema.DBDate && fx.db.Engine == store.Postgres:
				mark = "CAST(? AS date)"
			}
		}
		cols = append(cols, fx.db.Engine.Quote(k))
		marks = append(marks, mark)
		args = append(args, v)
	}
	q := `INSERT INTO ` + fx.db.Qualify(table) + ` (` + strings.Join(cols, ", ") + `) VALUES (` + strings.Join(marks, ", ") + `)`
	if _, err := fx.db.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("insert into %s: %v", table, err)
	}
}

// ids runs the rendered filter on table and returns the matching ids.
func (fx *fixture) ids(t testing.TB, table string, n filter.Node, opt filter.Options) ([]int64, error) {
	t.Helper()
	where, args, err := filter.RenderWith(context.Background(), fx.db, fx.cat, table, n, opt)
	if err != nil {
		return nil, err
	}
	if err := checkSQL(fx.db, fx.cat, where, args); err != nil {
		t.Fatal(err)
	}
	from := fx.db.Qualify(table)
	ref := from
	if opt.RootAlias != "" {
		ref = fx.db.Engine.Quote(opt.RootAlias)
		from += " AS " + ref
	}
	q := `SELECT ` + ref + `."id" FROM ` + from + ` WHERE ` + where + ` ORDER BY 1`
	rows, err := fx.db.Query(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("query failed: %v\n%s\nargs %v", err, q, args)
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("query failed: %v\n%s", err, q)
	}
	return out, nil
}

// except returns 1..n without the given ids.
func except(n int, drop ...int64) []int64 {
	out := []int64{}
	for i := int64(1); i <= int64(n); i++ {
		if !slices.Contains(drop, i) {
			out = append(out, i)
		}
	}
	return out
}

func idsString(ids []int64) string { return fmt.Sprint(ids) }

func parseQuery(s string) (map[string][]string, error) { return url.ParseQuery(s) }

func errsAs(err error) (*errs.Error, bool) { return errs.As(err) }

// rawWhere runs a trusted WHERE clause as it is, as an oracle for subsets.
func (fx *fixture) rawWhere(t testing.TB, where string) []int64 {
	t.Helper()
	rows, err := fx.db.Query(context.Background(), `SELECT id FROM `+fx.db.Qualify("finds")+` WHERE `+where+` ORDER BY 1`)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}
