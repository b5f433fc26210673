package records_test

import (
	"context"
	"sync"
	"testing"

	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestConcurrentListsShareOneCount: requests that need the same total
// while nobody has it cached (a popular search as its cached total
// expires) wait for one count instead of each counting; each gets the
// total. On PostgreSQL the count goes with the page's round trip, so the
// lists run unpipelined there to take the same path.
func TestConcurrentListsShareOneCount(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		sc, _ := restricted(t, e) // 27 visible finds of 40
		ctx := store.WithoutPipelining(context.Background())
		const n = 16
		restore := records.HoldCounts(n)
		defer restore()
		before := records.CountsRun()
		var wg sync.WaitGroup
		totals := make([]int64, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Page 2: its total is counted, not taken from the page.
				res, err := records.List(ctx, sc, records.ListQuery{Page: 2, PerPage: 4})
				if err == nil {
					totals[i] = res.Total
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil || totals[i] != 27 {
				t.Fatalf("list %d: total %d, %v; want 27", i, totals[i], errs[i])
			}
		}
		if got := records.CountsRun() - before; got != 1 {
			t.Fatalf("%d lists needing the same total counted it %d times, want once", n, got)
		}
	})
}
