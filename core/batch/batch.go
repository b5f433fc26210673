package batch

import (
	"context"
	"errors"
	"sort"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/store"
)

// ScopeFunc builds the caller's records scope on a table: its effective
// level there, its row subset, the plugin features active on it. Run calls
// it once per table of the batch.
type ScopeFunc func(table string) (*records.Scope, error)

// Result is the outcome of one request, in request order.
type Result struct {
	Status string `json:"status"`
	Code   string `json:"code"`
	ID     int64  `json:"id"`
}

// FieldError is a failed rule of the request at Index.
type FieldError struct {
	Index int `json:"index"`
	records.FieldError
}

// Run applies ops in one transaction of db, all or nothing:
//
//  1. each table's scope is built once and the table-level privilege of
//     every request is checked before anything else happens;
//  2. the BeforeSave hooks of all saves run, one call per table and
//     feature, before the transaction opens (a required plugin that is
//     down refuses the whole batch with 503 plugin_unavailable);
//  3. in the transaction, each request is applied in order with the single
//     requests' rules (row privileges, row subsets, validation, version
//     snapshots, history). Validation failures of every request are
//     collected and answered together (validation_failed, each error with
//     its request's index); any other failure stops the batch and names
//     its request's index. Either way nothing is written. Consecutive
//     creates on one table without plugin rows are written together
//     (records.CreateMany: multi-row INSERTs) with the same answers;
//  4. after the commit, the AfterSave hooks run, one call per table and
//     feature.
//
// When a record changed between the read its hooks were given and the
// batch's lock on it (records.ErrHooksRaced), the batch runs again from
// the requests as sent, hooks included, up to records.MaxHookAttempts
// times; then 409 save_conflict.
func Run(ctx context.Context, db *store.DB, scope ScopeFunc, ops []Op) ([]Result, error) {
	pristine := make([]records.SaveInput, len(ops))
	for i := range ops {
		pristine[i] = ops[i].Input.Clone()
	}
	for attempt := 1; ; attempt++ {
		res, err := runOnce(ctx, db, scope, ops)
		if !errors.Is(err, records.ErrHooksRaced) {
			return res, err
		}
		if attempt >= records.MaxHookAttempts {
			return nil, records.ErrSaveConflict.With("attempts", attempt)
		}
		if err := records.WaitBeforeRetry(ctx, attempt+1); err != nil {
			return nil, err
		}
		for i := range ops {
			ops[i].Input = pristine[i].Clone()
		}
	}
}

// runOnce is one run of Run.
func runOnce(ctx context.Context, db *store.DB, scope ScopeFunc, ops []Op) ([]Result, error) {
	scopes := map[string]*records.Scope{}
	var tables []string // in order of first appearance
	for i := range ops {
		op := &ops[i]
		sc, ok := scopes[op.Table]
		if !ok {
			var err error
			if sc, err = scope(op.Table); err != nil {
				return nil, withIndex(err, op.Index)
			}
			scopes[op.Table] = sc
			tables = append(tables, op.Table)
		}
		if err := allowed(sc, op.Kind); err != nil {
			return nil, withIndex(err, op.Index)
		}
	}

	// The saves of each table, for the hooks.
	saves := map[string][]int{}
	for i, op := range ops {
		if op.Kind != Delete {
			saves[op.Table] = append(saves[op.Table], i)
		}
	}
	// This process's turn on the hooked records, from their hooks' read
	// to the commit (records.LockHookedSaves).
	var keys []string
	for _, tb := range tables {
		if len(scopes[tb].Features) == 0 {
			continue
		}
		ins := make([]*records.SaveInput, len(saves[tb]))
		for k, i := range saves[tb] {
			ins[k] = &ops[i].Input
		}
		keys = append(keys, records.HookedSaveKeys(scopes[tb], ins)...)
	}
	unlock, err := records.LockHookedSaves(ctx, keys)
	if err != nil {
		return nil, err
	}
	defer unlock()
	hookErrs := make([][]records.FieldError, len(ops))
	for _, tb := range tables {
		pos := saves[tb]
		if len(pos) == 0 || len(scopes[tb].Features) == 0 {
			continue
		}
		ins := make([]*records.SaveInput, len(pos))
		for k, i := range pos {
			ins[k] = &ops[i].Input
		}
		fes, failed, err := records.BeforeSaveMany(ctx, scopes[tb], ins)
		if err != nil {
			return nil, withIndex(err, ops[pos[failed]].Index)
		}
		for k, i := range pos {
			hookErrs[i] = fes[k]
		}
	}

	results := make([]Result, len(ops))
	ids := make([]int64, len(ops))
	err = db.Tx(ctx, func(tx *store.DB) error {
		tx, done := cached(ctx, tx)
		defer done()
		w := records.NewBatch(tx)
		var invalid []FieldError
		for i := 0; i < len(ops); i++ {
			op := &ops[i]
			sc := scopes[op.Table]
			if end := createRun(ops, scopes, i); end-i > 1 {
				// A run of creates on one table: written together, with
				// the same answers as one by one (records.CreateMany).
				ins := make([]*records.SaveInput, end-i)
				for k := range ins {
					ins[k] = &ops[i+k].Input
				}
				got, fes, failed, err := w.CreateMany(ctx, sc, ins, hookErrs[i:end])
				if err != nil {
					return withIndex(err, ops[i+failed].Index)
				}
				for k := range ins {
					for _, fe := range fes[k] {
						invalid = append(invalid, FieldError{Index: ops[i+k].Index, FieldError: fe})
					}
					ids[i+k], results[i+k] = got[k], Result{Status: "success", Code: "success_created", ID: got[k]}
				}
				i = end - 1
				continue
			}
			if op.Kind == Delete {
				if err := w.Delete(ctx, sc, op.ID); err != nil {
					return withIndex(err, op.Index)
				}
				ids[i], results[i] = op.ID, Result{Status: "success", Code: "success_deleted", ID: op.ID}
				continue
			}
			id, fes, err := w.Save(ctx, sc, &op.Input, hookErrs[i])
			if err != nil {
				return withIndex(err, op.Index)
			}
			for _, fe := range fes {
				invalid = append(invalid, FieldError{Index: op.Index, FieldError: fe})
			}
			code := "success_saved"
			if op.Kind == Create {
				code = "success_created"
			}
			ids[i], results[i] = id, Result{Status: "success", Code: code, ID: id}
		}
		if len(invalid) > 0 {
			return records.ErrValidation.With("errors", invalid).With("indexes", indexes(invalid))
		}
		return w.Finish(ctx)
	})
	if err != nil {
		return nil, err
	}

	for _, tb := range tables {
		pos := saves[tb]
		if len(pos) == 0 || len(scopes[tb].Features) == 0 {
			continue
		}
		ins := make([]*records.SaveInput, len(pos))
		done := make([]int64, len(pos))
		for k, i := range pos {
			ins[k], done[k] = &ops[i].Input, ids[i]
		}
		records.AfterSaveMany(ctx, scopes[tb], done, ins)
	}
	return results, nil
}

// createRun is the end of the run of creates starting at ops[i]: the
// consecutive creates on ops[i]'s table that records.Groupable lets
// CreateMany write together (i itself when ops[i] is none).
func createRun(ops []Op, scopes map[string]*records.Scope, i int) int {
	end := i
	for end < len(ops) && ops[end].Kind == Create && ops[end].Table == ops[i].Table &&
		records.Groupable(scopes[ops[i].Table], &ops[end].Input) {
		end++
	}
	return end
}

// allowed is the table-level gate of one request, as the single routes
// apply it (the row rules follow in the transaction).
func allowed(sc *records.Scope, k Kind) error {
	switch {
	case sc.Table.IsPlugin:
		return records.ErrInvalidParameter.With("detail", "plugin rows are saved and deleted with their parent record")
	case k == Create && !sc.CanAdd():
		return records.ErrNotEnough.With("required", auth.AddNew.String())
	case k != Create && !auth.Edit.Allows(sc.Level):
		return records.ErrNotEnough.With("required", auth.Edit.String())
	}
	return nil
}

// indexes lists the requests that failed validation, ascending.
func indexes(fes []FieldError) []int {
	seen := map[int]bool{}
	var out []int
	for _, fe := range fes {
		if !seen[fe.Index] {
			seen[fe.Index] = true
			out = append(out, fe.Index)
		}
	}
	sort.Ints(out)
	return out
}
