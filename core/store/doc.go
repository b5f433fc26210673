// Package store owns the two storage engines (SQLite, one file per app;
// PostgreSQL, one schema per app), the SQL dialect differences between them,
// identifier validation and quoting, and the system-table migration runner.
//
// Everything above this package speaks to an app's database through *DB,
// which always qualifies names with the app's schema so that no query of one
// application can reach another's tables.
package store
