package server_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/freesql"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// escapeWorld is two apps on one instance: alpha, whose super admin
// writes free SQL, and beta, whose data, accounts and session must stay
// out of alpha's reach whatever the statement says.
type escapeWorld struct {
	inst        *testenv.Instance
	alpha, beta *apps.App
	token       string // alpha's super admin
	sqlToken    string
	betaHash    string
	betaFile    string // SQLite: beta's database file
	outside     string // a folder no statement may write into
	dataDir     string
	filesBefore []string
}

const betaSecret = "beta-secret-0xC0FFEE"

func newEscapeWorld(t *testing.T, c testenv.Connection) *escapeWorld {
	t.Helper()
	reg := testenv.NewRegistryOn(t, c)
	inst := testenv.NewInstanceWith(t, c.Engine, server.Deps{Apps: reg})
	w := &escapeWorld{inst: inst, outside: t.TempDir()}
	w.alpha = testenv.NewApp(t, reg, "alpha")
	w.beta = testenv.NewApp(t, reg, "beta")
	ctx := t.Context()
	for _, q := range []string{
		`CREATE TABLE ` + w.alpha.DB.Qualify("sites") + ` (id INTEGER PRIMARY KEY, name TEXT)`,
		`INSERT INTO ` + w.alpha.DB.Qualify("sites") + ` (id, name) VALUES (1, 'Populonia')`,
	} {
		if _, err := w.alpha.DB.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`CREATE TABLE ` + w.beta.DB.Qualify("secrets") + ` (v TEXT)`,
		`INSERT INTO ` + w.beta.DB.Qualify("secrets") + ` (v) VALUES ('` + betaSecret + `')`,
	} {
		if _, err := w.beta.DB.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	w.betaHash = w.hashOf(t, w.beta)
	if b, ok := reg.Backend().(*store.SQLiteBackend); ok {
		w.betaFile = filepath.Join(b.AppDir("beta"), "app.db")
		w.dataDir = b.DataDir()
	}
	w.filesBefore = w.files(t)
	w.token = testenv.Login(t, inst.Server, "alpha", "admin@example.org", testenv.Password)
	_, m := testenv.Do(t, inst.Server, "POST", "/alpha/api/free-sql/verify", fmt.Sprintf(`{"password":%q}`, testenv.Password), testenv.Bearer(w.token))
	w.sqlToken, _ = m["sql_token"].(string)
	if w.sqlToken == "" {
		t.Fatalf("verify: %v", m)
	}
	return w
}

func (w *escapeWorld) hashOf(t *testing.T, a *apps.App) string {
	t.Helper()
	var h string
	if err := a.DB.QueryRow(t.Context(), `SELECT password FROM `+a.DB.Sys("users")+` WHERE email = ?`, "admin@example.org").Scan(&h); err != nil {
		t.Fatal(err)
	}
	return h
}

// files lists the data folder (SQLite) and the outside folder, without
// SQLite's own -wal/-shm/-journal companions.
func (w *escapeWorld) files(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, root := range []string{w.dataDir, w.outside} {
		if root == "" {
			continue
		}
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(p, "-wal") && !strings.HasSuffix(p, "-shm") && !strings.HasSuffix(p, "-journal") {
				out = append(out, p)
			}
			return nil
		})
	}
	sort.Strings(out)
	return out
}

// intact fails t unless beta, the registry, the files and the shared
// pool are as they were.
func (w *escapeWorld) intact(t *testing.T, payload, answer string) {
	t.Helper()
	ctx := t.Context()
	for _, leak := range []string{betaSecret, "$2a$", "$2b$", "root:x:0:0"} {
		if strings.Contains(answer, leak) {
			t.Fatalf("%s: the answer holds %q: %.300s", payload, leak, answer)
		}
	}
	var n int
	var v string
	if err := w.beta.DB.QueryRow(ctx, `SELECT count(*), min(v) FROM `+w.beta.DB.Qualify("secrets")).Scan(&n, &v); err != nil || n != 1 || v != betaSecret {
		t.Fatalf("%s: beta's table changed: %d %q %v", payload, n, v, err)
	}
	if h := w.hashOf(t, w.beta); h != w.betaHash {
		t.Fatalf("%s: beta's super admin hash changed", payload)
	}
	names, err := w.inst.Apps.List(ctx)
	if err != nil || fmt.Sprint(names) != "[alpha beta]" {
		t.Fatalf("%s: the registry changed: %v %v", payload, names, err)
	}
	if got := w.files(t); fmt.Sprint(got) != fmt.Sprint(w.filesBefore) {
		t.Fatalf("%s: files changed:\nbefore %v\nafter  %v", payload, w.filesBefore, got)
	}
	// The shared pool still writes (no session a statement poisoned)
	// and still is the owner.
	for i := 0; i < 3; i++ {
		if _, err := w.beta.DB.Exec(ctx, `UPDATE `+w.beta.DB.Qualify("secrets")+` SET v = v`); err != nil {
			t.Fatalf("%s: beta cannot write any more: %v", payload, err)
		}
	}
}

// escapePayloads: the review's findings and the commonest payloads of the
// PostgreSQL and SQLite injection cheat sheets. %[1]s is beta's schema
// (PostgreSQL) or database file (SQLite), %[2]s a folder outside the
// data, %[3]s the registry's schema.
var escapePayloads = []string{
	// The review's findings.
	`SELECT e'\' FROM (SELECT 1 AS e); COMMIT; ATTACH DATABASE '%[1]s' AS b; UPDATE b.sys_users SET password = 'x'; --'`,
	`SELECT * FROM 'sys_users'`,
	`SELECT * FROM pragma_database_list`,
	`SELECT query_to_xml('select set_config(''role'',''none'',true)', true, true, '')`,
	`SELECT query_to_xml('select set_config(''role'',''none'',true); select * from "%[1]s".secrets', true, true, '')`,
	`SELECT U&"set\005fconfig"('role', 'none', false), query_to_xml('select * from "%[1]s".secrets', true, true, '')`,
	`SELECT set_config('default_transaction_read_only', 'on', false)`,
	`SELECT U&"set\005fconfig"('default_transaction_read_only', 'on', false)`,
	`SELECT lo_export(lo_from_bytea(0, 'x'), '%[2]s/lo.bin')`,
	`SELECT pg_read_file('/etc/passwd')`,
	// Several statements, comments, strings and quoting.
	`SELECT 1; ATTACH DATABASE '%[1]s' AS b`,
	`SELECT 1 -- comment
; DELETE FROM sites`,
	`SELECT 1 /* ; */ ; UPDATE sites SET name = 'x'`,
	"SELECT 1;\x00ATTACH DATABASE '%[1]s' AS b",
	`ATTACH DATABASE '%[1]s' AS b`,
	`ATTACH DATABASE '%[2]s/new.db' AS n`,
	`VACUUM INTO '%[2]s/copy.db'`,
	`PRAGMA writable_schema = 1`,
	`SELECT load_extension('%[2]s/x.so')`,
	`SELECT readfile('/etc/passwd')`,
	`SELECT writefile('%[2]s/w.txt', 'x')`,
	`SELECT * FROM sqlite_master`,
	`SELECT * FROM "sqlite_schema"`,
	"SELECT * FROM `sys_users`",
	`SELECT * FROM [sys_users]`,
	`SELECT * FROM "sys_users"`,
	`SELECT password FROM main.sys_users`,
	`SELECT (SELECT password FROM sys_users LIMIT 1) AS p`,
	`WITH x AS (SELECT * FROM sys_users) SELECT * FROM x`,
	`SELECT * FROM sys_api_keys`,
	`SELECT * FROM sys_settings`,
	`UPDATE sys_users SET password = 'x'`,
	`DELETE FROM sys_login_attempts`,
	`INSERT INTO sys_users (email, password) VALUES ('e@x', 'x')`,
	`INSERT INTO sites (name) SELECT password FROM sys_users`,
	`CREATE TABLE x (a)`,
	`CREATE VIEW v AS SELECT * FROM sys_users`,
	`CREATE TRIGGER t AFTER INSERT ON sites BEGIN DELETE FROM sys_users; END`,
	`DROP TABLE sites`,
	`BEGIN`,
	`COMMIT`,
	`SAVEPOINT a`,
	// Reaching another schema, the registry, the server.
	`SELECT * FROM "%[1]s".secrets`,
	`SELECT * FROM "%[1]s".sys_users`,
	`WITH d AS (DELETE FROM "%[1]s".secrets RETURNING *) SELECT * FROM d`,
	`INSERT INTO sites (name) SELECT v FROM "%[1]s".secrets`,
	`UPDATE "%[1]s".sys_users SET password = 'x'`,
	`SELECT * FROM "%[3]s".apps`,
	`DELETE FROM "%[3]s".apps`,
	`SELECT $q$x$q$, (SELECT v FROM "%[1]s".secrets) AS s`,
	`SELECT * FROM information_schema.tables`,
	`SELECT rolpassword FROM pg_authid`,
	`SELECT * FROM pg_catalog.pg_shadow`,
	`SET ROLE postgres`,
	`RESET ROLE`,
	`SET SESSION AUTHORIZATION postgres`,
	`SELECT set_config('search_path', '%[1]s', false), (SELECT v FROM secrets)`,
	`DO $$ BEGIN EXECUTE 'DELETE FROM "%[1]s".secrets'; END $$`,
	`COPY (SELECT 1) TO '%[2]s/copy.txt'`,
	`COPY sites TO PROGRAM 'touch %[2]s/program'`,
	`CREATE FUNCTION f() RETURNS int AS 'select 1' LANGUAGE sql`,
	`CREATE EXTENSION dblink`,
	`SELECT dblink('dbname=postgres', 'select 1')`,
	`SELECT lo_import('/etc/passwd')`,
	`SELECT pg_ls_dir('.')`,
	`SELECT pg_terminate_backend(pid) FROM pg_stat_activity`,
	`EXPLAIN ANALYZE DELETE FROM "%[1]s".secrets`,
	`ALTER ROLE CURRENT_USER SUPERUSER`,
	`GRANT ALL ON SCHEMA "%[1]s" TO CURRENT_USER`,
}

// TestFreeSQLEscapes runs every payload as alpha's super admin over HTTP,
// and again straight into the confined runner with the classifier out of
// the way (as if it had been fooled), both as a read and as a write. None
// may read or change beta, the registry, the files or the shared pool, on
// SQLite, PostgreSQL as a superuser and PostgreSQL as a non-superuser
// owner.
func TestFreeSQLEscapes(t *testing.T) {
	testenv.EachConnection(t, func(t *testing.T, c testenv.Connection) {
		t.Parallel()
		w := newEscapeWorld(t, c)
		target, registry := w.betaFile, "strata"
		if c.Engine == store.Postgres {
			target = w.beta.DB.Schema()
			registry = w.inst.Apps.Backend().(*store.PostgresBackend).Namespace()
		}
		for _, p := range escapePayloads {
			stmt := strings.ReplaceAll(p, "%[1]s", target)
			stmt = strings.ReplaceAll(stmt, "%[2]s", w.outside)
			stmt = strings.ReplaceAll(stmt, "%[3]s", registry)
			_, m := testenv.Do(t, w.inst.Server, "POST", "/alpha/api/free-sql/run",
				fmt.Sprintf(`{"sql":%q,"sql_token":%q}`, stmt, w.sqlToken), testenv.Bearer(w.token))
			w.intact(t, stmt, fmt.Sprint(m))
			for _, write := range []bool{false, true} {
				var answer strings.Builder
				_, err := w.alpha.DB.RunConfined(context.Background(), stmt, store.ConfineOptions{
					Write: write, Timeout: 5 * time.Second, Hidden: []string{"users", "api_keys", "settings", "login_attempts"},
				}, func(rows *sql.Rows) error { return dumpRows(rows, &answer) })
				w.intact(t, stmt, answer.String()+fmt.Sprint(err))
			}
		}
		// alpha's own data is still there and free SQL still works.
		_, m := testenv.Do(t, w.inst.Server, "POST", "/alpha/api/free-sql/run",
			fmt.Sprintf(`{"sql":"SELECT name FROM sites","sql_token":%q}`, w.sqlToken), testenv.Bearer(w.token))
		if fmt.Sprint(m["rows"]) != "[map[name:Populonia]]" {
			t.Fatalf("alpha's own read: %v", m)
		}
	})
}

// TestFreeSQLResultsBounded: one huge value and many large rows are
// refused with a code while they stream, on every connection.
func TestFreeSQLResultsBounded(t *testing.T) {
	testenv.EachConnection(t, func(t *testing.T, c testenv.Connection) {
		t.Parallel()
		w := newEscapeWorld(t, c)
		huge, many := `SELECT zeroblob(500000000) AS z`, `WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r LIMIT 900) SELECT x, hex(randomblob(100000)) AS h FROM r`
		if c.Engine == store.Postgres {
			huge, many = `SELECT repeat('x', 20000000) AS z`, `SELECT x, repeat('y', 200000) AS h FROM generate_series(1, 900) AS x`
		}
		for _, tc := range []struct {
			sql, code string
			status    int
		}{
			{huge, "sql_value_too_large", 413},
			{many, "result_too_large", 413},
		} {
			code, m := testenv.Do(t, w.inst.Server, "POST", "/alpha/api/free-sql/run",
				fmt.Sprintf(`{"sql":%q,"sql_token":%q}`, tc.sql, w.sqlToken), testenv.Bearer(w.token))
			if code != tc.status || m["code"] != tc.code {
				t.Fatalf("%s: %d %.300v", tc.sql, code, m)
			}
		}
		// A statement within the budget still answers.
		_, err := freesql.Run(t.Context(), w.alpha.DB, `SELECT 1 AS one`, freesql.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := freesql.Run(t.Context(), w.alpha.DB, `SELECT 'abcdef' AS s`, freesql.Options{MaxBytes: 4}); errs.CodeOf(err) != "result_too_large" {
			t.Fatalf("a 4-byte budget: %v", err)
		}
	})
}

// dumpRows writes every value of rows into b.
func dumpRows(rows *sql.Rows, b *strings.Builder) error {
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for _, v := range vals {
			if bs, ok := v.([]byte); ok {
				v = string(bs)
			}
			fmt.Fprint(b, v, " ")
		}
	}
	return rows.Err()
}

// TestFreeSQLRoleConnectionLimit: an app's role holds at most four
// connections; a fifth statement at once is 503 database_busy.
func TestFreeSQLRoleConnectionLimit(t *testing.T) {
	testenv.RequireEngine(t, store.Postgres)
	a := testenv.NewApp(t, testenv.NewRegistry(t, store.Postgres), "dig")
	var database string
	if err := a.DB.QueryRow(t.Context(), `SELECT current_database()`).Scan(&database); err != nil {
		t.Fatal(err)
	}
	role := store.ConfinedRole(database, a.DB.Schema())
	// Endless statements: each holds its connection until it is
	// cancelled below (logins queue, and take a while on a loaded machine).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 4)
	for range 4 {
		go func() {
			_, err := freesql.Run(ctx, a.DB, `WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r`,
				freesql.Options{Timeout: 90 * time.Second})
			done <- err
		}()
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var n int
		if err := a.DB.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE usename = ? AND state = 'active'`, role).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 4 {
			break
		}
		if time.Now().After(deadline) {
			select {
			case err := <-done:
				t.Fatalf("%d of the role's 4 statements running after 60 s; one ended with %v", n, err)
			default:
				t.Fatalf("%d of the role's 4 statements running after 60 s", n)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := freesql.Run(t.Context(), a.DB, `SELECT 1 AS one`, freesql.Options{}); errs.CodeOf(err) != "database_busy" {
		t.Fatalf("a fifth statement at once: %v, want database_busy", err)
	}
	cancel()
	for range 4 {
		if err := <-done; err == nil {
			t.Fatal("an endless statement ended without an error")
		}
	}
}
