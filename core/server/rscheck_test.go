package server_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/rscheck"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// rsFix builds one table of units for a matrix check, straight in the
// database: BraDypUS's reciprocal rows and relations to records that are
// gone cannot be made through the API, and the dating columns are the
// plugins' (not running here).
type rsFix struct {
	t     *testing.T
	app   *apps.App
	tb    string
	units map[string]int64
}

func newRSFix(t *testing.T, a *apps.App, tb string, chrono, radiocarbon bool) *rsFix {
	t.Helper()
	ctx, now := t.Context(), time.Now().UTC()
	if _, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: tb, Label: tb}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.AddField(ctx, a.DB, tb, schema.FieldDef{Name: "code", Label: "Code", Required: true}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.PutTable(ctx, a.DB, tb, schema.TableConfig{RS: schema.RSOn(true), IDField: schema.Set("code")}, now); err != nil {
		t.Fatal(err)
	}
	if chrono {
		spec := schema.FeatureSpec{Plugin: "chronology", Name: schema.ChronologyFeature,
			Columns: []schema.FieldDef{{Name: "chrono_from", DBType: "int"}, {Name: "chrono_to", DBType: "int"}, {Name: "chrono_label"}}}
		if err := schema.ActivateFeature(ctx, a.DB, tb, spec, now); err != nil {
			t.Fatal(err)
		}
	}
	if radiocarbon {
		spec := schema.FeatureSpec{Plugin: "radiocarbon", Name: "radiocarbon", Child: &schema.ChildSpec{Suffix: "radiocarbon", Label: "Dates",
			Columns: []schema.FieldDef{{Name: "lab_code"}, {Name: "cal_2s_from", DBType: "int"}, {Name: "cal_2s_to", DBType: "int"}}}}
		if err := schema.ActivateFeature(ctx, a.DB, tb, spec, now); err != nil {
			t.Fatal(err)
		}
	}
	return &rsFix{t: t, app: a, tb: tb, units: map[string]int64{}}
}

// unit adds a record; from and to (signed years) are set when non-nil.
func (f *rsFix) unit(code string, dating ...int64) int64 {
	f.t.Helper()
	cols, vals := `"code"`, []any{code}
	if len(dating) == 2 {
		cols += `, "chrono_from", "chrono_to"`
		vals = append(vals, dating[0], dating[1])
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ")
	var id int64
	if err := f.app.DB.QueryRow(f.t.Context(), `INSERT INTO `+f.app.DB.Qualify(f.tb)+` (`+cols+`) VALUES (`+marks+`) RETURNING "id"`, vals...).Scan(&id); err != nil {
		f.t.Fatal(err)
	}
	f.units[code] = id
	return id
}

// rel stores a relation row as given (not normalised, as BraDypUS kept them).
func (f *rsFix) rel(first int64, r int, second int64) int64 {
	f.t.Helper()
	var id int64
	if err := f.app.DB.QueryRow(f.t.Context(), `INSERT INTO `+f.app.DB.Sys("rs")+` (tb, first, second, relation, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		f.tb, first, second, r, time.Now().UTC()).Scan(&id); err != nil {
		f.t.Fatal(err)
	}
	return id
}

// date adds a radiocarbon date of unit with its 2σ range in cal BP.
func (f *rsFix) date(unit int64, lab string, from, to int64) int64 {
	f.t.Helper()
	var id int64
	if err := f.app.DB.QueryRow(f.t.Context(), `INSERT INTO `+f.app.DB.Qualify(f.tb+"_radiocarbon")+
		` ("id_link", "lab_code", "cal_2s_from", "cal_2s_to") VALUES (?, ?, ?, ?) RETURNING "id"`, unit, lab, from, to).Scan(&id); err != nil {
		f.t.Fatal(err)
	}
	return id
}

// rsReport is the report as a client reads it.
type rsReport struct {
	Status    string            `json:"status"`
	Tb        string            `json:"tb"`
	Units     int               `json:"units"`
	Relations int               `json:"relations"`
	Clean     bool              `json:"clean"`
	Skipped   map[string]string `json:"skipped"`
	Problems  map[string]struct {
		Count     int            `json:"count"`
		Truncated bool           `json:"truncated"`
		Items     []rscheck.Item `json:"items"`
	} `json:"problems"`
}

func getReport(t *testing.T, inst *testenv.Instance, who, tb string) (rsReport, string) {
	t.Helper()
	rec := testenv.Scenario{Name: "check " + tb, Method: "GET", URL: "/dig/api/rs/" + tb + "/check", Headers: testenv.Bearer(who), ExpectedStatus: 200}.Run(t, inst.Server)
	var r rsReport
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	return r, rec.Body.String()
}

func recordIDs(it rscheck.Item) []int64 {
	var out []int64
	for _, r := range it.Records {
		out = append(out, r.ID)
	}
	return out
}

// TestMatrixCheck: each category of GET /rs/{tb}/check is found on a
// table built for it (and nothing else is), a clean matrix reports
// nothing, the reciprocal fix adds the row (and only on what the check
// reports), a denied user is refused, a subset user's report covers their
// rows only, and hostile input is answered with its code.
func TestMatrixCheck(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		inst := testenv.NewInstanceWithJobs(t, e)
		a := testenv.NewApp(t, inst.Apps, "dig")
		admin := testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password)

		// Each table is built for its categories; want are the counts of
		// every category (those not named: none).
		type check func(t *testing.T, f *rsFix, r rsReport)
		cases := []struct {
			name          string
			chrono, carbo bool
			build         func(f *rsFix) check
			want          map[string]int
			skipped       []string
		}{
			{name: "clean", chrono: true, carbo: true, build: func(f *rsFix) check {
				a, b, c, d := f.unit("A", 100, 200), f.unit("B"), f.unit("C", -100, 50), f.unit("D")
				f.rel(a, 5, b) // A covers B
				f.rel(b, 6, c) // B cuts C
				f.rel(c, 9, d) // C is the same as D
				f.date(a, "A-1", 1700, 1800)
				f.date(c, "C-1", 2000, 2100)
				return nil
			}},
			{name: "cycle", build: func(f *rsFix) check {
				a, b, c := f.unit("A"), f.unit("B"), f.unit("C")
				ab, bc := f.rel(a, 5, b), f.rel(b, 5, c)
				ca := f.rel(a, 1, c) // A is covered by C: C above A closes A > B > C > A
				return func(t *testing.T, f *rsFix, r rsReport) {
					it := r.Problems[rscheck.Cycle].Items[0]
					if !slices.Equal(recordIDs(it), []int64{a, b, c}) || !slices.Equal(it.Relations, []int64{ab, bc, ca}) {
						t.Errorf("cycle: %+v", it)
					}
					if len(it.Path) != 4 || it.Path[0] != it.Path[3] || len(it.Remove) != 1 {
						t.Errorf("cycle path %v, remove %v", it.Path, it.Remove)
					}
				}
			}, want: map[string]int{rscheck.Cycle: 1}, skipped: []string{rscheck.Redundant}},
			{name: "same_above", build: func(f *rsFix) check {
				a, b, c := f.unit("A"), f.unit("B"), f.unit("C")
				ab, bc := f.rel(a, 9, b), f.rel(b, 10, c)
				ac := f.rel(a, 5, c) // A covers C, though A = B = C
				return func(t *testing.T, f *rsFix, r rsReport) {
					it := r.Problems[rscheck.SameAbove].Items[0]
					if it.Upper != a || it.Lower != c || !slices.Equal(it.Relations, []int64{ac}) ||
						!slices.Equal(it.SameRelations, []int64{ab, bc}) || !slices.Equal(it.Path, []int64{a, c, b, a}) {
						t.Errorf("same_above: %+v", it)
					}
				}
			}, want: map[string]int{rscheck.SameAbove: 1}, skipped: []string{rscheck.Redundant}},
			{name: "missing_reciprocal", build: func(f *rsFix) check {
				a, b, c, d := f.unit("A"), f.unit("B"), f.unit("C"), f.unit("D")
				x, y := f.unit("X"), f.unit("Y")
				f.rel(a, 5, b)
				f.rel(b, 1, a) // stored both ways, as BraDypUS does
				cd := f.rel(c, 6, d)
				f.rel(x, 5, y)
				f.rel(y, 5, x) // a contradiction: a cycle, not a missing row
				return func(t *testing.T, f *rsFix, r rsReport) {
					it := r.Problems[rscheck.MissingReciprocal].Items[0]
					if it.Relation == nil || it.Relation.ID != cd || it.Add == nil || it.Add.First != d || it.Add.Second != c || it.Add.Relation != 2 {
						t.Errorf("missing_reciprocal: %+v", it)
					}
				}
			}, want: map[string]int{rscheck.MissingReciprocal: 1, rscheck.Cycle: 1}, skipped: []string{rscheck.Redundant}},
			{name: "dangling", build: func(f *rsFix) check {
				a, b := f.unit("A"), f.unit("B")
				f.rel(a, 5, b)
				gone := f.rel(a, 6, 99999)
				f.rel(88888, 5, 88889) // both records gone
				return func(t *testing.T, f *rsFix, r rsReport) {
					it := r.Problems[rscheck.Dangling].Items[0]
					if !slices.Equal(it.Relations, []int64{gone}) || !slices.Equal(it.Missing, []int64{99999}) || !slices.Equal(recordIDs(it), []int64{a}) {
						t.Errorf("dangling: %+v", it)
					}
				}
			}, want: map[string]int{rscheck.Dangling: 2}},
			{name: "redundant", build: func(f *rsFix) check {
				a, b, c := f.unit("A"), f.unit("B"), f.unit("C")
				f.rel(a, 5, b)
				f.rel(c, 2, b) // C is cut by B: B above C
				ac := f.rel(a, 5, c)
				return func(t *testing.T, f *rsFix, r rsReport) {
					it := r.Problems[rscheck.Redundant].Items[0]
					if it.Upper != a || it.Lower != c || !slices.Equal(it.Relations, []int64{ac}) {
						t.Errorf("redundant: %+v", it)
					}
				}
			}, want: map[string]int{rscheck.Redundant: 1}},
			{name: "period_inversion", chrono: true, build: func(f *rsFix) check {
				a, b, c := f.unit("A", -300, -200), f.unit("B"), f.unit("C", 100, 200)
				d := f.unit("D", -250, 100)  // overlaps A: not an inversion
				x := f.unit("X", -200, -100) // shares A's last year: not one either
				ab, bc := f.rel(a, 5, b), f.rel(b, 5, c)
				f.rel(a, 5, d)
				f.rel(d, 5, x)
				return func(t *testing.T, f *rsFix, r rsReport) {
					it := r.Problems[rscheck.PeriodInversion].Items[0]
					if it.Upper != a || it.Lower != c || !slices.Equal(it.Path, []int64{a, b, c}) || !slices.Equal(it.Relations, []int64{ab, bc}) ||
						it.UpperLatest.Year != -200 || it.LowerEarliest.Year != 100 || it.LowerEarliest.Source != "chronology" {
						t.Errorf("period_inversion: %+v %+v %+v", it, it.UpperLatest, it.LowerEarliest)
					}
				}
			}, want: map[string]int{rscheck.PeriodInversion: 1}},
			{name: "tpq_inversion", chrono: true, carbo: true, build: func(f *rsFix) check {
				a, b := f.unit("A", 800, 1000), f.unit("B")
				f.rel(a, 5, b)
				date := f.date(b, "OxA-1", 500, 600) // 1350–1450 CE: later than A's latest, 1000
				f.date(b, "OxA-2", 1500, 1700)       // older: not B's TPQ
				// A period inversion whose lower unit has a date that does
				// not show it (50–150 CE, before E's latest, 200): a
				// period_inversion only.
				e, g := f.unit("E", 100, 200), f.unit("G", 300, 400)
				f.rel(e, 5, g)
				f.date(g, "OxA-3", 1800, 1900)
				return func(t *testing.T, f *rsFix, r rsReport) {
					it := r.Problems[rscheck.TPQInversion].Items[0]
					lb, ub := it.LowerEarliest, it.UpperLatest
					if it.Upper != a || it.Lower != b || lb.Source != "radiocarbon" || lb.DateID != date || lb.LabCode != "OxA-1" || lb.Year != 1350 ||
						ub.Source != "chronology" || ub.Year != 1000 {
						t.Errorf("tpq_inversion: %+v %+v %+v", it, lb, ub)
					}
				}
			}, want: map[string]int{rscheck.TPQInversion: 1, rscheck.PeriodInversion: 1}},
			{name: "tpq_inversion_bce", carbo: true, build: func(f *rsFix) check {
				// Radiocarbon on both: the upper's date 2σ 3000–3100 cal BP
				// (1151–1051 BCE), the lower's 2500–2600 (651–551 BCE).
				a, b := f.unit("A"), f.unit("B")
				f.rel(b, 1, a)
				f.date(a, "A-1", 3000, 3100)
				f.date(b, "B-1", 2500, 2600)
				return func(t *testing.T, f *rsFix, r rsReport) {
					it := r.Problems[rscheck.TPQInversion].Items[0]
					if it.Upper != a || it.Lower != b || it.UpperLatest.Year != -1051 || it.LowerEarliest.Year != -651 {
						t.Errorf("tpq_inversion BCE: %+v %+v %+v", it, it.UpperLatest, it.LowerEarliest)
					}
				}
			}, want: map[string]int{rscheck.TPQInversion: 1}, skipped: []string{rscheck.PeriodInversion}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				f := newRSFix(t, a, "us_"+tc.name, tc.chrono, tc.carbo)
				more := tc.build(f)
				r, _ := getReport(t, inst, admin, f.tb)
				for _, k := range rscheck.Categories {
					p := r.Problems[k]
					if p.Count != tc.want[k] || len(p.Items) != tc.want[k] || p.Truncated {
						t.Errorf("%s: %d (%d items), want %d", k, p.Count, len(p.Items), tc.want[k])
					}
				}
				if r.Clean != (len(tc.want) == 0) || r.Units != len(f.units) {
					t.Errorf("clean %v, units %d", r.Clean, r.Units)
				}
				skipped := map[string]bool{}
				for _, k := range tc.skipped {
					skipped[k] = true
				}
				skipped[rscheck.PeriodInversion] = skipped[rscheck.PeriodInversion] || !tc.chrono
				skipped[rscheck.TPQInversion] = !tc.carbo
				for k, want := range skipped {
					if (r.Skipped[k] != "") != want {
						t.Errorf("%s skipped: %q, want %v", k, r.Skipped[k], want)
					}
				}
				if len(r.Skipped) != len(tc.skipped)+boolInt(!tc.chrono && !slices.Contains(tc.skipped, rscheck.PeriodInversion))+boolInt(!tc.carbo) {
					t.Errorf("skipped %v", r.Skipped)
				}
				if more != nil && !t.Failed() {
					more(t, f, r)
				}
			})
		}

		// The fix: the missing reciprocal row is added, then nothing is
		// missing; only what the check reports is fixed.
		t.Run("fix", func(t *testing.T) {
			f := newRSFix(t, a, "us_fix", false, false)
			a1, b1, c1, d1, e1 := f.unit("A"), f.unit("B"), f.unit("C"), f.unit("D"), f.unit("E")
			f.rel(a1, 5, b1)
			f.rel(b1, 1, a1)
			cd := f.rel(c1, 6, d1)
			de := f.rel(d1, 9, e1)
			other := newRSFix(t, a, "us_fix_other", false, false)
			foreign := other.rel(other.unit("P"), 5, other.unit("Q"))
			r, _ := getReport(t, inst, admin, f.tb)
			if r.Problems[rscheck.MissingReciprocal].Count != 2 {
				t.Fatalf("before the fix: %+v", r.Problems[rscheck.MissingReciprocal])
			}
			url := "/dig/api/rs/" + f.tb + "/check/fix"
			writer := testenv.NewUser(t, a, "w@example.org", "w@example.org", auth.Writer)
			_ = writer
			wtok := testenv.Login(t, inst.Server, "dig", "w@example.org", testenv.Password)
			reader := testenv.NewUser(t, a, "r@example.org", "r@example.org", auth.Reader)
			_ = reader
			rtok := testenv.Login(t, inst.Server, "dig", "r@example.org", testenv.Password)
			for _, s := range []testenv.Scenario{
				{Name: "unknown kind", Body: fmt.Sprintf(`{"kind":"delete","relation_id":%d}`, cd), ExpectedStatus: 400, ExpectedContent: []string{`"code":"unknown_fix"`}},
				{Name: "no kind", Body: fmt.Sprintf(`{"relation_id":%d}`, cd), ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`}},
				{Name: "bad id", Body: `{"kind":"missing_reciprocal","relation_id":"x"}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_id"`}},
				{Name: "not json", Body: `{"kind":`, ExpectedStatus: 400},
				{Name: "empty list", Body: `[]`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`}},
				{Name: "too many", Body: "[" + strings.TrimSuffix(strings.Repeat(fmt.Sprintf(`{"kind":"missing_reciprocal","relation_id":%d},`, cd), rscheck.MaxFixes+1), ",") + "]",
					ExpectedStatus: 400, ExpectedContent: []string{`"code":"too_many_fixes"`}},
				{Name: "relation of another table", Body: fmt.Sprintf(`{"kind":"missing_reciprocal","relation_id":%d}`, foreign), ExpectedStatus: 404, ExpectedContent: []string{`"code":"relation_not_found"`}},
				{Name: "no such relation", Body: `{"kind":"missing_reciprocal","relation_id":987654}`, ExpectedStatus: 404, ExpectedContent: []string{`"code":"relation_not_found"`}},
				{Name: "a list, one not missing: none added", Body: fmt.Sprintf(`[{"kind":"missing_reciprocal","relation_id":%d},{"kind":"missing_reciprocal","relation_id":%d}]`, cd, foreign), ExpectedStatus: 404},
				{Name: "bad table", URL: "/dig/api/rs/nope/check/fix", Body: `{"kind":"missing_reciprocal","relation_id":1}`, ExpectedStatus: 404},
				{Name: "table without rs", URL: "/dig/api/rs/sys_users/check/fix", Body: `{"kind":"missing_reciprocal","relation_id":1}`, ExpectedStatus: 404},
				{Name: "a reader may not", Headers: testenv.Bearer(rtok), Body: fmt.Sprintf(`{"kind":"missing_reciprocal","relation_id":%d}`, cd), ExpectedStatus: 403},
				{Name: "fixed", Headers: testenv.Bearer(wtok), Body: fmt.Sprintf(`[{"kind":"missing_reciprocal","relation_id":%d},{"kind":"missing_reciprocal","relation_id":"%d"}]`, cd, de),
					ExpectedStatus: 200, ExpectedContent: []string{`"code":"ok_rs_fixed"`, fmt.Sprintf(`"relation_id":%d`, cd)}},
				{Name: "once fixed, not missing", Body: fmt.Sprintf(`{"kind":"missing_reciprocal","relation_id":%d}`, cd), ExpectedStatus: 409, ExpectedContent: []string{`"code":"reciprocal_not_missing"`}},
			} {
				s.Method, s.URL = "POST", cmp.Or(s.URL, url)
				if s.Headers == nil {
					s.Headers = testenv.Bearer(admin)
				}
				t.Run(s.Name, func(t *testing.T) { s.Run(t, inst.Server) })
			}
			r, _ = getReport(t, inst, admin, f.tb)
			if r.Problems[rscheck.MissingReciprocal].Count != 0 || !r.Clean || r.Relations != 6 {
				t.Fatalf("after the fix: %+v", r)
			}
			var n int
			if err := a.DB.QueryRow(t.Context(), `SELECT COUNT(*) FROM `+a.DB.Sys("rs")+` WHERE tb = ? AND first = ? AND second = ? AND relation = 2`, f.tb, d1, c1).Scan(&n); err != nil || n != 1 {
				t.Fatalf("the reciprocal of C cuts D: %d %v", n, err)
			}
			// The table without reciprocal rows (Strata's own) offers no fix.
			code, m := testenv.Do(t, inst.Server, "POST", "/dig/api/rs/us_fix_other/check/fix", fmt.Sprintf(`{"kind":"missing_reciprocal","relation_id":%d}`, foreign), testenv.Bearer(admin))
			if code != 409 || m["code"] != "reciprocal_not_missing" {
				t.Fatalf("fix on a Strata table: %d %v", code, m)
			}
		})

		// Access: a user denied the table is refused; a subset user's
		// report covers their rows and never names the others.
		t.Run("access", func(t *testing.T) {
			f := newRSFix(t, a, "us_access", false, false)
			a1, hid, c1 := f.unit("A"), f.unit("zqxhiddenzqx"), f.unit("C")
			f.rel(a1, 5, hid)
			f.rel(hid, 5, c1)
			ac := f.rel(a1, 5, c1)      // redundant to the admin, not to the subset user
			f.rel(hid, 6, 99999)        // the hidden record's dangling relation
			mine := f.rel(a1, 6, 99998) // a visible one's
			f.rel(77777, 5, 77778)      // both gone
			account := func(email, override string) string {
				u := testenv.NewUser(t, a, email, email, auth.Admin)
				testenv.Scenario{Name: "override " + email, Method: "POST", URL: fmt.Sprintf("/dig/api/user/%d/privileges", u.ID), Body: override,
					Headers: testenv.Bearer(admin), ExpectedStatus: 200}.Run(t, inst.Server)
				return testenv.Login(t, inst.Server, "dig", email, testenv.Password)
			}
			denied := account("denied@example.org", `{"table_name":"us_access","privilege":40}`)
			subset := account("subset@example.org", `{"table_name":"us_access","privilege":10,"subset":{"code":{"_neq":"zqxhiddenzqx"}}}`)
			for _, u := range []string{"GET /dig/api/rs/us_access/check", "GET /dig/api/rs/us_access/check?async=1", "POST /dig/api/rs/us_access/check/fix"} {
				method, url, _ := strings.Cut(u, " ")
				code, _ := testenv.Do(t, inst.Server, method, url, fmt.Sprintf(`{"kind":"missing_reciprocal","relation_id":%d}`, ac), testenv.Bearer(denied))
				if code != 403 && code != 404 {
					t.Errorf("%s as denied: %d", u, code)
				}
			}
			full, _ := getReport(t, inst, admin, f.tb)
			if full.Problems[rscheck.Redundant].Count != 1 || full.Problems[rscheck.Dangling].Count != 3 {
				t.Fatalf("admin's report: %+v", full.Problems)
			}
			r, body := getReport(t, inst, subset, f.tb)
			if strings.Contains(body, "zqxhidden") || strings.Contains(body, fmt.Sprintf(`"id":%d,`, hid)) || strings.Contains(body, "99999") || strings.Contains(body, "77777") {
				t.Fatalf("the subset user's report shows the hidden record: %s", body)
			}
			if r.Units != 2 || r.Relations != 1 || r.Problems[rscheck.Redundant].Count != 0 || r.Problems[rscheck.Dangling].Count != 1 ||
				!slices.Equal(r.Problems[rscheck.Dangling].Items[0].Relations, []int64{mine}) {
				t.Fatalf("the subset user's report: %s", body)
			}
		})

		// The contract: ?async=1 (or a table above InlineRelations) runs
		// as a job whose result is the report; an API key's check runs in
		// the request; a bad async is refused.
		t.Run("job", func(t *testing.T) {
			f := newRSFix(t, a, "us_job", false, false)
			x, y, z := f.unit("X"), f.unit("Y"), f.unit("Z")
			f.rel(x, 5, y)
			f.rel(y, 5, z)
			f.rel(x, 5, z)
			rec := testenv.Scenario{Name: "async", Method: "GET", URL: "/dig/api/rs/us_job/check?async=1", Headers: testenv.Bearer(admin),
				ExpectedStatus: 202, ExpectedContent: []string{`"code":"rs_check_started"`, `"kind":"rs.check"`}}.Run(t, inst.Server)
			var started struct {
				Job struct{ ID int64 } `json:"job"`
			}
			json.Unmarshal(rec.Body.Bytes(), &started)
			deadline := time.Now().Add(30 * time.Second)
			for {
				_, m := testenv.Do(t, inst.Server, "GET", fmt.Sprintf("/dig/api/jobs/%d", started.Job.ID), "", testenv.Bearer(admin))
				if m["state"] == "done" {
					raw, _ := json.Marshal(m["result"])
					var r rsReport
					json.Unmarshal(raw, &r)
					if r.Tb != "us_job" || r.Problems[rscheck.Redundant].Count != 1 || m["done"] != m["total"] {
						t.Fatalf("the job's report: %v", m)
					}
					break
				}
				if m["state"] == "failed" || time.Now().After(deadline) {
					t.Fatalf("job: %v", m)
				}
				time.Sleep(20 * time.Millisecond)
			}
			// Above InlineRelations the check is a job without asking: 101
			// units, each covering every one after it (5,050 relations).
			big := newRSFix(t, a, "us_big", false, false)
			var ids []int64
			for i := range 101 {
				ids = append(ids, big.unit(fmt.Sprint("B", i)))
			}
			var rows []string
			var args []any
			for i := range ids {
				for j := i + 1; j < len(ids); j++ {
					rows = append(rows, "(?, ?, ?, 5, ?)")
					args = append(args, "us_big", ids[i], ids[j], time.Now().UTC())
				}
			}
			if len(rows) <= rscheck.InlineRelations {
				t.Fatalf("%d relations", len(rows))
			}
			for start := 0; start < len(rows); start += 500 {
				end := min(start+500, len(rows))
				if _, err := a.DB.Exec(t.Context(), `INSERT INTO `+a.DB.Sys("rs")+` (tb, first, second, relation, created_at) VALUES `+
					strings.Join(rows[start:end], ", "), args[start*4:end*4]...); err != nil {
					t.Fatal(err)
				}
			}
			rec = testenv.Scenario{Name: "large", Method: "GET", URL: "/dig/api/rs/us_big/check", Headers: testenv.Bearer(admin),
				ExpectedStatus: 202, ExpectedContent: []string{`"code":"rs_check_started"`}}.Run(t, inst.Server)
			json.Unmarshal(rec.Body.Bytes(), &started)
			for {
				_, m := testenv.Do(t, inst.Server, "GET", fmt.Sprintf("/dig/api/jobs/%d", started.Job.ID), "", testenv.Bearer(admin))
				if m["state"] == "done" {
					raw, _ := json.Marshal(m["result"])
					var r rsReport
					json.Unmarshal(raw, &r)
					// Only the 100 relations of each unit to the next are not implied.
					if r.Relations != 5050 || r.Problems[rscheck.Redundant].Count != 5050-100 || !r.Problems[rscheck.Redundant].Truncated {
						t.Fatalf("the large table's report: %d relations, %+v", r.Relations, r.Problems[rscheck.Redundant].Count)
					}
					break
				}
				if m["state"] == "failed" || time.Now().After(deadline) {
					t.Fatalf("job: %v", m)
				}
				time.Sleep(20 * time.Millisecond)
			}
			key := testenv.NewAPIKey(t, a, auth.Reader)
			testenv.Scenario{Name: "api key: in the request", Method: "GET", URL: "/dig/api/rs/us_job/check?async=1", Headers: testenv.Bearer(key),
				ExpectedStatus: 200, ExpectedContent: []string{`"tb":"us_job"`}}.Run(t, inst.Server)
			testenv.Scenario{Name: "api key: a large table too", Method: "GET", URL: "/dig/api/rs/us_big/check", Headers: testenv.Bearer(key),
				ExpectedStatus: 200, ExpectedContent: []string{`"tb":"us_big"`, `"relations":5050`}}.Run(t, inst.Server)
			for _, s := range []testenv.Scenario{
				{Name: "bad async", URL: "/dig/api/rs/us_job/check?async=maybe", ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_parameter"`}},
				{Name: "unknown table", URL: "/dig/api/rs/nope/check", ExpectedStatus: 404},
				{Name: "hostile table name", URL: "/dig/api/rs/us_job%22%3B--/check", ExpectedStatus: 404},
			} {
				s.Method, s.Headers = "GET", testenv.Bearer(admin)
				t.Run(s.Name, func(t *testing.T) { s.Run(t, inst.Server) })
			}
		})
		// A table without relations enabled.
		if _, err := schema.CreateTable(t.Context(), a.DB, schema.TableDef{Name: "sites", Label: "Sites"}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		testenv.Scenario{Name: "no rs", Method: "GET", URL: "/dig/api/rs/sites/check", Headers: testenv.Bearer(admin),
			ExpectedStatus: 400, ExpectedContent: []string{`"code":"rs_not_enabled"`}}.Run(t, inst.Server)
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
