package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"gorm.io/driver/postgres"
)

// Replacer is a Backend that can replace an app's whole database at once:
// the new one is built beside the live one by init and swapped in only
// when init succeeded, so readers see the old app or the new one, never a
// mixture, and a failure leaves the live app as it was. A restore uses it.
type Replacer interface {
	// Replace builds the app's new database with init and swaps it in.
	// Before the swap, ready runs with the live app untouched (the
	// registry closes its handles there); it may be nil.
	Replace(ctx context.Context, name string, init func(ctx context.Context, db *DB) error, ready func()) error
}

// Replace builds the new database in a hidden folder, then, under the
// backend's lock, moves the live folder aside and the new one into its
// place (two renames in one directory) and deletes the old one.
func (b *SQLiteBackend) Replace(ctx context.Context, name string, init func(context.Context, *DB) error, ready func()) (err error) {
	if ok, err := b.Exists(ctx, name); err != nil {
		return err
	} else if !ok {
		return ErrAppNotFound
	}
	tmp, err := b.buildBeside(ctx, "replace-"+name, init)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	b.mu.Lock()
	defer b.mu.Unlock()
	if ready != nil {
		ready()
	}
	trash := filepath.Join(b.appsDir, creatingPrefix+"replaced-"+name+"-"+randomHex(6))
	if err := os.Rename(b.AppDir(name), trash); err != nil {
		return fmt.Errorf("replace app %s: %w", name, err)
	}
	if err := os.Rename(tmp, b.AppDir(name)); err != nil {
		// Put the live app back: nothing was lost.
		_ = os.Rename(trash, b.AppDir(name))
		return fmt.Errorf("replace app %s: %w", name, err)
	}
	_ = os.RemoveAll(trash)
	return nil
}

// Replace builds the new app in a fresh schema in one transaction, then in
// a second one renames the live schema aside, the new one into its name,
// points the new schema's functions at their final search_path (they keep
// the one they were created with) and drops the old schema. Other nodes
// keep using the same schema name, so they see the new app at once.
func (b *PostgresBackend) Replace(ctx context.Context, name string, init func(context.Context, *DB) error, ready func()) error {
	live, err := b.lookup(ctx, b.pool, name)
	if err != nil {
		return err
	}
	building := shortName(live, "_r"+randomHex(4))
	g, err := newGorm(postgres.New(postgres.Config{Conn: b.pool}), building)
	if err != nil {
		return fmt.Errorf("gorm on postgres: %w", err)
	}
	base := &DB{Engine: Postgres, Gorm: g, SQL: b.pool, schema: building, pool: b.pool, gen: new(atomic.Uint64)}
	err = base.Tx(ctx, func(tx *DB) error {
		if _, err := tx.SQL.ExecContext(ctx, `CREATE SCHEMA `+quoteIdent(building)); err != nil {
			return fmt.Errorf("create schema %s: %w", building, err)
		}
		return init(ctx, tx)
	})
	if err != nil {
		return err
	}
	if ready != nil {
		ready()
	}
	old := shortName(live, "_o"+randomHex(4))
	tx, err := b.pool.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	steps := []string{
		`ALTER SCHEMA ` + quoteIdent(live) + ` RENAME TO ` + quoteIdent(old),
		`ALTER SCHEMA ` + quoteIdent(building) + ` RENAME TO ` + quoteIdent(live),
	}
	for _, q := range steps {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("swap schema of %s: %w", name, err)
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p
		JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = $1 AND p.proconfig IS NOT NULL`, live)
	if err != nil {
		return fmt.Errorf("functions of %s: %w", name, err)
	}
	var funcs []string
	for rows.Next() {
		var f string
		if err := rows.Scan(&f); err != nil {
			rows.Close()
			return err
		}
		funcs = append(funcs, f)
	}
	rows.Close()
	for _, f := range funcs {
		// regprocedure text is schema-qualified and quoted as needed.
		if _, err := tx.ExecContext(ctx, `ALTER FUNCTION `+f+` SET search_path = `+quoteIdent(live)); err != nil {
			return fmt.Errorf("function %s: %w", f, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DROP SCHEMA `+quoteIdent(old)+` CASCADE`); err != nil {
		return fmt.Errorf("drop replaced schema of %s: %w", name, err)
	}
	return tx.Commit()
}

// shortName appends suffix to a schema name within PostgreSQL's 63 bytes.
func shortName(base, suffix string) string {
	if len(base)+len(suffix) > 63 {
		base = base[:63-len(suffix)]
	}
	return base + suffix
}
