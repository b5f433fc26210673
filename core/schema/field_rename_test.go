package schema_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestRenameField(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		// sites.name is a value source (finds.colour), id_field, in the
		// preview and in an index; sites.code is a relation's to_col;
		// finds.site is a backlink's column; finds.site_ref a relation's
		// from_col.
		if _, err := schema.PutTable(ctx, fx.db, "sites", schema.TableConfig{IDField: schema.Set("name"),
			Preview: schema.Set([]string{"code", "name"}), Backlinks: schema.Set([]string{"finds:finds:site"})}, fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.CreateIndex(ctx, fx.db, "sites", schema.IndexInput{Columns: []string{"region", "name"}}, fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.AddField(ctx, fx.db, "people", schema.FieldDef{Name: "code_ref", DBType: "int"}, fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.AddRelation(ctx, fx.db, schema.RelationInput{FromTb: "people", FromCol: "code_ref", ToTb: "sites", ToCol: "code"}, fx.now); err != nil {
			t.Fatal(err)
		}
		names := fx.values(t, "sites", "name")
		renames := []struct{ table, from, to string }{
			{"sites", "name", "title"}, {"sites", "code", "number"}, {"finds", "site", "place"}, {"finds", "site_ref", "site_id"},
		}
		for _, r := range renames {
			f, err := schema.RenameField(ctx, fx.db, r.table, r.from, r.to, fx.now)
			if err != nil || f.Name != r.to {
				t.Fatalf("rename %s.%s: %+v %v", r.table, r.from, f, err)
			}
		}
		if got := fx.values(t, "sites", "title"); !slices.Equal(got, names) {
			t.Errorf("data after rename %v, want %v", got, names)
		}
		sites := fx.table(t, "sites")
		if sites.IDField != "title" || strings.Join(sites.Preview, ",") != "number,title" || strings.Join(sites.Backlinks, ",") != "finds:finds:place" {
			t.Errorf("sites settings %q %v %v", sites.IDField, sites.Preview, sites.Backlinks)
		}
		if f := fx.field(t, "finds", "colour"); f.GetValuesFromTb != "sites:title" {
			t.Errorf("value source %q", f.GetValuesFromTb)
		}
		idx, _ := schema.ListIndexes(ctx, fx.db, "sites")
		if len(idx) != 1 || strings.Join(idx[0].Columns, ",") != "region,title" {
			t.Errorf("index %+v", idx)
		}
		rels, _ := schema.ListRelations(ctx, fx.db)
		var got []string
		for _, r := range rels {
			got = append(got, r.FromTb+"."+r.FromCol+"→"+r.ToTb+"."+r.ToCol)
		}
		if strings.Join(got, " ") != "finds.site_id→sites.id people.code_ref→sites.number" {
			t.Errorf("relations %v", got)
		}
		fx.consistent(t, "sites", "finds", "people")
		if e == store.Postgres {
			if _, err := fx.db.Exec(ctx, `INSERT INTO `+fx.db.Qualify("people")+` (code_ref) VALUES (999)`); err == nil {
				t.Error("the relation to the renamed column is no longer enforced")
			}
		}

		cases := []struct{ name, table, field, to, code string }{
			{"unknown table", "nowhere", "title", "x", "table_not_found"},
			{"unknown field", "sites", "nothing", "x", "field_not_found"},
			{"empty", "sites", "title", "", "parameter_missing"},
			{"invalid", "sites", "title", "Bad Name", "invalid_field_name"},
			{"reserved", "sites", "title", "creator", "invalid_field_name"},
			{"system prefix", "sites", "title", "sys_x", "invalid_field_name"},
			{"taken", "sites", "title", "region", "fld_already_available"},
			{"itself", "sites", "title", "title", "fld_already_available"},
			{"plugin link", "finds_radiocarbon", "lab", "id_link", "invalid_field_name"},
		}
		for _, c := range cases {
			expectRefused(t, fx.db, c.name, c.code, func() error {
				_, err := schema.RenameField(ctx, fx.db, c.table, c.field, c.to, fx.now)
				return err
			})
		}
	})
}

func TestDeleteField(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		if _, err := schema.PutTable(ctx, fx.db, "sites", schema.TableConfig{IDField: schema.Set("region"),
			Preview: schema.Set([]string{"region", "name"}), Backlinks: schema.Set([]string{"finds:finds:site"})}, fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.CreateIndex(ctx, fx.db, "finds", schema.IndexInput{Columns: []string{"weight", "label"}}, fx.now); err != nil {
			t.Fatal(err)
		}
		cases := []struct{ table, field, kinds string }{
			{"sites", "name", "values_from"},  // finds.colour takes its values
			{"sites", "region", "id_field"},   // sites' id_field
			{"finds", "site_ref", "relation"}, // a relation starts there
			{"finds", "weight", "index"},      // a user index
			{"finds", "site", "backlink"},     // sites' backlink follows it
			{"sites", "code", ""},             // unique, but nothing refers to it
			{"finds_radiocarbon", "lab", ""},  // a plugin table's field
			{"people", "name", ""},            // plain
		}
		for _, c := range cases {
			if c.kinds == "" {
				continue
			}
			var err error
			expectRefused(t, fx.db, c.table+"."+c.field, "field_in_use", func() error {
				_, err = schema.DeleteField(ctx, fx.db, c.table, c.field, false, fx.now)
				return err
			})
			if got := usageKinds(usedBy(err)); got != c.kinds {
				t.Errorf("%s.%s used_by %s, want %s", c.table, c.field, got, c.kinds)
			}
		}
		expectRefused(t, fx.db, "unknown table", "table_not_found", func() error {
			_, err := schema.DeleteField(ctx, fx.db, "nowhere", "x", true, fx.now)
			return err
		})
		expectRefused(t, fx.db, "unknown field", "field_not_found", func() error {
			_, err := schema.DeleteField(ctx, fx.db, "sites", "nothing", true, fx.now)
			return err
		})
		// With cascade (or with nothing to cascade) every field goes; the
		// references go with it and the tables stay consistent.
		for _, c := range cases {
			removed, err := schema.DeleteField(ctx, fx.db, c.table, c.field, true, fx.now)
			if err != nil {
				t.Fatalf("delete %s.%s: %v", c.table, c.field, err)
			}
			if got := usageKinds(removed); got != c.kinds {
				t.Errorf("%s.%s removed %s, want %s", c.table, c.field, got, c.kinds)
			}
			if _, ok := fx.table(t, c.table).Field(c.field); ok || slices.Contains(physicalColumns(t, fx.db, c.table), c.field) {
				t.Errorf("%s.%s survived", c.table, c.field)
			}
		}
		sites := fx.table(t, "sites")
		if sites.IDField != "" || len(sites.Preview) != 0 || len(sites.Backlinks) != 0 {
			t.Errorf("sites settings %q %v %v", sites.IDField, sites.Preview, sites.Backlinks)
		}
		if f := fx.field(t, "finds", "colour"); f.GetValuesFromTb != "" {
			t.Errorf("value source %q", f.GetValuesFromTb)
		}
		if rels, _ := schema.ListRelations(ctx, fx.db); len(rels) != 0 {
			t.Errorf("relations %+v", rels)
		}
		if idx, _ := schema.ListIndexes(ctx, fx.db, "finds"); len(idx) != 0 {
			t.Errorf("indexes %+v", idx)
		}
		if got := fx.values(t, "finds", "label"); len(got) != 3 {
			t.Errorf("finds rows %v", got)
		}
		fx.consistent(t, "sites", "finds", "finds_radiocarbon", "people")
	})
}
