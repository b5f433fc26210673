package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
)

// A confined statement is text a tenant wrote (free SQL). What it may
// reach is decided by the database, not by reading the text: whatever a
// checker upstream believes the statement is, RunConfined runs it where
// another app, the registry, the server's files and the session cannot be
// reached.
//
//   - SQLite: a connection of its own on the app's file, with an
//     authorizer that admits reads (and, for a write, changes) of the
//     app's own tables only — no ATTACH, PRAGMA, DDL, transaction control,
//     system or sqlite_ tables, or functions that touch files — no
//     attached databases at all (SQLITE_LIMIT_ATTACHED 0), a bounded value
//     length, and exactly one statement: SQLite's own parser must leave
//     an empty tail.
//   - PostgreSQL: a connection that logs in as the app's own role, which
//     can use only the app's schema (no SET ROLE back to anything more
//     powerful: it is a member of nothing), in a read-only transaction
//     unless the statement is a write, over the extended protocol (one
//     statement), with a statement timeout and a bound on each message;
//     the connection is closed after the statement, so nothing it set
//     outlives it.
type ConfineOptions struct {
	// Write lets the statement change rows of the app's own tables (not
	// system tables); otherwise it runs read-only.
	Write bool
	// Timeout stops the statement (default 10 s).
	Timeout time.Duration
	// MaxValueBytes bounds one value (SQLite) or one row (PostgreSQL) the
	// engine makes or sends (default 16 MiB).
	MaxValueBytes int
	// Hidden are system tables (names without the sys_ prefix) the
	// statement may not read: the app's credentials.
	Hidden []string
}

// Defaults of ConfineOptions.
const (
	defaultConfinedTimeout = 10 * time.Second
	defaultConfinedValue   = 16 << 20
)

var (
	// ErrConfinedOneStatement: the text holds more than one statement.
	ErrConfinedOneStatement = errs.New(errs.Forbidden, "statement_not_allowed", "free SQL runs one statement at a time").With("detail", "one statement at a time")
	// ErrConfinedDenied: the engine's authorizer refused something the
	// statement names (SQLite).
	ErrConfinedDenied = errs.New(errs.Forbidden, "statement_not_allowed", "free SQL runs one SELECT, INSERT, UPDATE or DELETE on this application's tables")
	// ErrConfinedTooLarge: a value or row is larger than allowed.
	ErrConfinedTooLarge = errs.New(errs.TooLarge, "sql_value_too_large", "a value of the result is larger than free SQL answers; select less (substr, length)")
	// ErrConfinedUnavailable: the server cannot make the app's own role
	// (PostgreSQL without CREATEROLE).
	ErrConfinedUnavailable = errs.New(errs.Unavailable, "free_sql_unavailable", "free SQL needs the database account to be allowed to create roles (CREATEROLE)")
)

// RunConfined runs one statement of a tenant's text on the app's data,
// confined as ConfineOptions says. A read's rows go to rows (which must
// not keep them past its return); a write answers the rows it changed.
// The write, like everything else, is all or nothing.
func (db *DB) RunConfined(ctx context.Context, query string, opt ConfineOptions, rows func(*sql.Rows) error) (affected int64, err error) {
	if opt.Timeout <= 0 {
		opt.Timeout = defaultConfinedTimeout
	}
	if opt.MaxValueBytes <= 0 {
		opt.MaxValueBytes = defaultConfinedValue
	}
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	switch {
	case db.tx:
		return 0, errors.New("store: RunConfined runs on a connection of its own, never inside a transaction")
	case db.Engine == SQLite && db.file != "":
		affected, err = db.runConfinedSQLite(ctx, query, opt, rows)
	case db.Engine == Postgres && db.pgcfg != nil && db.schema != "":
		affected, err = db.runConfinedPostgres(ctx, query, opt, rows)
	default:
		return 0, errors.New("store: RunConfined needs an app's DB opened by its backend")
	}
	if err == nil && opt.Write && db.gen != nil {
		db.gen.Add(1)
	}
	return affected, err
}
