package filter_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

type sqlCase struct {
	table  string // default finds
	filter string // JSON
	want   []int64
	code   string // expected error code instead
}

func ids(v ...int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return v
}

// The finds rows (see fixtureData): labels 1 "Amphora Ä-type", 2 "amphora
// ä-type", 3 "", 4 NULL, 5 "snake_case", 6 "Straße", 7 "STRAẞE",
// 8 "σίσυφος", 9 "жук", 10 "a%b", 11 "a_b", 12 `a\b`.
var sqlCases = []sqlCase{
	// equality and NULL semantics of the negative operators
	{filter: `{"label":{"_eq":"amphora ä-type"}}`, want: ids(2)},
	{filter: `{"label":{"_neq":"amphora ä-type"}}`, want: except(12, 2)},
	{filter: `{"label":{"_eq":""}}`, want: ids(3)},
	{filter: `{"label":{"_null":true}}`, want: ids(4)},
	{filter: `{"label":{"_nnull":true}}`, want: except(12, 4)},
	{filter: `{"label":{"_empty":true}}`, want: ids(3, 4)},
	{filter: `{"label":{"_nempty":true}}`, want: except(12, 3, 4)},
	// _contains is case-sensitive; the others fold case
	{filter: `{"label":{"_contains":"mphora"}}`, want: ids(1, 2)},
	{filter: `{"label":{"_contains":"Ä"}}`, want: ids(1)},
	{filter: `{"label":{"_contains":"ä"}}`, want: ids(2)},
	{filter: `{"label":{"_icontains":"Ä"}}`, want: ids(1, 2)},
	{filter: `{"label":{"_icontains":"ä-TYPE"}}`, want: ids(1, 2)},
	{filter: `{"label":{"_ncontains":"AMPHORA"}}`, want: except(12, 1, 2)}, // NULL (4) too
	{filter: `{"label":{"_starts_with":"AMPH"}}`, want: ids(1, 2)},
	{filter: `{"label":{"_nstarts_with":"amph"}}`, want: except(12, 1, 2)},
	{filter: `{"label":{"_ends_with":"TYPE"}}`, want: ids(1, 2)},
	{filter: `{"label":{"_nends_with":"type"}}`, want: except(12, 1, 2)},
	// Unicode case folding: ẞ/ß, Greek, Cyrillic
	{filter: `{"label":{"_icontains":"ẞ"}}`, want: ids(6, 7)},
	{filter: `{"label":{"_icontains":"ß"}}`, want: ids(6, 7)},
	{filter: `{"label":{"_eq":"Straße"}}`, want: ids(6)},
	{filter: `{"description":{"_icontains":"ß"}}`, want: ids()}, // STRASSE is not folded to ß
	{filter: `{"description":{"_icontains":"strasse"}}`, want: ids(6)},
	{filter: `{"label":{"_icontains":"ΣΊΣΥΦΟ"}}`, want: ids(8)},
	{filter: `{"description":{"_icontains":"σίσυφος"}}`, want: ids(7)},
	{filter: `{"label":{"_icontains":"ΣΊΣΥΦΟΣ"}}`, want: ids()}, // σ and final ς differ
	{filter: `{"label":{"_icontains":"ЖУК"}}`, want: ids(9)},
	{filter: `{"description":{"_icontains":"жук"}}`, want: ids(8)},
	{filter: `{"label":{"_starts_with":"Ж"}}`, want: ids(9)},
	// %, _ and \ match themselves
	{filter: `{"label":{"_icontains":"%"}}`, want: ids(10)},
	{filter: `{"label":{"_contains":"%"}}`, want: ids(10)},
	{filter: `{"label":{"_icontains":"_"}}`, want: ids(5, 11)},
	{filter: `{"label":{"_icontains":"\\"}}`, want: ids(12)},
	{filter: `{"label":{"_contains":"\\"}}`, want: ids(12)},
	{filter: `{"label":{"_starts_with":"a_"}}`, want: ids(11)},
	{filter: `{"label":{"_starts_with":"a%"}}`, want: ids(10)},
	{filter: `{"label":{"_ends_with":"\\b"}}`, want: ids(12)},
	{filter: `{"label":{"_eq":"a%b"}}`, want: ids(10)},
	{filter: `{"description":{"_icontains":"%"}}`, want: ids(4, 9)},
	{filter: `{"description":{"_icontains":"x_y"}}`, want: ids(11)},
	{filter: `{"description":{"_icontains":"\\"}}`, want: ids(5)},
	{filter: `{"description":{"_ncontains":"%"}}`, want: except(12, 4, 9)},
	// text order is code point order on both engines
	{filter: `{"label":{"_gt":"Z"}}`, want: ids(2, 5, 8, 9, 10, 11, 12)},
	{filter: `{"label":{"_between":["a","b"]}}`, want: ids(2, 10, 11, 12)},
	{filter: `{"label":{"_lte":"Straße"}}`, want: ids(1, 3, 6, 7)},
	// lists
	{filter: `{"material":{"_in":["pottery","glass"]}}`, want: ids(1, 4, 9, 11)},
	{filter: `{"material":{"_in":"pottery,glass"}}`, want: ids(1, 4, 9, 11)},
	{filter: `{"material":{"_nin":["pottery","glass"]}}`, want: ids(2, 3, 5, 6, 7, 8, 10, 12)},
	{filter: `{"material":{"_in":[]}}`, want: ids()},
	{filter: `{"material":{"_nin":[]}}`, want: except(12)},
	{filter: `{"material":{"_empty":true}}`, want: ids(3, 8, 10)},
	// integers (count: 3 NULL 0 10 5 12 7 -2 1 100 20 21)
	{filter: `{"count":{"_gt":5}}`, want: ids(4, 6, 7, 10, 11, 12)},
	{filter: `{"count":{"_lte":0}}`, want: ids(3, 8)},
	{filter: `{"count":{"_lt":"1"}}`, want: ids(3, 8)},
	{filter: `{"count":{"_gte":20}}`, want: ids(10, 11, 12)},
	{filter: `{"count":{"_between":[1,5]}}`, want: ids(1, 5, 9)},
	{filter: `{"count":{"_neq":5}}`, want: except(12, 5)},
	{filter: `{"count":{"_eq":"7"}}`, want: ids(7)},
	{filter: `{"count":{"_eq":7.0}}`, want: ids(7)},
	{filter: `{"count":{"_in":"3, 5"}}`, want: ids(1, 5)},
	{filter: `{"count":{"_nin":[3,5]}}`, want: except(12, 1, 5)},
	{filter: `{"count":{"_empty":true}}`, want: ids(2)},
	{filter: `{"count":{"_icontains":"-"}}`, want: ids(8)},
	{filter: `{"count":{"_starts_with":"1"}}`, want: ids(4, 6, 9, 10)},
	{filter: `{"count":{"_ncontains":"1"}}`, want: ids(1, 2, 3, 5, 7, 8, 11)},
	{filter: `{"count":{"_contains":"2"}}`, want: ids(6, 8, 11, 12)},
	// floats (weight: 12.5 NULL 0 7.25 1 2.5 3 NULL 4 5 6 6)
	{filter: `{"weight":{"_gte":5}}`, want: ids(1, 4, 10, 11, 12)},
	{filter: `{"weight":{"_lt":2.5}}`, want: ids(3, 5)},
	{filter: `{"weight":{"_eq":"6"}}`, want: ids(11, 12)},
	{filter: `{"weight":{"_neq":6}}`, want: except(12, 11, 12)},
	{filter: `{"weight":{"_between":["2.5","4"]}}`, want: ids(6, 7, 9)},
	// dates
	{filter: `{"found_on":{"_eq":"2020-05-01"}}`, want: ids(1, 5)},
	{filter: `{"found_on":{"_gt":"2020-05-01"}}`, want: ids(4, 6, 9)},
	{filter: `{"found_on":{"_between":["2000-01-01","2011-12-31"]}}`, want: ids(10, 11, 12)},
	{filter: `{"found_on":{"_starts_with":"2020-05"}}`, want: ids(1, 5, 9)},
	{filter: `{"found_on":{"_icontains":"-02-29"}}`, want: ids(10)},
	{filter: `{"found_on":{"_neq":"2020-05-01"}}`, want: except(12, 1, 5)},
	{filter: `{"found_on":{"_empty":true}}`, want: ids(2, 8)},
	{filter: `{"found_on":{"_nempty":true}}`, want: except(12, 2, 8)},
	{filter: `{"found_on":{"_in":["1999-01-01","2000-02-29"]}}`, want: ids(7, 10)},
	// booleans (complete: t NULL f f t NULL t f t f t NULL)
	{filter: `{"complete":{"_eq":true}}`, want: ids(1, 5, 7, 9, 11)},
	{filter: `{"complete":{"_eq":"false"}}`, want: ids(3, 4, 8, 10)},
	{filter: `{"complete":{"_eq":0}}`, want: ids(3, 4, 8, 10)},
	{filter: `{"complete":{"_neq":true}}`, want: ids(2, 3, 4, 6, 8, 10, 12)},
	{filter: `{"complete":{"_in":[true]}}`, want: ids(1, 5, 7, 9, 11)},
	{filter: `{"complete":{"_nin":[true]}}`, want: ids(2, 3, 4, 6, 8, 10, 12)},
	{filter: `{"complete":{"_null":true}}`, want: ids(2, 6, 12)},
	{filter: `{"complete":{"_empty":true}}`, want: ids(2, 6, 12)},
	// system columns
	{filter: `{"id":{"_in":[1,2,"3"]}}`, want: ids(1, 2, 3)},
	{filter: `{"id":{"_eq":"5"}}`, want: ids(5)},
	{filter: `{"creator":{"_null":true}}`, want: except(12)},
	{filter: `{"id_link":{"_eq":1}}`, code: "invalid_field"},
	{table: "finds_dates", filter: `{"id_link":{"_eq":1}}`, want: ids(1, 2)},
	{table: "finds_dates", filter: `{"creator":{"_null":true}}`, code: "invalid_field"},
	// groups
	{filter: `{"_or":[{"label":{"_icontains":"amph"}},{"count":{"_gt":50}}]}`, want: ids(1, 2, 10)},
	{filter: `{"_and":[{"label":{"_icontains":"amph"}},{"count":{"_gt":1}}]}`, want: ids(1)},
	{filter: `{"label":{"_icontains":"a"},"complete":{"_eq":true}}`, want: ids(1, 5, 7, 11)}, // STRAẞE folds to straße
	{filter: `{"_or":[{"_and":[{"material":{"_eq":"glass"}},{"count":{"_lt":15}}]},{"label":{"_null":true}}]}`, want: ids(4)},
	{filter: `{}`, want: except(12)},
	// rule 1: a lookup field (site: 1 2 NULL 1 3 2 4 NULL 3 1 NULL 2)
	{filter: `{"site":{"_eq":1}}`, want: ids(1, 4, 10)},
	{filter: `{"site":{"_null":true}}`, want: ids(3, 8, 11)},
	{filter: `{"site":{"name":{"_eq":"Pompeii"}}}`, want: ids(1, 4, 10)},
	{filter: `{"site":{"region":{"_eq":"Campania"}}}`, want: ids(1, 2, 4, 6, 10, 12)},
	{filter: `{"site":{"name":{"_neq":"Pompeii"}}}`, want: ids(2, 5, 6, 7, 9, 12)}, // site 4 has no name
	{filter: `{"site":{"name":{"_null":true}}}`, want: ids(7)},
	{filter: `{"site":{"_or":[{"name":{"_eq":"Ostia"}},{"region":{"_eq":"Campania"}}]}}`, want: ids(1, 2, 4, 5, 6, 9, 10, 12)},
	{filter: `{"_or":[{"label":{"_icontains":"amph"}},{"site":{"name":{"_eq":"Ostia"}}}]}`, want: ids(1, 2, 5, 9)},
	{filter: `{"site":{"id":{"_in":[3,4]}}}`, want: ids(5, 7, 9)},
	// rule 2: a plugin table
	{filter: `{"finds_dates":{"period":{"_icontains":"roman"}}}`, want: ids(1, 9)},
	{filter: `{"finds_dates":{"year":{"_lt":0}}}`, want: ids(1, 2)},
	{filter: `{"finds_dates":{"period":{"_null":true}}}`, want: ids(5)},
	{filter: `{"finds_biblio":{"ref":{"title":{"_starts_with":"smith"}}}}`, want: ids(1, 2)}, // two hops
	{filter: `{"finds_biblio":{"ref":{"_eq":2}}}`, want: ids(5, 7)},
	// rule 3: a backlink's via-table (biblio ← finds_biblio.ref)
	{table: "biblio", filter: `{"finds_biblio":{"pages":{"_eq":"12"}}}`, want: ids(1)},
	{table: "biblio", filter: `{"finds_biblio":{"pages":{"_null":true}}}`, want: ids(2)},
	{table: "biblio", filter: `{"finds_biblio":{"id":{"_nnull":true}}}`, want: ids(1, 2)},
	// rule 4: the via-table's parent
	{table: "biblio", filter: `{"finds_biblio":{"finds":{"label":{"_icontains":"AMPHORA"}}}}`, want: ids(1)},
	{table: "biblio", filter: `{"finds_biblio":{"finds":{"label":{"_eq":"STRAẞE"}}}}`, want: ids(2)},
	{table: "biblio", filter: `{"_or":[{"title":{"_eq":"Unused"}},{"finds_biblio":{"finds":{"count":{"_eq":5}}}}]}`, want: ids(2, 3)},
	// rule 4 through a normal via-table with a lookup to the parent
	{table: "museums", filter: `{"loans":{"finds":{"label":{"_icontains":"straße"}}}}`, want: ids(1)},
	{table: "museums", filter: `{"loans":{"finds":{"material":{"_eq":"pottery"}}}}`, want: ids(1, 2)},
	{table: "museums", filter: `{"loans":{"find":{"_null":true}}}`, want: ids(2)},
	// at most two hops
	{table: "biblio", filter: `{"finds_biblio":{"finds":{"site":{"name":{"_eq":"Pompeii"}}}}}`, code: "invalid_filter"},
	{table: "museums", filter: `{"loans":{"find":{"site":{"name":{"_eq":"Pompeii"}}}}}`, code: "invalid_filter"},
	{table: "loans", filter: `{"find":{"site":{"name":{"_eq":"Pompeii"}}}}`, want: ids(1)},
	{table: "loans", filter: `{"find":{"finds_dates":{"year":{"_gt":0}}}}`, want: ids(1, 3)},
	{table: "loans", filter: `{"find":{"finds_biblio":{"ref":{"title":{"_eq":"x"}}}}}`, code: "invalid_filter"},
	// names and types that do not fit
	{filter: `{"nope":{"_eq":1}}`, code: "invalid_field"},
	{filter: `{"nope":{"x":{"_eq":1}}}`, code: "invalid_field"},
	{filter: `{"label":{"name":{"_eq":1}}}`, code: "invalid_filter"},   // not a lookup
	{filter: `{"id":{"x":{"_eq":1}}}`, code: "invalid_filter"},         // system column
	{filter: `{"finds_dates":{"_eq":1}}`, code: "invalid_filter"},      // a table, not a field
	{filter: `{"sites":{"name":{"_eq":"x"}}}`, code: "invalid_filter"}, // not reachable this way
	{filter: `{"site":{"nope":{"_eq":1}}}`, code: "invalid_field"},
	{table: "biblio", filter: `{"finds":{"label":{"_eq":"x"}}}`, code: "invalid_filter"}, // rule 4 only inside the via-table
	{filter: `{"label":{"_bogus":1}}`, code: "invalid_filter"},
	{filter: `{"complete":{"_gt":true}}`, code: "invalid_filter"},
	{filter: `{"complete":{"_icontains":"t"}}`, code: "invalid_filter"},
	{filter: `{"complete":{"_eq":"maybe"}}`, code: "invalid_filter"},
	{filter: `{"weight":{"_icontains":"2"}}`, code: "invalid_filter"},
	{filter: `{"weight":{"_eq":"heavy"}}`, code: "invalid_filter"},
	{filter: `{"weight":{"_eq":"NaN"}}`, code: "invalid_filter"},
	{filter: `{"count":{"_eq":"abc"}}`, code: "invalid_filter"},
	{filter: `{"count":{"_eq":1.5}}`, code: "invalid_filter"},
	{filter: `{"count":{"_in":[1,"x"]}}`, code: "invalid_filter"},
	{filter: `{"id":{"_eq":"99999999999999999999"}}`, code: "invalid_filter"},
	{filter: `{"found_on":{"_eq":"2020-13-01"}}`, code: "invalid_filter"},
	{filter: `{"found_on":{"_eq":"2020-02-30"}}`, code: "invalid_filter"},
	{filter: `{"found_on":{"_eq":"0000-01-01"}}`, code: "invalid_filter"},
	{filter: `{"found_on":{"_gt":"yesterday"}}`, code: "invalid_filter"},
	{filter: `{"site":{"_eq":"Pompeii"}}`, code: "invalid_filter"}, // a direct condition compares ids
}

func TestRenderOnBothEngines(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		fx := newFixture(t, e)
		for _, c := range sqlCases {
			table := c.table
			if table == "" {
				table = "finds"
			}
			n, err := filter.ParseJSON([]byte(c.filter))
			if err != nil {
				t.Errorf("%s: parse: %v", c.filter, err)
				continue
			}
			got, err := fx.ids(t, table, n, filter.Options{})
			if c.code != "" {
				if code(err) != c.code {
					t.Errorf("%s on %s: %v (ids %v), want %s", c.filter, table, err, got, c.code)
				} else if detail(err) == "" {
					t.Errorf("%s on %s: %s without a detail", c.filter, table, c.code)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s on %s: %v", c.filter, table, err)
				continue
			}
			if idsString(got) != idsString(c.want) {
				t.Errorf("%s on %s = %v, want %v", c.filter, table, got, c.want)
			}
		}
	})
}

func TestRenderGET(t *testing.T) {
	// The bracket form end to end, with the nested lookup of SPEC §4.4.
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		fx := newFixture(t, e)
		q, _ := parseQuery(`filter[_or][0][label][_icontains]=AMPH&filter[_or][1][site][name][_eq]=Ostia&filter[count][_nnull]`)
		n, err := filter.ParseQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fx.ids(t, "finds", n, filter.Options{})
		if err != nil || idsString(got) != idsString(ids(1, 5, 9)) {
			t.Fatalf("got %v, %v", got, err)
		}
	})
}

func TestRenderSQLShape(t *testing.T) {
	fx := newFixture(t, store.SQLite)
	n, _ := filter.ParseJSON([]byte(`{"site":{"name":{"_icontains":"x"}},"label":{"_neq":"y"}}`))
	sql, args, err := filter.Render(fx.db, fx.cat, "finds", n)
	if err != nil {
		t.Fatal(err)
	}
	want := `(("finds"."label" IS NULL OR "finds"."label" <> ?) AND "finds"."site" IN (SELECT "s1"."id" FROM "sites" AS "s1" WHERE instr((CASE WHEN length("s1"."name") = length(CAST("s1"."name" AS BLOB)) THEN lower("s1"."name") ELSE strata_fold("s1"."name") END), ?) > 0))`
	if sql != want {
		t.Errorf("sql\n%s\nwant\n%s", sql, want)
	}
	if len(args) != 2 || args[0] != "y" || args[1] != "x" {
		t.Errorf("args %#v", args)
	}
	if sql, args, err := filter.Render(fx.db, fx.cat, "finds", nil); sql != "1 = 1" || args != nil || err != nil {
		t.Errorf("nil node: %q %v %v", sql, args, err)
	}
	if _, _, err := filter.Render(fx.db, fx.cat, "nowhere", nil); code(err) != "table_not_found" {
		t.Errorf("unknown table: %v", err)
	}
	if _, _, err := filter.RenderWith(context.Background(), fx.db, fx.cat, "finds", n, filter.Options{RootAlias: `R"`}); err == nil {
		t.Error("an invalid root alias was accepted")
	}
	// Validate needs no database and answers like Render.
	for f, want := range map[string]string{
		`{"site":{"name":{"_icontains":"x"}}}`: "ok",
		`{"site":{"nope":{"_eq":1}}}`:          "invalid_field",
		`{"count":{"_eq":"x"}}`:                "invalid_filter",
	} {
		if err := filter.Validate(fx.cat, "finds", mustParse(t, f), filter.Options{}); code(err) != want {
			t.Errorf("Validate(%s) = %v, want %s", f, err, want)
		}
	}
}

func TestRenderOptions(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		fx := newFixture(t, e)
		parse := func(s string) filter.Node {
			n, err := filter.ParseJSON([]byte(s))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		// A root alias.
		got, err := fx.ids(t, "finds", parse(`{"label":{"_icontains":"a"},"site":{"name":{"_eq":"Pompeii"}}}`), filter.Options{RootAlias: "r"})
		if err != nil || idsString(got) != idsString(ids(1, 10)) {
			t.Errorf("alias: %v %v", got, err)
		}
		// Columns and tables the caller may not read do not exist.
		hide := filter.Options{Readable: func(t *schema.Table, col string) bool {
			return !(t.Name == "finds" && col == "material") && !(t.Name == "sites" && col == "")
		}}
		for _, f := range []string{`{"material":{"_eq":"x"}}`, `{"site":{"name":{"_eq":"x"}}}`} {
			if _, err := fx.ids(t, "finds", parse(f), hide); code(err) != "invalid_field" {
				t.Errorf("%s with hidden names: %v", f, err)
			}
		}
		if got, err := fx.ids(t, "finds", parse(`{"site":{"_eq":3}}`), hide); err != nil || idsString(got) != idsString(ids(5, 9)) {
			t.Errorf("readable lookup column: %v %v", got, err)
		}
		// A subset of a table reached by a subquery applies inside it.
		campania := parse(`{"region":{"_eq":"Campania"}}`)
		sub := filter.Options{Subset: func(t *schema.Table) (filter.Node, error) {
			if t.Name == "sites" {
				return campania, nil
			}
			return nil, nil
		}}
		f := parse(`{"site":{"name":{"_nnull":true}}}`)
		if got, _ := fx.ids(t, "finds", f, filter.Options{}); idsString(got) != idsString(ids(1, 2, 4, 5, 6, 9, 10, 12)) {
			t.Errorf("without subset: %v", got)
		}
		if got, err := fx.ids(t, "finds", f, sub); err != nil || idsString(got) != idsString(ids(1, 2, 4, 6, 10, 12)) {
			t.Errorf("with subset: %v %v", got, err)
		}
		boom := errors.New("subset store down")
		if _, err := fx.ids(t, "finds", f, filter.Options{Subset: func(*schema.Table) (filter.Node, error) { return nil, boom }}); !errors.Is(err, boom) {
			t.Errorf("subset error: %v", err)
		}
	})
}

// A test operator standing in for a plugin's (e.g. _chrono_overlap).
func testOperators(t *testing.T) *filter.Registry {
	reg := filter.NewRegistry()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// _near resolves to a node: count within 1 of the operand.
	must(reg.Register(filter.Operator{Name: "_near", Fields: []string{"count"}, Resolve: func(_ context.Context, c filter.OperatorCall) (filter.Resolution, error) {
		s, _ := c.Value.(string)
		v, err := strconv.Atoi(s)
		if err != nil {
			return filter.Resolution{}, filter.ErrInvalidFilter.With("detail", "_near takes an integer")
		}
		return filter.Resolution{Node: filter.Cond{Field: c.Field, Op: "_between", Args: []string{strconv.Itoa(v - 1), strconv.Itoa(v + 1)}}}, nil
	}}))
	// _pick resolves to ids: the operand is {"ids":[...]} (any field).
	must(reg.Register(filter.Operator{Name: "_pick", Resolve: func(_ context.Context, c filter.OperatorCall) (filter.Resolution, error) {
		m, _ := c.Value.(map[string]any)
		list, _ := m["ids"].([]any)
		out := []int64{}
		for _, x := range list {
			s, _ := x.(string)
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return filter.Resolution{}, errors.New("not an id")
			}
			out = append(out, n)
		}
		return filter.Resolution{IDs: out}, nil
	}}))
	return reg
}

func TestPluginOperators(t *testing.T) {
	reg := testOperators(t)
	for _, bad := range []filter.Operator{
		{Name: "_eq", Resolve: func(context.Context, filter.OperatorCall) (filter.Resolution, error) { return filter.Resolution{}, nil }},
		{Name: "_or", Resolve: func(context.Context, filter.OperatorCall) (filter.Resolution, error) { return filter.Resolution{}, nil }},
		{Name: "near", Resolve: func(context.Context, filter.OperatorCall) (filter.Resolution, error) { return filter.Resolution{}, nil }},
		{Name: "_near", Resolve: func(context.Context, filter.OperatorCall) (filter.Resolution, error) { return filter.Resolution{}, nil }},
		{Name: "_x"},
	} {
		if err := reg.Register(bad); err == nil {
			t.Errorf("Register(%s) accepted", bad.Name)
		}
	}
	if got := strings.Join(reg.Names(), ","); got != "_near,_pick" {
		t.Errorf("names %s", got)
	}
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		fx := newFixture(t, e)
		opt := filter.Options{Operators: reg}
		cases := []struct {
			filter string
			want   []int64
			code   string
		}{
			{`{"count":{"_near":5}}`, ids(5), ""}, // count 4..6
			{`{"count":{"_near":"11"}}`, ids(4, 6), ""},
			{`{"label":{"_near":5}}`, nil, "invalid_filter"},
			{`{"count":{"_near":"x"}}`, nil, "invalid_filter"},
			{`{"label":{"_pick":{"ids":[2,5,99]}}}`, ids(2, 5), ""},
			{`{"label":{"_pick":{"ids":[]}}}`, ids(), ""},
			{`{"_or":[{"label":{"_pick":{"ids":[1]}}},{"count":{"_near":100}}]}`, ids(1, 10), ""},
			{`{"site":{"name":{"_pick":{"ids":[3]}}}}`, ids(5, 9), ""},
			{`{"nope":{"_pick":{"ids":[1]}}}`, nil, "invalid_field"},
			{`{"label":{"_unknown":1}}`, nil, "invalid_filter"},
		}
		for _, c := range cases {
			n, err := filter.ParseJSON([]byte(c.filter))
			if err != nil {
				t.Fatal(err)
			}
			got, err := fx.ids(t, "finds", n, opt)
			if c.code != "" {
				if code(err) != c.code {
					t.Errorf("%s: %v, want %s", c.filter, err, c.code)
				}
				continue
			}
			if err != nil || idsString(got) != idsString(c.want) {
				t.Errorf("%s = %v, %v; want %v", c.filter, got, err, c.want)
			}
		}
		// A resolver's own failure is not the caller's fault.
		n, _ := filter.ParseJSON([]byte(`{"label":{"_pick":{"ids":["x"]}}}`))
		if _, err := fx.ids(t, "finds", n, opt); err == nil || code(err) != "internal_error" {
			t.Errorf("resolver failure: %v", err)
		}
		// Without the registry the operator does not exist.
		n, _ = filter.ParseJSON([]byte(`{"count":{"_near":5}}`))
		if _, err := fx.ids(t, "finds", n, filter.Options{}); code(err) != "invalid_filter" {
			t.Errorf("no registry: %v", err)
		}
		// Validate checks the operator without resolving it.
		if err := filter.Validate(fx.cat, "finds", n, opt); err != nil {
			t.Errorf("Validate: %v", err)
		}
		reg2 := filter.NewRegistry()
		calls := 0
		_ = reg2.Register(filter.Operator{Name: "_near", Resolve: func(context.Context, filter.OperatorCall) (filter.Resolution, error) {
			calls++
			return filter.Resolution{IDs: []int64{}}, nil
		}})
		if err := filter.Validate(fx.cat, "finds", n, filter.Options{Operators: reg2}); err != nil || calls != 0 {
			t.Errorf("Validate resolved the operator: %v, %d calls", err, calls)
		}
		reg2.Unregister("_near")
		if err := filter.Validate(fx.cat, "finds", n, filter.Options{Operators: reg2}); code(err) != "invalid_filter" {
			t.Errorf("unregistered: %v", err)
		}
	})
}

func TestSearch(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		fx := newFixture(t, e)
		finds, _ := fx.cat.Table("finds")
		cases := []struct {
			text     string
			readable func(*schema.Field) bool
			want     []int64
		}{
			{"Ä", nil, ids(1, 2)},
			{"  pottery ", nil, ids(1, 2, 9)}, // material, any case
			{"ЖУК", nil, ids(8, 9)},           // label of 9, description of 8
			{"%", nil, ids(4, 9, 10)},
			{"ЖУК", func(f *schema.Field) bool { return f.Name != "description" }, ids(9)},
			{"ЖУК", func(*schema.Field) bool { return false }, ids()},
		}
		for _, c := range cases {
			got, err := fx.ids(t, "finds", filter.Search(finds, c.text, c.readable), filter.Options{})
			if err != nil || idsString(got) != idsString(c.want) {
				t.Errorf("Search(%q) = %v, %v; want %v", c.text, got, err, c.want)
			}
		}
		if filter.Search(finds, " ", nil) != nil {
			t.Error("blank search must give no condition")
		}
		// Fields of other storage types are left out (a float would be invalid).
		if s := filter.Search(finds, "x", nil).String(); strings.Contains(s, "weight") || strings.Contains(s, "site") || strings.Contains(s, "count") {
			t.Errorf("search covers %s", s)
		}
		if _, err := fx.ids(t, "finds", filter.Search(finds, strings.Repeat("x", filter.MaxText+1), nil), filter.Options{}); code(err) != "invalid_filter" {
			t.Errorf("long search: %v", err)
		}
		n := filter.All(filter.Search(finds, "a", nil), mustParse(t, `{"complete":{"_eq":true}}`))
		if got, _ := fx.ids(t, "finds", n, filter.Options{}); idsString(got) != idsString(ids(1, 5, 7, 9, 11)) {
			t.Errorf("search AND filter = %v", got)
		}
	})
}

func mustParse(t *testing.T, s string) filter.Node {
	t.Helper()
	n, err := filter.ParseJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestErrorsAreTyped(t *testing.T) {
	_, err := filter.ParseJSON([]byte(`{"label":{"_eq":null}}`))
	e, ok := errs.As(err)
	if !ok || e.Kind != errs.Invalid || e.Code != "invalid_filter" {
		t.Fatalf("%#v", err)
	}
}
