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

// CreateMany writes a clean run with multi-row statements, and a run with
// any bad row one by one, with the one-by-one answers: ids in order,
// validation failures at their row.
func TestCreateManyGroupsCleanRuns(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx, now := context.Background(), time.Now().UTC()
		a := testenv.NewApp(t, testenv.NewRegistry(t, e), "cm")
		if _, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "finds"}, now); err != nil {
			t.Fatal(err)
		}
		for _, fd := range []schema.FieldDef{{Name: "code", Required: true}, {Name: "tag", Unique: true}, {Name: "weight", DBType: "float"}} {
			if _, err := schema.AddField(ctx, a.DB, "finds", fd, now); err != nil {
				t.Fatal(err)
			}
		}
		cat, err := schema.Load(ctx, a.DB)
		if err != nil {
			t.Fatal(err)
		}
		tb, _ := cat.Table("finds")
		sc := &records.Scope{DB: a.DB, Catalog: cat, Table: tb, Actor: &auth.Actor{UserID: 1, Privilege: auth.Writer}, Level: auth.Writer}
		// The clean run commits tags t0…t499; the others use u0… and roll back.
		inputs := func(n int, tag string, bad int, badCore map[string]any) []*records.SaveInput {
			ins := make([]*records.SaveInput, n)
			for i := range ins {
				core := map[string]any{"code": fmt.Sprintf("c%d", i), "tag": fmt.Sprintf("%s%d", tag, i)}
				if i%3 == 0 {
					core["weight"] = float64(i) + 0.5 // another column set every third row
				}
				if i == bad {
					core = badCore
				}
				ins[i] = &records.SaveInput{Core: core}
			}
			return ins
		}
		for _, c := range []struct {
			name      string
			ins       []*records.SaveInput
			grouped   int
			badAt     int // the row with validation failures, -1: none
			committed bool
		}{
			{name: "clean", ins: inputs(500, "t", -1, nil), grouped: 500, badAt: -1, committed: true},
			{name: "required missing", ins: inputs(300, "u", 123, map[string]any{"tag": "x"}), badAt: 123},
			{name: "tag taken by a stored row", ins: inputs(300, "u", 250, map[string]any{"code": "x", "tag": "t7"}), badAt: 250},
			{name: "tag taken by an earlier row", ins: inputs(300, "u", 250, map[string]any{"code": "x", "tag": "u249"}), badAt: 250},
		} {
			t.Run(c.name, func(t *testing.T) {
				var ids []int64
				var fes [][]records.FieldError
				var b *records.Batch
				err := a.DB.Tx(ctx, func(tx *store.DB) error {
					b = records.NewBatch(tx)
					var err error
					if ids, fes, _, err = b.CreateMany(ctx, sc, c.ins, make([][]records.FieldError, len(c.ins))); err != nil {
						return err
					}
					if !c.committed {
						return fmt.Errorf("rolled back")
					}
					return b.Finish(ctx)
				})
				if c.committed && err != nil {
					t.Fatal(err)
				}
				if got := records.GroupedRows(b); got != c.grouped {
					t.Errorf("%d rows written by multi-row statements, want %d", got, c.grouped)
				}
				for i := range c.ins {
					if (len(fes[i]) > 0) != (i == c.badAt) {
						t.Errorf("row %d: failures %v", i, fes[i])
					}
					if i > 0 && i != c.badAt && i-1 != c.badAt && ids[i] != ids[i-1]+1 {
						t.Fatalf("ids out of order at %d: %d after %d", i, ids[i], ids[i-1])
					}
				}
			})
		}
		var n int
		if err := a.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+a.DB.Qualify("finds")+` WHERE "code" = 'c'||CAST("id" - 1 AS TEXT)`).Scan(&n); err != nil || n != 500 {
			t.Errorf("%d finds whose code follows their id, want 500 (%v)", n, err)
		}
	})
}
