package filter_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// propertyRuns is how many random filters one run compares.
const propertyRuns = 300

type genField struct {
	name string
	kind string // text int float date bool
}

var (
	findsFields = []genField{{"label", "text"}, {"description", "text"}, {"material", "text"}, {"notes", "text"},
		{"count", "int"}, {"id", "int"}, {"site", "int"}, {"weight", "float"}, {"found_on", "date"}, {"complete", "bool"}}
	sitesFields   = []genField{{"name", "text"}, {"region", "text"}, {"id", "int"}}
	datesFields   = []genField{{"period", "text"}, {"year", "int"}, {"id_link", "int"}}
	biblioFields  = []genField{{"title", "text"}, {"id", "int"}}
	fbiblioFields = []genField{{"pages", "text"}, {"ref", "int"}}

	pools = map[string][]any{
		"text": {"a", "A", "ä", "Ä", "amph", "AMPHORA Ä-TYPE", "ß", "ẞ", "straße", "σ", "Σ", "ς", "ж", "Ж", "%", "_", `\`,
			"a%b", "a_b", `a\b`, "", "e", "pottery", "Pottery", "x_y", "Roman", "ROMAN", "1", "13-15", "Ostia", "Z", "s", "Ω",
			// Three characters and more, for the search indexes' trigrams:
			// accents, case, LIKE metacharacters, phrase quotes.
			"ä-t", "Ä-TYPE", "0% p", "0%_p", `k\sl`, `ck\`, "e_c", "ake_", "RASSE", "aße", "AẞE", "ΊΣΥ", "σίσυ", "жУк",
			"Rim", "rim sherd", `\sl`, "%_x", "a%b%", "ott", "OTT", `"ro`, "mph", "ROM", `ia\`},
		"int":   {-2, 0, 1, 3, 5, 7, 10, 12, 20, 21, 100, "5", "-50", 300, 2},
		"float": {0, 1, 2.5, 3, 4, 5, 6, 7.25, 12.5, "6", 0.5},
		"date":  {"1999-01-01", "2000-02-29", "2010-10-10", "2019-12-31", "2020-05-01", "2020-05-02", "2020-06-30", "2021-01-15", "2030-01-01"},
		"bool":  {true, false, "true", "false", 1, 0},
	}
	opsAll  = []string{"_eq", "_neq", "_gt", "_lt", "_gte", "_lte", "_between", "_in", "_nin", "_contains", "_icontains", "_ncontains", "_starts_with", "_nstarts_with", "_ends_with", "_nends_with", "_null", "_nnull", "_empty", "_nempty"}
	opsBool = []string{"_eq", "_neq", "_in", "_nin", "_null", "_nnull", "_empty", "_nempty"}
	opsNum  = []string{"_eq", "_neq", "_gt", "_lt", "_gte", "_lte", "_between", "_in", "_nin", "_null", "_nnull", "_empty", "_nempty"}
)

type gen struct{ r *rand.Rand }

func (g gen) pick(n int) int { return g.r.IntN(n) }

func (g gen) value(kind string) any {
	p := pools[kind]
	if kind != "bool" && g.pick(4) == 0 {
		// Text operators on numbers and dates take any text.
		if kind == "int" || kind == "date" {
			return pools["text"][g.pick(len(pools["text"]))]
		}
	}
	return p[g.pick(len(p))]
}

func (g gen) cond(f genField) map[string]any {
	ops := opsAll
	switch f.kind {
	case "bool":
		ops = opsBool
	case "float":
		ops = opsNum
	}
	op := ops[g.pick(len(ops))]
	var v any
	switch op {
	case "_null", "_nnull", "_empty", "_nempty":
		v = true
	case "_in", "_nin":
		list := []any{}
		for range g.pick(4) {
			list = append(list, pools[f.kind][g.pick(len(pools[f.kind]))])
		}
		v = list
	case "_between":
		v = []any{pools[f.kind][g.pick(len(pools[f.kind]))], pools[f.kind][g.pick(len(pools[f.kind]))]}
	case "_contains", "_icontains", "_ncontains", "_starts_with", "_nstarts_with", "_ends_with", "_nends_with":
		v = g.value("text")
		if f.kind == "int" {
			v = strconv.Itoa(g.pick(30) - 5)
		}
		if f.kind == "date" {
			v = []string{"2020", "-05-", "1999-01-01", "0", "-3"}[g.pick(5)]
		}
	default:
		v = pools[f.kind][g.pick(len(pools[f.kind]))]
	}
	return map[string]any{f.name: map[string]any{op: v}}
}

// object builds a random condition object over fields, with nested
// conditions on finds' lookup, plugin tables and two-hop paths.
func (g gen) object(fields []genField, depth int, finds bool) map[string]any {
	out := map[string]any{}
	for range 1 + g.pick(2) {
		var part map[string]any
		switch k := g.pick(10); {
		case k < 6 || depth > 2:
			part = g.cond(fields[g.pick(len(fields))])
		case k < 8:
			key := []string{"_and", "_or"}[g.pick(2)]
			var items []any
			for range 1 + g.pick(3) {
				items = append(items, g.object(fields, depth+1, finds))
			}
			part = map[string]any{key: items}
		case finds:
			switch g.pick(3) {
			case 0:
				part = map[string]any{"site": g.object(sitesFields, depth+1, false)}
			case 1:
				part = map[string]any{"finds_dates": g.object(datesFields, depth+1, false)}
			default:
				inner := g.object(fbiblioFields, depth+1, false)
				if g.pick(2) == 0 {
					inner = map[string]any{"ref": g.object(biblioFields, depth+2, false)}
				}
				part = map[string]any{"finds_biblio": inner}
			}
		default:
			part = g.cond(fields[g.pick(len(fields))])
		}
		for k, v := range part {
			out[k] = v
		}
	}
	return out
}

// TestSearchIndexesAgree renders random filters over the same rows on one
// engine with and without search indexes on the text fields and requires
// the same ids (or the same error): the indexes only choose candidates.
func TestSearchIndexesAgree(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		seed := uint64(time.Now().UnixNano())
		if s := os.Getenv("STRATA_FILTER_SEED"); s != "" {
			seed, _ = strconv.ParseUint(s, 10, 64)
		}
		t.Logf("seed %d (STRATA_FILTER_SEED=%d reproduces this run)", seed, seed)
		plain, indexed := newFixture(t, e), newFixtureWith(t, e, true)
		g := gen{rand.New(rand.NewPCG(seed, 0x5eed))}
		for i := 0; i < propertyRuns; i++ {
			raw, _ := json.Marshal(g.object(findsFields, 1, true))
			n, err := filter.ParseJSON(raw)
			if err != nil {
				t.Fatalf("generated filter %s: %v", raw, err)
			}
			a, errA := plain.ids(t, "finds", n, filter.Options{})
			b, errB := indexed.ids(t, "finds", n, filter.Options{})
			if code(errA) != code(errB) || idsString(a) != idsString(b) {
				t.Fatalf("index and scan disagree on %s:\nscan  %v %v\nindex %v %v", raw, a, errA, b, errB)
			}
		}
		// Every text operand of the pool, on every indexed field of finds.
		for _, f := range []string{"label", "description", "notes", "material"} {
			for _, op := range []string{"_contains", "_icontains", "_ncontains", "_starts_with", "_nstarts_with", "_ends_with"} {
				for _, v := range pools["text"] {
					raw, _ := json.Marshal(map[string]any{f: map[string]any{op: v}})
					n, err := filter.ParseJSON(raw)
					if err != nil {
						t.Fatal(err)
					}
					a, errA := plain.ids(t, "finds", n, filter.Options{})
					b, errB := indexed.ids(t, "finds", n, filter.Options{})
					if code(errA) != code(errB) || idsString(a) != idsString(b) {
						t.Fatalf("index and scan disagree on %s:\nscan  %v %v\nindex %v %v", raw, a, errA, b, errB)
					}
				}
			}
		}
	})
}

// TestEnginesAgree renders random filters over the same rows on SQLite
// and PostgreSQL and requires the same ids (or the same error).
func TestEnginesAgree(t *testing.T) {
	testenv.RequireEngine(t, store.Postgres)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("STRATA_FILTER_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (STRATA_FILTER_SEED=%d reproduces this run)", seed, seed)
	lite, pg := newFixture(t, store.SQLite), newFixture(t, store.Postgres)
	g := gen{rand.New(rand.NewPCG(seed, 0x5eed))}
	matched := 0
	for i := 0; i < propertyRuns; i++ {
		raw, _ := json.Marshal(g.object(findsFields, 1, true))
		n, err := filter.ParseJSON(raw)
		if err != nil {
			t.Fatalf("generated filter %s: %v", raw, err)
		}
		a, errA := lite.ids(t, "finds", n, filter.Options{})
		b, errB := pg.ids(t, "finds", n, filter.Options{})
		if code(errA) != code(errB) || idsString(a) != idsString(b) {
			t.Fatalf("engines disagree on %s:\nsqlite   %v %v\npostgres %v %v", raw, a, errA, b, errB)
		}
		if errA == nil && len(a) > 0 && len(a) < 12 {
			matched++
		}
	}
	// Guard against a generator that only makes trivial filters.
	if matched < propertyRuns/4 {
		t.Errorf("only %d of %d filters selected some but not all rows", matched, propertyRuns)
	}
}
