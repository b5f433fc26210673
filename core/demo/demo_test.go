package demo_test

import (
	"context"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/demo"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestSeedSmall(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		a := testenv.NewApp(t, testenv.NewRegistry(t, e), "demo")
		if err := demo.Seed(ctx, a, demo.Small, 1, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
		want := map[string]int{"sites": 3, "trenches": 6, "units": 48, "finds": 288}
		for tb, n := range want {
			var got int
			if err := a.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+a.DB.Qualify(tb)).Scan(&got); err != nil || got != n {
				t.Errorf("%s: %d rows (%v), want %d", tb, got, err, n)
			}
		}
		var rels, orphans int
		_ = a.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+a.DB.Sys("rs")+` WHERE tb = 'units'`).Scan(&rels)
		if rels != 6*7 {
			t.Errorf("relations: %d, want 42", rels)
		}
		// Every find points at an existing unit.
		_ = a.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+a.DB.Qualify("finds")+` f WHERE NOT EXISTS (SELECT 1 FROM `+a.DB.Qualify("units")+` u WHERE u.id = f.unit)`).Scan(&orphans)
		if orphans != 0 {
			t.Errorf("%d finds point at no unit", orphans)
		}
		// New rows get ids after the generated ones.
		var id int64
		if err := a.DB.QueryRow(ctx, `INSERT INTO `+a.DB.Qualify("sites")+` (name) VALUES ('new') RETURNING id`).Scan(&id); err != nil || id != 4 {
			t.Errorf("next site id %d (%v), want 4", id, err)
		}
	})
}

func TestSeedIsDeterministic(t *testing.T) {
	ctx := context.Background()
	r := testenv.NewRegistry(t, store.SQLite)
	sum := func(name string) string {
		a := testenv.NewApp(t, r, name)
		if err := demo.Seed(ctx, a, demo.Small, 7, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
		var s string
		if err := a.DB.QueryRow(ctx, `SELECT group_concat(label || material || weight, ',') FROM `+a.DB.Qualify("finds")).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if sum("one") != sum("two") {
		t.Fatal("the same seed gave different data")
	}
}
