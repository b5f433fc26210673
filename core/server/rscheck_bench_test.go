package server_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/rscheck"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// BenchmarkMatrixCheckHTTP: GET /rs/{tb}/check of rscheck.Site (20,000
// units dated by chronology, 2,000 radiocarbon dates, 60,000 relations)
// through the real router as an admin, on both engines: the table read
// through the records scope, every check, the answer encoded (an instance
// without a job system answers in the request whatever the size).
// Issue 33's target: under 2 s on 2 cores.
func BenchmarkMatrixCheckHTTP(b *testing.B) {
	for _, e := range store.Engines {
		b.Run(string(e), func(b *testing.B) {
			inst := testenv.NewInstance(b, e)
			a := testenv.NewApp(b, inst.Apps, "bench")
			seedSite(b, a)
			token := testenv.Login(b, inst.Server, "bench", "admin@example.org", testenv.Password)
			b.Logf("%s: 20,000 units, 60,000 relations; %d cores", e, runtime.NumCPU())
			for b.Loop() {
				req := httptest.NewRequest("GET", "/bench/api/rs/us/check", nil)
				req.Header.Set("Authorization", token)
				rec := httptest.NewRecorder()
				inst.Server.ServeHTTP(rec, req)
				if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"period_inversion":{"count":`) {
					b.Fatalf("%d %.300s", rec.Code, rec.Body.String())
				}
			}
		})
	}
}

// seedSite writes rscheck.Site into table us, 500 rows a statement.
func seedSite(b *testing.B, a *apps.App) {
	ctx, now := context.Background(), time.Now().UTC()
	if _, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "us", Label: "Units"}, now); err != nil {
		b.Fatal(err)
	}
	if _, err := schema.AddField(ctx, a.DB, "us", schema.FieldDef{Name: "code", Label: "Code"}, now); err != nil {
		b.Fatal(err)
	}
	if _, err := schema.PutTable(ctx, a.DB, "us", schema.TableConfig{RS: schema.RSOn(true), IDField: schema.Set("code")}, now); err != nil {
		b.Fatal(err)
	}
	for _, spec := range []schema.FeatureSpec{
		{Plugin: "chronology", Name: schema.ChronologyFeature, Columns: []schema.FieldDef{{Name: "chrono_from", DBType: "int"}, {Name: "chrono_to", DBType: "int"}}},
		{Plugin: "radiocarbon", Name: "radiocarbon", Child: &schema.ChildSpec{Suffix: "radiocarbon", Label: "Dates",
			Columns: []schema.FieldDef{{Name: "lab_code"}, {Name: "cal_2s_from", DBType: "int"}, {Name: "cal_2s_to", DBType: "int"}}}},
	} {
		if err := schema.ActivateFeature(ctx, a.DB, "us", spec, now); err != nil {
			b.Fatal(err)
		}
	}
	d := rscheck.Site()
	insert := func(head string, n int, row func(i int) []any) {
		const per = 500
		err := a.DB.Tx(ctx, func(tx *store.DB) error {
			for start := 0; start < n; start += per {
				end := min(start+per, n)
				var args []any
				var marks []string
				for i := start; i < end; i++ {
					r := row(i)
					args = append(args, r...)
					marks = append(marks, "("+strings.TrimSuffix(strings.Repeat("?, ", len(r)), ", ")+")")
				}
				if _, err := tx.Exec(ctx, head+strings.Join(marks, ", "), args...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	insert(`INSERT INTO `+a.DB.Qualify("us")+` ("id", "code", "chrono_from", "chrono_to") VALUES `, len(d.Units), func(i int) []any {
		u := d.Units[i]
		return []any{u.ID, u.Label, *u.ChronoFrom, *u.ChronoTo}
	})
	insert(`INSERT INTO `+a.DB.Qualify("us_radiocarbon")+` ("id", "id_link", "lab_code", "cal_2s_from", "cal_2s_to") VALUES `, len(d.Dates), func(i int) []any {
		x := d.Dates[i]
		return []any{x.ID, x.Unit, x.LabCode, x.Cal2From, x.Cal2To}
	})
	insert(`INSERT INTO `+a.DB.Sys("rs")+` (tb, first, second, relation, created_at) VALUES `, len(d.Relations), func(i int) []any {
		r := d.Relations[i]
		return []any{"us", r.First, r.Second, r.Relation, now}
	})
	var n int
	if err := a.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+a.DB.Sys("rs")+` WHERE tb = 'us'`).Scan(&n); err != nil || n != 60000 {
		b.Fatal(fmt.Sprint(n, err))
	}
}
