package changes_test

import (
	"context"
	"errors"
	"testing"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestSavepointUndoesItsEntries: saves made inside a savepoint that
// fails leave no change-log entry (a refused row of an import, a refused
// sync mutation), while the transaction's other saves, before and after
// it, keep theirs; a save that succeeds inside a savepoint keeps its own.
func TestSavepointUndoesItsEntries(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		a, scope := dig(t, e)
		ctx := context.Background()
		refused := errors.New("refused")
		before := head(t, a.DB)
		var kept, undone, after, inside int64
		err := a.DB.Tx(ctx, func(tx *store.DB) error {
			sc := scope()
			sc.DB = tx
			var err error
			if kept, _, err = records.Save(ctx, sc, records.SaveInput{Core: map[string]any{"label": "kept"}}); err != nil {
				return err
			}
			if err := tx.Savepoint(ctx, "refused_row", func() error {
				var err error
				if undone, _, err = records.Save(ctx, sc, records.SaveInput{Core: map[string]any{"label": "undone"}}); err != nil {
					return err
				}
				// An update of a record already logged in this
				// transaction: the entry it merged into must come back.
				if _, _, err := records.Save(ctx, sc, records.SaveInput{ID: kept, Core: map[string]any{"label": "changed"}}); err != nil {
					return err
				}
				return refused
			}); !errors.Is(err, refused) {
				t.Fatalf("savepoint: %v, want fn's error", err)
			}
			if err := tx.Savepoint(ctx, "good_row", func() error {
				var err error
				inside, _, err = records.Save(ctx, sc, records.SaveInput{Core: map[string]any{"label": "inside"}})
				return err
			}); err != nil {
				return err
			}
			after, _, err = records.Save(ctx, sc, records.SaveInput{Core: map[string]any{"label": "after"}})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]changes.Op{}
		for _, c := range since(t, a.DB, before) {
			if c.Table == "finds" {
				got[c.RecordID] = c.Op
			}
		}
		want := map[int64]changes.Op{kept: changes.Create, inside: changes.Create, after: changes.Create}
		if len(got) != len(want) {
			t.Errorf("log after the transaction: %v, want %v (record %d was undone)", got, want, undone)
		}
		for id, op := range want {
			if got[id] != op {
				t.Errorf("record %d: %q logged, want %q (log %v)", id, got[id], op, got)
			}
		}
		var label string
		if err := a.DB.QueryRow(ctx, `SELECT label FROM `+a.DB.Qualify("finds")+` WHERE id = ?`, kept).Scan(&label); err != nil || label != "kept" {
			t.Errorf("record %d: %q %v, want the savepoint's update undone", kept, label, err)
		}
	})
}
