package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
)

// DefaultNamespace names the registry schema and prefixes every app schema.
const DefaultNamespace = "strata"

// PostgresOptions tunes the PostgreSQL backend.
type PostgresOptions struct {
	// Namespace keeps several independent Strata instances (or test runs)
	// apart in one database: the registry lives in schema <ns>, apps in
	// schemas <ns>_<app>. Defaults to DefaultNamespace.
	Namespace string
	// MaxConns caps the shared pool (default 20).
	MaxConns int
}

// PostgresBackend keeps every app in its own schema of one database, with a
// registry table listing them. All apps share one connection pool.
type PostgresBackend struct {
	pool *sql.DB
	ns   string
	conn *pgx.ConnConfig // what the pool connects with, for services that need their own pool
}

// OpenPostgres connects to url and makes sure the registry exists.
//
// Every connection runs with search_path = pg_catalog, so a query that
// forgets to qualify a table name fails loudly instead of silently reaching
// some other application's schema.
func OpenPostgres(ctx context.Context, url string, opts PostgresOptions) (*PostgresBackend, error) {
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if !ValidIdent(opts.Namespace) || len(opts.Namespace) > 20 {
		return nil, fmt.Errorf("invalid postgres namespace %q", opts.Namespace)
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 20
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	cfg.RuntimeParams["search_path"] = "pg_catalog"
	cfg.RuntimeParams["timezone"] = "UTC"
	cfg.Tracer = tracer{} // TraceStatements
	pool := stdlib.OpenDB(*cfg)
	pool.SetMaxOpenConns(opts.MaxConns)
	pool.SetMaxIdleConns(opts.MaxConns)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.PingContext(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	b := &PostgresBackend{pool: pool, ns: opts.Namespace, conn: cfg.Copy()}
	if err := b.ensureRegistry(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return b, nil
}

func (b *PostgresBackend) Engine() Engine { return Postgres }

// Pool exposes the shared pool (for the isolation tests and diagnostics).
func (b *PostgresBackend) Pool() *sql.DB { return b.pool }

// Namespace returns the backend's namespace.
func (b *PostgresBackend) Namespace() string { return b.ns }

// ConnConfig is a copy of the configuration the shared pool connects
// with (search_path pg_catalog, time zone UTC): for an instance-wide
// service that needs a pgx pool of its own (the job queue).
func (b *PostgresBackend) ConnConfig() *pgx.ConnConfig { return b.conn.Copy() }

// ServiceSchema names the schema of an instance-wide service (the job
// queue: ServiceSchema("jobs")): <ns>__<name>. The double underscore keeps
// it apart from every app schema (<ns>_<app>, and app names start with a
// letter); DestroyNamespace drops it with the rest.
func (b *PostgresBackend) ServiceSchema(name string) string { return b.ns + "__" + name }

func (b *PostgresBackend) registry() string {
	return quoteIdent(b.ns) + "." + quoteIdent("apps")
}

// ensureRegistry creates the registry schema and table. Concurrent
// start-ups serialise on an advisory lock, because CREATE ... IF NOT EXISTS
// can still collide on the catalog's unique index.
func (b *PostgresBackend) ensureRegistry(ctx context.Context) error {
	tx, err := b.pool.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	defer tx.Rollback()
	stmts := []string{
		`SELECT pg_advisory_xact_lock(hashtext($1))`,
		`CREATE SCHEMA IF NOT EXISTS ` + quoteIdent(b.ns),
		`CREATE TABLE IF NOT EXISTS ` + b.registry() + ` (
			name text PRIMARY KEY,
			schema_name text NOT NULL UNIQUE,
			created_at timestamptz NOT NULL DEFAULT now())`,
	}
	for i, s := range stmts {
		var args []any
		if i == 0 {
			args = []any{"strata-registry:" + b.ns}
		}
		if _, err := tx.ExecContext(ctx, s, args...); err != nil {
			return fmt.Errorf("registry: %w", err)
		}
	}
	return tx.Commit()
}

// SchemaFor returns the schema an app lives in: <ns>_<name>, or, when that
// exceeds PostgreSQL's 63-byte identifier limit, a truncated name with a
// hash suffix so distinct apps never share a schema.
func (b *PostgresBackend) SchemaFor(name string) string {
	s := b.ns + "_" + name
	if len(s) <= 63 {
		return s
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "_" + hex.EncodeToString(sum[:4])
	return s[:63-len(suffix)] + suffix
}

func (b *PostgresBackend) lookup(ctx context.Context, ex Execer, name string) (string, error) {
	var schemaName string
	err := ex.QueryRowContext(ctx, `SELECT schema_name FROM `+b.registry()+` WHERE name = $1`, name).Scan(&schemaName)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrAppNotFound
	}
	if err != nil {
		return "", fmt.Errorf("look up app %s: %w", name, err)
	}
	return schemaName, nil
}

func (b *PostgresBackend) Exists(ctx context.Context, name string) (bool, error) {
	_, err := b.lookup(ctx, b.pool, name)
	if errors.Is(err, ErrAppNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (b *PostgresBackend) List(ctx context.Context) ([]string, error) {
	rows, err := b.pool.QueryContext(ctx, `SELECT name FROM `+b.registry()+` ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list apps: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

func (b *PostgresBackend) Open(ctx context.Context, name string) (*DB, error) {
	schemaName, err := b.lookup(ctx, b.pool, name)
	if err != nil {
		return nil, err
	}
	g, err := newGorm(postgres.New(postgres.Config{Conn: b.pool}), schemaName)
	if err != nil {
		return nil, fmt.Errorf("gorm on postgres: %w", err)
	}
	return &DB{Engine: Postgres, Gorm: g, SQL: b.pool, schema: schemaName, pool: b.pool, gen: new(atomic.Uint64), pgcfg: b.conn}, nil
}

// Create registers the app, creates its schema and runs init, all in one
// transaction: PostgreSQL DDL is transactional, so a failure anywhere
// leaves neither a registry row nor a schema.
func (b *PostgresBackend) Create(ctx context.Context, name string, init func(context.Context, *DB) error) error {
	schemaName := b.SchemaFor(name)
	g, err := newGorm(postgres.New(postgres.Config{Conn: b.pool}), schemaName)
	if err != nil {
		return fmt.Errorf("gorm on postgres: %w", err)
	}
	base := &DB{Engine: Postgres, Gorm: g, SQL: b.pool, schema: schemaName, pool: b.pool, gen: new(atomic.Uint64)}
	return base.Tx(ctx, func(tx *DB) error {
		_, err := tx.SQL.ExecContext(ctx, `INSERT INTO `+b.registry()+` (name, schema_name) VALUES ($1, $2)`, name, schemaName)
		if isUniqueViolation(err) {
			return ErrAppExists
		}
		if err != nil {
			return fmt.Errorf("register app: %w", err)
		}
		if _, err := tx.SQL.ExecContext(ctx, `CREATE SCHEMA `+quoteIdent(schemaName)); err != nil {
			return fmt.Errorf("create schema %s: %w", schemaName, err)
		}
		return init(ctx, tx)
	})
}

func (b *PostgresBackend) Drop(ctx context.Context, name string) error {
	tx, err := b.pool.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	schemaName, err := b.lookup(ctx, tx, name)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+quoteIdent(schemaName)+` CASCADE`); err != nil {
		return fmt.Errorf("drop schema %s: %w", schemaName, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+b.registry()+` WHERE name = $1`, name); err != nil {
		return fmt.Errorf("unregister app %s: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	// The app's free-SQL role has no object left to use; it goes too.
	return dropConfinedRole(ctx, b.pool, schemaName)
}

// DestroyNamespace drops every app of the namespace, its service schemas
// and the registry itself. Tests call it to leave nothing behind.
func (b *PostgresBackend) DestroyNamespace(ctx context.Context) error {
	names, err := b.List(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := b.Drop(ctx, n); err != nil {
			return err
		}
	}
	rows, err := b.pool.QueryContext(ctx, `SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)`, b.ns+"__")
	if err != nil {
		return err
	}
	var services []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		services = append(services, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, n := range append(services, b.ns) {
		if _, err := b.pool.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+quoteIdent(n)+` CASCADE`); err != nil {
			return err
		}
	}
	return nil
}

func (b *PostgresBackend) Close() error { return b.pool.Close() }

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}
