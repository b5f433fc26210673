package imports

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

var (
	// ErrRowsInvalid: some rows would not save; nothing was imported.
	ErrRowsInvalid = errs.New(errs.Invalid, "import_rows_invalid", "some rows are not valid; nothing was imported")
	errRollback    = errors.New("imports: roll back")
	// The codes BraDypUS clients read for a bad mapping.
	ErrInvalidField    = errs.New(errs.Invalid, "import_error_invalid_field", "a mapped field is not a field of the table")
	ErrMappingMismatch = errs.New(errs.Invalid, "import_error_mapping_mismatch", "no column of the mapping is in the file")
	ErrNoKey           = errs.New(errs.Invalid, "import_error_no_key", "the key field must be one of the mapped fields")
)

// RowError is why one row would not save (row 1 is the first data row).
type RowError struct {
	Row     int    `json:"row"`
	Field   string `json:"field,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Result of an import.
type Result struct {
	Inserted int `json:"inserted"`
	Updated  int `json:"updated"`
	Total    int `json:"total"`
}

// MaxRowErrors bounds the errors an answer lists.
const MaxRowErrors = 100

// Options of Run.
type Options struct {
	// Mapping names the field of each column (column → field); empty: the
	// columns named as fields.
	Mapping map[string]string
	// KeyField, when set, updates the record whose field has the row's
	// value (within the caller's rows) instead of creating one.
	KeyField string
	// DryRun validates every row and writes nothing.
	DryRun bool
	// Progress is told the rows done of all (a job's progress).
	Progress func(done, total int64)
	// ScopeOf is the caller's scope on another table: a lookup field's
	// value may be the label (id_field) of a record there, looked up
	// within the caller's rows. Nil: lookups take ids only.
	ScopeOf func(table string) (*records.Scope, error)
}

// Run imports t's rows into sc's table in one transaction: all or none.
func Run(ctx context.Context, sc *records.Scope, t *Table, opt Options) (*Result, error) {
	mapping := map[string]string{}
	for col, field := range opt.Mapping {
		if field = strings.TrimSpace(field); field != "" { // "" or null: the column is ignored
			mapping[col] = field
		}
	}
	if len(opt.Mapping) == 0 {
		for _, c := range t.Columns {
			if _, ok := sc.Table.Field(c); ok {
				mapping[c] = c
			}
		}
	}
	for col, field := range mapping {
		if _, ok := sc.Table.Field(field); !ok {
			return nil, ErrInvalidField.With("field", field).With("detail", "column "+col+" is mapped to "+field+", which is no field of "+sc.Table.Name)
		}
	}
	if len(mapping) == 0 {
		return nil, errs.New(errs.Invalid, "parameter_missing", "mapping: no column names a field of the table")
	}
	if len(t.Rows) > 0 || len(t.Columns) > 0 {
		matched := false
		for col := range mapping {
			if slices.Contains(t.Columns, col) {
				matched = true
			}
		}
		if !matched {
			return nil, ErrMappingMismatch.With("detail", "no column of the mapping ("+strings.Join(slices.Sorted(maps.Keys(mapping)), ", ")+") is in the file ("+strings.Join(t.Columns, ", ")+")")
		}
	}
	var key *schema.Field
	if opt.KeyField != "" {
		f, ok := sc.Table.Field(opt.KeyField)
		if !ok {
			return nil, ErrInvalidField.With("field", opt.KeyField).With("parameter", "key_field").With("detail", opt.KeyField+" is no field of "+sc.Table.Name)
		}
		if !slices.Contains(slices.Collect(maps.Values(mapping)), f.Name) {
			return nil, ErrNoKey.With("field", f.Name).With("detail", "the key field "+f.Name+" is not among the mapped fields")
		}
		key = f
	}
	progress := opt.Progress
	if progress == nil {
		progress = func(int64, int64) {}
	}
	res := &Result{Total: len(t.Rows)}
	labels := newLabelResolver(opt.ScopeOf)
	var rowErrs []RowError
	err := sc.DB.Tx(ctx, func(tx *store.DB) error {
		ts := *sc
		if opt.DryRun {
			ts = *sc.DryRun() // no sequence moves for rows rolled back
		}
		ts.DB = tx
		for i, row := range t.Rows {
			core := map[string]any{}
			for col, field := range mapping {
				if v, ok := row[col]; ok {
					if s, ok := v.(string); ok {
						v = strings.TrimSpace(s)
					}
					core[field] = v
				}
			}
			if bad := resolveLabels(ctx, &ts, core, labels, i+1); len(bad) > 0 {
				rowErrs = append(rowErrs, bad...)
				continue
			}
			var id int64
			if key != nil {
				found, err := match(ctx, &ts, key, core[key.Name])
				if err != nil {
					return err
				}
				id = found
			}
			// A savepoint per row: a row the database refuses (a duplicate
			// key) is undone with what it queued for the commit, and leaves
			// the transaction usable for the next ones.
			err := tx.Savepoint(ctx, "import_row", func() error {
				_, err := records.SaveVersioned(ctx, &ts, records.SaveInput{ID: id, Core: core})
				return err
			})
			if err != nil {
				e, ok := errs.As(err)
				if !ok || e.Kind != errs.Invalid || errors.Is(err, store.ErrSavepoint) {
					return err
				}
				rowErrs = append(rowErrs, rowErrors(i+1, e)...)
				continue
			}
			if id != 0 {
				res.Updated++
			} else {
				res.Inserted++
			}
			if (i+1)%500 == 0 {
				progress(int64(i+1), int64(len(t.Rows)))
			}
		}
		progress(int64(len(t.Rows)), int64(len(t.Rows)))
		if len(rowErrs) > 0 || opt.DryRun {
			return errRollback
		}
		return nil
	})
	if len(rowErrs) > 0 {
		if len(rowErrs) > MaxRowErrors {
			rowErrs = rowErrs[:MaxRowErrors]
		}
		return nil, ErrRowsInvalid.With("errors", rowErrs)
	}
	if err != nil && !errors.Is(err, errRollback) {
		return nil, err
	}
	return res, nil
}

// match is the id of the record (within the caller's rows) whose key field
// holds v, or 0.
func match(ctx context.Context, sc *records.Scope, key *schema.Field, v any) (int64, error) {
	if v == nil || v == "" {
		return 0, nil
	}
	where, args := sc.Where(&records.Cond{SQL: sc.DB.Qualify(sc.Table.Name) + "." + sc.DB.Engine.Quote(key.Name) + " = ?", Args: []any{v}})
	var id int64
	err := sc.DB.QueryRow(ctx, `SELECT `+sc.DB.Qualify(sc.Table.Name)+`."id" FROM `+sc.DB.Qualify(sc.Table.Name)+` WHERE `+where+` ORDER BY 1 LIMIT 1`, args...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, err
}

// rowErrors turns a save's refusal into the row's errors.
func rowErrors(row int, e *errs.Error) []RowError {
	fes, _ := e.Extra["errors"].([]records.FieldError)
	if len(fes) == 0 {
		field, _ := e.Extra["field"].(string)
		return []RowError{{Row: row, Field: field, Code: e.Code, Message: e.Message}}
	}
	out := make([]RowError, 0, len(fes))
	for _, fe := range fes {
		out = append(out, RowError{Row: row, Field: fe.Field, Code: fe.Rule, Message: fe.Message})
	}
	return out
}
