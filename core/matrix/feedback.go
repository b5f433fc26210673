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
// Sinks and sources wait in stacks as removals make them, so a tangle of
// most of a site (one wrong "same as" between distant units) is ordered
// in linear time but for the picks of the largest difference, a scan
// each.
func greedyCut(g *Graph, edges []Edge) []Edge {
	cls := func(id int64) int { return g.find(g.index[id]) }
	var keys []int // the tangle's classes, in order, so the cut is stable
	seen := map[int]bool{}
	for _, e := range edges {
		for _, c := range []int{cls(e.Upper), cls(e.Lower)} {
			if !seen[c] {
				seen[c] = true
				keys = append(keys, c)
			}
		}
	}
	slices.Sort(keys)
	at := make(map[int]int, len(keys))
	for i, k := range keys {
		at[k] = i
	}
	n := len(keys)
	out, in := make([][]int, n), make([][]int, n)
	distinct := map[[2]int]bool{}
	for _, e := range edges {
		a, b := at[cls(e.Upper)], at[cls(e.Lower)]
		if a == b || distinct[[2]int{a, b}] {
			continue
		}
		distinct[[2]int{a, b}] = true
		out[a] = append(out[a], b)
		in[b] = append(in[b], a)
	}
	outDeg, inDeg := make([]int, n), make([]int, n)
	alive := make([]bool, n)
	var sinks, sources []int
	for v := range n {
		outDeg[v], inDeg[v], alive[v] = len(out[v]), len(in[v]), true
		if outDeg[v] == 0 {
			sinks = append(sinks, v)
		} else if inDeg[v] == 0 {
			sources = append(sources, v)
		}
	}
	var front, back []int
	remove := func(v int) {
		alive[v] = false
		for _, w := range out[v] {
			if alive[w] {
				if inDeg[w]--; inDeg[w] == 0 && outDeg[w] > 0 {
					sources = append(sources, w)
				}
			}
		}
		for _, w := range in[v] {
			if alive[w] {
				if outDeg[w]--; outDeg[w] == 0 {
					sinks = append(sinks, w)
				}
			}
		}
	}
	for left := n; left > 0; left-- {
		v := -1
		for v < 0 && len(sinks) > 0 {
			if x := sinks[len(sinks)-1]; alive[x] {
				v = x
				back = append(back, v)
			}
			sinks = sinks[:len(sinks)-1]
		}
		for v < 0 && len(sources) > 0 {
			if x := sources[len(sources)-1]; alive[x] {
				v = x
				front = append(front, v)
			}
			sources = sources[:len(sources)-1]
		}
		if v < 0 {
			for x := range n {
				if alive[x] && (v < 0 || outDeg[x]-inDeg[x] > outDeg[v]-inDeg[v]) {
					v = x
				}
			}
			front = append(front, v)
		}
		remove(v)
	}
	slices.Reverse(back)
	pos := make([]int, n)
	for i, v := range append(front, back...) {
		pos[v] = i
	}
	var cut []Edge
	for _, e := range edges {
		if pos[at[cls(e.Upper)]] > pos[at[cls(e.Lower)]] {
			cut = append(cut, e)
		}
	}
	return cut
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
