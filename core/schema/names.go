package schema

import (
	"slices"
	"strings"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// reservedPrefixes start names no user table or field may have. sys_ is
// Strata's own tables. sqlite_ is what SQLite keeps for itself (CREATE
// TABLE sqlite_x fails there), and pg_ what PostgreSQL keeps for its
// catalogs (which it searches before the app's schema, so free SQL naming
// pg_x could reach the catalog's instead of the app's). Both are refused
// on both engines: a name accepted on one would make an app, or a backup
// of it, that the other cannot hold.
var reservedPrefixes = []string{store.SystemTablePrefix, "sqlite_", "pg_"}

// ReservedPrefix returns the reserved prefix name starts with, or "".
func ReservedPrefix(name string) string {
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(name, p) {
			return p
		}
	}
	return ""
}

// CheckTableName is nil when name may name a user table, else
// ErrInvalidTableName saying why. Every place a table name comes in (the
// schema API, a DBML import, the BraDypUS upgrade, a restore) asks here.
func CheckTableName(name string) error { return checkName(name, ErrInvalidTableName, nil) }

// CheckFieldName is CheckTableName for a field: the same rule, and not
// one of the system columns.
func CheckFieldName(name string) error {
	return checkName(name, ErrInvalidFieldName, reservedColumns)
}

// ValidTableName reports whether name may name a user table.
func ValidTableName(name string) bool { return CheckTableName(name) == nil }

func checkName(name string, refuse *errs.Error, system []string) error {
	if !store.ValidIdent(name) {
		return refuse.With("name", name).With("detail", "a lower-case letter, then lower-case letters, digits or underscores (at most 63)")
	}
	if p := ReservedPrefix(name); p != "" {
		return refuse.With("name", name).With("reserved_prefix", p).
			With("detail", "names starting with sys_, sqlite_ or pg_ are reserved for Strata and the database engines")
	}
	if slices.Contains(system, name) {
		return refuse.With("name", name).With("detail", name+" is a system column")
	}
	return nil
}
