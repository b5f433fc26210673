package server_test

import (
	"encoding/csv"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/rscheck"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// harrisFigure12 reads Harris's own figure 12 as the stratigraphr package
// records it (core/matrix/testdata/harris12.csv: each unit, the units
// directly above and below it, the unit it equals): the units in file
// order, the direct "above" pairs and the "equal" pairs.
func harrisFigure12(t *testing.T) (units []string, above, equal [][2]string) {
	t.Helper()
	f, err := os.Open("../matrix/testdata/harris12.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := csv.NewReader(f)
	rd.Comment = '#'
	rows, err := rd.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[2]string]bool{}
	list := func(s string) []string {
		if strings.TrimSpace(s) == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	add := func(to *[][2]string, p [2]string) {
		if !seen[p] {
			seen[p] = true
			*to = append(*to, p)
		}
	}
	for _, r := range rows[1:] {
		units = append(units, r[0])
		for _, a := range list(r[1]) {
			add(&above, [2]string{a, r[0]})
		}
		for _, b := range list(r[2]) {
			add(&above, [2]string{r[0], b})
		}
		for _, e := range list(r[3]) {
			if !seen[[2]string{e, r[0]}] {
				add(&equal, [2]string{r[0], e})
			}
		}
	}
	return units, above, equal
}

// impliedPairs are the "above" pairs the direct ones imply and do not
// state, computed here on their own (a closure over the units, with the
// equal units as one), so the check's reduction is held to an
// independent answer.
func impliedPairs(units []string, above, equal [][2]string) [][2]string {
	class := map[string]string{}
	for _, u := range units {
		class[u] = u
	}
	for _, e := range equal {
		for u, c := range class {
			if c == class[e[1]] {
				class[u] = class[e[0]]
			}
		}
	}
	reach := map[[2]string]bool{}
	for _, p := range above {
		reach[[2]string{class[p[0]], class[p[1]]}] = true
	}
	for _, k := range units { // Floyd–Warshall on the classes
		for _, i := range units {
			for _, j := range units {
				if reach[[2]string{class[i], class[k]}] && reach[[2]string{class[k], class[j]}] {
					reach[[2]string{class[i], class[j]}] = true
				}
			}
		}
	}
	direct := map[[2]string]bool{}
	for _, p := range above {
		direct[p] = true
	}
	var out [][2]string
	for _, i := range units {
		for _, j := range units {
			if class[i] != class[j] && reach[[2]string{class[i], class[j]}] && !direct[[2]string{i, j}] {
				out = append(out, [2]string{i, j})
			}
		}
	}
	return out
}

// TestHarrisFigure12OverHTTP: Harris's own matrix, typed in through the
// API on a strict table, is accepted relation by relation and checks
// clean; once every relation it implies is typed in too (none closes a
// cycle, so strict mode takes them), the check reports exactly those as
// redundant: the transitive reduction gives Harris's figure back.
func TestHarrisFigure12OverHTTP(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := strictDig(t, e)
		units, above, equal := harrisFigure12(t)
		implied := impliedPairs(units, above, equal)
		if len(units) != 10 || len(above) != 12 || len(equal) != 1 || len(implied) != 29 {
			t.Fatalf("%d units, %d above, %d equal, %d implied: not Harris's figure 12 (10, 12, 1, 29)", len(units), len(above), len(equal), len(implied))
		}
		id := map[string]int64{}
		for _, u := range units {
			id[u] = f.create(t, f.writer, "units", fmt.Sprintf(`{"code":"H12/%s"}`, u))
		}
		rs := "/dig/api/record/units/rs"
		for _, p := range above {
			f.must(t, 200, f.writer, "POST", rs, relBody(id[p[0]], 5, id[p[1]])) // covers
		}
		for _, p := range equal {
			f.must(t, 200, f.writer, "POST", rs, relBody(id[p[0]], 9, id[p[1]])) // is the same as
		}
		r, body := getReport(t, f.inst, f.writer, "units")
		if !r.Clean || r.Units != 10 || r.Relations != 13 {
			t.Fatalf("Harris's figure checks clean (10 units, 13 relations): %s", body)
		}

		// Every implied pair typed in as well, half of them from below.
		relID := map[[2]int64]int64{}
		for i, p := range implied {
			var m map[string]any
			if i%2 == 0 {
				m = f.must(t, 200, f.writer, "POST", rs, relBody(id[p[0]], 5, id[p[1]]))
			} else {
				m = f.must(t, 200, f.writer, "POST", rs, relBody(id[p[1]], 1, id[p[0]])) // is covered by
			}
			n, _ := m["id"].(float64)
			relID[[2]int64{id[p[0]], id[p[1]]}] = int64(n)
		}
		r, body = getReport(t, f.inst, f.writer, "units")
		red := r.Problems[rscheck.Redundant]
		if red.Count != len(implied) || red.Truncated || len(red.Items) != len(implied) {
			t.Fatalf("redundant: %d reported (%d listed), want the %d implied: %s", red.Count, len(red.Items), len(implied), body)
		}
		var got, want []string
		for _, it := range red.Items {
			got = append(got, fmt.Sprintf("%d>%d", it.Upper, it.Lower))
			if rid := relID[[2]int64{it.Upper, it.Lower}]; rid != 0 && !slices.Equal(it.Relations, []int64{rid}) {
				t.Errorf("redundant %d>%d names relations %v, want [%d]", it.Upper, it.Lower, it.Relations, rid)
			}
		}
		for _, p := range implied {
			want = append(want, fmt.Sprintf("%d>%d", id[p[0]], id[p[1]]))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("redundant relations\n got %v\nwant %v", got, want)
		}
		for cat, p := range r.Problems {
			if cat != rscheck.Redundant && p.Count != 0 {
				t.Errorf("%s: %d reported on Harris's figure", cat, p.Count)
			}
		}
	})
}
