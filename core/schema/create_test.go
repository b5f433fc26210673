package schema_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestCreateTablesAndFields(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		a := testenv.NewApp(t, testenv.NewRegistry(t, e), "cat")
		db, now := a.DB, time.Now().UTC()
		cache := schema.NewCache()
		before, err := cache.Get(ctx, "cat", db)
		if err != nil || len(before.Tables) != 0 {
			t.Fatalf("fresh catalog: %v %v", before, err)
		}
		if _, err := schema.CreateTable(ctx, db, schema.TableDef{Name: "sites", Label: "Sites"}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.AddField(ctx, db, "sites", schema.FieldDef{Name: "name", Type: "text", Required: true}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.CreateTable(ctx, db, schema.TableDef{Name: "finds"}, now); err != nil {
			t.Fatal(err)
		}
		one := 1.0
		fields := []schema.FieldDef{
			{Name: "label", Type: "text", Unique: true},
			{Name: "description", Type: "long_text"},
			{Name: "notes", Type: "md"},
			{Name: "material", Type: "select", VocabularySet: "materials"},
			{Name: "colour", Type: "combo_select", GetValuesFromTb: "sites:name"},
			{Name: "tags", Type: "multi_select"},
			{Name: "found_on", Type: "date"},
			{Name: "complete", Type: "boolean"},
			{Name: "quality", Type: "slider", Min: &one},
			{Name: "site", Type: "select", IDFromTb: "sites"},
			{Name: "weight", Type: "text", DBType: "float"},
			{Name: "related", Type: "link_to"},
			{Name: "url", Type: "link_out", Disabled: true},
		}
		for _, f := range fields {
			if _, err := schema.AddField(ctx, db, "finds", f, now); err != nil {
				t.Fatalf("add %s: %v", f.Name, err)
			}
		}
		if _, err := schema.CreateTable(ctx, db, schema.TableDef{Name: "finds_radiocarbon", PluginOf: "finds"}, now); err != nil {
			t.Fatal(err)
		}

		cat, err := cache.Get(ctx, "cat", db)
		if err != nil {
			t.Fatal(err)
		}
		if cat.Version <= before.Version || len(cat.Tables) != 3 {
			t.Fatalf("catalog not reloaded: version %d, %d tables", cat.Version, len(cat.Tables))
		}
		finds, _ := cat.Table("finds")
		if len(finds.Fields) != len(fields) {
			t.Fatalf("finds has %d fields", len(finds.Fields))
		}
		for name, want := range map[string]schema.DBType{"site": schema.DBInt, "complete": schema.DBBool, "found_on": schema.DBDate, "weight": schema.DBFloat, "quality": schema.DBInt, "label": schema.DBText} {
			if f, _ := finds.Field(name); f.DBType != want {
				t.Errorf("%s stored as %s, want %s", name, f.DBType, want)
			}
		}
		if url, _ := finds.Field("url"); !url.Readonly {
			t.Error("disabled:true must read as readonly")
		}
		rc, _ := cat.Table("finds_radiocarbon")
		if !rc.IsPlugin || rc.PluginOf != "finds" || len(cat.PluginTables("finds")) != 1 {
			t.Fatalf("plugin table %+v", rc)
		}
		if got := strings.Join(physicalColumns(t, db, "finds_radiocarbon"), ","); got != "id,id_link" {
			t.Errorf("plugin table columns %s", got)
		}
		wantCols := []string{"creator", "id"}
		for _, f := range fields {
			wantCols = append(wantCols, f.Name)
		}
		sort.Strings(wantCols)
		if got := physicalColumns(t, db, "finds"); strings.Join(got, ",") != strings.Join(wantCols, ",") {
			t.Errorf("finds columns %v, want %v", got, wantCols)
		}
		// Unchanged catalog: the cached copy is returned.
		again, _ := cache.Get(ctx, "cat", db)
		if again != cat {
			t.Error("unchanged catalog was reloaded")
		}
	})
}

func TestRefusedDefinitionsLeaveNoTrace(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		a := testenv.NewApp(t, testenv.NewRegistry(t, e), "cat")
		db, now := a.DB, time.Now().UTC()
		if _, err := schema.CreateTable(ctx, db, schema.TableDef{Name: "units"}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, `CREATE TABLE `+db.Qualify("stray")+` (id integer)`); err != nil {
			t.Fatal(err)
		}
		tables := []struct {
			def  schema.TableDef
			code string
		}{
			{schema.TableDef{Name: ""}, "parameter_missing"},
			{schema.TableDef{Name: "sys_users"}, "invalid_table_name"},
			{schema.TableDef{Name: "Units"}, "invalid_table_name"},
			{schema.TableDef{Name: `x"; drop table units; --`}, "invalid_table_name"},
			{schema.TableDef{Name: "units"}, "table_already_exists"},
			{schema.TableDef{Name: "stray"}, "table_already_exists"},
			{schema.TableDef{Name: "orphan", PluginOf: "nowhere"}, "invalid_plugin_parent"},
		}
		for _, c := range tables {
			if _, err := schema.CreateTable(ctx, db, c.def, now); errs.CodeOf(err) != c.code {
				t.Errorf("CreateTable(%+v) = %v, want %s", c.def, err, c.code)
			}
		}
		fields := []struct {
			def  schema.FieldDef
			code string
		}{
			{schema.FieldDef{Name: "id"}, "invalid_field_name"},
			{schema.FieldDef{Name: "creator"}, "invalid_field_name"},
			{schema.FieldDef{Name: "Bad Name"}, "invalid_field_name"},
			{schema.FieldDef{Name: "x", Type: "blob"}, "invalid_field_type"},
			{schema.FieldDef{Name: "x", Type: "text", VocabularySet: "v"}, "invalid_field_parameter"},
			{schema.FieldDef{Name: "x", Type: "date", IDFromTb: "units"}, "invalid_field_parameter"},
			{schema.FieldDef{Name: "x", Type: "select", IDFromTb: "nowhere"}, "invalid_field_parameter"},
			{schema.FieldDef{Name: "x", Type: "select", IDFromTb: "units", DBType: "text"}, "invalid_field_parameter"},
			{schema.FieldDef{Name: "x", Type: "select", GetValuesFromTb: "units:nothing"}, "invalid_field_parameter"},
			{schema.FieldDef{Name: "x", DBType: "blob"}, "invalid_db_type"},
			{schema.FieldDef{Name: "x", Pattern: "("}, "invalid_field_parameter"},
		}
		for _, c := range fields {
			if _, err := schema.AddField(ctx, db, "units", c.def, now); errs.CodeOf(err) != c.code {
				t.Errorf("AddField(%+v) = %v, want %s", c.def, err, c.code)
			}
		}
		if _, err := schema.AddField(ctx, db, "nowhere", schema.FieldDef{Name: "x"}, now); errs.CodeOf(err) != "table_not_found" {
			t.Errorf("field on a missing table: %v", err)
		}
		cat, _ := schema.Load(ctx, db)
		units, _ := cat.Table("units")
		if len(cat.Tables) != 1 || len(units.Fields) != 0 {
			t.Fatalf("refused definitions left %d tables, %d fields", len(cat.Tables), len(units.Fields))
		}
		if got := strings.Join(physicalColumns(t, db, "units"), ","); got != "creator,id" {
			t.Fatalf("units columns %s", got)
		}
	})
}
