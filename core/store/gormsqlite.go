package store

import (
	"errors"
	"strconv"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/callbacks"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/migrator"
	"gorm.io/gorm/schema"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteDialector is gorm's view of an open SQLite pool. We keep our own
// (small) dialector so that the pool is modernc.org/sqlite's driver, whose
// prepared statements keep their compiled program: the driver behind the
// usual pure-Go gorm dialector compiles every statement again on every
// execution, which was a quarter of the CPU of a read by id.
//
// gorm runs the system tables only (user tables are hand-built SQL), and
// our schema is made by migrations, never by gorm's AutoMigrate: the
// migrator is gorm's generic one, for completeness.
type sqliteDialector struct {
	conn gorm.ConnPool
}

func (sqliteDialector) Name() string { return "sqlite" }

func (d sqliteDialector) Initialize(db *gorm.DB) error {
	db.ConnPool = d.conn
	// SQLite ≥ 3.35 has RETURNING (the bundled one is 3.4x), so gorm reads
	// generated ids and defaults back in the same statement.
	callbacks.RegisterDefaultCallbacks(db, &callbacks.Config{
		CreateClauses:        []string{"INSERT", "VALUES", "ON CONFLICT", "RETURNING"},
		UpdateClauses:        []string{"UPDATE", "SET", "FROM", "WHERE", "RETURNING"},
		DeleteClauses:        []string{"DELETE", "FROM", "WHERE", "RETURNING"},
		LastInsertIDReversed: true,
	})
	db.ClauseBuilders["LIMIT"] = sqliteLimit
	db.ClauseBuilders["FOR"] = func(clause.Clause, clause.Builder) {} // no row locks: one writer
	return nil
}

// sqliteLimit writes LIMIT/OFFSET; SQLite needs a LIMIT before an OFFSET
// (-1: no limit).
func sqliteLimit(c clause.Clause, b clause.Builder) {
	l, ok := c.Expression.(clause.Limit)
	if !ok {
		c.Build(b)
		return
	}
	switch {
	case l.Limit != nil && *l.Limit >= 0:
		b.WriteString("LIMIT ")
		b.WriteString(strconv.Itoa(*l.Limit))
	case l.Offset > 0:
		b.WriteString("LIMIT -1")
	}
	if l.Offset > 0 {
		b.WriteString(" OFFSET ")
		b.WriteString(strconv.Itoa(l.Offset))
	}
}

func (d sqliteDialector) Migrator(db *gorm.DB) gorm.Migrator {
	return migrator.Migrator{Config: migrator.Config{DB: db, Dialector: d, CreateIndexAfterCreateTable: true}}
}

func (sqliteDialector) DataTypeOf(f *schema.Field) string {
	switch f.DataType {
	case schema.Bool, schema.Int, schema.Uint:
		return "integer"
	case schema.Float:
		return "real"
	case schema.String:
		return "text"
	case schema.Time:
		return "datetime"
	case schema.Bytes:
		return "blob"
	}
	return string(f.DataType)
}

func (sqliteDialector) DefaultValueOf(*schema.Field) clause.Expression {
	return clause.Expr{SQL: "NULL"}
}

func (sqliteDialector) BindVarTo(w clause.Writer, _ *gorm.Statement, _ any) { w.WriteByte('?') }

// QuoteTo quotes an identifier, possibly schema-qualified ("a.b"), doubling
// embedded quotes.
func (sqliteDialector) QuoteTo(w clause.Writer, s string) {
	for i, part := range strings.Split(s, ".") {
		if i > 0 {
			w.WriteByte('.')
		}
		w.WriteByte('"')
		w.WriteString(strings.ReplaceAll(part, `"`, `""`))
		w.WriteByte('"')
	}
}

func (sqliteDialector) Explain(sql string, vars ...any) string {
	return logger.ExplainSQL(sql, nil, `"`, vars...)
}

// Translate maps SQLite's constraint errors to gorm's, so callers test
// errors.Is(err, gorm.ErrDuplicatedKey) on both engines.
func (sqliteDialector) Translate(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return gorm.ErrDuplicatedKey
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return gorm.ErrForeignKeyViolated
	case sqlite3.SQLITE_CONSTRAINT_CHECK:
		return gorm.ErrCheckConstraintViolated
	}
	return err
}
