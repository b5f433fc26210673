package schema_test

import (
	"context"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

var radiocarbon = schema.FeatureSpec{
	Plugin: "radiocarbon", Name: "radiocarbon",
	Child: &schema.ChildSpec{Suffix: "radiocarbon", Label: "Radiocarbon dates", Columns: []schema.FieldDef{
		{Name: "bp", DBType: "int"}, {Name: "cal_1s_from", DBType: "int"},
	}},
	Computed: []string{"cal_1s_from"},
}

var chronology = schema.FeatureSpec{
	Plugin: "chronology", Name: "chronology",
	Columns: []schema.FieldDef{{Name: "chrono_from", DBType: "int"}, {Name: "chrono_label"}},
}

func TestFeatureActivationLifecycle(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx, now := context.Background(), time.Now().UTC()
		a := testenv.NewApp(t, testenv.NewRegistry(t, e), "feat")
		db := a.DB
		if _, err := schema.CreateTable(ctx, db, schema.TableDef{Name: "samples"}, now); err != nil {
			t.Fatal(err)
		}
		for _, spec := range []schema.FeatureSpec{radiocarbon, chronology} {
			if err := schema.ActivateFeature(ctx, db, "samples", spec, now); err != nil {
				t.Fatalf("activate %s: %v", spec.Name, err)
			}
		}
		cat, _ := schema.Load(ctx, db)
		vis := cat.Visible()
		samples, _ := vis.Table("samples")
		if _, ok := samples.Field("chrono_label"); !ok || len(vis.PluginTables("samples")) != 1 {
			t.Fatalf("active features not visible: %+v", samples.Fields)
		}
		rc, _ := vis.Table("samples_radiocarbon")
		if f, _ := rc.Field("cal_1s_from"); !f.Readonly || f.Feature != "radiocarbon" {
			t.Fatalf("computed column: %+v", f)
		}
		// Some data, then deactivate: hidden, kept.
		if _, err := db.Exec(ctx, `INSERT INTO `+db.Qualify("samples")+` (chrono_label) VALUES ('c4 BCE')`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, `INSERT INTO `+db.Qualify("samples_radiocarbon")+` (id_link, bp) VALUES (1, 3200)`); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"radiocarbon", "chronology"} {
			if err := schema.DeactivateFeature(ctx, db, "samples", f, now); err != nil {
				t.Fatal(err)
			}
		}
		cat, _ = schema.Load(ctx, db)
		vis = cat.Visible()
		samples, _ = vis.Table("samples")
		if _, ok := samples.Field("chrono_label"); ok {
			t.Fatal("an inactive feature's column is visible")
		}
		if _, ok := vis.Table("samples_radiocarbon"); ok || len(vis.PluginTables("samples")) != 0 {
			t.Fatal("an inactive feature's child table is visible")
		}
		if full, _ := cat.Table("samples"); len(full.Fields) != 2 {
			t.Fatalf("the full catalog must keep the columns: %d", len(full.Fields))
		}
		// Reactivation: the same columns and rows come back.
		for _, spec := range []schema.FeatureSpec{radiocarbon, chronology} {
			if err := schema.ActivateFeature(ctx, db, "samples", spec, now); err != nil {
				t.Fatalf("reactivate %s: %v", spec.Name, err)
			}
		}
		var label string
		var bp int
		if err := db.QueryRow(ctx, `SELECT s.chrono_label, r.bp FROM `+db.Qualify("samples")+` s JOIN `+db.Qualify("samples_radiocarbon")+` r ON r.id_link = s.id`).Scan(&label, &bp); err != nil || label != "c4 BCE" || bp != 3200 {
			t.Fatalf("data after reactivation: %q %d %v", label, bp, err)
		}
		cat, _ = schema.Load(ctx, db)
		if full, _ := cat.Table("samples"); len(full.Fields) != 2 {
			t.Fatalf("reactivation duplicated columns: %d", len(full.Fields))
		}
	})
}

func TestFeatureRefusals(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx, now := context.Background(), time.Now().UTC()
		a := testenv.NewApp(t, testenv.NewRegistry(t, e), "feat")
		db := a.DB
		if _, err := schema.CreateTable(ctx, db, schema.TableDef{Name: "units"}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.AddField(ctx, db, "units", schema.FieldDef{Name: "chrono_label"}, now); err != nil {
			t.Fatal(err)
		}
		before, _ := schema.Load(ctx, db)
		for _, c := range []struct {
			table string
			spec  schema.FeatureSpec
			code  string
		}{
			{"units", chronology, "feature_conflict"}, // chrono_label is the admin's own field
			{"nowhere", chronology, "table_not_found"},
		} {
			if err := schema.ActivateFeature(ctx, db, c.table, c.spec, now); errs.CodeOf(err) != c.code {
				t.Errorf("activate %s on %s: %v, want %s", c.spec.Name, c.table, err, c.code)
			}
		}
		if err := schema.DeactivateFeature(ctx, db, "units", "osteology", now); errs.CodeOf(err) != "feature_not_active" {
			t.Errorf("deactivate a feature never activated: %v", err)
		}
		after, _ := schema.Load(ctx, db)
		u1, _ := before.Table("units")
		u2, _ := after.Table("units")
		if len(u1.Fields) != len(u2.Fields) || len(after.Tables) != len(before.Tables) {
			t.Fatal("a refused activation left something behind")
		}
		// The conflicting activation added chrono_from? It must not have.
		if _, ok := u2.Field("chrono_from"); ok {
			t.Fatal("a refused activation added a column")
		}
	})
}
