package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/stdlib"
)

// confinedConnLimit bounds the connections of one app's role: free SQL
// of one tenant cannot take the server's connections.
const confinedConnLimit = 4

// ErrConfinedBusy: the app already runs as many statements as its role
// may (confinedConnLimit).
var ErrConfinedBusy = ErrBusy.With("detail", "this application already runs as many free SQL statements as it may at once")

// ConfinedRole names the login role of an app's schema. Roles belong to
// the whole PostgreSQL cluster while schemas belong to one database, so
// the name carries a hash of both: two Strata instances on two databases
// of one cluster never share a role. 63 bytes at most.
func ConfinedRole(database, schema string) string {
	sum := sha256.Sum256([]byte(database + "\x00" + schema))
	suffix := "_" + hex.EncodeToString(sum[:5])
	name := "strata_sql_" + schema
	if len(name)+len(suffix) > 63 {
		name = name[:63-len(suffix)]
	}
	return name + suffix
}

// runConfinedPostgres logs in as the app's role and runs the statement
// there (see ConfineOptions).
func (db *DB) runConfinedPostgres(ctx context.Context, query string, opt ConfineOptions, rows func(*sql.Rows) error) (int64, error) {
	conn, err := db.loginAsAppRole(ctx, opt)
	if err != nil {
		return 0, err
	}
	// Whatever the statement set on its session dies with it.
	defer conn.Close()
	c, err := conn.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if opt.Write {
		var affected int64
		err := c.Raw(func(dc any) error {
			pc := dc.(*stdlib.Conn).Conn()
			tx, err := pc.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadWrite})
			if err != nil {
				return err
			}
			defer tx.Rollback(context.Background())
			// ExecParams: the extended protocol, which refuses a second
			// statement in the text (pgx's Exec without arguments would
			// send the simple protocol, which runs them all).
			tag, err := pc.PgConn().ExecParams(ctx, query, nil, nil, nil, nil).Close()
			if err != nil {
				return err
			}
			affected = tag.RowsAffected()
			return tx.Commit(ctx)
		})
		return affected, confinedPostgresError(err)
	}
	tx, err := c.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	// database/sql's query goes through pgx's Query in the connection's
	// describe-exec mode: the extended protocol, one statement.
	r, err := tx.QueryContext(ctx, query)
	if err != nil {
		return 0, confinedPostgresError(err)
	}
	err = rows(r)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.Err()
	}
	if err != nil {
		return 0, confinedPostgresError(err)
	}
	return 0, confinedPostgresError(tx.Commit())
}

func confinedPostgresError(err error) error {
	if err == nil {
		return nil
	}
	var big *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &big) {
		return ErrConfinedTooLarge.Wrap(err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42601" && strings.Contains(pgErr.Message, "multiple commands") {
		return ErrConfinedOneStatement
	}
	return err
}

// loginAsAppRole makes sure the app's role exists with the rights free SQL
// has (reads of the app's tables but its credentials, changes of its own
// user tables, its sequences; nothing else is granted, and it is a member
// of no role), and opens one connection that logs in as it. The role's
// password is random, set for the login alone and removed after it; logins
// of one app queue on an advisory lock so they do not change it under
// each other.
func (db *DB) loginAsAppRole(ctx context.Context, opt ConfineOptions) (*sql.DB, error) {
	owner, err := db.pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer owner.Close()
	var database string
	if err := owner.QueryRowContext(ctx, `SELECT current_database()`).Scan(&database); err != nil {
		return nil, err
	}
	role := ConfinedRole(database, db.schema)
	lockKey := "strata-confined:" + role
	if _, err := owner.ExecContext(ctx, `SELECT pg_advisory_lock(hashtext($1))`, lockKey); err != nil {
		return nil, err
	}
	defer func() {
		var unlocked bool
		err := owner.QueryRowContext(context.Background(), `SELECT pg_advisory_unlock(hashtext($1))`, lockKey).Scan(&unlocked)
		if err != nil || !unlocked {
			// A session lock left on a pooled connection would block this
			// app's free SQL for good: the connection goes, and the lock
			// with it.
			_ = owner.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	password := randomHex(24)
	if err := db.grantAppRole(ctx, owner, role, password, opt); err != nil {
		return nil, err
	}
	defer func() {
		// The password existed for this login only.
		_, _ = owner.ExecContext(context.Background(), `ALTER ROLE `+quoteIdent(role)+` PASSWORD NULL`)
	}()

	cfg := db.pgcfg.Copy()
	cfg.User = role
	cfg.Password = password
	cfg.Fallbacks = nil
	cfg.Tracer = nil
	cfg.DefaultQueryExecMode = pgx.QueryExecModeDescribeExec
	ms := strconv.FormatInt(max(opt.Timeout.Milliseconds(), 1), 10)
	cfg.RuntimeParams["search_path"] = quoteIdent(db.schema)
	cfg.RuntimeParams["statement_timeout"] = ms
	cfg.RuntimeParams["lock_timeout"] = ms
	cfg.RuntimeParams["idle_in_transaction_session_timeout"] = ms
	cfg.RuntimeParams["application_name"] = "strata-free-sql"
	maxBody := opt.MaxValueBytes
	cfg.AfterConnect = func(_ context.Context, pc *pgconn.PgConn) error {
		// A row larger than this is refused as it arrives, before it is
		// held in memory.
		pc.Frontend().SetMaxBodyLen(maxBody)
		return nil
	}
	conn := stdlib.OpenDB(*cfg)
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	if err := conn.PingContext(ctx); err != nil {
		conn.Close()
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "53300" { // too_many_connections
			return nil, ErrConfinedBusy.Wrap(err)
		}
		return nil, fmt.Errorf("free SQL: log in as the app's role: %w", err)
	}
	return conn, nil
}

// grantAppRole creates the role when missing and brings its rights up to
// date with the app's tables (tables made since the last run, a credential
// table that must stay out), in one transaction of the owner.
func (db *DB) grantAppRole(ctx context.Context, owner *sql.Conn, role, password string, opt ConfineOptions) error {
	tx, err := owner.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var exists bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, role).Scan(&exists); err != nil {
		return err
	}
	qr, qs := quoteIdent(role), quoteIdent(db.schema)
	if !exists {
		// NOINHERIT and no membership: the role has what is granted to it
		// below and to PUBLIC, nothing else, and cannot SET ROLE to any
		// other. The owner becomes a member of it (never the reverse), so
		// it may drop what the role made when the app is dropped.
		if _, err := tx.ExecContext(ctx, `CREATE ROLE `+qr+` LOGIN NOINHERIT NOCREATEDB NOCREATEROLE CONNECTION LIMIT `+strconv.Itoa(confinedConnLimit)); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "42501" {
				return ErrConfinedUnavailable.Wrap(err)
			}
			return fmt.Errorf("free SQL: create the app's role: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `GRANT `+qr+` TO CURRENT_USER`); err != nil {
			return fmt.Errorf("free SQL: %w", err)
		}
	}
	tables, err := db.schemaTables(ctx, tx)
	if err != nil {
		return err
	}
	hidden := map[string]bool{}
	for _, h := range opt.Hidden {
		hidden[SystemTablePrefix+h] = true
	}
	steps := []string{
		`ALTER ROLE ` + qr + ` LOGIN PASSWORD '` + password + `'`, // hex: no quote to escape
		`REVOKE ALL ON ALL TABLES IN SCHEMA ` + qs + ` FROM ` + qr,
		`GRANT USAGE ON SCHEMA ` + qs + ` TO ` + qr,
		`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ` + qs + ` TO ` + qr,
	}
	for _, t := range tables {
		qt := qs + "." + quoteIdent(t)
		switch {
		case hidden[t]:
		case strings.HasPrefix(t, SystemTablePrefix):
			steps = append(steps, `GRANT SELECT ON `+qt+` TO `+qr)
		default:
			steps = append(steps, `GRANT SELECT, INSERT, UPDATE, DELETE ON `+qt+` TO `+qr)
		}
	}
	for _, q := range steps {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("free SQL: grant the app's role: %w", err)
		}
	}
	return tx.Commit()
}

// schemaTables lists the tables of the app's schema, with names this
// package can quote.
func (db *DB) schemaTables(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename`, db.schema)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		if ValidIdent(t) {
			out = append(out, t)
		}
	}
	return out, rows.Err()
}

// dropConfinedRole removes an app's role with what it made (large
// objects), after its schema is gone.
func dropConfinedRole(ctx context.Context, pool *sql.DB, schema string) error {
	var database string
	if err := pool.QueryRowContext(ctx, `SELECT current_database()`).Scan(&database); err != nil {
		return err
	}
	role := ConfinedRole(database, schema)
	var exists bool
	if err := pool.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, role).Scan(&exists); err != nil || !exists {
		return err
	}
	for _, q := range []string{`DROP OWNED BY ` + quoteIdent(role), `DROP ROLE ` + quoteIdent(role)} {
		if _, err := pool.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("drop role %s: %w", role, err)
		}
	}
	return nil
}
