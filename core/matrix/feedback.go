package matrix

import "slices"

// exactLimit bounds the relations of one cycle's component for which
// FeedbackArcs searches the fewest exactly (every subset by size: 2^16
// at worst); larger tangles get the greedy order of Eades, Lin and Smyth,
// which is small but not always the smallest.
const exactLimit = 16

// FeedbackArcs are, for each cycle (Cycles, same order), the fewest
// recorded relations whose removal breaks it: what the matrix report
// offers to look at first. A relation between units recorded as one is
// always among them (nothing else breaks that loop).
func (g *Graph) FeedbackArcs() [][]Edge {
	var out [][]Edge
	for _, c := range g.Cycles() {
		out = append(out, g.breakCycle(c))
	}
	return out
}

// breakCycle is the fewest relations of c to remove so that its units no
// longer lie above themselves.
func (g *Graph) breakCycle(c Cycle) []Edge {
	// Loops inside one class go in any case; the rest is searched.
	var loops, rest []Edge
	for _, e := range c.Relations {
		if g.find(g.index[e.Upper]) == g.find(g.index[e.Lower]) {
			loops = append(loops, e)
		} else {
			rest = append(rest, e)
		}
	}
	if acyclicWithout(g, rest, nil) {
		return loops
	}
	var cut []Edge
	if len(rest) <= exactLimit {
		cut = exactCut(g, rest)
	} else {
		cut = greedyCut(g, rest)
	}
	out := append(loops, cut...)
	slices.SortFunc(out, compareEdges)
	return out
}

// exactCut tries every subset of edges by growing size.
func exactCut(g *Graph, edges []Edge) []Edge {
	n := len(edges)
	for size := 1; size <= n; size++ {
		pick := make([]int, size)
		for i := range pick {
			pick[i] = i
		}
		for {
			drop := make(map[Edge]bool, size)
			for _, i := range pick {
				drop[edges[i]] = true
			}
			if acyclicWithout(g, edges, drop) {
				out := make([]Edge, 0, size)
				for _, i := range pick {
					out = append(out, edges[i])
				}
				return out
			}
			// next combination
			i := size - 1
			for i >= 0 && pick[i] == n-size+i {
				i--
			}
			if i < 0 {
				break
			}
			pick[i]++
			for j := i + 1; j < size; j++ {
				pick[j] = pick[j-1] + 1
			}
		}
	}
	return edges
}

// greedyCut orders the classes of the tangle (Eades–Lin–Smyth: sinks to
// the end, sources to the front, else the class with the most more going
// out than coming in) and cuts the relations that go back up the order.
func greedyCut(g *Graph, edges []Edge) []Edge {
	cls := func(id int64) int { return g.find(g.index[id]) }
	out, in := map[int]map[int]bool{}, map[int]map[int]bool{}
	nodes := map[int]bool{}
	for _, e := range edges {
		a, b := cls(e.Upper), cls(e.Lower)
		nodes[a], nodes[b] = true, true
		if out[a] == nil {
			out[a] = map[int]bool{}
		}
		if in[b] == nil {
			in[b] = map[int]bool{}
		}
		out[a][b], in[b][a] = true, true
	}
	var front, back []int
	remove := func(v int) {
		delete(nodes, v)
		for w := range out[v] {
			delete(in[w], v)
		}
		for w := range in[v] {
			delete(out[w], v)
		}
	}
	for len(nodes) > 0 {
		progress := true
		for progress {
			progress = false
			for _, v := range sortedKeys(nodes) {
				switch {
				case len(out[v]) == 0:
					back = append(back, v)
					remove(v)
					progress = true
				case len(in[v]) == 0:
					front = append(front, v)
					remove(v)
					progress = true
				}
			}
		}
		if len(nodes) == 0 {
			break
		}
		best, score := -1, 0
		for _, v := range sortedKeys(nodes) {
			if s := len(out[v]) - len(in[v]); best < 0 || s > score {
				best, score = v, s
			}
		}
		front = append(front, best)
		remove(best)
	}
	slices.Reverse(back)
	pos := map[int]int{}
	for i, v := range append(front, back...) {
		pos[v] = i
	}
	var cut []Edge
	for _, e := range edges {
		if pos[cls(e.Upper)] > pos[cls(e.Lower)] {
			cut = append(cut, e)
		}
	}
	return cut
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// acyclicWithout reports whether edges, less drop, leave their classes
// in an order (no class above itself).
func acyclicWithout(g *Graph, edges []Edge, drop map[Edge]bool) bool {
	adj := map[int][]int{}
	indeg := map[int]int{}
	for _, e := range edges {
		if drop[e] {
			continue
		}
		a, b := g.find(g.index[e.Upper]), g.find(g.index[e.Lower])
		if a == b {
			return false
		}
		adj[a] = append(adj[a], b)
		indeg[b]++
		if _, ok := indeg[a]; !ok {
			indeg[a] = 0
		}
	}
	var ready []int
	for v, d := range indeg {
		if d == 0 {
			ready = append(ready, v)
		}
	}
	seen := 0
	for len(ready) > 0 {
		v := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		seen++
		for _, w := range adj[v] {
			if indeg[w]--; indeg[w] == 0 {
				ready = append(ready, w)
			}
		}
	}
	return seen == len(indeg)
}
