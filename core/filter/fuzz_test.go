package filter_test

import (
	"context"
	"testing"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/store"
)

// Seeds beyond testdata/fuzz: the shapes the API documents.
var jsonSeeds = []string{
	`{"_or":[{"label":{"_icontains":"amph"}},{"site":{"name":{"_eq":"Pompeii"}}}]}`,
	`{"label":{"_in":["a","b"],"_nnull":true},"count":{"_between":[1,5]}}`,
	`{"finds_biblio":{"ref":{"title":{"_starts_with":"x'; DROP TABLE finds; --"}}}}`,
	`{"found_on":{"_gt":"2020-01-01"},"complete":{"_eq":true},"weight":{"_lte":2.5}}`,
	`{"id":{"_nin":"1,2,3"},"description":{"_ncontains":"%_\\"}}`,
	`{"_and":[{"_or":[{"material":{"_empty":true}},{"site":{"_null":true}}]}]}`,
	`{"count":{"_near":5}}`,
	`"{\"label\":{\"_eq\":\"x\"}}"`,
}

var whereSeeds = []string{
	`material = 'pottery' AND NOT (count > 5 OR site IN (1, 2))`,
	`label LIKE '%a\_b%' ESCAPE '\' OR label IS NOT NULL`,
	`found_on BETWEEN '2000-01-01' AND '2020-12-31'`,
	`label = 'x''; DROP TABLE finds; --'`,
	`"label" <> 'y' AND complete = TRUE AND weight >= -1.5e2`,
	`id NOT IN (1,2,3) OR creator IS NULL`,
}

// fuzzCheck renders an accepted filter, proves no caller text reached the
// SQL, and runs it: an accepted filter must never fail in the database.
func fuzzCheck(t *testing.T, fx *fixture, n filter.Node, allowed ...string) {
	opt := filter.Options{Operators: fuzzOperators}
	where, args, err := filter.RenderWith(context.Background(), fx.db, fx.cat, "finds", n, opt)
	if err != nil {
		e, ok := errs.As(err)
		if !ok || (e.Code != "invalid_filter" && e.Code != "invalid_field") {
			t.Fatalf("render %s: unexpected error %v", n, err)
		}
		return
	}
	if err := checkSQL(fx.db, fx.cat, where, args); err != nil {
		t.Fatalf("%s: %v", n, err)
	}
	rows, err := fx.db.Query(context.Background(), `SELECT "id" FROM `+fx.db.Qualify("finds")+` WHERE `+where, args...)
	if err != nil {
		t.Fatalf("%s rendered SQL that fails: %v\n%s\n%v", n, err, where, args)
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s rendered SQL that fails: %v\n%s\n%v", n, err, where, args)
	}
	rows.Close()
}

var fuzzOperators = func() *filter.Registry {
	r := filter.NewRegistry()
	_ = r.Register(filter.Operator{Name: "_near", Fields: []string{"count"}, Resolve: func(_ context.Context, c filter.OperatorCall) (filter.Resolution, error) {
		if s, ok := c.Value.(string); ok {
			return filter.Resolution{Node: filter.Cond{Field: "count", Op: "_eq", Args: []string{s}}}, nil
		}
		return filter.Resolution{IDs: []int64{1, 2}}, nil
	}})
	return r
}()

func FuzzParseJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	fx := newFixture(f, store.SQLite)
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := filter.ParseJSON(data)
		if err != nil {
			if c := errs.CodeOf(err); c != "invalid_filter" && c != "invalid_field" {
				t.Fatalf("ParseJSON: error %v", err)
			}
			return
		}
		if n == nil {
			return
		}
		fuzzCheck(t, fx, n)
	})
}

func FuzzParseWhere(f *testing.F) {
	for _, s := range whereSeeds {
		f.Add(s)
	}
	fx := newFixture(f, store.SQLite)
	f.Fuzz(func(t *testing.T, s string) {
		n, err := filter.ParseWhere(s)
		if err != nil {
			if errs.CodeOf(err) != "invalid_subset" {
				t.Fatalf("ParseWhere: error %v", err)
			}
			return
		}
		fuzzCheck(t, fx, n)
	})
}
