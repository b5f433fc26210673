package filter_test

import (
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestParseWhereAST(t *testing.T) {
	cases := map[string]string{
		`material = 'pottery'`:                `material._eq("pottery")`,
		`Material = 'it''s'`:                  `material._eq("it's")`,
		`"material" <> 'x'`:                   `and(material._nnull(),material._neq("x"))`,
		`count != -5`:                         `and(count._nnull(),count._neq("-5"))`,
		`count >= +2.5e1`:                     `count._gte("2.5e1")`,
		`complete = TRUE`:                     `complete._eq("true")`,
		`a = 1 and b = 2 AND c = 3`:           `and(a._eq("1"),b._eq("2"),c._eq("3"))`,
		`a = 1 OR b = 2 AND c = 3`:            `or(a._eq("1"),and(b._eq("2"),c._eq("3")))`,
		`(a = 1 OR b = 2) AND c = 3`:          `and(or(a._eq("1"),b._eq("2")),c._eq("3"))`,
		`NOT a = 1`:                           `and(a._nnull(),a._neq("1"))`,
		`NOT NOT a = 1`:                       `a._eq("1")`,
		`NOT (a = 1 OR b < 2)`:                `and(a._nnull(),a._neq("1"),b._gte("2"))`,
		`NOT (a = 1 AND b < 2)`:               `or(and(a._nnull(),a._neq("1")),b._gte("2"))`,
		`a IN (1, 'x', TRUE)`:                 `a._in["1","x","true"]`,
		`a NOT IN (1)`:                        `and(a._nnull(),a._nin["1"])`,
		`NOT a NOT IN (1)`:                    `a._in["1"]`,
		`a IS NULL`:                           `a._null()`,
		`a IS NOT NULL`:                       `a._nnull()`,
		`NOT a IS NULL`:                       `a._nnull()`,
		`a LIKE '%x%'`:                        `a._icontains("x")`,
		`a LIKE 'x%'`:                         `a._starts_with("x")`,
		`a LIKE '%x'`:                         `a._ends_with("x")`,
		`a LIKE 'x'`:                          `a._eq("x")`,
		`a LIKE '%'`:                          `a._nnull()`,
		`a NOT LIKE '%'`:                      `a._in[]`,
		`a NOT LIKE '%x%'`:                    `and(a._nnull(),a._ncontains("x"))`,
		`a LIKE '%a\_b\%%' ESCAPE '\'`:        `a._icontains("a_b%")`,
		`a LIKE '!%!!%' ESCAPE '!'`:           `a._starts_with("%!")`,
		`a BETWEEN 1 AND 5`:                   `a._between("1","5")`,
		`a NOT BETWEEN 1 AND 5 AND b = 'and'`: `and(or(a._lt("1"),a._gt("5")),b._eq("and"))`,
		"a\n=\t'multi\nline'":                 `a._eq("multi\nline")`,
	}
	for in, want := range cases {
		n, err := filter.ParseWhere(in)
		if err != nil {
			t.Errorf("ParseWhere(%s): %v", in, err)
			continue
		}
		if n.String() != want {
			t.Errorf("ParseWhere(%s) = %s, want %s", in, n, want)
		}
	}
}

func TestParseWhereRefuses(t *testing.T) {
	cases := map[string]string{ // input: detail fragment
		``:                                   "empty",
		`   `:                                "empty",
		`label = 'x'; DROP TABLE finds`:      "one condition",
		`label = 'x' -- comment`:             "comments",
		`/* c */ label = 'x'`:                "comments",
		`finds.label = 'x'`:                  "qualified",
		`"strata"."finds" = 1`:               "qualified",
		`lower(label) = 'x'`:                 "functions",
		`label = lower('x')`:                 "literal",
		`id IN (SELECT id FROM finds)`:       "subqueries",
		`id = (SELECT 1)`:                    "literal",
		`label = other_col`:                  "literal",
		`1 = 1`:                              "unexpected",
		`'x' = label`:                        "unexpected",
		`label LIKE 'a%b'`:                   "only %x%",
		`label LIKE 'a_b'`:                   "only %x%",
		`label LIKE '%x' ESCAPE 'ab'`:        "ESCAPE",
		`label LIKE 'x\' ESCAPE '\'`:         "escape character",
		`label LIKE other`:                   "quoted pattern",
		`label = NULL`:                       "IS NULL",
		`label IN (NULL)`:                    "IS NULL",
		`label ~ 'x'`:                        "unexpected",
		`label || 'x' = 'y'`:                 "unexpected",
		`label`:                              "too early",
		`label = `:                           "too early",
		`(label = 'x'`:                       "too early",
		`label = 'x')`:                       "unexpected",
		`label IN ()`:                        "literal",
		`label IN (1 2)`:                     "unexpected",
		`label = 'unterminated`:              "unterminated",
		`"label = 1`:                         "unterminated",
		`label = 1x`:                         "malformed number",
		`label IS 'x'`:                       "unexpected",
		`label BETWEEN 1 OR 2`:               "unexpected",
		`label = 'a' AND`:                    "too early",
		`label = 'é' AND nom = 'x' OR ¿ = 1`: "unexpected",
		`label = 'x' UNION SELECT 1`:         "unexpected",
		`label = $1`:                         "unexpected",
		`label = ?`:                          "unexpected",
		`label = 'a\u0000'`:                  "",
		strings.Repeat("(", 11) + `a = 1` + strings.Repeat(")", 11): "deeper",
		strings.Repeat("NOT ", 12) + `a = 1`:                        "deeper",
		`a IN (` + strings.Repeat("1,", filter.MaxList) + `1)`:      "more than",
		`a = '` + strings.Repeat("x", filter.MaxText+1) + `'`:       "longer than",
	}
	cases["label = 'a\x00'"] = "NUL"
	delete(cases, `label = 'a\u0000'`)
	for in, frag := range cases {
		_, err := filter.ParseWhere(in)
		if code(err) != "invalid_subset" || !strings.Contains(detail(err), frag) {
			t.Errorf("ParseWhere(%.60q) = %v (detail %q), want invalid_subset with %q", in, err, detail(err), frag)
		}
	}
	many := strings.Repeat("a = 1 OR ", filter.MaxNodes) + "a = 1"
	if _, err := filter.ParseWhere(many); code(err) != "invalid_subset" {
		t.Errorf("%d conditions: %v", filter.MaxNodes+1, err)
	}
}

// TestSubsetsSelectRows runs SQL subsets on both engines: three-valued
// logic as in the database, NOT and <> never matching NULL.
func TestSubsetsSelectRows(t *testing.T) {
	cases := []struct {
		where string
		want  []int64
	}{
		{`material = 'pottery'`, ids(1, 9)},
		{`material <> 'pottery'`, ids(2, 4, 5, 6, 7, 10, 11, 12)},
		{`NOT material = 'pottery'`, ids(2, 4, 5, 6, 7, 10, 11, 12)},
		{`NOT (material = 'pottery' OR count > 10)`, ids(4, 5, 7)},
		{`NOT (material = 'pottery' AND count > 2)`, except(12, 1)}, // NULL AND FALSE is FALSE
		{`label LIKE '%ẞ%'`, ids(6, 7)},
		{`label LIKE 'a\_b' ESCAPE '\'`, ids(11)},
		{`label LIKE 'a%b'  ESCAPE '!' OR label LIKE 'a!%b' ESCAPE '!'`, nil},
		{`label NOT LIKE 'amph%'`, ids(3, 5, 6, 7, 8, 9, 10, 11, 12)},
		{`label LIKE '%'`, except(12, 4)},
		{`label NOT LIKE '%'`, ids()},
		{`complete IS NULL`, ids(2, 6, 12)},
		{`complete = TRUE`, ids(1, 5, 7, 9, 11)},
		{`NOT complete = TRUE`, ids(3, 4, 8, 10)},
		{`complete`, nil},
		{`count BETWEEN 1 AND 5`, ids(1, 5, 9)},
		{`count NOT BETWEEN 1 AND 5`, ids(3, 4, 6, 7, 8, 10, 11, 12)},
		{`site IN (1, 2)`, ids(1, 2, 4, 6, 10, 12)},
		{`site NOT IN (1, 2)`, ids(5, 7, 9)},
		{`NOT site IN (1, 2)`, ids(5, 7, 9)},
		{`found_on >= '2020-05-01'`, ids(1, 4, 5, 6, 9)},
		{`"label" = 'a%b'`, ids(10)},
		{`LABEL = 'a%b' and ID > 0`, ids(10)},
		{`weight < 2.5 OR weight IS NULL`, ids(2, 3, 5, 8)},
		{`creator IS NULL AND id <= 3`, ids(1, 2, 3)},
	}
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		fx := newFixture(t, e)
		for _, c := range cases {
			n, err := filter.ParseWhere(c.where)
			if c.want == nil {
				if err == nil {
					t.Errorf("ParseWhere(%s) accepted: %s", c.where, n)
				}
				continue
			}
			if err != nil {
				t.Errorf("ParseWhere(%s): %v", c.where, err)
				continue
			}
			got, err := fx.ids(t, "finds", n, filter.Options{})
			if err != nil || idsString(got) != idsString(c.want) {
				t.Errorf("%s = %v, %v; want %v (AST %s)", c.where, got, err, c.want, n)
			}
			if !strings.Contains(c.where, "LIKE") {
				// The database itself is the oracle (LIKE differs between
				// engines, so it is left out): the test's own trusted text.
				if db := fx.rawWhere(t, c.where); idsString(db) != idsString(c.want) {
					t.Errorf("%s: the database says %v, the AST %v", c.where, db, got)
				}
			}
		}
	})
}

func TestParseSubset(t *testing.T) {
	fx := newFixture(t, store.SQLite)
	cases := []struct {
		raw   string
		sql   bool
		want  string // canonical AST, or an error code
		field string
	}{
		{`null`, false, "<nil>", ""},
		{``, false, "<nil>", ""},
		{`"material = 'pottery'"`, true, `material._eq("pottery")`, ""},
		{`{"material":{"_eq":"pottery"}}`, false, `material._eq("pottery")`, ""},
		{`{"site":{"name":{"_eq":"Ostia"}}}`, false, `site{name._eq("Ostia")}`, ""},
		{`"nope = 1"`, true, "invalid_subset", "nope"},
		{`"count = 'abc'"`, true, "invalid_subset", ""},
		{`"label = 1; DROP TABLE finds"`, true, "invalid_subset", ""},
		{`{"nope":{"_eq":1}}`, false, "invalid_subset", "nope"},
		{`{"label":{"_eq":null}}`, false, "invalid_subset", ""},
		{`42`, false, "invalid_subset", ""},
		{`{"label":`, false, "invalid_subset", ""},
	}
	for _, c := range cases {
		n, sqlForm, err := filter.ParseSubset(fx.cat, "finds", []byte(c.raw))
		got := "<nil>"
		switch {
		case err != nil:
			got = code(err)
			if detail(err) == "" {
				t.Errorf("ParseSubset(%s): no detail", c.raw)
			}
			if c.field != "" {
				if e, _ := errsAs(err); e.Extra["field"] != c.field {
					t.Errorf("ParseSubset(%s): field %v", c.raw, e.Extra["field"])
				}
			}
		case n != nil:
			got = n.String()
		}
		if got != c.want || (err == nil && sqlForm != c.sql) {
			t.Errorf("ParseSubset(%s) = %s (sql %v), want %s (sql %v)", c.raw, got, sqlForm, c.want, c.sql)
		}
	}
}
