package freesql

import (
	"context"
	stdsql "database/sql"
	"encoding/hex"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// Defaults of Run.
const (
	DefaultMaxRows = 1000
	DefaultTimeout = 10 * time.Second
	// DefaultMaxBytes bounds one answer: the values of its rows as they
	// are read (a string's bytes, a blob's in hex), past which the run
	// stops with result_too_large instead of growing the server.
	DefaultMaxBytes = 16 << 20
	// DefaultMaxValueBytes bounds one value (SQLite) or one row
	// (PostgreSQL) as the engine hands it over.
	DefaultMaxValueBytes = 8 << 20
)

var (
	// ErrTimeout: the statement ran longer than allowed and was stopped.
	ErrTimeout = errs.New(errs.Timeout, "sql_timeout", "the statement ran too long and was stopped")
	errSQL     = errs.New(errs.Invalid, "sql_error", "the database refused the statement")
	// ErrTooLarge: the answer would pass its byte budget.
	ErrTooLarge = errs.New(errs.TooLarge, "result_too_large", "the result is larger than free SQL answers; select fewer rows or columns")
)

// Result of a statement: rows for a read, affected for a write.
type Result struct {
	Kind      Kind
	Columns   []string
	Rows      []map[string]any
	Truncated bool
	Affected  int64
}

// Options bound a run.
type Options struct {
	MaxRows       int
	Timeout       time.Duration
	MaxBytes      int
	MaxValueBytes int
}

// credentialTables are the app's tables free SQL never sees (names
// without the sys_ prefix).
var credentialTables = []string{"users", "api_keys", "settings", "login_attempts"}

// Run classifies and runs sql on the app's database. Classify gives the
// friendly refusals; safety does not rest on it: the statement runs
// through store.RunConfined, where the database itself keeps it inside
// the app (see that type's documentation and docs/api.md), read-only
// unless Classify found a write, one statement, with a timeout and
// bounded values. Rows are read one at a time within MaxRows and
// MaxBytes.
func Run(ctx context.Context, db *store.DB, sql string, opt Options) (*Result, error) {
	kind, err := Classify(sql)
	if err != nil {
		return nil, err
	}
	if opt.MaxRows <= 0 {
		opt.MaxRows = DefaultMaxRows
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if opt.MaxValueBytes <= 0 {
		opt.MaxValueBytes = DefaultMaxValueBytes
	}
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	res := &Result{Kind: kind, Columns: []string{}, Rows: []map[string]any{}}
	res.Affected, err = db.RunConfined(ctx, sql, store.ConfineOptions{
		Write:         kind == Write,
		Timeout:       opt.Timeout,
		MaxValueBytes: opt.MaxValueBytes,
		Hidden:        credentialTables,
	}, func(rows *stdsql.Rows) error {
		return read(rows, opt.MaxRows, opt.MaxBytes, res)
	})
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded || strings.Contains(err.Error(), "statement timeout") {
			return nil, ErrTimeout.With("seconds", opt.Timeout.Seconds())
		}
		if _, ok := errs.As(err); ok {
			return nil, err
		}
		return nil, errSQL.With("detail", clean(err.Error()))
	}
	return res, nil
}

// clean drops the driver's prefixes from a database message.
func clean(msg string) string {
	for _, p := range []string{"ERROR: ", "SQL logic error: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	if len(msg) > 500 {
		msg = msg[:500]
	}
	return msg
}

// read keeps at most max rows and maxBytes of values, counting as it
// reads: past the budget the answer is an error, never a larger heap.
func read(rows *stdsql.Rows, max, maxBytes int, res *Result) error {
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	res.Columns = cols
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	size := 0
	for rows.Next() {
		if len(res.Rows) == max {
			res.Truncated = true
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		row := make(map[string]any, len(cols))
		for i, c := range cols {
			v := plain(vals[i])
			size += len(c) + valueSize(v)
			row[c] = v
		}
		if size > maxBytes {
			return ErrTooLarge.With("max_bytes", maxBytes)
		}
		res.Rows = append(res.Rows, row)
	}
	return rows.Err()
}

// valueSize is about what a value costs in the answer.
func valueSize(v any) int {
	switch x := v.(type) {
	case string:
		return len(x) + 2
	case nil:
		return 4
	}
	return 16
}

// plain turns a driver value into JSON's kinds.
func plain(v any) any {
	switch x := v.(type) {
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return "\\x" + hex.EncodeToString(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return v
}
