package schema_test

import (
	"context"
	"slices"
	"testing"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestDeleteTableRefusedWhileInUse(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		if _, err := schema.PutTable(ctx, fx.db, "sites", schema.TableConfig{
			ChronoDensityPath: schema.Set([]string{"finds"}), Backlinks: schema.Set([]string{"finds:finds:site"}),
		}, fx.now); err != nil {
			t.Fatal(err)
		}
		// sites: a lookup (finds.site), a value source (finds.colour) and a
		// relation (finds.site_ref) point at it. finds: its plugin table,
		// the chronology path and the backlink of sites.
		for _, c := range []struct{ table, kinds string }{
			{"sites", "lookup,relation,values_from"},
			{"finds", "backlink,chrono_density_path,plugin_table"},
		} {
			var err error
			expectRefused(t, fx.db, "delete "+c.table, "table_in_use", func() error {
				_, err = schema.DeleteTable(ctx, fx.db, c.table, false, fx.now)
				return err
			})
			if got := usageKinds(usedBy(err)); got != c.kinds {
				t.Errorf("delete %s: used_by %s, want %s (%+v)", c.table, got, c.kinds, usedBy(err))
			}
		}
		expectRefused(t, fx.db, "unknown", "table_not_found", func() error {
			_, err := schema.DeleteTable(ctx, fx.db, "nowhere", true, fx.now)
			return err
		})
		// A table nothing refers to goes without cascade, with its
		// privileges and indexes.
		if _, err := schema.CreateIndex(ctx, fx.db, "people", schema.IndexInput{Columns: []string{"name"}}, fx.now); err != nil {
			t.Fatal(err)
		}
		del, err := schema.DeleteTable(ctx, fx.db, "people", false, fx.now)
		if err != nil || !slices.Equal(del.Dropped, []string{"people"}) || len(del.Removed) != 0 {
			t.Fatalf("delete people: %+v %v", del, err)
		}
		if _, ok := fx.catalog(t).Table("people"); ok || len(physicalColumns(t, fx.db, "people")) != 0 {
			t.Fatal("people survived")
		}
		if n := queryStrings(t, fx.db, `SELECT name FROM `+fx.db.Sys("indexes")); len(n) != 0 {
			t.Errorf("index rows left: %v", n)
		}
		// A plugin table alone can go; its parent keeps its rows.
		if del, err := schema.DeleteTable(ctx, fx.db, "finds_radiocarbon", false, fx.now); err != nil || !slices.Equal(del.Dropped, []string{"finds_radiocarbon"}) {
			t.Fatalf("delete the plugin table: %+v %v", del, err)
		}
		if got := fx.values(t, "finds", "label"); len(got) != 3 {
			t.Errorf("finds rows after its plugin table went: %v", got)
		}
		fx.consistent(t, "finds", "sites")
	})
}

func TestDeleteTableCascade(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		if _, err := schema.AddField(ctx, fx.db, "people", schema.FieldDef{Name: "fav", Type: "select", IDFromTb: "finds"}, fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.AddField(ctx, fx.db, "people", schema.FieldDef{Name: "rc", Type: "select", GetValuesFromTb: "finds_radiocarbon:lab"}, fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.PutTable(ctx, fx.db, "sites", schema.TableConfig{
			ChronoDensityPath: schema.Set([]string{"finds", "finds_radiocarbon"}),
			Backlinks:         schema.Set([]string{"finds:finds:site"}),
		}, fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.CreateIndex(ctx, fx.db, "finds", schema.IndexInput{Columns: []string{"label"}}, fx.now); err != nil {
			t.Fatal(err)
		}
		fx.exec(t, `INSERT INTO `+fx.db.Qualify("people")+` (name, fav, rc) VALUES ('Ann', 1, 'OxA-1')`)
		sitesBefore := fx.values(t, "sites", "name")
		fx.recordRefs(t, "finds", "sites")
		fx.recordRefs(t, "sites", "people")

		del, err := schema.DeleteTable(ctx, fx.db, "finds", true, fx.now)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(del.Dropped, []string{"finds_radiocarbon", "finds"}) {
			t.Errorf("dropped %v", del.Dropped)
		}
		if got := usageKinds(del.Removed); got != "backlink,chrono_density_path,chrono_density_path,lookup,plugin_table,values_from" {
			t.Errorf("removed %s: %+v", got, del.Removed)
		}
		cat := fx.catalog(t)
		for _, gone := range []string{"finds", "finds_radiocarbon"} {
			if _, ok := cat.Table(gone); ok || len(physicalColumns(t, fx.db, gone)) != 0 {
				t.Errorf("%s survived", gone)
			}
		}
		// The other tables keep their rows and columns; references are
		// cleared, the lookup field keeps its data.
		if got := fx.values(t, "sites", "name"); !slices.Equal(got, sitesBefore) {
			t.Errorf("sites rows %v, want %v", got, sitesBefore)
		}
		if got := fx.values(t, "people", "fav"); !slices.Equal(got, []string{"1|1"}) {
			t.Errorf("people.fav %v", got)
		}
		if f := fx.field(t, "people", "fav"); f.IDFromTb != "" {
			t.Errorf("lookup still names %q", f.IDFromTb)
		}
		if f := fx.field(t, "people", "rc"); f.GetValuesFromTb != "" {
			t.Errorf("value source still names %q", f.GetValuesFromTb)
		}
		sites := fx.table(t, "sites")
		if len(sites.ChronoDensityPath) != 0 || len(sites.Backlinks) != 0 {
			t.Errorf("sites settings %v %v", sites.ChronoDensityPath, sites.Backlinks)
		}
		rels, _ := schema.ListRelations(ctx, fx.db)
		if len(rels) != 0 {
			t.Errorf("relations left %+v", rels)
		}
		if n := queryStrings(t, fx.db, `SELECT table_name FROM `+fx.db.Sys("table_privileges")+` UNION ALL SELECT table_name FROM `+fx.db.Sys("indexes")); len(n) != 0 {
			t.Errorf("privilege or index rows left: %v", n)
		}
		if n := queryStrings(t, fx.db, `SELECT COUNT(*) FROM `+fx.db.Sys("fields")+` f WHERE NOT EXISTS (SELECT 1 FROM `+fx.db.Sys("tables")+` t WHERE t.id = f.table_id)`); n[0] != "0" {
			t.Errorf("orphan field rows: %v", n)
		}
		if got := fx.recordRefTables(t); got != "sites sites sites|people" {
			t.Errorf("record history, relations and links left %q", got)
		}
		fx.consistent(t, "sites", "people")
		// The name can be used again.
		if _, err := schema.CreateTable(ctx, fx.db, schema.TableDef{Name: "finds"}, fx.now); err != nil {
			t.Fatal(err)
		}
	})
}
