package schema_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestRenameTable(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		// References to finds from everywhere the catalog keeps one.
		if _, err := schema.AddField(ctx, fx.db, "people", schema.FieldDef{Name: "fav", Type: "select", IDFromTb: "finds"}, fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.AddField(ctx, fx.db, "people", schema.FieldDef{Name: "fav_label", Type: "select", GetValuesFromTb: "finds:label"}, fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.AddField(ctx, fx.db, "people", schema.FieldDef{Name: "rc_lab", Type: "select", GetValuesFromTb: "finds_radiocarbon:lab"}, fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.CreateIndex(ctx, fx.db, "finds", schema.IndexInput{Columns: []string{"label", "pieces"}}, fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.PutTable(ctx, fx.db, "sites", schema.TableConfig{
			ChronoDensityPath: schema.Set([]string{"finds", "finds_radiocarbon"}),
			Backlinks:         schema.Set([]string{"finds:finds:site"}),
		}, fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.PutTable(ctx, fx.db, "finds", schema.TableConfig{Backlinks: schema.Set([]string{"people:people:fav"})}, fx.now); err != nil {
			t.Fatal(err)
		}
		before := fx.values(t, "finds", "label")
		fx.recordRefs(t, "finds", "sites")

		renames, err := schema.RenameTable(ctx, fx.db, "finds", "objects", fx.now)
		if err != nil {
			t.Fatal(err)
		}
		want := []schema.TableRename{{From: "finds", To: "objects"}, {From: "finds_radiocarbon", To: "objects_radiocarbon"}}
		if !slices.Equal(renames, want) {
			t.Fatalf("renames %v, want %v", renames, want)
		}
		cat := fx.catalog(t)
		if _, ok := cat.Table("finds"); ok {
			t.Fatal("the old name is still in the catalog")
		}
		objects := fx.table(t, "objects")
		if len(objects.Fields) != 8 || strings.Join(objects.Backlinks, ",") != "people:people:fav" {
			t.Errorf("renamed table lost its settings: %+v", objects)
		}
		rc := fx.table(t, "objects_radiocarbon")
		if !rc.IsPlugin || rc.PluginOf != "objects" {
			t.Errorf("plugin table %+v", rc)
		}
		if f := fx.field(t, "people", "fav"); f.IDFromTb != "objects" {
			t.Errorf("lookup still names %q", f.IDFromTb)
		}
		if f := fx.field(t, "people", "fav_label"); f.GetValuesFromTb != "objects:label" {
			t.Errorf("value source %q", f.GetValuesFromTb)
		}
		if f := fx.field(t, "people", "rc_lab"); f.GetValuesFromTb != "objects_radiocarbon:lab" {
			t.Errorf("value source of the plugin table %q", f.GetValuesFromTb)
		}
		sites := fx.table(t, "sites")
		if strings.Join(sites.ChronoDensityPath, ",") != "objects,objects_radiocarbon" || strings.Join(sites.Backlinks, ",") != "objects:objects:site" {
			t.Errorf("sites settings %v %v", sites.ChronoDensityPath, sites.Backlinks)
		}
		rels, _ := schema.ListRelations(ctx, fx.db)
		if len(rels) != 1 || rels[0].FromTb != "objects" || rels[0].ToTb != "sites" {
			t.Errorf("relations %+v", rels)
		}
		idx, _ := schema.ListIndexes(ctx, fx.db, "objects")
		if len(idx) != 1 || idx[0].Table != "objects" {
			t.Errorf("indexes %+v", idx)
		}
		privs := queryStrings(t, fx.db, `SELECT table_name FROM `+fx.db.Sys("table_privileges"))
		if !slices.Equal(privs, []string{"objects"}) {
			t.Errorf("table privileges name %v", privs)
		}
		if got := fx.recordRefTables(t); got != "objects objects objects|sites" {
			t.Errorf("record history, relations and links name %q", got)
		}
		if got := fx.values(t, "objects", "label"); !slices.Equal(got, before) {
			t.Errorf("data after rename %v, want %v", got, before)
		}
		if got := fx.values(t, "objects_radiocarbon", "id_link"); !slices.Equal(got, []string{"1|1"}) {
			t.Errorf("plugin rows after rename %v", got)
		}
		fx.consistent(t, "objects", "objects_radiocarbon", "sites", "people")
		// The plugin link still points at the renamed parent: deleting a
		// parent row takes its plugin rows along.
		fx.exec(t, `DELETE FROM `+fx.db.Qualify("objects")+` WHERE id = 1`)
		if got := fx.values(t, "objects_radiocarbon", "id_link"); len(got) != 0 {
			t.Errorf("plugin rows of a deleted parent survived: %v", got)
		}
		if e == store.Postgres {
			// The relation's constraint followed the table.
			if _, err := fx.db.Exec(ctx, `INSERT INTO `+fx.db.Qualify("objects")+` (site_ref) VALUES (99)`); err == nil {
				t.Error("the relation is no longer enforced after the rename")
			}
		}
		// The old name is free again, on both engines (PostgreSQL keeps
		// the old sequence's name; creating a table must still work).
		if _, err := schema.CreateTable(ctx, fx.db, schema.TableDef{Name: "finds"}, fx.now); err != nil {
			t.Fatal(err)
		}
		fx.exec(t, `INSERT INTO `+fx.db.Qualify("finds")+` (creator) VALUES (NULL)`)
		fx.exec(t, `INSERT INTO `+fx.db.Qualify("objects")+` (label) VALUES ('new')`)

		long := strings.Repeat("x", 62)
		cases := []struct {
			name, table, to, code string
		}{
			{"unknown table", "nowhere", "other", "table_not_found"},
			{"empty name", "objects", " ", "parameter_missing"},
			{"invalid name", "objects", "Bad Name", "invalid_table_name"},
			{"system prefix", "objects", "sys_objects", "invalid_table_name"},
			{"injection", "objects", `x"; DROP TABLE sites; --`, "invalid_table_name"},
			{"taken", "objects", "sites", "table_already_exists"},
			{"itself", "objects", "objects", "table_already_exists"},
			{"plugin table name taken", "objects", "folk", "table_already_exists"},
			{"plugin table name too long", "objects", long, "invalid_table_name"},
		}
		if _, err := fx.db.Exec(ctx, `CREATE TABLE `+fx.db.Qualify("stray")+` (id integer)`); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct{ name, table, to, code string }{"stray physical table", "sites", "stray", "table_already_exists"})
		// folk_radiocarbon would collide with the plugin table's new name.
		if _, err := schema.CreateTable(ctx, fx.db, schema.TableDef{Name: "folk_radiocarbon"}, fx.now); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			expectRefused(t, fx.db, c.name, c.code, func() error {
				_, err := schema.RenameTable(ctx, fx.db, c.table, c.to, fx.now)
				return err
			})
		}
	})
}

// Concurrent changes are serialised (SQLite: BEGIN IMMEDIATE; PostgreSQL:
// the catalog lock): of several renames of one table exactly one wins and
// the others see the new catalog and answer table_not_found, never an
// internal error from a table that vanished under them.
func TestConcurrentRenamesAreSerialised(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		const n = 4
		codes := make(chan string, n)
		for i := range n {
			go func() {
				_, err := schema.RenameTable(ctx, fx.db, "people", "people_"+itoa(int64(i)), fx.now)
				if err == nil {
					codes <- "ok"
					return
				}
				codes <- errs.CodeOf(err)
			}()
		}
		got := map[string]int{}
		for range n {
			got[<-codes]++
		}
		if got["ok"] != 1 || got["table_not_found"] != n-1 {
			t.Fatalf("outcomes %v", got)
		}
		fx.consistent(t, "sites", "finds")
	})
}
