package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/strata-archaeo/strata/plugins/radiocarbon/calib"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

// calibrateAnswer is the part of GET /radiocarbon/calibrate the science
// check reads, decoded from the JSON as a client gets it.
type calibrateAnswer struct {
	Sigma1       calib.Interval `json:"sigma1"`
	Sigma2       calib.Interval `json:"sigma2"`
	Sigma1Years  span           `json:"sigma1_years"`
	HPD1         []hpdInterval  `json:"hpd1"`
	HPD2         []hpdInterval  `json:"hpd2"`
	Step         int            `json:"step"`
	Distribution []struct {
		CalBP int     `json:"cal_bp"`
		P     float64 `json:"p"`
	} `json:"distribution"`
}

func getCalibration(t *testing.T, h *plugintest.Harness, curve string, bp, bpError int) calibrateAnswer {
	t.Helper()
	target := fmt.Sprintf("/radiocarbon/calibrate?bp=%d&error=%d&curve=%s", bp, bpError, curve)
	resp, err := h.CallRoute("GET", target, nil, plugintest.Reader)
	var a calibrateAnswer
	if err != nil || resp.Status != 200 || json.Unmarshal(resp.Body, &a) != nil {
		t.Fatalf("%s: %d %s %v", target, resp.Status, resp.Body, err)
	}
	return a
}

// TestHPDIntervalsAgainstDistribution checks the highest posterior
// density intervals of the calibrate route against the distribution the
// same answer carries, with its own arithmetic (a plain map of the
// distribution, summed year by year), never with the plugin's code:
//
//   - each interval's p is the probability between its bounds;
//   - the intervals are ordered, disjoint, inside the envelope, and their
//     first From and last To are the envelope (sigma1/sigma2, what the
//     row stores);
//   - their union holds at least the level (68.27 %, 95.45 %);
//   - HPD property, up to the grid: the test computes the region itself
//     (years sorted by density, taken until the level is reached); every
//     year of it is inside the intervals, every year outside them is no
//     denser than any year of it, and the intervals hold nothing else
//     than gaps shorter than calib.HPDMergeGap between its years (joined,
//     as OxCal's 5-year grid joins them).
func TestHPDIntervalsAgainstDistribution(t *testing.T) {
	h := plugintest.New(t, withCurves(t))
	cases := []struct {
		name      string
		curve     string
		bp, err   int
		n1, n2    int // number of intervals expected at 68.3 % and 95.4 %; 0 for "don't pin"
		published []calib.Interval
	}{
		// Issue 30: the record showed "1σ (68.3%) 746–421 BCE", the
		// envelope of four intervals (the figures, cal BP).
		{name: "issue 30, Hallstatt plateau", curve: "intcal20", bp: 2450, err: 30, n1: 4, n2: 3,
			published: []calib.Interval{{From: 2370, To: 2385}, {From: 2412, To: 2510}, {From: 2594, To: 2613}, {From: 2639, To: 2695}}},
		// Single interval at 1σ, a sliver and the main interval at 2σ.
		{name: "single interval", curve: "intcal20", bp: 3200, err: 40, n1: 1},
		{name: "single interval, young", curve: "intcal20", bp: 800, err: 20, n1: 1, n2: 1},
		// On the plateau's steepest stretch: several modes.
		{name: "near the plateau", curve: "intcal20", bp: 2500, err: 25, n1: 3},
		{name: "many modes", curve: "intcal20", bp: 4500, err: 30, n1: 5},
		{name: "recent, wiggly", curve: "intcal20", bp: 230, err: 25},
		{name: "southern", curve: "shcal20", bp: 2450, err: 30},
		{name: "marine", curve: "marine20", bp: 3000, err: 35},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := getCalibration(t, h, c.curve, c.bp, c.err)
			if a.Step != 1 {
				t.Fatalf("step %d: the check needs the 1-year grid", a.Step)
			}
			density := map[int]float64{}
			for _, d := range a.Distribution {
				density[d.CalBP] = d.P
			}
			for _, lv := range []struct {
				name     string
				level    float64
				envelope calib.Interval
				ivs      []hpdInterval
				n        int
			}{
				{"68.3%", calib.Level1Sigma, a.Sigma1, a.HPD1, c.n1},
				{"95.4%", calib.Level2Sigma, a.Sigma2, a.HPD2, c.n2},
			} {
				checkHPD(t, lv.name, lv.level, lv.envelope, lv.ivs, density)
				if lv.n > 0 && len(lv.ivs) != lv.n {
					t.Errorf("%s: %d intervals %+v, want %d", lv.name, len(lv.ivs), lv.ivs, lv.n)
				}
			}
			if c.published != nil {
				// Within the grid's resolution: the published figures come
				// from a 5-year grid.
				const tol = 5
				if len(a.HPD1) != len(c.published) {
					t.Fatalf("68.3%%: %+v, published %+v", a.HPD1, c.published)
				}
				for i, iv := range a.HPD1 {
					if abs(iv.From-c.published[i].From) > tol || abs(iv.To-c.published[i].To) > tol {
						t.Errorf("68.3%% interval %d: %d–%d cal BP, published %d–%d", i, iv.From, iv.To, c.published[i].From, c.published[i].To)
					}
				}
			}
		})
	}
}

func checkHPD(t *testing.T, name string, level float64, envelope calib.Interval, ivs []hpdInterval, density map[int]float64) {
	t.Helper()
	if len(ivs) == 0 {
		t.Fatalf("%s: no intervals", name)
	}
	if ivs[0].From != envelope.From || ivs[len(ivs)-1].To != envelope.To {
		t.Errorf("%s: intervals %+v do not span the envelope %+v", name, ivs, envelope)
	}
	inside := map[int]bool{}
	union := 0.0
	for i, iv := range ivs {
		if iv.From > iv.To || (i > 0 && iv.From <= ivs[i-1].To) {
			t.Errorf("%s: interval %d %+v out of order", name, i, iv)
		}
		// Years: from ≤ to, from is the older end (the larger cal BP).
		if iv.Years.From != 1950-iv.To-1 && !(iv.To < 1950 && iv.Years.From == 1950-iv.To) {
			t.Errorf("%s: interval %d years %+v for %d–%d cal BP", name, i, iv.Years, iv.From, iv.To)
		}
		sum := 0.0
		for y := iv.From; y <= iv.To; y++ {
			p, ok := density[y]
			if !ok {
				t.Fatalf("%s: year %d cal BP not in the distribution", name, y)
			}
			sum += p
			inside[y] = true
		}
		if math.Abs(sum-iv.P) > 1e-9 {
			t.Errorf("%s: interval %d–%d states p %.6f, the distribution sums to %.6f", name, iv.From, iv.To, iv.P, sum)
		}
		union += sum
	}
	if union < level {
		t.Errorf("%s: the intervals hold %.6f < %.6f", name, union, level)
	}
	// The region on its own: the years by descending density (a plain
	// sort, not the plugin's buckets) until the level is reached.
	years := make([]int, 0, len(density))
	for y := range density {
		years = append(years, y)
	}
	sort.Slice(years, func(i, j int) bool {
		if density[years[i]] != density[years[j]] {
			return density[years[i]] > density[years[j]]
		}
		return years[i] < years[j]
	})
	region, cum := map[int]bool{}, 0.0
	for _, y := range years {
		if cum >= level {
			break
		}
		region[y] = true
		cum += density[y]
	}
	// HPD: every year of the region is inside an interval; a year inside
	// but outside the region lies in a gap shorter than HPDMergeGap
	// between region years, so no density outside the intervals exceeds
	// one inside them but at the grid's resolution.
	for y := range region {
		if !inside[y] {
			t.Errorf("%s: year %d cal BP (p %.3g) is in the %.4f region but outside the intervals %+v", name, y, density[y], level, ivs)
		}
	}
	for _, iv := range ivs {
		if !region[iv.From] || !region[iv.To] {
			t.Errorf("%s: interval %d–%d does not start and end in the region", name, iv.From, iv.To)
		}
		gap := 0
		for y := iv.From; y <= iv.To; y++ {
			if region[y] {
				gap = 0
				continue
			}
			if gap++; gap >= calib.HPDMergeGap {
				t.Errorf("%s: interval %d–%d holds a gap of %d years outside the region at %d cal BP", name, iv.From, iv.To, gap, y)
			}
		}
	}
	minIn, maxOut := math.Inf(1), 0.0
	for y, p := range density {
		if region[y] {
			minIn = math.Min(minIn, p)
		} else if !inside[y] {
			maxOut = math.Max(maxOut, p)
		}
	}
	if maxOut > minIn {
		t.Errorf("%s: a year outside the intervals (p %.3g) is denser than one of the region (p %.3g)", name, maxOut, minIn)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestCurvesRoute: the curves a row may name, for a client's select;
// a curves directory adds its own, and a broken override is listed as not
// loaded (a row naming it gets curve_not_loaded).
func TestCurvesRoute(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"lake.14c": shifted(t), "shcal20.14c": "55000,50132\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		p    *plugin
		want []string
	}{
		{"built-in", withCurves(t), []string{"intcal20", "shcal20", "marine20"}},
		{"with a curves directory", newPlugin(env(map[string]string{"STRATA_CURVES_DIR": dir})), []string{"intcal20", "shcal20", "marine20", "lake"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := plugintest.New(t, c.p)
			resp, err := h.CallRoute("GET", "/radiocarbon/curves", nil, plugintest.Reader)
			var body struct {
				Status  string      `json:"status"`
				Default string      `json:"default"`
				Curves  []curveInfo `json:"curves"`
			}
			if err != nil || resp.Status != 200 || json.Unmarshal(resp.Body, &body) != nil || body.Status != "success" || body.Default != "intcal20" {
				t.Fatalf("%d %s %v", resp.Status, resp.Body, err)
			}
			var names []string
			for _, cv := range body.Curves {
				names = append(names, cv.Name)
				broken := c.name != "built-in" && cv.Name == "shcal20"
				if cv.Loaded == broken || (cv.Citation == "") != broken || cv.Default != (cv.Name == "intcal20") || cv.Builtin != (cv.Name != "lake" && !broken) {
					t.Errorf("%+v", cv)
				}
			}
			if fmt.Sprint(names) != fmt.Sprint(c.want) {
				t.Errorf("curves %v, want %v", names, c.want)
			}
			resp, err = h.CallRoute("GET", "/radiocarbon/curves", nil, plugintest.Anonymous)
			var e map[string]any
			if err != nil || resp.JSON(&e) != nil || resp.Status != 401 || e["code"] != "unauthenticated" {
				t.Errorf("anonymous: %d %s %v", resp.Status, resp.Body, err)
			}
		})
	}
}
