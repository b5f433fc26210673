package matrix

import (
	"slices"
)

// Edge is a recorded "above" relation: Upper lies above Lower.
type Edge struct{ Upper, Lower int64 }

// PathCloses reports whether recording upper above lower would close a
// cycle, and if so the path that the new relation would complete, from
// upper back to upper through lower (a "same as" step included: units
// recorded as one cannot lie above each other). The save's strict check
// asks it before writing a relation.
func (g *Graph) PathCloses(upper, lower int64) ([]int64, bool) {
	u, okU := g.index[upper]
	l, okL := g.index[lower]
	if upper == lower {
		return []int64{upper, upper}, true
	}
	if !okU || !okL {
		return nil, false // a new unit closes nothing
	}
	path := g.path(l, u)
	if path == nil {
		return nil, false
	}
	return append([]int64{upper}, path...), true
}

// SameCloses reports whether recording a and b as one unit ("same as",
// "bound to") would close a cycle: when one already lies above the other,
// through any relations and classes, they cannot be one. The path runs
// from one of them down to the other and back (the new link), closed.
// Units already recorded as one close nothing new.
func (g *Graph) SameCloses(a, b int64) ([]int64, bool) {
	x, okA := g.index[a]
	y, okB := g.index[b]
	if a == b || !okA || !okB || g.find(x) == g.find(y) {
		return nil, false
	}
	// Different classes: any way between them has an "above" step.
	if p := g.path(x, y); p != nil {
		return append(p, a), true
	}
	if p := g.path(y, x); p != nil {
		return append(p, b), true
	}
	return nil, false
}

// path is a shortest way from a to b along "above" relations and "same
// as" links (as record ids, a and b included), nil when there is none.
// Proving there is none walks everything below a: on a 20,000-unit site
// that is most of it, on every strict save, so the walk keeps its marks
// in slices reused between calls (a stamp per call instead of clearing)
// rather than in a map.
func (g *Graph) path(a, b int) []int64 {
	n := len(g.ids)
	if len(g.seen) < n {
		g.seen = make([]uint32, n)
		g.prev = make([]int32, n)
		g.stamp = 0
	}
	g.stamp++
	if g.stamp == 0 { // wrapped: old marks could pass for new ones
		clear(g.seen)
		g.stamp = 1
	}
	seen, prev, stamp := g.seen, g.prev, g.stamp
	seen[a], prev[a] = stamp, int32(a)
	queue := append(g.queue[:0], int32(a))
	defer func() { g.queue = queue[:0] }()
	for head := 0; head < len(queue); head++ {
		x := int(queue[head])
		if x == b {
			var out []int64
			for y := b; ; y = int(prev[y]) {
				out = append(out, g.ids[y])
				if y == a {
					break
				}
			}
			slices.Reverse(out)
			return out
		}
		for _, next := range [2][]int{g.above[x], g.same[x]} {
			for _, y := range next {
				if seen[y] != stamp {
					seen[y], prev[y] = stamp, int32(x)
					queue = append(queue, int32(y))
				}
			}
		}
	}
	return nil
}

// classGraph is the matrix on its classes: the distinct class edges, and
// for each the recorded relations it comes from. A class edge from a
// class to itself is a relation between units recorded as one.
type classGraph struct {
	n     int     // nodes: the classes, 0..n-1
	of    []int   // unit index → class node
	out   [][]int // class node → class nodes below it
	from  map[[2]int][]Edge
	units [][]int // class node → its unit indexes
}

func (g *Graph) classes() *classGraph {
	cg := &classGraph{of: make([]int, len(g.ids)), from: map[[2]int][]Edge{}}
	node := map[int]int{}
	for i := range g.ids {
		r := g.find(i)
		c, ok := node[r]
		if !ok {
			c = cg.n
			node[r] = c
			cg.n++
			cg.out = append(cg.out, nil)
			cg.units = append(cg.units, nil)
		}
		cg.of[i] = c
		cg.units[c] = append(cg.units[c], i)
	}
	for u := range g.ids {
		for _, l := range g.above[u] {
			key := [2]int{cg.of[u], cg.of[l]}
			if _, ok := cg.from[key]; !ok {
				cg.out[key[0]] = append(cg.out[key[0]], key[1])
			}
			cg.from[key] = append(cg.from[key], Edge{g.ids[u], g.ids[l]})
		}
	}
	return cg
}

// components are the strongly connected components of the class graph
// (Tarjan's algorithm, without recursion: a long sequence is deep).
func (cg *classGraph) components() [][]int {
	index := make([]int, cg.n)
	low := make([]int, cg.n)
	on := make([]bool, cg.n)
	for i := range index {
		index[i] = -1
	}
	var out [][]int
	var sccStack []int
	next := 0
	type frame struct{ v, edge int }
	for root := 0; root < cg.n; root++ {
		if index[root] >= 0 {
			continue
		}
		call := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		sccStack = append(sccStack, root)
		on[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.edge < len(cg.out[f.v]) {
				w := cg.out[f.v][f.edge]
				f.edge++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					sccStack = append(sccStack, w)
					on[w] = true
					call = append(call, frame{w, 0})
				} else if on[w] {
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] == index[v] {
				var comp []int
				for {
					w := sccStack[len(sccStack)-1]
					sccStack = sccStack[:len(sccStack)-1]
					on[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				out = append(out, comp)
			}
		}
	}
	return out
}

// Cycle is a set of units that lie, through their relations, above
// themselves: a strongly connected part of the matrix, or units recorded
// as one that are also related above or below each other.
type Cycle struct {
	Units []int64 // sorted
	// Path is one closed way through them, from a unit back to itself.
	Path []int64
	// Relations are the cycle's recorded relations (within Units).
	Relations []Edge
}

// Cycles are the matrix's cycles, each once, ordered by their first unit.
func (g *Graph) Cycles() []Cycle {
	cg := g.classes()
	var out []Cycle
	for _, comp := range cg.components() {
		in := make(map[int]bool, len(comp))
		for _, c := range comp {
			in[c] = true
		}
		if len(comp) == 1 {
			if _, loop := cg.from[[2]int{comp[0], comp[0]}]; !loop {
				continue
			}
		}
		var cy Cycle
		for _, c := range comp {
			for _, u := range cg.units[c] {
				cy.Units = append(cy.Units, g.ids[u])
			}
			for _, d := range cg.out[c] {
				if in[d] {
					cy.Relations = append(cy.Relations, cg.from[[2]int{c, d}]...)
				}
			}
		}
		slices.Sort(cy.Units)
		slices.SortFunc(cy.Relations, compareEdges)
		// A closed path: from a relation's lower unit back to its upper.
		e := cy.Relations[0]
		cy.Path = append([]int64{e.Upper}, g.path(g.index[e.Lower], g.index[e.Upper])...)
		out = append(out, cy)
	}
	slices.SortFunc(out, func(a, b Cycle) int { return cmpInt64(a.Units[0], b.Units[0]) })
	return out
}

func compareEdges(a, b Edge) int {
	if c := cmpInt64(a.Upper, b.Upper); c != 0 {
		return c
	}
	return cmpInt64(a.Lower, b.Lower)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
