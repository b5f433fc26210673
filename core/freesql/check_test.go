package freesql

import (
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/errs"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		sql  string
		kind Kind
		code string // "" when allowed
	}{
		{"SELECT * FROM sites", Read, ""},
		{"  select name from sites where name = 'a;b' ; ", Read, ""},
		{"WITH x AS (SELECT 1) SELECT * FROM x", Read, ""},
		{"VALUES (1), (2)", Read, ""},
		{"EXPLAIN QUERY PLAN SELECT * FROM sites", Read, ""},
		{"SELECT replace(name, 'a', 'b') FROM sites", Read, ""},
		{"INSERT INTO sites (name) VALUES ('x')", Write, ""},
		{"update sites set name = 'y'", Write, ""},
		{"DELETE FROM sites WHERE id = 1", Write, ""},
		{"WITH d AS (DELETE FROM sites RETURNING id) SELECT count(*) FROM d", Write, ""},
		{"SELECT '--' AS a, \"sys_x\" FROM t -- a comment with sys_users", Read, ""},
		{"SELECT $$pg_read_file$$", Read, ""}, // a string, not a name
		{"", 0, "parameter_missing"},
		{" ;; ", 0, "parameter_missing"},
		{"-- only a comment", 0, "parameter_missing"},
		{"SELECT 1; DROP TABLE sites", 0, "statement_not_allowed"},
		{"DROP TABLE sites", 0, "statement_not_allowed"},
		{"CREATE TABLE x (a)", 0, "statement_not_allowed"},
		{"ATTACH DATABASE '/tmp/x.db' AS x", 0, "statement_not_allowed"},
		{"VACUUM INTO '/tmp/copy.db'", 0, "statement_not_allowed"},
		{"PRAGMA writable_schema = 1", 0, "statement_not_allowed"},
		{"SELECT load_extension('x')", 0, "statement_not_allowed"},
		{"SELECT * FROM sqlite_master", 0, "statement_not_allowed"},
		{"SELECT * FROM \"SQLITE_SCHEMA\"", 0, "statement_not_allowed"},
		{"SELECT * FROM sys_users", 0, "statement_not_allowed"},
		{"SELECT * FROM [sys_api_keys]", 0, "statement_not_allowed"},
		{"SELECT pg_read_file('/etc/passwd')", 0, "statement_not_allowed"},
		{"SELECT * FROM pg_catalog.pg_tables", 0, "statement_not_allowed"},
		{"SELECT * FROM information_schema.tables", 0, "statement_not_allowed"},
		{"SELECT set_config('role', 'postgres', true)", 0, "statement_not_allowed"},
		{"EXPLAIN ANALYZE DELETE FROM sites", 0, "statement_not_allowed"},
		{"SET ROLE postgres", 0, "statement_not_allowed"},
		{"BEGIN", 0, "statement_not_allowed"},
		{"COPY sites TO '/tmp/x'", 0, "statement_not_allowed"},
		{"SELECT 'unterminated", 0, "sql_error"},
		{"SELECT /* unterminated", 0, "sql_error"},
		{"SELECT 1 /* ; */", Read, ""},
		{"SELECT E'\\'; DROP TABLE x; --'", Read, ""},
	}
	for _, tc := range cases {
		kind, err := Classify(tc.sql)
		if tc.code == "" {
			if err != nil || kind != tc.kind {
				t.Errorf("%q: %v %v, want kind %v", tc.sql, kind, err, tc.kind)
			}
			continue
		}
		if e, ok := errs.As(err); !ok || e.Code != tc.code {
			t.Errorf("%q: %v, want %s", tc.sql, err, tc.code)
		}
	}
}

// FuzzClassify: never panics, and whatever it lets through names nothing
// forbidden and is one statement.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"SELECT * FROM t", "ATTACH 'x' AS y", "SELECT 'a''b' -- c\n, \"d\"", "WITH a AS (DELETE FROM t) SELECT 1", "SELECT $x$ y $x$", "SELECT [a b]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if _, err := Classify(sql); err != nil {
			return
		}
		toks, err := lex(sql)
		if err != nil {
			t.Fatalf("classified but does not lex: %v", err)
		}
		for i, tk := range toks {
			if tk.kind == tokWord || tk.kind == tokQuoted {
				if forbidden[tk.text] || strings.HasPrefix(tk.text, "pg_") || strings.HasPrefix(tk.text, "sqlite_") {
					t.Fatalf("%q let through naming %q", sql, tk.text)
				}
			}
			if tk.kind == tokPunct && tk.text == ";" {
				for _, rest := range toks[i:] {
					if !(rest.kind == tokPunct && rest.text == ";") {
						t.Fatalf("%q: two statements let through", sql)
					}
				}
			}
		}
	})
}
