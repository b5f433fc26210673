package records_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// BenchmarkSave measures one record save (create, and update of an
// existing record) through records.SaveVersioned on both engines: what
// every write path pays, change log included.
func BenchmarkSave(b *testing.B) {
	for _, e := range store.Engines {
		b.Run(string(e), func(b *testing.B) {
			testenv.RequireEngine(b, e)
			a := testenv.NewApp(b, testenv.NewRegistry(b, e), "bench")
			ctx, now := context.Background(), time.Now().UTC()
			if _, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "finds", Label: "Finds"}, now); err != nil {
				b.Fatal(err)
			}
			for _, fd := range []schema.FieldDef{{Name: "label", Label: "Label"}, {Name: "weight", Label: "Weight", DBType: "float"}} {
				if _, err := schema.AddField(ctx, a.DB, "finds", fd, now); err != nil {
					b.Fatal(err)
				}
			}
			cat, err := schema.Load(ctx, a.DB)
			if err != nil {
				b.Fatal(err)
			}
			tb, _ := cat.Table("finds")
			sc := &records.Scope{DB: a.DB, Catalog: cat, Table: tb, Actor: &auth.Actor{UserID: 1, Privilege: auth.Writer}, Level: auth.Writer}
			id, _, err := records.Save(ctx, sc, records.SaveInput{Core: map[string]any{"label": "first"}})
			if err != nil {
				b.Fatal(err)
			}
			b.Run("create", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, _, err := records.Save(ctx, sc, records.SaveInput{Core: map[string]any{"label": fmt.Sprint("L", i), "weight": i}}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("update", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := records.SaveVersioned(ctx, sc, records.SaveInput{ID: id, Core: map[string]any{"weight": i}}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
