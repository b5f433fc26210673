package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/strata-archaeo/strata/core/errs"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/schema"
)

// Execer is what both *sql.DB and *sql.Tx offer.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// DB is one application's database: gorm for system tables, raw SQL for the
// hand-built queries on user tables. Within Tx both are bound to the same
// transaction.
type DB struct {
	Engine Engine
	Gorm   *gorm.DB
	SQL    Execer

	schema string  // PostgreSQL schema of the app; "" on SQLite
	pool   *sql.DB // the pool, closed by Close when owned
	owned  bool    // whether Close closes pool (SQLite: one pool per app)
	tx     bool    // true inside Tx
	// gen counts the write transactions committed through this app's DB
	// in this process (shared with its transactions' copies): caches of
	// derived values (list totals) are keyed by it.
	gen *atomic.Uint64
	// writer admits one write transaction of this process at a time
	// (SQLite; nil on PostgreSQL), and group queues the transactions
	// waiting for it (groupcommit.go).
	writer chan struct{}
	group  *groupCommit
	// stmts is the SQLite pool's statement cache, closed with the pool
	// (SQL and gorm run through it: cachedConn); nil on PostgreSQL.
	stmts *stmtCache
	// ptx is the PostgreSQL transaction the DB is bound to (pgtx.go).
	ptx *pgTx
	// hooks run around the commit of the transaction the DB is bound to
	// (commithooks.go).
	hooks *txHooks
	// file is the SQLite database file, and pgcfg what the PostgreSQL
	// pool connects with: RunConfined opens connections of its own.
	file  string
	pgcfg *pgx.ConnConfig
}

// Generation identifies the app's data as this process last changed it:
// it moves on every committed write transaction. Writes by other nodes do
// not move it, so what is cached by it must also expire.
func (db *DB) Generation() (id *atomic.Uint64, n uint64) {
	if db.gen == nil {
		return nil, 0
	}
	return db.gen, db.gen.Load()
}

// ErrBusy: a write transaction waited longer than the busy timeout for
// the app's writer (SQLite).
var ErrBusy = errs.New(errs.Unavailable, "database_busy", "the database is busy; retry in a moment")

// SystemTablePrefix marks tables that belong to Strata, not to users.
const SystemTablePrefix = "sys_"

// Schema returns the PostgreSQL schema of the app ("" on SQLite).
func (db *DB) Schema() string { return db.schema }

// Qualify returns the quoted, schema-qualified name of table. The name must
// already be validated against the catalog; see quoteIdent.
func (db *DB) Qualify(table string) string {
	if db.schema == "" {
		return quoteIdent(table)
	}
	return quoteIdent(db.schema) + "." + quoteIdent(table)
}

// GormSys returns the unquoted, schema-qualified name of sys_<name> for
// gorm's Table(), which does its own quoting.
func (db *DB) GormSys(name string) string {
	if !ValidIdent(SystemTablePrefix + name) {
		panic(fmt.Sprintf("store: invalid system table %q", name))
	}
	if db.schema == "" {
		return SystemTablePrefix + name
	}
	return db.schema + "." + SystemTablePrefix + name
}

// Sys returns the qualified name of the system table sys_<name>.
func (db *DB) Sys(name string) string { return db.Qualify(SystemTablePrefix + name) }

// Exec runs a statement written with '?' markers. Outside a transaction,
// under a context whose request may be run again on other versions
// (Assumed), the assumption is confirmed first: an autocommitted write is
// never made by a run that is dropped.
func (db *DB) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if !db.tx {
		if err := Confirm(ctx, db); err != nil {
			return nil, err
		}
	}
	return db.SQL.ExecContext(ctx, db.Engine.Rebind(query), args...)
}

// Query runs a query written with '?' markers.
func (db *DB) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return db.SQL.QueryContext(ctx, db.Engine.Rebind(query), args...)
}

// QueryRow runs a single-row query written with '?' markers.
func (db *DB) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return db.SQL.QueryRowContext(ctx, db.Engine.Rebind(query), args...)
}

// Tx runs fn in one transaction: committed when fn returns nil, rolled back
// otherwise (and on panic). A nested call joins the outer transaction, so
// an error anywhere rolls back the whole unit.
//
// On SQLite, transactions that queue for the app's one writer while
// another is written are committed together, each in a savepoint of its
// own (groupcommit.go): fn's work is undone alone when it fails, and Tx
// returns only after the shared COMMIT.
//
// On SQLite the transaction is BEGIN IMMEDIATE (the DSN's _txlock): it
// takes the write lock at the start, so concurrent transactions that read
// then write queue on the busy timeout instead of failing with SQLITE_BUSY
// when they upgrade. With gorm's prepared statements on (SQLite), the
// transaction's raw SQL runs through them too (gorm's PreparedStmtTX), so
// a save parses none of its statements after the first time.
func (db *DB) Tx(ctx context.Context, fn func(tx *DB) error) error {
	if db.tx {
		return fn(db)
	}
	if db.writer != nil {
		return db.sqliteTx(ctx, fn) // groupcommit.go
	}
	var err error
	if db.Engine == Postgres && db.pool != nil {
		err = db.runPgTx(ctx, fn)
	} else if err = Confirm(ctx, db); err != nil {
		return err
	} else {
		var hooks *txHooks
		if hooks, err = db.gormTx(ctx, ctx, fn); err == nil && hooks != nil {
			defer hooks.runAfter(db)
		}
	}
	if err == nil && db.gen != nil {
		db.gen.Add(1)
	}
	return err
}

// gormTx runs fn in one gorm transaction under txCtx (ctx, or ctx marked
// for the writer's connection), the commit hooks to run before COMMIT
// included; it returns those to run after it.
func (db *DB) gormTx(ctx, txCtx context.Context, fn func(tx *DB) error) (*txHooks, error) {
	var hooks *txHooks
	err := db.Gorm.WithContext(txCtx).Transaction(func(gtx *gorm.DB) error {
		tx := db.bindTx(gtx, gtx.Statement.ConnPool)
		hooks = tx.hooks
		if err := fn(tx); err != nil {
			return err
		}
		return hooks.runBefore(ctx, tx)
	})
	return hooks, err
}

// bindTx returns a copy of db whose gorm and raw SQL both run on conn (a
// *sql.Tx or a *sql.Conn inside BEGIN ... COMMIT).
func (db *DB) bindTx(g *gorm.DB, conn gorm.ConnPool) *DB {
	ex, ok := conn.(Execer)
	if !ok {
		panic(fmt.Sprintf("store: transaction connection %T is not an Execer", conn))
	}
	g.Statement.ConnPool = conn
	c := *db
	c.Gorm = g
	c.SQL = ex
	c.tx = true
	c.owned = false
	c.hooks = &txHooks{keys: map[string]bool{}}
	return &c
}

// InTx reports whether db is bound to a transaction.
func (db *DB) InTx() bool { return db.tx }

// Close releases the app's pool when it owns one (SQLite). PostgreSQL apps
// share the instance pool, which the backend closes.
func (db *DB) Close() error {
	if db.stmts != nil && db.owned {
		db.stmts.close()
	}
	if db.owned && db.pool != nil {
		return db.pool.Close()
	}
	return nil
}

// newGorm wraps an open pool (or transaction) in gorm, naming system models
// after their table with the app's schema in front, so a model User maps to
// "<schema>"."sys_users".
func newGorm(dialector gorm.Dialector, schemaName string) (*gorm.DB, error) {
	prefix := SystemTablePrefix
	if schemaName != "" {
		prefix = schemaName + "." + SystemTablePrefix
	}
	return gorm.Open(dialector, &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		QueryFields:            true, // explicit column lists, never SELECT *
		NamingStrategy:         schema.NamingStrategy{TablePrefix: prefix},
		TranslateError:         true,
		// No PrepareStmt: on SQLite gorm's pool is the statement cache
		// (cachedConn), which also serves transactions; PostgreSQL's
		// driver caches statements itself.
	})
}

// Pool is the connection pool under the app (for work that needs its own
// connection, such as a backup's read snapshot).
func (db *DB) Pool() *sql.DB { return db.pool }
