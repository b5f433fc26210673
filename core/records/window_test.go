package records_test

import (
	"context"
	"slices"
	"testing"

	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestDeepPagesMatchShallowOnes: pages read from an order window (and
// those past it, chosen directly) hold the same rows in the same order as
// the plain LIMIT/OFFSET page, with ties, NULLs and the row restriction,
// and a write is seen by the next page at once.
func TestDeepPagesMatchShallowOnes(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		sc, _ := restricted(t, e) // 27 visible finds of 40, weights with ties and NULLs
		ctx := context.Background()
		page := func(q records.ListQuery) []any {
			t.Helper()
			res, err := records.List(ctx, sc, q)
			if err != nil {
				t.Fatal(err)
			}
			ids := []any{}
			for _, r := range res.Data {
				ids = append(ids, r["id"])
			}
			if res.Total != 27 {
				t.Fatalf("%+v: total %d, want 27", q, res.Total)
			}
			return ids
		}
		check := func(when string) {
			t.Helper()
			for _, sort := range [][2]string{{"weight", "desc"}, {"weight", "asc"}, {"label", "desc"}, {"", ""}} {
				for p := 1; p <= 8; p++ { // 4 a page: pages 3–4 from the window, 5–7 past it, 8 empty
					q := records.ListQuery{Page: p, PerPage: 4, SortField: sort[0], SortDir: sort[1]}
					restore := records.SetDeepPaging(1<<40, 0)
					want := page(q)
					restore()
					restore = records.SetDeepPaging(8, 16)
					got := page(q)
					restore()
					if !slices.Equal(got, want) {
						t.Fatalf("%s, sort %v page %d: deep %v, shallow %v", when, sort, p, got, want)
					}
				}
			}
		}
		check("first read")
		// Move a row: the cached windows must not be used after a write.
		err := sc.DB.Tx(ctx, func(tx *store.DB) error {
			_, err := tx.Exec(ctx, `UPDATE `+tx.Qualify("finds")+` SET weight = 99, label = 'ZZ' WHERE id = 1`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		check("after a write")
	})
}
