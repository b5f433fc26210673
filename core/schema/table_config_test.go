package schema_test

import (
	"context"
	"fmt"
	"github.com/strata-archaeo/strata/core/errs"
	"slices"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestPutTable(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		// A chain for the density path: sites ← finds (relation) ←
		// finds_radiocarbon (plugin); people reach sites through a lookup.
		if _, err := schema.AddField(ctx, fx.db, "people", schema.FieldDef{Name: "home", Type: "select", IDFromTb: "sites"}, fx.now); err != nil {
			t.Fatal(err)
		}
		v0 := fx.catalog(t).Version
		got, err := schema.PutTable(ctx, fx.db, "sites", schema.TableConfig{
			Label: schema.Set("Excavation sites"), Order: schema.Position(7), IDField: schema.Set("code"),
			Preview: schema.Set([]string{"name", "code"}), RS: schema.RSOn(true), Geodata: schema.Set(true),
			RefMgr:            schema.Set(true),
			ChronoDensityPath: schema.Set([]string{"finds", "finds_radiocarbon"}),
			Backlinks:         schema.Set([]string{"people:people:home", "finds:finds:site_ref", "finds:finds:site"}),
		}, fx.now)
		if err != nil {
			t.Fatal(err)
		}
		sites := fx.table(t, "sites")
		if sites.Label != "Excavation sites" || sites.Sort != 7 || sites.IDField != "code" || !sites.RS || !sites.Geodata || !sites.RefMgr ||
			strings.Join(sites.Preview, ",") != "name,code" || strings.Join(sites.ChronoDensityPath, ",") != "finds,finds_radiocarbon" ||
			len(sites.Backlinks) != 3 || got.Label != sites.Label {
			t.Fatalf("settings not stored: %+v", sites)
		}
		if fx.catalog(t).Version <= v0 {
			t.Error("the catalog version did not move")
		}
		// Keys not sent stay; an empty label falls back to the name; null
		// clears a list.
		if _, err := schema.PutTable(ctx, fx.db, "sites", schema.TableConfig{Label: schema.Set(""), Backlinks: schema.Set[[]string](nil), RS: schema.RSOn(false)}, fx.now); err != nil {
			t.Fatal(err)
		}
		sites = fx.table(t, "sites")
		if sites.Label != "sites" || sites.IDField != "code" || sites.RS || len(sites.Backlinks) != 0 || len(sites.ChronoDensityPath) != 2 {
			t.Fatalf("partial update: %+v", sites)
		}

		nine := []string{"finds", "finds_radiocarbon", "a", "b", "c", "d", "e", "f", "g"}
		cases := []struct {
			name, table, code string
			in                schema.TableConfig
		}{
			{"unknown table", "nowhere", "table_not_found", schema.TableConfig{Label: schema.Set("x")}},
			{"id_field not a field", "sites", "invalid_table_config", schema.TableConfig{IDField: schema.Set("nothing")}},
			{"id_field a system column", "sites", "invalid_table_config", schema.TableConfig{IDField: schema.Set("creator")}},
			{"preview unknown field", "sites", "invalid_table_config", schema.TableConfig{Preview: schema.Set([]string{"name", "nothing"})}},
			{"preview twice", "sites", "invalid_table_config", schema.TableConfig{Preview: schema.Set([]string{"name", "name"})}},
			{"chrono path with the root", "sites", "invalid_chrono_density_path", schema.TableConfig{ChronoDensityPath: schema.Set([]string{"sites", "finds"})}},
			{"chrono path unknown table", "sites", "invalid_chrono_density_path", schema.TableConfig{ChronoDensityPath: schema.Set([]string{"nowhere"})}},
			{"chrono path not a child", "sites", "invalid_chrono_density_path", schema.TableConfig{ChronoDensityPath: schema.Set([]string{"finds", "people"})}},
			{"chrono path skips a level", "sites", "invalid_chrono_density_path", schema.TableConfig{ChronoDensityPath: schema.Set([]string{"finds_radiocarbon"})}},
			{"chrono path lookups are not relations", "sites", "invalid_chrono_density_path", schema.TableConfig{ChronoDensityPath: schema.Set([]string{"people"})}},
			{"chrono path too long", "sites", "invalid_chrono_density_path", schema.TableConfig{ChronoDensityPath: schema.Set(nine)}},
			{"backlink malformed", "sites", "invalid_table_config", schema.TableConfig{Backlinks: schema.Set([]string{"finds:site"})}},
			{"backlink unknown table", "sites", "invalid_table_config", schema.TableConfig{Backlinks: schema.Set([]string{"nowhere:finds:site"})}},
			{"backlink unknown via", "sites", "invalid_table_config", schema.TableConfig{Backlinks: schema.Set([]string{"finds:nowhere:site"})}},
			{"backlink unknown column", "sites", "invalid_table_config", schema.TableConfig{Backlinks: schema.Set([]string{"finds:finds:nothing"})}},
			{"backlink column not a reference", "sites", "invalid_table_config", schema.TableConfig{Backlinks: schema.Set([]string{"finds:finds:label"})}},
			{"backlink to another table", "people", "invalid_table_config", schema.TableConfig{Backlinks: schema.Set([]string{"finds:finds:site"})}},
			{"backlink twice", "sites", "invalid_table_config", schema.TableConfig{Backlinks: schema.Set([]string{"finds:finds:site", "finds:finds:site"})}},
			{"plugin table rs", "finds_radiocarbon", "invalid_table_config", schema.TableConfig{RS: schema.RSOn(true)}},
			{"plugin table geodata", "finds_radiocarbon", "invalid_table_config", schema.TableConfig{Geodata: schema.Set(true)}},
			{"plugin table backlinks", "finds_radiocarbon", "invalid_table_config", schema.TableConfig{Backlinks: schema.Set([]string{"finds:finds:site"})}},
		}
		for _, c := range cases {
			expectRefused(t, fx.db, c.name, c.code, func() error {
				_, err := schema.PutTable(ctx, fx.db, c.table, c.in, fx.now)
				return err
			})
		}
		// A plugin table takes a label, an id_field and a preview.
		if _, err := schema.PutTable(ctx, fx.db, "finds_radiocarbon", schema.TableConfig{Label: schema.Set("C14"), Preview: schema.Set([]string{"lab"}), RS: schema.RSOn(false)}, fx.now); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSortTablesAndFields(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		order := []string{"people", "finds_radiocarbon", "sites", "finds"}
		if err := schema.SortTables(ctx, fx.db, order, fx.now); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tb := range fx.catalog(t).Tables {
			got = append(got, tb.Name)
		}
		if !slices.Equal(got, order) {
			t.Fatalf("tables in order %v, want %v", got, order)
		}
		fields := []string{"complete", "found_on", "pieces", "weight", "colour", "site_ref", "site", "label"}
		if err := schema.SortFields(ctx, fx.db, "finds", fields, fx.now); err != nil {
			t.Fatal(err)
		}
		got = nil
		for _, f := range fx.table(t, "finds").Fields {
			got = append(got, f.Name)
		}
		if !slices.Equal(got, fields) {
			t.Fatalf("fields in order %v, want %v", got, fields)
		}
		for _, c := range []struct {
			name  string
			names []string
		}{
			{"missing", []string{"people", "sites", "finds"}},
			{"unknown", append(slices.Clone(order), "nowhere")},
			{"repeated", append(slices.Clone(order), "sites")},
			{"empty", nil},
		} {
			expectRefused(t, fx.db, "tables "+c.name, "invalid_sort", func() error { return schema.SortTables(ctx, fx.db, c.names, fx.now) })
			expectRefused(t, fx.db, "fields "+c.name, "invalid_sort", func() error { return schema.SortFields(ctx, fx.db, "finds", c.names, fx.now) })
		}
		expectRefused(t, fx.db, "fields of a missing table", "table_not_found", func() error {
			return schema.SortFields(ctx, fx.db, "nowhere", fields, fx.now)
		})
	})
}

// TestChronoPathEndsWithChronology: the last table of a density path must
// have the chronology feature active (SPEC §4.6); intermediates need not.
func TestChronoPathEndsWithChronology(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		fx := newFixture(t, e)
		ctx := context.Background()
		fx.exec(t, `UPDATE `+fx.db.Sys("table_features")+` SET active = false WHERE table_name = 'finds_radiocarbon'`)
		_, err := schema.PutTable(ctx, fx.db, "sites", schema.TableConfig{ChronoDensityPath: schema.Set([]string{"finds", "finds_radiocarbon"})}, fx.now)
		if e, ok := errs.As(err); !ok || e.Code != "invalid_chrono_density_path" || !strings.Contains(fmt.Sprint(e.Extra["detail"]), "chronology") {
			t.Fatalf("path ending without chronology: %v", err)
		}
		if _, err := schema.PutTable(ctx, fx.db, "sites", schema.TableConfig{ChronoDensityPath: schema.Set([]string{"finds"})}, fx.now); err != nil {
			t.Fatalf("path ending at a table with chronology: %v", err)
		}
	})
}
