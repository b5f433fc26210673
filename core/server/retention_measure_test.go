package server_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/retention"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestRetentionGrowth measures the storage that saves add to the version
// and recent-records tables (indexes included), and what pruning gives
// back, for docs/performance.md ("Retention (issue 35)"). It is a
// measurement, not a check: it runs only with STRATA_MEASURE_RETENTION=1
// and logs its figures (go test -v).
//
//	STRATA_MEASURE_RETENTION=1 STRATA_REQUIRE_POSTGRES=1 go test -count=1 -p 1 -v -run TestRetentionGrowth ./core/server/
func TestRetentionGrowth(t *testing.T) {
	if os.Getenv("STRATA_MEASURE_RETENTION") != "1" {
		t.Skip("a measurement: STRATA_MEASURE_RETENTION=1 runs it")
	}
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		f := newRetFix(t, e)
		r := f.newApp(t, "ret_measure")
		typicalFields(t, r.app, f.clock.Now())
		size := func() (versions, history int64) {
			return tableBytes(t, r.app, "versions"), tableBytes(t, r.app, "history")
		}
		report := func(step string, v0, h0 int64) {
			v, h := size()
			nv := r.count(t, `SELECT COUNT(*) FROM `+r.app.DB.Sys("versions"))
			nh := r.count(t, `SELECT COUNT(*) FROM `+r.app.DB.Sys("history"))
			t.Logf("%-58s versions %5d rows %9d B (%+9d)  history %5d rows %8d B (%+8d)", step, nv, v, v-v0, nh, h, h-h0)
		}
		v0, h0 := size()
		report("empty", v0, h0)

		// 1,000 updates of one record, one field each (a field worker
		// correcting a find's description, as the edit form saves).
		one := r.create(t, r.admin, "F-0001")
		r.update(t, r.admin, one, typicalCore(0))
		v1, h1 := size()
		for i := 1; i <= 1000; i++ {
			r.update(t, r.admin, one, fmt.Sprintf(`{"notes":"Sherd of a coarse-ware jar, rim and neck; revised note %d."}`, i))
		}
		report("1,000 updates of one record", v1, h1)

		// 1,000 records updated once each: the recent-records list gains
		// a row per record, not per save.
		v2, h2 := size()
		ids := make([]int64, 1000)
		for i := range ids {
			ids[i] = r.create(t, r.admin, fmt.Sprintf("F-%04d", i+2))
		}
		v3, h3 := size()
		report("1,000 creates (no version)", v2, h2)
		for i, id := range ids {
			r.update(t, r.admin, id, typicalCore(i+1))
		}
		report("1,000 updates, one per record", v3, h3)

		// Pruning to the 10 newest versions per record: what the used
		// pages come to (SQLite's freed pages go to its free list and are
		// reused; PostgreSQL's after VACUUM are free space in the
		// relation, reused by the next saves), then 1,000 more updates.
		v4, h4 := size()
		r.put(t, `{"versions_keep":10}`)
		j := r.apply(t)
		vacuum(t, r.app)
		report(fmt.Sprintf("keep 10: %d versions pruned (+VACUUM on PostgreSQL)", j.Result.VersionsDeleted), v4, h4)
		// Three rounds of 1,000 more updates of the record and a prune:
		// the space stays flat once the free space is reused.
		for round := 1; round <= 3; round++ {
			v5, h5 := size()
			for i := 1; i <= 1000; i++ {
				r.update(t, r.admin, one, fmt.Sprintf(`{"notes":"Sherd of a coarse-ware jar, rim and neck; round %d, revision %d."}`, round, i))
			}
			report(fmt.Sprintf("round %d: 1,000 more updates of one record", round), v5, h5)
			r.apply(t)
			vacuum(t, r.app)
			report(fmt.Sprintf("round %d: keep 10 (+VACUUM on PostgreSQL)", round), v5, h5)
		}

		// The job at scale: 1,000,000 versions of 10,000 records (100
		// each, interleaved as saves of many records are), pruned to the
		// 10 newest per record.
		big := f.newApp(t, "ret_measure_big")
		const perRecord, records = 100, 10_000
		if _, err := big.app.DB.Exec(t.Context(), `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO `+big.app.DB.Sys("versions")+` (tb, record_id, time, operation, content)
			SELECT 'finds', 1 + (i % ?), ?, 'update', ? FROM n`, perRecord*records, records, f.clock.Now(),
			`{"core":`+typicalCore(7)+`,"plugins":{}}`); err != nil {
			t.Fatal(err)
		}
		vacuum(t, big.app)
		before := tableBytes(t, big.app, "versions")
		// Every progress call but the first (the start) and the last
		// (the end, at once after the last batch's) ends a batch: the
		// time between two calls is one batch (its transaction, and the
		// read of the next range).
		start := time.Now()
		var calls []time.Time
		res, err := retention.Apply(t.Context(), big.app.DB, retention.Settings{VersionsKeep: 10}, f.clock.Now(),
			func(int64, int64) { calls = append(calls, time.Now()) })
		if err != nil {
			t.Fatal(err)
		}
		var batches []time.Duration
		for i := 1; i < len(calls)-1; i++ {
			batches = append(batches, calls[i].Sub(calls[i-1]))
		}
		took := time.Since(start)
		vacuum(t, big.app)
		slices.Sort(batches)
		t.Logf("1,000,000 versions of 10,000 records, keep 10: %d examined, %d deleted in %s (%.0f deleted/s), %d batches of %d: median %s, max %s; versions %d B before, %d B after",
			res.VersionsExamined, res.VersionsDeleted, took.Round(time.Millisecond), float64(res.VersionsDeleted)/took.Seconds(),
			len(batches), retention.BatchFor(e), batches[len(batches)/2].Round(time.Millisecond), batches[len(batches)-1].Round(time.Millisecond),
			before, tableBytes(t, big.app, "versions"))
	})
}

// typicalFields gives finds the fields of a typical recording table
// besides label and notes: ten in all, text, numbers and a date.
func typicalFields(t *testing.T, a *apps.App, now time.Time) {
	t.Helper()
	for _, fd := range []schema.FieldDef{
		{Name: "site", Label: "Site"}, {Name: "unit", Label: "Unit", DBType: "int"},
		{Name: "material", Label: "Material"}, {Name: "weight", Label: "Weight (g)", DBType: "float"},
		{Name: "length", Label: "Length (mm)", DBType: "float"}, {Name: "found", Label: "Found on", Type: "date"},
		{Name: "period", Label: "Period"}, {Name: "finder", Label: "Finder"},
	} {
		if _, err := schema.AddField(t.Context(), a.DB, "finds", fd, now); err != nil {
			t.Fatal(err)
		}
	}
}

// typicalCore is a full record of finds (about 350 bytes of values).
func typicalCore(i int) string {
	return fmt.Sprintf(`{"label":"F-%04d","site":"Poggio Civitate, trench 12","unit":%d,"material":"pottery, coarse ware",`+
		`"weight":%d.5,"length":%d.2,"found":"2025-07-%02d","period":"Archaic, 7th-6th c. BC","finder":"A. Rossi",`+
		`"notes":"Sherd of a coarse-ware jar, rim and neck, burnt on the outside; joins with F-%04d."}`,
		i, 1000+i%50, 10+i%200, 20+i%90, 1+i%28, i+1)
}

// tableBytes is the space of sys_<name> with its indexes: on SQLite the
// pages its b-trees use (dbstat), on PostgreSQL pg_total_relation_size.
func tableBytes(t *testing.T, a *apps.App, name string) int64 {
	t.Helper()
	var n int64
	var err error
	if a.DB.Engine == store.Postgres {
		err = a.DB.QueryRow(t.Context(), `SELECT pg_total_relation_size(?::regclass)`, strings.ReplaceAll(a.DB.Sys(name), `"`, ``)).Scan(&n)
	} else {
		err = a.DB.QueryRow(t.Context(), `SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name = ? OR name IN (SELECT name FROM sqlite_master WHERE tbl_name = ? AND type = 'index')`,
			"sys_"+name, "sys_"+name).Scan(&n)
	}
	if err != nil {
		t.Fatalf("size of sys_%s: %v", name, err)
	}
	return n
}

// vacuum makes PostgreSQL's deleted rows free space (SQLite frees pages
// at the commit already).
func vacuum(t *testing.T, a *apps.App) {
	t.Helper()
	if a.DB.Engine != store.Postgres {
		return
	}
	for _, n := range []string{"versions", "history"} {
		if _, err := a.DB.Pool().ExecContext(t.Context(), `VACUUM `+a.DB.Sys(n)); err != nil {
			t.Fatal(err)
		}
	}
}
