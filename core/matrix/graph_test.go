package matrix

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// brute is the matrix computed the slow, obvious way: classes by
// repeated merging, reachability between classes by Floyd–Warshall.
type brute struct {
	n     int
	class []int
	reach [][]bool // reach[a][b]: class a lies above class b by one relation or more
}

func newBrute(n int, above [][2]int, same [][2]int) *brute {
	b := &brute{n: n, class: make([]int, n)}
	for i := range b.class {
		b.class[i] = i
	}
	for changed := true; changed; {
		changed = false
		for _, s := range same {
			x, y := b.class[s[0]], b.class[s[1]]
			if x != y {
				lo, hi := min(x, y), max(x, y)
				for i := range b.class {
					if b.class[i] == hi {
						b.class[i] = lo
					}
				}
				changed = true
			}
		}
	}
	b.reach = make([][]bool, n)
	for i := range b.reach {
		b.reach[i] = make([]bool, n)
	}
	for _, e := range above {
		b.reach[b.class[e[0]]][b.class[e[1]]] = true
	}
	for k := 0; k < n; k++ {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if b.reach[i][k] && b.reach[k][j] {
					b.reach[i][j] = true
				}
			}
		}
	}
	return b
}

// randomMatrix is n units with relations drawn at random; acyclic keeps
// every relation pointing down the unit numbers (no cycle possible) and
// records no "same as".
func randomMatrix(r *rand.Rand, n int, acyclic bool) (g *Graph, above, same [][2]int) {
	g = New()
	for i := 0; i < n; i++ {
		g.Add(int64(i))
	}
	for range r.IntN(3 * n) {
		a, b := r.IntN(n), r.IntN(n)
		if acyclic {
			if a == b {
				continue
			}
			a, b = min(a, b), max(a, b)
		}
		if !acyclic && r.IntN(6) == 0 {
			if a != b {
				g.Same(int64(a), int64(b))
				same = append(same, [2]int{a, b})
			}
			continue
		}
		if a == b {
			continue // a unit above itself is not recorded (AddRelation refuses it)
		}
		g.Above(int64(a), int64(b))
		above = append(above, [2]int{a, b})
	}
	return g, above, same
}

// validPath checks that path walks recorded relations and links.
func validPath(t *testing.T, g *Graph, path []int64) {
	t.Helper()
	for i := 0; i+1 < len(path); i++ {
		a, b := g.index[path[i]], g.index[path[i+1]]
		if !slices.Contains(g.above[a], b) && !slices.Contains(g.same[a], b) {
			t.Fatalf("path %v: no relation from %d to %d", path, path[i], path[i+1])
		}
	}
}

// TestCyclesMatchBruteForce: on random matrices with "same as" classes,
// the units Cycles names are exactly those whose class lies above
// itself, each cycle's path is closed and walks recorded relations.
func TestCyclesMatchBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 32))
	for round := 0; round < 500; round++ {
		n := 2 + r.IntN(12)
		g, above, same := randomMatrix(r, n, false)
		b := newBrute(n, above, same)
		want := map[int64]bool{}
		for u := 0; u < n; u++ {
			if b.reach[b.class[u]][b.class[u]] {
				want[int64(u)] = true
			}
		}
		got := map[int64]bool{}
		for _, c := range g.Cycles() {
			for _, u := range c.Units {
				if got[u] {
					t.Fatalf("round %d: unit %d in two cycles", round, u)
				}
				got[u] = true
			}
			if len(c.Path) < 2 || c.Path[0] != c.Path[len(c.Path)-1] {
				t.Fatalf("round %d: path %v is not closed", round, c.Path)
			}
			// The closing step is the relation the path starts with,
			// recorded upper → lower: the path walks it forward.
			validPath(t, g, c.Path)
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: cycles hold %v, want %v (above %v, same %v)", round, got, want, above, same)
		}
		for u := range want {
			if !got[u] {
				t.Fatalf("round %d: unit %d missing from the cycles", round, u)
			}
		}
	}
}

// TestPathClosesMatchesBruteForce: recording upper above lower closes a
// cycle exactly when lower's class already reaches upper's (or they are
// one class), and the path given is upper, lower, …, upper along
// recorded relations.
func TestPathClosesMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 64))
	for round := 0; round < 500; round++ {
		n := 2 + r.IntN(12)
		g, above, same := randomMatrix(r, n, false)
		b := newBrute(n, above, same)
		for range 10 {
			up, lo := r.IntN(n), r.IntN(n)
			path, closes := g.PathCloses(int64(up), int64(lo))
			want := up == lo || b.class[up] == b.class[lo] || b.reach[b.class[lo]][b.class[up]]
			if closes != want {
				t.Fatalf("round %d: %d above %d closes %v, want %v (above %v, same %v)", round, up, lo, closes, want, above, same)
			}
			if !closes {
				continue
			}
			if path[0] != int64(up) || path[len(path)-1] != int64(up) || (up != lo && path[1] != int64(lo)) {
				t.Fatalf("round %d: path %v for %d above %d", round, path, up, lo)
			}
			validPath(t, g, path[1:])
		}
	}
}

// TestSameClosesMatchesBruteForce: recording a and b as one closes a
// cycle exactly when their classes differ and one reaches the other, and
// the path given runs from one of them down to the other and back.
func TestSameClosesMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 33))
	for round := 0; round < 500; round++ {
		n := 2 + r.IntN(12)
		g, above, same := randomMatrix(r, n, false)
		b := newBrute(n, above, same)
		for range 10 {
			x, y := r.IntN(n), r.IntN(n)
			path, closes := g.SameCloses(int64(x), int64(y))
			cx, cy := b.class[x], b.class[y]
			want := cx != cy && (b.reach[cx][cy] || b.reach[cy][cx])
			if closes != want {
				t.Fatalf("round %d: %d same as %d closes %v, want %v (above %v, same %v)", round, x, y, closes, want, above, same)
			}
			if !closes {
				continue
			}
			ends := []int64{path[0], path[len(path)-2]}
			if path[0] != path[len(path)-1] || !(slices.Equal(ends, []int64{int64(x), int64(y)}) || slices.Equal(ends, []int64{int64(y), int64(x)})) {
				t.Fatalf("round %d: path %v for %d same as %d", round, path, x, y)
			}
			validPath(t, g, path[:len(path)-1])
		}
	}
}

// TestRedundantIsTheTransitiveReduction: on random acyclic matrices,
// the relations kept (all but Redundant) imply the same order as all of
// them, and none of the kept ones can go.
func TestRedundantIsTheTransitiveReduction(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 96))
	for round := 0; round < 300; round++ {
		n := 2 + r.IntN(12)
		g, above, _ := randomMatrix(r, n, true)
		red, ok := g.Redundant()
		if !ok {
			t.Fatalf("round %d: an acyclic matrix reported cyclic", round)
		}
		dropped := map[[2]int]bool{}
		for _, e := range red {
			dropped[[2]int{int(e.Upper), int(e.Lower)}] = true
		}
		var kept [][2]int
		seen := map[[2]int]bool{}
		for _, e := range above {
			if !dropped[e] && !seen[e] {
				kept = append(kept, e)
				seen[e] = true
			}
		}
		all := newBrute(n, above, nil)
		if !sameReach(newBrute(n, kept, nil), all) {
			t.Fatalf("round %d: dropping %v changes the order (above %v)", round, red, above)
		}
		for i := range kept {
			fewer := append(slices.Clone(kept[:i]), kept[i+1:]...)
			if sameReach(newBrute(n, fewer, nil), all) {
				t.Fatalf("round %d: kept relation %v is implied by the others too (above %v, dropped %v)", round, kept[i], above, red)
			}
		}
	}
}

func sameReach(a, b *brute) bool {
	for i := range a.reach {
		if !slices.Equal(a.reach[i], b.reach[i]) {
			return false
		}
	}
	return true
}

// TestMatrixCases are small matrices whose answers are known by hand.
func TestMatrixCases(t *testing.T) {
	t.Run("three units typed on three days", func(t *testing.T) {
		g := New()
		g.Relate(12, 5, 15) // 12 covers 15
		g.Relate(15, 6, 9)  // 15 cuts 9
		g.Relate(9, 8, 12)  // 9 fills 12: 9 above 12
		cs := g.Cycles()
		if len(cs) != 1 || !slices.Equal(cs[0].Units, []int64{9, 12, 15}) || !slices.Equal(cs[0].Path, []int64{9, 12, 15, 9}) {
			t.Fatalf("cycles %+v", cs)
		}
		if _, ok := g.Redundant(); ok {
			t.Fatal("a cyclic matrix has no reduction")
		}
	})
	t.Run("the strict check names the path a new relation closes", func(t *testing.T) {
		g := New()
		g.Relate(12, 5, 15)
		g.Relate(15, 6, 9)
		path, closes := g.PathCloses(9, 12) // 9 above 12 would close 12 → 15 → 9 → 12
		if !closes || !slices.Equal(path, []int64{9, 12, 15, 9}) {
			t.Fatalf("path %v closes %v", path, closes)
		}
		if _, closes := g.PathCloses(12, 9); closes {
			t.Fatal("a relation along the order closes nothing")
		}
		if _, closes := g.PathCloses(12, 99); closes {
			t.Fatal("a new unit closes nothing")
		}
	})
	t.Run("units recorded as one cannot lie above each other", func(t *testing.T) {
		g := New()
		g.Relate(1, 9, 2)  // 1 is the same as 2
		g.Relate(2, 10, 3) // 2 is bound to 3
		g.Relate(3, 1, 1)  // 3 is covered by 1
		cs := g.Cycles()
		if len(cs) != 1 || !slices.Equal(cs[0].Units, []int64{1, 2, 3}) {
			t.Fatalf("cycles %+v", cs)
		}
		if path, closes := g.PathCloses(4, 4); !closes || !slices.Equal(path, []int64{4, 4}) {
			t.Fatalf("a unit above itself: %v %v", path, closes)
		}
	})
	t.Run("relations through a same-as class are each kept unless a longer way implies them", func(t *testing.T) {
		g := New()
		g.Relate(1, 9, 2) // 1 = 2
		g.Relate(3, 5, 1) // 3 covers 1
		g.Relate(3, 5, 2) // 3 covers 2: its own observation
		g.Relate(5, 5, 1) // 5 covers 1
		g.Relate(5, 5, 2) // 5 covers 2
		g.Relate(6, 5, 5) // 6 covers 5
		g.Relate(6, 5, 2) // 6 covers 2: implied through 5
		red, ok := g.Redundant()
		if !ok || !slices.Equal(red, []Edge{{6, 2}}) {
			t.Fatalf("redundant %v %v", red, ok)
		}
	})
	t.Run("unknown relation codes are not recorded", func(t *testing.T) {
		g := New()
		if g.Relate(1, 11, 2) || g.Relate(1, 0, 2) || g.Len() != 0 {
			t.Fatal("codes outside 1–10 were taken")
		}
	})
}

// TestCondenseOrder: every node comes after the nodes above it, a cycle
// is one node, and a same-as class is one node.
func TestCondenseOrder(t *testing.T) {
	g := New()
	g.Above(1, 2)
	g.Above(2, 3)
	g.Above(3, 2) // 2 and 3 form a cycle
	g.Above(3, 4)
	g.Same(4, 5)
	g.Above(5, 6)
	g.Add(7)
	c := g.Condense()
	n := func(id int64) int {
		x, ok := c.Node(id)
		if !ok {
			t.Fatalf("unit %d has no node", id)
		}
		return x
	}
	if n(2) != n(3) || n(4) != n(5) || n(1) == n(2) || n(5) == n(6) {
		t.Fatalf("nodes: %v", c.Units)
	}
	pos := map[int]int{}
	for i, x := range c.Top {
		pos[x] = i
	}
	for a, below := range c.Below {
		for _, b := range below {
			if pos[a] >= pos[b] {
				t.Errorf("node %v is not before %v below it", c.Units[a], c.Units[b])
			}
		}
	}
	if len(c.Units) != 5 {
		t.Fatalf("%d nodes, want 5: %v", len(c.Units), c.Units)
	}
}
