package model

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/plugins/radiocarbon/calib"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// trench2 is the golden model: two contiguous phases, a matrix order
// inside phase II, a shell date outside the phases on another curve, and
// an order the phases already imply (left out of the script).
func trench2() Model {
	return Model{
		Name: "Trench 2",
		Dates: []Date{
			{ID: "OxA-1001", Label: "US 12 charcoal", BP: 2520, Error: 30, Curve: calib.IntCal20},
			{ID: "OxA-1002", BP: 2490, Error: 30, Curve: calib.IntCal20},
			{ID: "OxA-1003", BP: 2470, Error: 30, Curve: calib.IntCal20},
			{ID: "OxA-1004", Label: `US 9 "seed"`, BP: 2440, Error: 30, Curve: calib.IntCal20},
			{ID: "OxA-1005", BP: 2410.5, Error: 25, Curve: calib.IntCal20},
			{ID: "Wk-7", Label: "Shell 4", BP: 2900, Error: 30, Curve: calib.Marine20},
		},
		Phases: []Phase{
			{Name: "I", Dates: []string{"OxA-1001", "OxA-1002", "OxA-1003"}},
			{Name: "II", Dates: []string{"OxA-1004", "OxA-1005"}},
		},
		Orders: []Order{
			{Older: "OxA-1001", Younger: "OxA-1004"}, // implied by the phases
			{Older: "OxA-1004", Younger: "OxA-1005"},
			{Older: "OxA-1005", Younger: "Wk-7"},
		},
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}

func TestExportOxCal(t *testing.T) {
	seq := trench2()
	seq.Boundaries = Sequential
	chain := Model{Name: "Pit 3", Dates: []Date{
		{ID: "B", BP: 2450, Error: 30}, {ID: "A", BP: 2500, Error: 30}, {ID: "C", BP: 2400, Error: 30}},
		Orders: []Order{{Older: "B", Younger: "C"}, {Older: "A", Younger: "B"}}}
	for _, tc := range []struct {
		file string
		m    Model
	}{
		{"trench2.oxcal", trench2()},
		{"trench2_sequential.oxcal", seq},
		{"pit3_chain.oxcal", chain},
	} {
		t.Run(tc.file, func(t *testing.T) { golden(t, tc.file, ExportOxCal(tc.m)) })
	}
}

func TestExportChronoModel(t *testing.T) {
	m := trench2()
	m.Dates = append(m.Dates, Date{ID: "X-1", Label: "Subtitle, layer", BP: 2000, Error: 40, Curve: calib.IntCal20})
	golden(t, "trench2_chronomodel.csv", ExportChronoModel(m))
}

func TestParseOxCalJS(t *testing.T) {
	f, err := os.Open("testdata/trench2.js")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ox, err := ParseOxCalJS(f)
	if err != nil {
		t.Fatal(err)
	}
	if ox.ModelAgreement == nil || *ox.ModelAgreement != 88.6 || ox.OverallAgreement == nil || *ox.OverallAgreement != 91.3 {
		t.Errorf("model agreement %v, overall %v", ox.ModelAgreement, ox.OverallAgreement)
	}
	if len(ox.Items) != 5 {
		t.Fatalf("%d items, want 5", len(ox.Items))
	}
	d := ox.Items[2]
	if d.Index != 3 || d.Name != "US 12 charcoal" || d.Op != "R_Date" || d.Date != 2520 || d.Error != 30 {
		t.Errorf("item 3: %+v", d)
	}
	if len(d.Likelihood[1]) != 3 || len(d.Likelihood[2]) != 1 || len(d.Posterior[1]) != 2 || len(d.Posterior[2]) != 2 {
		t.Errorf("ranges: lik %d/%d, post %d/%d", len(d.Likelihood[1]), len(d.Likelihood[2]), len(d.Posterior[1]), len(d.Posterior[2]))
	}
	if want := (OxCalRange{-690.5, -665.5, 18.1}); d.Posterior[1][1] != want {
		t.Errorf("posterior 68%% second range %v, want %v", d.Posterior[1][1], want)
	}
	if d.Agreement == nil || *d.Agreement != 103.4 || d.Convergence == nil || *d.Convergence != 99.6 {
		t.Errorf("agreement %v convergence %v", d.Agreement, d.Convergence)
	}
	if ox.Items[4].Agreement != nil || len(ox.Items[4].Posterior[2]) != 0 {
		t.Errorf("shell: %+v", ox.Items[4])
	}

	for _, bad := range []string{
		"ocd[3].posterior.range[2][0]=[-795.5, -735.5];\n",
		"ocd[x].name=\"A\";\n",
		"ocd[0].posterior.modelAgreement=high;\n",
	} {
		if _, err := ParseOxCalJS(strings.NewReader("ocd[1].name=\"A\";\n" + bad)); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: error %v, want one naming line 2", bad, err)
		}
	}
}

func TestOxCalRangeYears(t *testing.T) {
	for _, tc := range []struct {
		in   OxCalRange
		want Range
	}{
		// G-795.5 is the middle of 797 BC; G-540.5 the middle of 542 BC.
		{OxCalRange{-795.5, -540.5, 95.4}, Range{-797, -542, 0.954}},
		// Across the era: G-0.5 is in 2 BC… G1.5 in AD 1.
		{OxCalRange{-0.5, 1.5, 50}, Range{-2, 1, 0.5}},
		{OxCalRange{1066, 1067, 100}, Range{1066, 1066, 1}},
	} {
		if got := tc.in.Years(); got != tc.want {
			t.Errorf("%v → %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestCompare(t *testing.T) {
	ox, err := ParseOxCalJS(strings.NewReader(`ocd[1].name="US 12 charcoal";
ocd[1].op="R_Date";
ocd[1].posterior.range[1][0]=[-780.5, -750.5, 68.3];
ocd[1].posterior.range[2][0]=[-795.5, -600.5, 95.4];
ocd[1].posterior.agreement=103.4;
ocd[2].name="Start I";
ocd[2].posterior.range[2][0]=[-975.5, -745.5, 95.4];
`))
	if err != nil {
		t.Fatal(err)
	}
	res := &Result{
		Dates: []Estimate{
			{Name: "US 12 charcoal", Kind: "date", Agreement: 99.5, Posterior: Summary{HPD95: []Range{{-790, -720, 0.6}, {-700, -598, 0.354}}}},
			{Name: "OxA-1002", Kind: "date", Posterior: Summary{HPD95: []Range{{-760, -600, 0.954}}}},
		},
		Boundaries: []Estimate{{Name: "Start I", Kind: "start", Posterior: Summary{HPD95: []Range{{-980, -750, 0.954}}}}},
	}
	got := Compare(res, ox)
	if len(got) != 3 {
		t.Fatalf("%d comparisons", len(got))
	}
	// Ours -790…-598 against OxCal -797…-601: 7 and 3 years.
	if c := got[0]; !c.Found || c.Shift95 != 7 || c.OxCalAgreement == nil || *c.OxCalAgreement != 103.4 || c.OursAgreement != 99.5 ||
		!reflect.DeepEqual(c.OxCalHPD95, []Range{{-797, -602, 0.954}}) {
		t.Errorf("date: %+v", c)
	}
	if c := got[1]; c.Found || c.Shift95 != -1 {
		t.Errorf("missing in OxCal: %+v", c)
	}
	// -980…-750 against -977…-747.
	if c := got[2]; !c.Found || c.Shift95 != 3 || c.Kind != "start" {
		t.Errorf("boundary: %+v", c)
	}
	_ = math.NaN
}
