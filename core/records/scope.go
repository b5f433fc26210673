package records

import (
	"context"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Cond is a WHERE fragment with '?' markers and its bound values, built
// by the filter language from catalog identifiers only.
type Cond struct {
	SQL  string
	Args []any
	// As, when set, is the same condition rendered for a query that names
	// the table alias instead (filter.Options.RootAlias): the sync pull
	// judges a record's past state, a one-row stand-in for the table,
	// with it (records.SeenAt). Nil: the condition cannot be re-rendered.
	As func(ctx context.Context, alias string) (*Cond, error)
}

// Scope is one caller working on one table: everything a records
// operation needs to decide what it may see and change.
type Scope struct {
	DB      *store.DB
	Catalog *schema.Catalog
	Table   *schema.Table
	Actor   *auth.Actor
	// Level is the caller's effective level on Table (per-table override
	// or global level).
	Level int
	// Restrict is the caller's row subset on Table (nil: every row). It is
	// ANDed into every read and write.
	Restrict *Cond
	// Access resolves the caller's level and row subset on another table
	// of the catalog: a record shows another table's values (lookup
	// labels, links, manual links) and a save accepts its ids only as far
	// as the caller may read them there. It must not query the database
	// per call (the caller's overrides are loaded once per request). Nil:
	// other tables are read at Level without a subset (internal callers
	// acting for the whole application).
	Access func(ctx context.Context, t *schema.Table) (TableAccess, error)
	Now    func() time.Time

	// App names the application (for plugin calls).
	App string
	// Features are the plugin features active on Table; Sections the
	// plugin sections of its full record; SchemaFlags the flags they set
	// in the record's schema (e.g. has_chronology).
	Features    []ActiveFeature
	Sections    []Section
	SchemaFlags map[string]bool
	// Files gives the full record's `files` (nil: always empty).
	Files FilesSource
	// HookLog reports an AfterSave failure (the save itself succeeded).
	HookLog func(feature string, err error)

	// SystemActor, when set, names the system actor a save is made by
	// (SaveAsPlugin: "plugin:<name>"); its versions store it.
	SystemActor string
	// UncheckedLog reports, once the save committed, a row saved without
	// a non-required feature's BeforeSave (unchecked.go).
	UncheckedLog func(u Unchecked)

	batch *Batch  // set while a Batch writes (batch.go)
	dry   *dryIDs // set for a dry run (dryrun.go)
}

// TableAccess is the caller's level and row subset on one table.
type TableAccess struct {
	Level    int
	Restrict *Cond // nil: every row
}

// Readable reports whether the caller may read the table at all.
func (a TableAccess) Readable() bool { return auth.Read.Allows(a.Level) }

// accessTo is the caller's access to t: the scope's own for its table; a
// plugin table's is its parent's, restricted to the parent's rows.
func (s *Scope) accessTo(ctx context.Context, t *schema.Table) (TableAccess, error) {
	if t.Name == s.Table.Name {
		return TableAccess{Level: s.Level, Restrict: s.Restrict}, nil
	}
	if t.IsPlugin {
		parent, ok := s.Catalog.Table(t.PluginOf)
		if !ok {
			return TableAccess{Level: auth.Pending}, nil
		}
		pa, err := s.accessTo(ctx, parent)
		if err != nil || pa.Restrict == nil {
			return pa, err
		}
		q := s.DB.Qualify(parent.Name)
		pa.Restrict = &Cond{SQL: s.DB.Qualify(t.Name) + "." + s.DB.Engine.Quote(schema.ColIDLink) + ` IN (SELECT ` + q +
			`."id" FROM ` + q + ` WHERE ` + pa.Restrict.SQL + `)`, Args: pa.Restrict.Args}
		return pa, nil
	}
	if s.Access == nil {
		return TableAccess{Level: s.Level}, nil
	}
	return s.Access(ctx, t)
}

func (s *Scope) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC()
	}
	return s.Now().UTC()
}

// CanAdd reports whether the caller may create records in the table.
func (s *Scope) CanAdd() bool { return auth.AddNew.Allows(s.Level) && !s.Table.IsPlugin }

// CanEdit reports whether the caller may change or delete a row created by
// creator: writers and above any row, a self_writer only its own.
func (s *Scope) CanEdit(creator *int64) bool {
	return auth.CanEditRow(s.Level, s.Actor.UserID, creator)
}

// Errors of record operations.
var (
	ErrRecordNotFound   = errs.New(errs.NotFound, "record_not_found", "no such record")
	ErrInvalidField     = errs.New(errs.Invalid, "invalid_field", "unknown field")
	ErrInvalidParameter = errs.New(errs.Invalid, "invalid_parameter", "a parameter is not valid")
	ErrNotEnough        = auth.ErrNotEnoughPrivilege
	ErrValidation       = errs.New(errs.Invalid, "validation_failed", "some values are not valid")
	ErrInvalidID        = errs.New(errs.Invalid, "invalid_id", "ids are positive integers")
	errRecordReferenced = errs.New(errs.Conflict, "record_in_use", "other records refer to this record through a relation")
)

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// where joins the table's restriction and an optional extra condition.
// Where is the WHERE condition of the scope's rows matching extra: extra
// ANDed with the caller's row subset. Areas that query the table with SQL
// of their own (aggregates) put it in their WHERE, never their own
// reading of the subset.
func (s *Scope) Where(extra *Cond) (string, []any) { return s.where(extra) }

func (s *Scope) where(extra *Cond) (string, []any) {
	parts, args := []string{}, []any{}
	for _, c := range []*Cond{s.Restrict, extra} {
		if c != nil && c.SQL != "" {
			parts = append(parts, "("+c.SQL+")")
			args = append(args, c.Args...)
		}
	}
	if len(parts) == 0 {
		return "1 = 1", nil
	}
	sql := parts[0]
	for _, p := range parts[1:] {
		sql += " AND " + p
	}
	return sql, args
}

// column returns the quoted column of the table, qualified by its name.
func (s *Scope) column(name string) string {
	return s.DB.Qualify(s.Table.Name) + "." + s.DB.Engine.Quote(name)
}

// dbTypeOf is the storage type of a field or system column.
func dbTypeOf(t *schema.Table, name string) (schema.DBType, bool) {
	if t.IsSystemColumn(name) {
		return schema.DBInt, true
	}
	if f, ok := t.Field(name); ok {
		return f.DBType, true
	}
	return "", false
}
