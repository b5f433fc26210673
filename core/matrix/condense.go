package matrix

// Condensed is the matrix as an order: each node a set of units that
// cannot be told apart in the sequence (a "same as" class, or every
// class of a cycle together), and the nodes directly below each. It is
// acyclic by construction, so questions about "everything above this
// unit" (the report's dating checks) can be answered in one pass over
// Top (top first) instead of a search per unit.
type Condensed struct {
	Units [][]int64 // node → its units
	Below [][]int   // node → the nodes directly below it (distinct)
	Above [][]int   // node → the nodes directly above it (distinct)
	Top   []int     // every node, each after all the nodes above it
	of    map[int64]int
}

// Node is the node of unit id (false when the unit is not in the matrix).
func (c *Condensed) Node(id int64) (int, bool) {
	n, ok := c.of[id]
	return n, ok
}

// Condense is the matrix's order on its strongly connected classes.
func (g *Graph) Condense() *Condensed {
	cg := g.classes()
	comps := cg.components() // bottom first (Tarjan emits sinks first)
	compOf := make([]int, cg.n)
	c := &Condensed{of: make(map[int64]int, len(g.ids))}
	for i, comp := range comps {
		var units []int64
		for _, cl := range comp {
			compOf[cl] = i
			for _, u := range cg.units[cl] {
				units = append(units, g.ids[u])
				c.of[g.ids[u]] = i
			}
		}
		c.Units = append(c.Units, units)
	}
	c.Below = make([][]int, len(comps))
	c.Above = make([][]int, len(comps))
	seen := map[[2]int]bool{}
	for cl := 0; cl < cg.n; cl++ {
		for _, d := range cg.out[cl] {
			a, b := compOf[cl], compOf[d]
			if a == b || seen[[2]int{a, b}] {
				continue
			}
			seen[[2]int{a, b}] = true
			c.Below[a] = append(c.Below[a], b)
			c.Above[b] = append(c.Above[b], a)
		}
	}
	c.Top = make([]int, len(comps))
	for i := range comps {
		c.Top[i] = len(comps) - 1 - i
	}
	return c
}
