package records_test

import (
	"context"
	"errors"
	"testing"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestStateAtEachVersion: the state at each version a save answered is
// what a read showed at that moment, from the versions for the old ones
// and the row for the latest; a row outside the caller's subset answers
// as a missing one.
func TestStateAtEachVersion(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		sc, _ := restricted(t, e)
		w := *sc
		w.Level, w.Actor = auth.Writer, &auth.Actor{KeyID: 1, Privilege: auth.Writer} // no account: versions name no user
		ctx := context.Background()
		// Find 1 is visible ("L1"); its first version is 0.
		seen := map[int64]string{0: "L1"}
		for _, label := range []string{"a", "b", "c"} {
			res, err := records.SaveVersioned(ctx, &w, records.SaveInput{ID: 1, Core: map[string]any{"label": label}})
			if err != nil {
				t.Fatal(err)
			}
			seen[res.Version] = label
		}
		if len(seen) != 4 {
			t.Fatalf("versions %v: each save must give a new one", seen)
		}
		for v, want := range seen {
			st, err := records.StateAt(ctx, &w, 1, v)
			if err != nil {
				t.Fatal(err)
			}
			if st.Core["label"] != want {
				t.Errorf("at version %d label = %v, want %s", v, st.Core["label"], want)
			}
		}
		for _, id := range []int64{3, 4242} { // 3: outside the subset; 4242: none
			if _, err := records.StateAt(ctx, &w, id, 0); !errors.Is(err, records.ErrRecordNotFound) {
				t.Errorf("record %d: %v, want record_not_found", id, err)
			}
		}
	})
}
