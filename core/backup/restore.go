package backup

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// RestoreOptions tune a restore.
type RestoreOptions struct {
	TmpDir   string           // where table parts are spooled ("" : the system's)
	Progress Progress         // parts checked, then rows loaded
	Now      func() time.Time // migration times (default time.Now)
	// RestoreAccounts brings the archive's accounts back over the live
	// ones (users, passwords, privileges, API keys, table overrides);
	// without it a replacement keeps the live app's (see accountTables).
	// Either way no credential revoked live is accepted again.
	RestoreAccounts bool
}

// Result says what a restore did.
type Result struct {
	App        string   `json:"app"`
	From       string   `json:"from_app"`
	FromEngine string   `json:"from_engine"`
	Tables     int      `json:"tables"`
	Rows       int64    `json:"rows"`
	Records    int64    `json:"records"`
	Users      int64    `json:"users"`
	Files      int64    `json:"files"`
	Migrated   []int    `json:"migrated"`
	Accounts   string   `json:"accounts"` // AccountsKept or AccountsRestored
	Replaced   bool     `json:"replaced"`
	Warnings   []string `json:"warnings"`
}

// Restore reads the archive r and makes the application target from it:
// a new application when none has that name, else a replacement of the
// live one, swapped in atomically once everything is loaded. The whole
// archive is checked before anything is built; blobs are stored under new
// keys as they stream by and removed again when anything fails.
func Restore(ctx context.Context, reg *apps.Registry, storage files.Storage, target string, r io.Reader, opts RestoreOptions) (*Result, error) {
	if err := apps.ValidateName(target); err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(int64, int64) {}
	}
	keys := map[string]string{} // the archive's blob keys → the ones stored here
	var stored []string
	cleanup := func(list []string) {
		for _, k := range list {
			_ = storage.Delete(context.WithoutCancel(ctx), target, k)
		}
	}
	u, err := Unpack(r, opts.TmpDir, func(key string, br io.Reader) error {
		nk, _, err := storage.Put(ctx, target, br)
		if err != nil {
			return fmt.Errorf("restore: store file: %w", err)
		}
		keys[key] = nk
		stored = append(stored, nk)
		return nil
	}, progress)
	if err != nil {
		cleanup(stored)
		return nil, err
	}
	defer u.Close()
	m := u.Manifest
	if err := CheckRestorable(m); err != nil {
		cleanup(stored)
		return nil, err
	}
	all, err := store.LoadMigrations(reg.Engine())
	if err != nil {
		cleanup(stored)
		return nil, err
	}
	if m.Migration > len(all) {
		cleanup(stored)
		return nil, ErrTooNew.With("migration", m.Migration)
	}
	res := &Result{App: target, From: m.App, FromEngine: m.Engine, Tables: len(m.Tables), Rows: m.Counts.Rows,
		Records: m.Counts.Records, Users: m.Counts.Users, Files: m.Counts.Files, Migrated: []int{}, Warnings: []string{},
		Accounts: AccountsRestored}

	exists, err := reg.Backend().Exists(ctx, target)
	if err != nil {
		cleanup(stored)
		return nil, err
	}
	var floor int64
	var oldBlobs []string
	var liveDB *store.DB
	if exists {
		live, err := reg.Get(ctx, target)
		if err != nil {
			cleanup(stored)
			return nil, err
		}
		liveDB = live.DB
		floor, oldBlobs, err = liveState(ctx, live.DB)
		if err != nil {
			cleanup(stored)
			return nil, err
		}
		if !opts.RestoreAccounts {
			res.Accounts = AccountsKept
		}
	}
	l := &loader{reg: reg, u: u, m: m, target: target, keys: keys, floor: floor, res: res, now: opts.Now, progress: progress,
		live: liveDB, restoreAccounts: opts.RestoreAccounts}
	build := func(ctx context.Context, db *store.DB) error { return l.build(ctx, db) }
	if exists {
		err = reg.Replace(ctx, target, build)
		res.Replaced = true
	} else {
		err = reg.Backend().Create(ctx, target, build)
	}
	if err != nil {
		cleanup(stored)
		return nil, err
	}
	// The replaced app's files are no longer named by anything.
	cleanup(oldBlobs)
	return res, nil
}

// CheckRestorable refuses an archive holding a user table whose name
// today's rules refuse (schema.CheckTableName): one made before sqlite_ and
// pg_ were reserved, on PostgreSQL, which SQLite could not hold. It is
// refused with the name's code before anything is built, on either engine,
// so an archive restores the same way wherever it goes. The catalog's
// field names are checked as its tables are made (schema.Materialize).
func CheckRestorable(m *Manifest) error {
	for _, t := range m.Tables {
		if strings.HasPrefix(t.Name, store.SystemTablePrefix) {
			continue // Strata's own tables, made by the migrations
		}
		if err := schema.CheckTableName(t.Name); err != nil {
			if e, ok := errs.As(err); ok {
				return e.With("table", t.Name).With("detail", "the backup holds table "+t.Name+
					", a name that is no longer allowed: rename the table in the application the backup was made from, then back it up again")
			}
			return err
		}
	}
	return nil
}

// liveState reads what a replacement must outdo (the catalog and access
// versions other nodes cache by) and the blobs it will leave behind.
func liveState(ctx context.Context, db *store.DB) (int64, []string, error) {
	var floor int64
	rows, err := db.Query(ctx, `SELECT value FROM `+db.Sys("settings")+` WHERE key IN ('catalog_version', 'auth_version')`)
	if err != nil {
		return 0, nil, err
	}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return 0, nil, err
		}
		if n, _ := strconv.ParseInt(v, 10, 64); n > floor {
			floor = n
		}
	}
	rows.Close()
	blobs, err := blobsOf(ctx, db.SQL, db)
	if err != nil {
		return 0, nil, err
	}
	keys := make([]string, len(blobs))
	for i, b := range blobs {
		keys[i] = b.key
	}
	return floor, keys, nil
}

type loader struct {
	reg      *apps.Registry
	u        *Unpacked
	m        *Manifest
	target   string
	keys     map[string]string
	floor    int64
	res      *Result
	now      func() time.Time
	progress Progress
	done     int64
	// live is the app being replaced (nil for a new one), whose accounts
	// are kept (or guarded, with restoreAccounts) once the rest is built.
	live            *store.DB
	restoreAccounts bool
}

func (l *loader) build(ctx context.Context, db *store.DB) error {
	if _, err := db.MigrateTo(ctx, l.now, l.m.Migration); err != nil {
		return fmt.Errorf("restore: migrations: %w", err)
	}
	err := db.Tx(ctx, func(tx *store.DB) error {
		if tx.Engine == store.SQLite {
			if _, err := tx.Exec(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
				return err
			}
		}
		have, err := tableNames(ctx, tx.SQL, tx.Engine, tx.Schema())
		if err != nil {
			return err
		}
		var system, rest []Table
		for _, t := range l.m.Tables {
			if slices.Contains(have, t.Name) {
				system = append(system, t)
			} else {
				rest = append(rest, t)
			}
		}
		if err := l.loadTables(ctx, tx, system, true); err != nil {
			return err
		}
		if err := schema.Materialize(ctx, tx); err != nil {
			return fmt.Errorf("restore: tables: %w", err)
		}
		if have, err = tableNames(ctx, tx.SQL, tx.Engine, tx.Schema()); err != nil {
			return err
		}
		for _, t := range rest {
			if !slices.Contains(have, t.Name) {
				if err := createTable(ctx, tx, t); err != nil {
					return err
				}
			}
		}
		if err := l.loadTables(ctx, tx, rest, false); err != nil {
			return err
		}
		if err := resetSequences(ctx, tx, l.m.Tables); err != nil {
			return err
		}
		if err := schema.BuildSearchIndexes(ctx, tx); err != nil {
			return fmt.Errorf("restore: search indexes: %w", err)
		}
		return l.bumpVersions(ctx, tx)
	})
	if err != nil {
		return err
	}
	applied, err := db.Migrate(ctx, l.now)
	if err != nil {
		return fmt.Errorf("restore: migrations after loading: %w", err)
	}
	for _, a := range applied {
		l.res.Migrated = append(l.res.Migrated, a.ID)
	}
	return l.accounts(ctx, db)
}

// accounts settles the replaced app's accounts last, when both databases
// are at the same migration step, so the live rows fit as they are and a
// revocation made while the archive was loading is still seen. An account
// change in the instant between this read and the swap is lost, as any
// other write to the replaced app in that instant is.
func (l *loader) accounts(ctx context.Context, db *store.DB) error {
	if l.live == nil {
		return nil
	}
	live, err := readAccounts(ctx, l.live)
	if err != nil {
		return err
	}
	return db.Tx(ctx, func(tx *store.DB) error {
		if l.restoreAccounts {
			return guardRestoredAccounts(ctx, tx, live, l.now())
		}
		l.res.Users = int64(len(live["sys_users"].rows))
		return keepAccounts(ctx, tx, live)
	})
}

// loadTables empties then fills tables, parents before children. With
// clear, the tables exist already (made by the migrations, perhaps with
// rows of their own) and are emptied first, children first.
func (l *loader) loadTables(ctx context.Context, tx *store.DB, tables []Table, clear bool) error {
	names := make([]string, len(tables))
	byName := map[string]Table{}
	for i, t := range tables {
		names[i] = t.Name
		byName[t.Name] = t
	}
	order, err := dependencyOrder(ctx, tx, names)
	if err != nil {
		return err
	}
	// Settings go last: triggers on other system tables write into them.
	if i := slices.Index(order, "sys_settings"); i >= 0 {
		order = append(append(order[:i:i], order[i+1:]...), "sys_settings")
	}
	if clear {
		for i := len(order) - 1; i >= 0; i-- {
			if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Qualify(order[i])); err != nil {
				return fmt.Errorf("restore: empty %s: %w", order[i], err)
			}
		}
	}
	for _, n := range order {
		if clear && n == "sys_settings" {
			// Triggers of the tables loaded before wrote into it.
			if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Qualify(n)); err != nil {
				return fmt.Errorf("restore: empty %s: %w", n, err)
			}
		}
		if err := l.loadTable(ctx, tx, byName[n]); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) loadTable(ctx context.Context, tx *store.DB, t Table) error {
	target, err := columnsOf(ctx, tx.SQL, tx.Engine, tx.Schema(), t.Name)
	if err != nil {
		return err
	}
	kinds := map[string]Kind{}
	for _, c := range target {
		kinds[c.Name] = c.Kind
	}
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		if _, ok := kinds[c.Name]; !ok {
			return ErrInvalidArchive.With("detail", fmt.Sprintf("column %s.%s has no place in this version", t.Name, c.Name))
		}
		cols[i] = tx.Engine.Quote(c.Name)
	}
	if len(cols) == 0 {
		return nil
	}
	f, err := os.Open(l.u.TablePath(t.Name))
	if err != nil {
		return err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 256<<10))
	dec.UseNumber()
	per := min(500, 30000/len(cols))
	row := "(" + strings.Repeat("?, ", len(cols)-1) + "?)"
	head := `INSERT INTO ` + tx.Qualify(t.Name) + ` (` + strings.Join(cols, ", ") + `) VALUES `
	args := make([]any, 0, per*len(cols))
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		q := head + strings.Repeat(row+", ", n-1) + row
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return fmt.Errorf("restore: load %s: %w", t.Name, err)
		}
		l.done += int64(n)
		l.progress(l.done, l.m.Counts.Rows)
		args, n = args[:0], 0
		return nil
	}
	var loaded int64
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return ErrInvalidArchive.With("detail", "bad row in "+t.Name).Wrap(err)
		}
		if t.Name == "sys_settings" {
			keep, err := l.setting(obj)
			if err != nil {
				return err
			}
			if !keep {
				continue
			}
		}
		if t.Name == "sys_files" {
			for _, k := range []string{"blob_key", "thumb_key"} {
				if old, ok := obj[k].(string); ok && old != "" {
					nk, ok := l.keys[old]
					if !ok {
						return ErrInvalidArchive.With("detail", "a file's bytes are missing: "+old)
					}
					obj[k] = nk
				}
			}
		}
		for _, c := range t.Columns {
			v, err := decodeValue(tx.Engine, c.Kind, kinds[c.Name], obj[c.Name])
			if err != nil {
				return ErrInvalidArchive.With("detail", fmt.Sprintf("%s.%s: %v", t.Name, c.Name, err))
			}
			args = append(args, v)
		}
		n++
		loaded++
		if n == per {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if t.Name != "sys_settings" && loaded != t.Rows {
		return ErrInvalidArchive.With("detail", fmt.Sprintf("%s holds %d rows, the manifest says %d", t.Name, loaded, t.Rows))
	}
	return nil
}

// setting moves a setting row to the target app: secrets are opened and
// sealed for it, the app's own name follows it. It reports whether to
// keep the row.
func (l *loader) setting(obj map[string]any) (bool, error) {
	key, _ := obj["key"].(string)
	val, _ := obj["value"].(string)
	switch key {
	case apps.SettingName:
		obj["value"] = l.target
		return true, nil
	}
	moved, err := l.reg.MoveSecretSetting(l.m.App, l.target, key, val)
	if err == nil {
		obj["value"] = moved
		return true, nil
	}
	if key == apps.SettingJWTSecret {
		s, err := l.reg.NewJWTSecret(l.target)
		if err != nil {
			return false, err
		}
		obj["value"] = s
		l.res.Warnings = append(l.res.Warnings, "the sign-in secret was sealed by another instance: a new one was made (everyone signs in again)")
		return true, nil
	}
	l.res.Warnings = append(l.res.Warnings, "setting "+key+" was sealed by another instance and was not restored")
	return false, nil
}

// bumpVersions moves the catalog and access versions past both the
// archive's and the replaced app's, so every node's caches reload.
func (l *loader) bumpVersions(ctx context.Context, tx *store.DB) error {
	for _, k := range []string{"catalog_version", "auth_version"} {
		var cur int64
		var v string
		if err := tx.QueryRow(ctx, `SELECT value FROM `+tx.Sys("settings")+` WHERE key = ?`, k).Scan(&v); err == nil {
			cur, _ = strconv.ParseInt(v, 10, 64)
		}
		next := max(cur, l.floor) + 1
		if _, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("settings")+` (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, k, strconv.FormatInt(next, 10)); err != nil {
			return fmt.Errorf("restore: %s: %w", k, err)
		}
	}
	return nil
}

// createTable makes a table the archive has and the target lacks (a
// plugin's own table, created by the plugin host on first use): an id key
// and columns of the archived kinds.
func createTable(ctx context.Context, tx *store.DB, t Table) error {
	var defs []string
	for _, c := range t.Columns {
		if c.Name == "id" && c.Kind == KindInt {
			id := `"id" INTEGER PRIMARY KEY AUTOINCREMENT`
			if tx.Engine == store.Postgres {
				id = `"id" bigserial PRIMARY KEY`
			}
			defs = append(defs, id)
			continue
		}
		defs = append(defs, tx.Engine.Quote(c.Name)+" "+sqlTypeOf(tx.Engine, c.Kind))
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE `+tx.Qualify(t.Name)+` (`+strings.Join(defs, ", ")+`)`); err != nil {
		return fmt.Errorf("restore: create %s: %w", t.Name, err)
	}
	return nil
}

// resetSequences moves PostgreSQL's id sequences past the loaded ids
// (SQLite's AUTOINCREMENT follows explicit ids by itself).
func resetSequences(ctx context.Context, tx *store.DB, tables []Table) error {
	if tx.Engine != store.Postgres {
		return nil
	}
	for _, t := range tables {
		if !slices.ContainsFunc(t.Columns, func(c Column) bool { return c.Name == "id" }) {
			continue
		}
		var seq *string
		if err := tx.QueryRow(ctx, `SELECT pg_get_serial_sequence(?, 'id')`, tx.Qualify(t.Name)).Scan(&seq); err != nil {
			return fmt.Errorf("restore: sequence of %s: %w", t.Name, err)
		}
		if seq == nil {
			continue
		}
		if _, err := tx.Exec(ctx, `SELECT setval(?::regclass, COALESCE((SELECT MAX("id") FROM `+tx.Qualify(t.Name)+`), 0) + 1, false)`, *seq); err != nil {
			return fmt.Errorf("restore: sequence of %s: %w", t.Name, err)
		}
	}
	return nil
}

// dependencyOrder sorts tables so that every table comes after the tables
// its foreign keys reference (self references and cycles are left to
// deferred checks).
func dependencyOrder(ctx context.Context, tx *store.DB, names []string) ([]string, error) {
	deps := map[string][]string{}
	in := map[string]bool{}
	for _, n := range names {
		in[n] = true
	}
	if tx.Engine == store.Postgres {
		rows, err := tx.SQL.QueryContext(ctx, `SELECT cl.relname, rc.relname FROM pg_catalog.pg_constraint c
			JOIN pg_catalog.pg_class cl ON cl.oid = c.conrelid
			JOIN pg_catalog.pg_class rc ON rc.oid = c.confrelid
			JOIN pg_catalog.pg_namespace n ON n.oid = c.connamespace
			WHERE c.contype = 'f' AND n.nspname = $1`, tx.Schema())
		if err != nil {
			return nil, fmt.Errorf("restore: foreign keys: %w", err)
		}
		for rows.Next() {
			var a, b string
			if err := rows.Scan(&a, &b); err != nil {
				rows.Close()
				return nil, err
			}
			deps[a] = append(deps[a], b)
		}
		rows.Close()
	} else {
		for _, n := range names {
			rows, err := tx.SQL.QueryContext(ctx, `SELECT "table" FROM pragma_foreign_key_list(?)`, n)
			if err != nil {
				return nil, fmt.Errorf("restore: foreign keys of %s: %w", n, err)
			}
			for rows.Next() {
				var b string
				if err := rows.Scan(&b); err != nil {
					rows.Close()
					return nil, err
				}
				deps[n] = append(deps[n], b)
			}
			rows.Close()
		}
	}
	var out []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(n string)
	visit = func(n string) {
		if state[n] != 0 {
			return
		}
		state[n] = 1
		for _, d := range deps[n] {
			if d != n && in[d] {
				visit(d)
			}
		}
		state[n] = 2
		out = append(out, n)
	}
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	for _, n := range sorted {
		visit(n)
	}
	return out, nil
}
