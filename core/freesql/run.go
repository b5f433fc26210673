package freesql

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
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
)

var (
	// ErrTimeout: the statement ran longer than allowed and was stopped.
	ErrTimeout = errs.New(errs.Timeout, "sql_timeout", "the statement ran too long and was stopped")
	errSQL     = errs.New(errs.Invalid, "sql_error", "the database refused the statement")
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
	MaxRows int
	Timeout time.Duration
}

// Run classifies and runs sql on the app's database. Writes run in a
// transaction (all or nothing). On PostgreSQL the statement runs as a
// role that can use only the app's schema, without its credential tables
// (the database itself refuses the rest), with a statement timeout; on
// SQLite, where an app is its own file, Classify keeps out what could
// reach another (ATTACH, VACUUM INTO, extensions, PRAGMA).
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
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	res := &Result{Kind: kind, Columns: []string{}, Rows: []map[string]any{}}
	err = db.Tx(ctx, func(tx *store.DB) error {
		if tx.Engine == store.Postgres {
			if err := confine(ctx, tx, opt.Timeout); err != nil {
				return err
			}
		}
		if kind == Write {
			r, err := tx.SQL.ExecContext(ctx, sql)
			if err != nil {
				return err
			}
			res.Affected, _ = r.RowsAffected()
			return nil
		}
		return read(ctx, tx, sql, opt.MaxRows, res)
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

// read runs a read and keeps at most max rows.
func read(ctx context.Context, tx *store.DB, sql string, max int, res *Result) error {
	rows, err := tx.SQL.QueryContext(ctx, sql)
	if err != nil {
		return err
	}
	defer rows.Close()
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
			row[c] = plain(vals[i])
		}
		res.Rows = append(res.Rows, row)
	}
	return rows.Err()
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

// credentialTables are the app's tables free SQL never sees.
var credentialTables = []string{"users", "api_keys", "settings", "login_attempts"}

// confine makes the rest of the transaction run as the app's free-SQL
// role (created and granted as needed): usage of the app's schema alone,
// data rights on its tables but the credential ones, no DDL, and a
// statement timeout.
func confine(ctx context.Context, tx *store.DB, timeout time.Duration) error {
	schema := tx.Schema()
	if schema == "" {
		return errors.New("freesql: no schema")
	}
	role := roleName(schema)
	qs, qr := tx.Engine.Quote(schema), tx.Engine.Quote(role)
	steps := []string{
		// Concurrent first runs race to create the role: the loser's
		// duplicate_object is no error.
		`DO $do$ BEGIN CREATE ROLE ` + qr + ` NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $do$`,
		`GRANT ` + qr + ` TO CURRENT_USER`,
		`GRANT USAGE ON SCHEMA ` + qs + ` TO ` + qr,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ` + qs + ` TO ` + qr,
		`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ` + qs + ` TO ` + qr,
	}
	for _, t := range credentialTables {
		steps = append(steps, `REVOKE ALL ON `+tx.Sys(t)+` FROM `+qr)
	}
	steps = append(steps,
		`SET LOCAL ROLE `+qr,
		`SET LOCAL search_path TO `+qs,
		`SET LOCAL statement_timeout = `+strconv.FormatInt(timeout.Milliseconds(), 10),
	)
	for _, q := range steps {
		if _, err := tx.SQL.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("confine free SQL: %w", err)
		}
	}
	return nil
}

// roleName is the free-SQL role of an app's schema (63 bytes at most).
func roleName(schema string) string {
	name := "strata_sql_" + schema
	if len(name) > 63 {
		sum := sha256.Sum256([]byte(schema))
		name = "strata_sql_" + hex.EncodeToString(sum[:16])
	}
	return name
}
