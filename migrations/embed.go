// Package migrations holds the numbered system-table migrations, one SQL
// file per engine and step (sqlite/NNNN_name.sql, postgres/NNNN_name.sql).
// Both folders must list the same steps; a test compares the tables and
// columns they produce on the two engines.
//
// PostgreSQL files are run with search_path set to the app's schema, so they
// use unqualified names. Files must be idempotent only in the sense that the
// runner never applies a recorded step twice.
package migrations

import "embed"

// FS holds sqlite/*.sql and postgres/*.sql.
//
//go:embed sqlite/*.sql postgres/*.sql
var FS embed.FS
