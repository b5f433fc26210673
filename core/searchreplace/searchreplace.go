// Package searchreplace finds and replaces text in one field of one table
// (SPEC §4.5, CONTRACT §10): a preview that counts and shows samples and
// writes nothing, and an apply that changes every matching record the
// caller may see in one transaction, each record written as a save writes
// it (its validation, its version), all or nothing. The replacement is
// literal and case-sensitive, as SQL's REPLACE() in BraDypUS; lookups and
// other non-text fields are not touched.
package searchreplace

import (
	"context"
	"strings"

	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// MaxSamples is how many changes a preview shows.
const MaxSamples = 10

// Editable reports whether f is a field search-replace may change: text
// stored as text, not a lookup.
func Editable(f *schema.Field) bool {
	return f.DBType == schema.DBText && f.IDFromTb == "" && !f.Readonly
}

// Sample is one record's value before and after.
type Sample struct {
	ID     int64  `json:"id"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// Result of a preview or an apply.
type Result struct {
	Count   int      `json:"count"`
	Samples []Sample `json:"samples,omitempty"`
}

// MaxErrors bounds the failing records an answer lists.
const MaxErrors = 100

// RecordError is a field error of one record the replacement would break.
type RecordError struct {
	ID int64 `json:"id"`
	records.FieldError
}

// Run replaces search by repl in field f of the scope's table, in the rows
// the scope sees (its row subset); with preview it only counts and
// samples. Every changed record is written as a save writes it
// (records.Batch): under the row's lock, checked by the save's own
// validation (pattern, length, unique, required), with its version kept.
// All or nothing: if any record's new value breaks a rule, nothing is
// written and the answer is the save's validation_failed, listing each
// failing record (at most MaxErrors) with its id.
func Run(ctx context.Context, sc *records.Scope, f *schema.Field, search, repl string, preview bool) (*Result, error) {
	res := &Result{Samples: []Sample{}}
	err := sc.DB.Tx(ctx, func(tx *store.DB) error {
		ts := *sc
		ts.DB = tx
		changes, err := ts.Containing(ctx, f, search)
		if err != nil {
			return err
		}
		res.Count = len(changes)
		w := records.NewBatch(tx)
		var invalid []RecordError
		failed := 0
		for i, ch := range changes {
			after := strings.ReplaceAll(ch.Value, search, repl)
			if i < MaxSamples {
				res.Samples = append(res.Samples, Sample{ID: ch.ID, Before: ch.Value, After: after})
			}
			if preview {
				continue
			}
			in := records.SaveInput{ID: ch.ID, Core: map[string]any{f.Name: after}}
			_, fes, err := w.Save(ctx, &ts, &in, nil)
			if err != nil {
				return err
			}
			if len(fes) > 0 {
				failed++
			}
			for _, fe := range fes {
				if len(invalid) < MaxErrors {
					invalid = append(invalid, RecordError{ID: ch.ID, FieldError: fe})
				}
			}
		}
		if len(invalid) > 0 {
			// Returning the error rolls back the rows already written.
			return records.ErrValidation.With("errors", invalid).With("failed", failed)
		}
		if preview {
			return nil
		}
		return w.Finish(ctx)
	})
	if err != nil {
		return nil, err
	}
	if !preview {
		res.Samples = nil
	}
	return res, nil
}
