package geo

import (
	"math/rand/v2"
	"testing"

	"github.com/paulmach/orb"
)

func mustWKT(t *testing.T, s string) orb.Geometry {
	t.Helper()
	g, err := ParseWKT(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return g
}

// TestIntersects: each pair of kinds, touching and disjoint, holes.
func TestIntersects(t *testing.T) {
	square := "POLYGON((0 0,10 0,10 10,0 10,0 0))"
	holed := "POLYGON((0 0,10 0,10 10,0 10,0 0),(3 3,7 3,7 7,3 7,3 3))"
	cases := []struct {
		a, b string
		want bool
	}{
		{"POINT(1 1)", "POINT(1 1)", true},
		{"POINT(1 1)", "POINT(1 2)", false},
		{"POINT(5 5)", "LINESTRING(0 0,10 10)", true},
		{"POINT(5 6)", "LINESTRING(0 0,10 10)", false},
		{"POINT(5 5)", square, true},
		{"POINT(10 5)", square, true}, // on the edge
		{"POINT(11 5)", square, false},
		{"POINT(5 5)", holed, false}, // in the hole
		{"POINT(3 5)", holed, true},  // on the hole's edge
		{"LINESTRING(-1 5,11 5)", square, true},
		{"LINESTRING(1 1,2 2)", square, true}, // inside, no crossing
		{"LINESTRING(4 4,6 6)", holed, false}, // inside the hole
		{"LINESTRING(11 0,11 10)", square, false},
		{"LINESTRING(0 0,10 10)", "LINESTRING(0 10,10 0)", true},
		{"LINESTRING(0 0,1 1)", "LINESTRING(2 2,3 3)", false}, // collinear apart
		{"LINESTRING(0 0,2 2)", "LINESTRING(1 1,3 3)", true},  // collinear overlap
		{"LINESTRING(0 0,1 0)", "LINESTRING(2 0,2 1)", false},
		{"POLYGON((4 4,6 4,6 6,4 6,4 4))", holed, false}, // fits in the hole
		{"POLYGON((1 1,2 1,2 2,1 2,1 1))", square, true}, // inside
		{square, "POLYGON((1 1,2 1,2 2,1 2,1 1))", true}, // contains
		{square, "POLYGON((10 10,12 10,12 12,10 12,10 10))", true},
		{square, "POLYGON((11 11,12 11,12 12,11 12,11 11))", false},
		{"MULTIPOINT((20 20),(5 5))", square, true},
		{"GEOMETRYCOLLECTION(POINT(20 20),LINESTRING(30 30,40 40))", square, false},
	}
	for _, tc := range cases {
		a, b := mustWKT(t, tc.a), mustWKT(t, tc.b)
		if got := Intersects(a, b); got != tc.want {
			t.Fatalf("%s ∩ %s = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := Intersects(b, a); got != tc.want {
			t.Fatalf("%s ∩ %s = %v, want %v (reversed)", tc.b, tc.a, got, tc.want)
		}
	}
	if !Intersects(orb.Bound{Min: orb.Point{0, 0}, Max: orb.Point{1, 1}}, orb.Point{1, 1}) {
		t.Fatal("a bound as a geometry")
	}
}

// TestIntersectsSegmentsBruteForce: random segments against a random box,
// checked by sampling points along the segment finely (an independent,
// approximate answer: cases close to the box's edge are skipped).
func TestIntersectsSegmentsBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		a := orb.Point{r.Float64() * 10, r.Float64() * 10}
		b := orb.Point{r.Float64() * 10, r.Float64() * 10}
		x0, y0 := r.Float64()*8, r.Float64()*8
		box := orb.Bound{Min: orb.Point{x0, y0}, Max: orb.Point{x0 + r.Float64()*3, y0 + r.Float64()*3}}
		hit, near := false, false
		const steps = 4000
		for s := 0; s <= steps; s++ {
			f := float64(s) / steps
			p := orb.Point{a[0] + f*(b[0]-a[0]), a[1] + f*(b[1]-a[1])}
			if box.Contains(p) {
				hit = true
			}
			if box.Pad(0.01).Contains(p) && !box.Pad(-0.01).Contains(p) {
				near = true
			}
		}
		if near {
			continue
		}
		if got := Intersects(orb.LineString{a, b}, box); got != hit {
			t.Fatalf("segment %v %v box %v: %v, sampled %v", a, b, box, got, hit)
		}
	}
}
