package geo_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/geo"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// BenchmarkViewport: the map of a table with 100,000 features (points and
// small polygons over a 100°×50° area), a viewport of 5°×5° (about 0.5%
// of them), on each engine.
//
//	go test -run '^$' -bench Viewport -benchtime 20x ./core/geo/
func BenchmarkViewport(b *testing.B) {
	for _, e := range []store.Engine{store.SQLite, store.Postgres} {
		b.Run(string(e), func(b *testing.B) {
			testenv.RequireEngine(b, e)
			sc := seedFeatures(b, e, 100000)
			r := rand.New(rand.NewPCG(1, 1))
			ctx := context.Background()
			n := 0
			b.ResetTimer()
			for b.Loop() {
				x, y := r.Float64()*95, r.Float64()*45
				vp := orb.Bound{Min: orb.Point{x, y}, Max: orb.Point{x + 5, y + 5}}
				col, err := geo.ReadCollection(ctx, sc, geo.CollectionQuery{Viewport: &vp})
				if err != nil {
					b.Fatal(err)
				}
				n += len(col.Features)
			}
			b.ReportMetric(float64(n)/float64(b.N), "features/op")
		})
	}
}

// seedFeatures makes table finds with n records of one feature each.
func seedFeatures(b *testing.B, e store.Engine, n int) *records.Scope {
	reg := testenv.NewRegistry(b, e)
	a := testenv.NewApp(b, reg, "bench")
	ctx, now := context.Background(), time.Now().UTC()
	if _, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "finds", Label: "Finds"}, now); err != nil {
		b.Fatal(err)
	}
	if _, err := schema.AddField(ctx, a.DB, "finds", schema.FieldDef{Name: "label", Label: "Label"}, now); err != nil {
		b.Fatal(err)
	}
	if _, err := a.DB.Exec(ctx, `UPDATE `+a.DB.Sys("tables")+` SET geodata = ? WHERE name = 'finds'`, true); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(2, 2))
	err := a.DB.Tx(ctx, func(tx *store.DB) error {
		const chunk = 500
		for start := 1; start <= n; start += chunk {
			var recs, feats []string
			var rargs, fargs []any
			for id := start; id < start+chunk && id <= n; id++ {
				recs = append(recs, "(?, ?)")
				rargs = append(rargs, id, fmt.Sprintf("F%d", id))
				x, y := r.Float64()*100, r.Float64()*50
				var g orb.Geometry = orb.Point{x, y}
				if id%2 == 0 {
					g = orb.Bound{Min: orb.Point{x, y}, Max: orb.Point{x + 0.05, y + 0.05}}.ToPolygon()
				}
				bd := g.Bound()
				feats = append(feats, "(?, ?, ?, ?, ?, ?, ?, ?)")
				fargs = append(fargs, "finds", id, geo.WKT(g), string(geo.GeoJSON(g)), bd.Min[0], bd.Min[1], bd.Max[0], bd.Max[1])
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+tx.Qualify("finds")+` ("id", "label") VALUES `+strings.Join(recs, ", "), rargs...); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("geodata")+` (tb, record_id, geometry, geojson, min_x, min_y, max_x, max_y) VALUES `+strings.Join(feats, ", "), fargs...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if e == store.Postgres {
		if _, err := a.DB.Exec(ctx, `ANALYZE `+a.DB.Sys("geodata")); err != nil {
			b.Fatal(err)
		}
	} else if _, err := a.DB.Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	cat, err := schema.Load(ctx, a.DB)
	if err != nil {
		b.Fatal(err)
	}
	t, _ := cat.Table("finds")
	return &records.Scope{DB: a.DB, Catalog: cat, Table: t, Actor: &auth.Actor{UserID: 1, Privilege: auth.SuperAdmin}, Level: auth.SuperAdmin}
}
