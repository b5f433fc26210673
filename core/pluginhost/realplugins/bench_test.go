package realplugins_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// benchRecords is how many dated finds the list benchmarks filter.
const benchRecords = 5000

var printCores sync.Once

// BenchmarkRealPlugins measures what the real plugins add to a request,
// each pair on the same data shape, through the server on both engines:
//
//   - save: a new record with 3 radiocarbon rows on "samples" (the
//     radiocarbon hook calibrates each row: one gRPC call for the batch)
//     vs 3 rows of plain_c14, a plain child table of "plain" with the same
//     columns, the ranges sent by the client;
//   - read: the full record of a find with chronology, osteology and
//     radiocarbon active (their columns, schema flags and child rows; none
//     of the three declares a record section) vs the record of "plain",
//     whose user fields and child table hold the same values;
//   - list: the finds (5,000 seeded datings, some open-ended) overlapping
//     -350…-320 with _chrono_overlap (resolved by the plugin on every
//     request) vs the same filter written by hand, on the same table.
//
// It prints the core count. About a minute on two cores with:
//
//	go test -run '^$' -bench RealPlugins -benchtime 1s ./core/pluginhost/realplugins/
func BenchmarkRealPlugins(b *testing.B) {
	printCores.Do(func() {
		fmt.Printf("cores: %d (GOMAXPROCS %d)\n", runtime.NumCPU(), runtime.GOMAXPROCS(0))
	})
	for _, e := range store.Engines {
		b.Run(string(e), func(b *testing.B) {
			testenv.RequireEngine(b, e)
			f := newBenchFixture(b, e)
			hand := `{"_and":[{"_or":[{"chrono_from":{"_nnull":true}},{"chrono_to":{"_nnull":true}}]},` +
				`{"_or":[{"chrono_from":{"_null":true}},{"chrono_from":{"_lte":-320}}]},` +
				`{"_or":[{"chrono_to":{"_null":true}},{"chrono_to":{"_gte":-350}}]}]}`
			// The two list answers must agree, or the comparison means nothing.
			overlap := f.json("POST", "/records/finds", `{"filter":{"chrono_from":{"_chrono_overlap":[-350,-320]}},"ids_only":1}`, f.reader, 200)
			builtin := f.json("POST", "/records/finds", `{"filter":`+hand+`,"ids_only":1}`, f.reader, 200)
			if fmt.Sprint(overlap["ids"]) != fmt.Sprint(builtin["ids"]) || overlap["total"].(float64) < 100 {
				b.Fatalf("the filters disagree: %v vs %v records", overlap["total"], builtin["total"])
			}
			for _, c := range []struct {
				name, method, url, body string
				status                  int
			}{
				{"save/radiocarbon_3_rows", "POST", "/record/samples", saveBody("samples_radiocarbon", false), 200},
				{"save/plain_child_3_rows", "POST", "/record/plain", saveBody("plain_c14", true), 200},
				{"read/plugins_active", "GET", "/record/finds/1", "", 200},
				{"read/no_plugins", "GET", "/record/plain/1", "", 200},
				{"list/chrono_overlap", "POST", "/records/finds", `{"filter":{"chrono_from":{"_chrono_overlap":[-350,-320]}}}`, 200},
				{"list/builtin_filter", "POST", "/records/finds", `{"filter":` + hand + `}`, 200},
			} {
				b.Run(c.name, func(b *testing.B) {
					if rec := f.do(c.method, c.url, c.body, f.writer); rec.Code != c.status {
						b.Fatalf("%d %s", rec.Code, rec.Body)
					}
					n := 0
					for b.Loop() {
						if rec := f.do(c.method, c.url, c.body, f.writer); rec.Code != c.status {
							b.Fatalf("%d %s", rec.Code, rec.Body)
						}
						n++
					}
					b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "req/s")
				})
			}
		})
	}
}

// radiocarbonColumns are the radiocarbon child table's columns, for the
// plain table that imitates it.
var radiocarbonColumns = []schema.FieldDef{
	{Name: "lab_code"}, {Name: "bp", DBType: "int"}, {Name: "bp_error", DBType: "int"}, {Name: "material"},
	{Name: "d13c", DBType: "float"}, {Name: "curve"}, {Name: "cal_1s_from", DBType: "int"}, {Name: "cal_1s_to", DBType: "int"},
	{Name: "cal_2s_from", DBType: "int"}, {Name: "cal_2s_to", DBType: "int"}, {Name: "notes", Type: "long_text"},
}

// saveBody is a new record with the 3 rows of c14Rows in table.
func saveBody(table string, withRanges bool) string {
	return `{"core":{"code":"S"},"plugins":{"` + table + `":` + c14Rows(withRanges) + `}}`
}

// c14Rows are 3 radiocarbon rows; withRanges sends the calibrated ranges,
// as a client must where no plugin computes them.
func c14Rows(withRanges bool) string {
	rows := make([]string, 3)
	for i := range rows {
		ranges := ""
		if withRanges {
			ranges = `,"cal_1s_from":3386,"cal_1s_to":3450,"cal_2s_from":3278,"cal_2s_to":3486`
		}
		rows[i] = fmt.Sprintf(`{"fields":{"lab_code":"OxA-%d","bp":%d,"bp_error":40,"material":"charcoal","d13c":-24.5,"curve":"intcal20"%s}}`,
			i+1, 3150+50*i, ranges)
	}
	return "[" + strings.Join(rows, ",") + "]"
}

// newBenchFixture adds to the fixture: "finds" with the three features
// and benchRecords seeded datings (record 1 with an osteology inventory
// and 3 radiocarbon dates); "plain", with the same columns as user fields
// and the child table plain_c14, its record 1 holding the same values;
// "samples" with radiocarbon only, for the saves.
func newBenchFixture(b *testing.B, e store.Engine) *fixture {
	f := newFixture(b, e, nil)
	for _, p := range realPlugins {
		f.activate("finds", p, p)
	}
	f.table("samples", schema.FieldDef{Name: "code"})
	f.activate("samples", "radiocarbon", "radiocarbon")
	f.table("plain", schema.FieldDef{Name: "code"}, schema.FieldDef{Name: "chrono_from", DBType: "int"},
		schema.FieldDef{Name: "chrono_to", DBType: "int"}, schema.FieldDef{Name: "chrono_label"},
		schema.FieldDef{Name: "chrono_certainty", DBType: "int"}, schema.FieldDef{Name: "chrono_period"},
		schema.FieldDef{Name: "osteo_data", Type: "long_text"})
	f.childTable("plain_c14", "plain", radiocarbonColumns...)

	// Seeded in SQL: 5,000 saves through the API would dominate the run.
	// Datings between 1000 BCE and 500 CE, 25–200 years long; one in ten
	// ante quem, one in ten post quem, one in twenty undated.
	rng := rand.New(rand.NewPCG(1, 2))
	for start := 0; start < benchRecords; start += 500 {
		var vals []string
		for i := start; i < min(start+500, benchRecords); i++ {
			from := -1000 + rng.IntN(1500)
			if from == 0 {
				from = 1
			}
			to := from + 25 + rng.IntN(175)
			if from < 0 && to >= 0 {
				to++ // no year 0
			}
			fromSQL, toSQL := fmt.Sprint(from), fmt.Sprint(to)
			switch r := rng.IntN(20); {
			case r < 2:
				fromSQL = "NULL"
			case r < 4:
				toSQL = "NULL"
			case r == 4:
				fromSQL, toSQL = "NULL", "NULL"
			}
			vals = append(vals, fmt.Sprintf("('F%d', %s, %s)", i+1, fromSQL, toSQL))
		}
		f.sql(`INSERT INTO ` + f.app.DB.Qualify("finds") + ` (code, chrono_from, chrono_to) VALUES ` + strings.Join(vals, ", "))
	}

	doc := `{"individuals":[{"id":"T1","label":"Tomb 1","notes":"","bones":{"cranium":{"present":true,"conservation":"complete"},` +
		`"femur_left":{"present":true,"conservation":"gt50"},"femur_right":{"present":true,"conservation":"fragmentary"}}}]}`
	core := fmt.Sprintf(`"code":"F1","chrono_label":"c4l BCE","chrono_certainty":2,"chrono_period":"Hellenistic","osteo_data":%q`, doc)
	f.json("POST", "/record/finds/1", `{"core":{`+core+`},"plugins":{"finds_radiocarbon":`+c14Rows(false)+`}}`, f.writer, 200)
	plainCore := strings.Replace(core, `"chrono_label"`, `"chrono_from":-325,"chrono_to":-301,"chrono_label"`, 1)
	f.create("plain", `{"core":{`+plainCore+`},"plugins":{"plain_c14":`+c14Rows(true)+`}}`)
	return f
}
