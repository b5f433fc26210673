package store

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/migrations"
)

// Migration is one numbered step of the system-table schema.
type Migration struct {
	ID   int
	Name string
	SQL  string
}

// AppliedMigration is a step recorded in an app's sys_migrations.
type AppliedMigration struct {
	ID        int       `json:"id"`
	Name      string    `json:"name"`
	AppliedAt time.Time `json:"applied_at"`
}

var migrationFile = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// LoadMigrations returns the engine's migrations in order. It fails on a
// malformed file name, a duplicate or a gap in the numbering.
func LoadMigrations(engine Engine) ([]Migration, error) {
	return loadMigrationsFrom(migrations.FS, string(engine))
}

func loadMigrationsFrom(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations %s: %w", dir, err)
	}
	var out []Migration
	for _, e := range entries {
		m := migrationFile.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %s/%s: name must be NNNN_name.sql", dir, e.Name())
		}
		id, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{ID: id, Name: m[2], SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	for i, m := range out {
		if m.ID != i+1 {
			return nil, fmt.Errorf("migrations %s: expected step %04d, found %04d_%s", dir, i+1, m.ID, m.Name)
		}
	}
	return out, nil
}

func (db *DB) ensureMigrationTable(ctx context.Context) error {
	stamp := "DATETIME"
	if db.Engine == Postgres {
		stamp = "timestamptz"
	}
	_, err := db.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+db.Sys("migrations")+` (
		id integer PRIMARY KEY,
		name text NOT NULL,
		applied_at `+stamp+` NOT NULL)`)
	if err != nil {
		return fmt.Errorf("create sys_migrations: %w", err)
	}
	return nil
}

// AppliedMigrations lists the steps recorded in the app, in order. It only
// reads: the table exists from the first Migrate, which app creation runs.
func (db *DB) AppliedMigrations(ctx context.Context) ([]AppliedMigration, error) {
	rows, err := db.Query(ctx, `SELECT id, name, applied_at FROM `+db.Sys("migrations")+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("read sys_migrations: %w", err)
	}
	defer rows.Close()
	var out []AppliedMigration
	for rows.Next() {
		var a AppliedMigration
		if err := rows.Scan(&a.ID, &a.Name, &a.AppliedAt); err != nil {
			return nil, fmt.Errorf("read sys_migrations: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// PendingMigrations returns the steps the app has not applied yet.
func (db *DB) PendingMigrations(ctx context.Context) ([]Migration, error) {
	all, err := LoadMigrations(db.Engine)
	if err != nil {
		return nil, err
	}
	applied, err := db.AppliedMigrations(ctx)
	if err != nil {
		return nil, err
	}
	done := make(map[int]bool, len(applied))
	for _, a := range applied {
		done[a.ID] = true
	}
	var pending []Migration
	for _, m := range all {
		if !done[m.ID] {
			pending = append(pending, m)
		}
	}
	return pending, nil
}

// Migrate applies every pending step, each in its own transaction together
// with its record in sys_migrations and the schema_version setting, so a
// step is either fully applied and recorded or not at all. It is safe to run
// concurrently from several processes: each step re-checks, under the
// write lock, that nobody applied it meanwhile.
func (db *DB) Migrate(ctx context.Context, now func() time.Time) ([]Migration, error) {
	return db.MigrateTo(ctx, now, 0)
}

// MigrateTo applies the pending steps up to and including step target
// (0: all of them), as Migrate does. A restore brings an archive's system
// tables to the step it was made at, loads it, then migrates the rest.
func (db *DB) MigrateTo(ctx context.Context, now func() time.Time, target int) ([]Migration, error) {
	if err := db.ensureMigrationTable(ctx); err != nil {
		return nil, err
	}
	pending, err := db.PendingMigrations(ctx)
	if err != nil {
		return nil, err
	}
	var applied []Migration
	for _, m := range pending {
		if target > 0 && m.ID > target {
			break
		}
		ran, err := db.applyMigration(ctx, m, now().UTC())
		if err != nil {
			return applied, fmt.Errorf("migration %04d_%s: %w", m.ID, m.Name, err)
		}
		if ran {
			applied = append(applied, m)
		}
	}
	return applied, nil
}

func (db *DB) applyMigration(ctx context.Context, m Migration, at time.Time) (ran bool, err error) {
	err = db.Tx(ctx, func(tx *DB) error {
		if tx.Engine == Postgres {
			// Serialise migrators of this schema, and let the file use
			// unqualified names for the duration of this transaction only.
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(?))`, "strata-migrate:"+tx.schema); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+quoteIdent(tx.schema)); err != nil {
				return err
			}
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+tx.Sys("migrations")+` WHERE id = ?`, m.ID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil // another process applied it first
		}
		if strings.TrimSpace(m.SQL) != "" {
			if _, err := tx.SQL.ExecContext(ctx, m.SQL); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("migrations")+` (id, name, applied_at) VALUES (?, ?, ?)`, m.ID, m.Name, at); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("settings")+` (key, value) VALUES ('schema_version', ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.Itoa(m.ID)); err != nil {
			return err
		}
		if tx.Engine == Postgres {
			if _, err := tx.Exec(ctx, `SET LOCAL search_path TO pg_catalog`); err != nil {
				return err
			}
		}
		ran = true
		return nil
	})
	return ran, err
}
