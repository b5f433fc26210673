// Package matrix is the stratigraphic matrix as one graph type (DESIGN
// §10, "The matrix is a graph package"): units, the "above" relations
// between them, and the classes of units recorded as one ("same as",
// "bound to"). The save's incremental cycle check, the matrix report, the
// drawing and the host call of the sequence plugin all use it; no
// science lives here, only the order.
package matrix

import (
	"slices"
)

// Graph is a matrix being built or read. Above(u, v) says u lies above v
// (u is later); Same(u, v) that u and v are one unit of the sequence.
// Everything is kept by record id; the checks run on the classes.
type Graph struct {
	ids   []int64
	index map[int64]int
	above [][]int // above[u]: the units u lies directly above, as recorded
	same  [][]int // same[u]: the units recorded as one with u (both ways)
	class []int   // union-find of the same-as classes
	// The walk's scratch (path): marks stamped per call, the way back,
	// the queue. A Graph is used by one goroutine at a time.
	seen  []uint32
	prev  []int32
	queue []int32
	stamp uint32
}

// New is an empty matrix.
func New() *Graph { return &Graph{index: map[int64]int{}} }

// node is the index of record id, added when new.
func (g *Graph) node(id int64) int {
	if i, ok := g.index[id]; ok {
		return i
	}
	i := len(g.ids)
	g.ids = append(g.ids, id)
	g.index[id] = i
	g.above = append(g.above, nil)
	g.same = append(g.same, nil)
	g.class = append(g.class, i)
	return i
}

// Add adds a unit with no relation (it still counts in the matrix).
func (g *Graph) Add(id int64) { g.node(id) }

// Above records that upper lies above lower.
func (g *Graph) Above(upper, lower int64) {
	u, l := g.node(upper), g.node(lower)
	if !slices.Contains(g.above[u], l) {
		g.above[u] = append(g.above[u], l)
	}
}

// Same records that a and b are one unit of the sequence.
func (g *Graph) Same(a, b int64) {
	x, y := g.node(a), g.node(b)
	if !slices.Contains(g.same[x], y) {
		g.same[x] = append(g.same[x], y)
		g.same[y] = append(g.same[y], x)
	}
	if rx, ry := g.find(x), g.find(y); rx != ry {
		g.class[rx] = ry
	}
}

// Relate records relation code r (core/records' codes, CONTRACT) between
// first and second: 1–4 (is covered by, is cut by, carries, is filled
// by) put first below second, 5–8 (covers, cuts, leans against, fills)
// above it, 9 (is the same as) and 10 (is bound to) make them one. It
// reports false for a code it does not know.
func (g *Graph) Relate(first int64, r int, second int64) bool {
	switch {
	case r >= 1 && r <= 4:
		g.Above(second, first)
	case r >= 5 && r <= 8:
		g.Above(first, second)
	case r == 9 || r == 10:
		g.Same(first, second)
	default:
		return false
	}
	return true
}

// Len is the number of units.
func (g *Graph) Len() int { return len(g.ids) }

// find is i's class, compressing the path.
func (g *Graph) find(i int) int {
	for g.class[i] != i {
		g.class[i] = g.class[g.class[i]]
		i = g.class[i]
	}
	return i
}
