package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/freesql"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestFreeSQL: super_admin only, after the password; reads capped, writes
// all or nothing and logged with the statement; nothing beyond the app:
// another app's tables, the credential tables, the engine's files and
// catalogs, on both engines.
func TestFreeSQL(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		other := testenv.NewApp(t, f.inst.Apps, "other")
		if _, err := other.DB.Exec(t.Context(), `CREATE TABLE `+other.DB.Qualify("secrets")+` (v TEXT)`); err != nil {
			t.Fatal(err)
		}
		if _, err := other.DB.Exec(t.Context(), `INSERT INTO `+other.DB.Qualify("secrets")+` (v) VALUES ('other app data')`); err != nil {
			t.Fatal(err)
		}
		const api = "/dig/api"
		f.create(t, f.writer, "sites", `{"name":"Populonia"}`)

		if code, m := f.do(t, f.super, "POST", api+"/free-sql/run", `{"sql":"SELECT 1"}`); code != 403 || m["code"] != "password_verification_required" {
			t.Fatalf("without a token: %d %v", code, m)
		}
		if code, _ := f.do(t, f.super, "POST", api+"/free-sql/verify", `{"password":"wrong-password-1"}`); code != 401 {
			t.Fatalf("wrong password: %d", code)
		}
		if code, m := f.do(t, f.writer, "POST", api+"/free-sql/run", `{"sql":"SELECT 1"}`); code != 403 || m["code"] != "not_enough_privilege" {
			t.Fatalf("writer: %d %v", code, m)
		}
		_, m := f.do(t, f.super, "POST", api+"/free-sql/verify", fmt.Sprintf(`{"password":%q}`, testenv.Password))
		tok, _ := m["sql_token"].(string)
		if tok == "" {
			t.Fatalf("verify: %v", m)
		}
		run := func(sql string) (int, map[string]any) {
			t.Helper()
			return f.do(t, f.super, "POST", api+"/free-sql/run", fmt.Sprintf(`{"sql":%q,"sql_token":%q}`, sql, tok))
		}
		code, m := run(`SELECT name FROM sites ORDER BY id`)
		if code != 200 || m["total"] != float64(1) || fmt.Sprint(m["rows"]) != "[map[name:Populonia]]" || fmt.Sprint(m["columns"]) != "[name]" {
			t.Fatalf("select: %d %v", code, m)
		}
		code, m = run(`INSERT INTO sites (name) VALUES ('From SQL')`)
		if code != 200 || m["code"] != "ok_free_sql_run" || m["affected"] != float64(1) {
			t.Fatalf("insert: %d %v", code, m)
		}
		if _, l := f.do(t, f.super, "GET", api+"/logs?action=free-sql", ""); !strings.Contains(fmt.Sprint(l["data"]), "INSERT INTO sites") {
			t.Fatalf("the write is not in the log with its statement: %v", l["data"])
		}
		// A failing write changes nothing.
		if code, m := run(`UPDATE sites SET id = 7`); code != 400 || m["code"] != "sql_error" {
			t.Fatalf("violating write: %d %v", code, m)
		}
		if _, m := run(`SELECT count(*) AS n FROM sites WHERE id <> 7`); fmt.Sprint(m["rows"]) != "[map[n:2]]" {
			t.Fatalf("after the refused write: %v", m["rows"])
		}
		otherSchema := other.DB.Schema()
		refused := []struct{ name, sql, code string }{
			{"DDL", `DROP TABLE sites`, "statement_not_allowed"},
			{"two statements", `SELECT 1; DELETE FROM sites`, "statement_not_allowed"},
			{"attach", `ATTACH DATABASE 'x.db' AS x`, "statement_not_allowed"},
			{"the accounts", `SELECT * FROM sys_users`, "statement_not_allowed"},
			{"server files", `SELECT pg_read_file('/etc/passwd')`, "statement_not_allowed"},
			{"the engine's catalog", `SELECT * FROM sqlite_master`, "statement_not_allowed"},
			{"another app by name", `SELECT * FROM secrets`, "sql_error"},
		}
		if otherSchema != "" {
			refused = append(refused, struct{ name, sql, code string }{"another app's schema", `SELECT * FROM "` + otherSchema + `".secrets`, "sql_error"})
		}
		for _, tc := range refused {
			code, m := run(tc.sql)
			if code < 400 || m["code"] != tc.code || strings.Contains(fmt.Sprint(m), "other app data") {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		// Another user's token does not work for this one.
		if code, m := f.do(t, f.super, "POST", api+"/free-sql/run", `{"sql":"SELECT 1","sql_token":"1.0.99999999999.x"}`); code != 403 || m["code"] != "password_verification_required" {
			t.Fatalf("forged token: %d %v", code, m)
		}
	})
}

// TestFreeSQLRunawayStops: a statement that would run forever is stopped
// at the timeout, on both engines.
func TestFreeSQLRunawayStops(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		a := testenv.NewApp(t, testenv.NewRegistry(t, e), "dig")
		start := time.Now()
		_, err := freesql.Run(context.Background(), a.DB, `WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r`,
			freesql.Options{Timeout: 300 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), "too long") {
			t.Fatalf("runaway: %v", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("stopped after %s", d)
		}
	})
}
