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

// TestSaveAnswersTheNewVersion: an update answers the record's version as
// RecordVersion reads it after the save, a new one each time, in a
// transaction of its own and in a caller's (where PostgreSQL may send the
// save's statements only with the caller's next ones).
func TestSaveAnswersTheNewVersion(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		sc, _ := restricted(t, e)
		w := *sc
		w.Level, w.Actor = auth.Writer, &auth.Actor{KeyID: 1, Privilege: auth.Writer}
		ctx := context.Background()
		seen := map[int64]bool{}
		for i, label := range []string{"own", "caller's", "own again", "caller's again"} {
			var res records.SaveResult
			var after int64
			save := func(s *records.Scope) (err error) {
				if res, err = records.SaveVersioned(ctx, s, records.SaveInput{ID: 1, Core: map[string]any{"label": label}}); err != nil {
					return err
				}
				after, err = records.RecordVersion(ctx, s, 1)
				return err
			}
			var err error
			if i%2 == 0 {
				err = save(&w)
			} else {
				err = w.DB.Tx(ctx, func(tx *store.DB) error {
					ts := w
					ts.DB = tx
					return save(&ts)
				})
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Version == 0 || res.Version != after || seen[after] {
				t.Fatalf("%s: the save answered version %d, the record has %d (seen %v)", label, res.Version, after, seen)
			}
			seen[after] = true
		}
	})
}
