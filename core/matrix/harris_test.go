package matrix

import (
	"encoding/csv"
	"os"
	"slices"
	"strings"
	"testing"
)

// harris12 reads Harris's figure 12 (testdata/harris12.csv, from the
// stratigraphr package) into a matrix: unit labels get ids 1.. in file
// order; every "below" is a relation, every "above" the same relation
// seen from the other unit, every "equal" a same-as.
func harris12(t *testing.T) (g *Graph, label map[int64]string, direct []Edge) {
	t.Helper()
	f, err := os.Open("testdata/harris12.csv")
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
	ids := map[string]int64{}
	label = map[int64]string{}
	id := func(s string) int64 {
		s = strings.TrimSpace(s)
		if _, ok := ids[s]; !ok {
			ids[s] = int64(len(ids) + 1)
			label[ids[s]] = s
		}
		return ids[s]
	}
	list := func(s string) []string {
		if strings.TrimSpace(s) == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	g = New()
	seen := map[Edge]bool{}
	for _, r := range rows[1:] {
		unit := id(r[0])
		g.Add(unit)
		add := func(e Edge) {
			if !seen[e] {
				seen[e] = true
				direct = append(direct, e)
				g.Above(e.Upper, e.Lower)
			}
		}
		for _, a := range list(r[1]) {
			add(Edge{id(a), unit})
		}
		for _, b := range list(r[2]) {
			add(Edge{unit, id(b)})
		}
		for _, e := range list(r[3]) {
			g.Same(unit, id(e))
		}
	}
	return g, label, direct
}

// TestHarrisFigure12: Harris's own matrix passes the strict check (no
// cycle, and none of its relations would close one if recorded again),
// is its own transitive reduction, and once every relation it implies is
// recorded as well, the reduction drops exactly those and keeps Harris's.
func TestHarrisFigure12(t *testing.T) {
	g, label, direct := harris12(t)
	if g.Len() != 10 || len(direct) != 12 {
		t.Fatalf("%d units, %d relations: not the figure (10 units, 12 relations)", g.Len(), len(direct))
	}
	if cs := g.Cycles(); len(cs) != 0 {
		t.Fatalf("cycles in Harris's figure: %+v", cs)
	}
	for _, e := range direct {
		if path, closes := g.PathCloses(e.Upper, e.Lower); closes {
			t.Errorf("%s above %s would close %v", label[e.Upper], label[e.Lower], path)
		}
		if _, closes := g.PathCloses(e.Lower, e.Upper); !closes {
			t.Errorf("%s above %s (against the figure) closes nothing", label[e.Lower], label[e.Upper])
		}
	}
	if red, ok := g.Redundant(); !ok || len(red) != 0 {
		t.Fatalf("the figure's reduction drops %v (%v)", red, ok)
	}
	// Every order the figure implies, recorded as a relation of its own.
	var implied []Edge
	isDirect := map[Edge]bool{}
	for _, e := range direct {
		isDirect[e] = true
	}
	for u := range g.ids {
		for _, v := range g.ids {
			e := Edge{g.ids[u], v}
			if e.Upper == e.Lower || isDirect[e] || g.path(u, g.index[v]) == nil {
				continue
			}
			// Units equal to each other lie at the same place, not above.
			if g.find(u) == g.find(g.index[v]) {
				continue
			}
			implied = append(implied, e)
		}
	}
	// 1 lies above the nine others (3 of them directly), 2, 3 and 4 each
	// above six (1 directly), 5 above five (1), 6 above four (2), 7 and
	// 8 above two (1): the figure implies 6+3×5+4+2+1+1 = 29 relations.
	if len(implied) != 29 {
		t.Fatalf("%d implied relations, want 29: %v", len(implied), implied)
	}
	for _, e := range implied {
		g.Above(e.Upper, e.Lower)
	}
	red, ok := g.Redundant()
	slices.SortFunc(implied, compareEdges)
	if !ok || !slices.Equal(red, implied) {
		t.Fatalf("the reduction drops %v, want exactly the implied %v", red, implied)
	}
}
