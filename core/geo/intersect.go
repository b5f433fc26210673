package geo

import (
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"
)

// Intersects reports whether two geometries share at least one point
// (boundaries included), in the plane of their coordinates. orb has no
// such predicate; this is the classic decomposition: two geometries meet
// when a segment of one meets a segment of the other, when a position of
// one lies on or in the other, or when one polygon holds the other
// entirely (then a vertex of the inner one is inside the outer).
func Intersects(a, b orb.Geometry) bool {
	if a == nil || b == nil || !a.Bound().Intersects(b.Bound()) {
		return false
	}
	pa, pb := parts(a), parts(b)
	for _, x := range pa {
		for _, y := range pb {
			if x.bound.Intersects(y.bound) && partsMeet(x, y) {
				return true
			}
		}
	}
	return false
}

// part is one simple piece of a geometry: a point, a line, or a polygon.
type part struct {
	point   *orb.Point
	line    orb.LineString
	polygon orb.Polygon
	bound   orb.Bound
}

func parts(g orb.Geometry) []part {
	var out []part
	var walk func(orb.Geometry)
	walk = func(g orb.Geometry) {
		switch g := g.(type) {
		case orb.Point:
			p := g
			out = append(out, part{point: &p, bound: g.Bound()})
		case orb.MultiPoint:
			for _, p := range g {
				walk(p)
			}
		case orb.LineString:
			out = append(out, part{line: g, bound: g.Bound()})
		case orb.MultiLineString:
			for _, l := range g {
				walk(l)
			}
		case orb.Ring:
			walk(orb.Polygon{g})
		case orb.Polygon:
			if len(g) > 0 {
				out = append(out, part{polygon: g, bound: g.Bound()})
			}
		case orb.MultiPolygon:
			for _, p := range g {
				walk(p)
			}
		case orb.Collection:
			for _, c := range g {
				walk(c)
			}
		case orb.Bound:
			walk(g.ToPolygon())
		}
	}
	walk(g)
	return out
}

// partsMeet tests two simple parts.
func partsMeet(x, y part) bool {
	switch {
	case x.point != nil:
		return pointMeets(*x.point, y)
	case y.point != nil:
		return pointMeets(*y.point, x)
	}
	if segmentsMeet(x, y) {
		return true
	}
	// No boundaries cross: one may still lie inside a polygon of the other.
	if y.polygon != nil && pointInPolygon(firstPosition(x), y.polygon) {
		return true
	}
	if x.polygon != nil && pointInPolygon(firstPosition(y), x.polygon) {
		return true
	}
	return false
}

func firstPosition(p part) orb.Point {
	if p.line != nil {
		return p.line[0]
	}
	return p.polygon[0][0]
}

func pointMeets(p orb.Point, y part) bool {
	switch {
	case y.point != nil:
		return p == *y.point
	case y.line != nil:
		return onLine(p, y.line)
	}
	return pointInPolygon(p, y.polygon)
}

// pointInPolygon: inside, or on any ring (a point on a hole's edge
// touches the polygon, which planar.PolygonContains does not count).
func pointInPolygon(p orb.Point, poly orb.Polygon) bool {
	for _, r := range poly {
		if onLine(p, orb.LineString(r)) {
			return true
		}
	}
	return planar.PolygonContains(poly, p)
}

func onLine(p orb.Point, ls orb.LineString) bool {
	if len(ls) == 1 {
		return p == ls[0]
	}
	for i := 0; i+1 < len(ls); i++ {
		if orientation(ls[i], ls[i+1], p) == 0 && onSegment(ls[i], ls[i+1], p) {
			return true
		}
	}
	return false
}

// segments lists a part's segments (a polygon's rings').
func segments(p part) [][2]orb.Point {
	var out [][2]orb.Point
	add := func(ls []orb.Point) {
		for i := 0; i+1 < len(ls); i++ {
			out = append(out, [2]orb.Point{ls[i], ls[i+1]})
		}
	}
	if p.line != nil {
		add(p.line)
	}
	for _, r := range p.polygon {
		add(r)
	}
	return out
}

func segmentsMeet(x, y part) bool {
	sy := segments(y)
	for _, s := range segments(x) {
		sb := orb.MultiPoint{s[0], s[1]}.Bound()
		if !sb.Intersects(y.bound) {
			continue
		}
		for _, t := range sy {
			if segmentsIntersect(s[0], s[1], t[0], t[1]) {
				return true
			}
		}
	}
	return false
}

// segmentsIntersect is the orientation test of two closed segments,
// collinear overlaps and touching ends included.
func segmentsIntersect(p1, p2, q1, q2 orb.Point) bool {
	o1, o2 := orientation(p1, p2, q1), orientation(p1, p2, q2)
	o3, o4 := orientation(q1, q2, p1), orientation(q1, q2, p2)
	if o1*o2 < 0 && o3*o4 < 0 {
		return true
	}
	return (o1 == 0 && onSegment(p1, p2, q1)) || (o2 == 0 && onSegment(p1, p2, q2)) ||
		(o3 == 0 && onSegment(q1, q2, p1)) || (o4 == 0 && onSegment(q1, q2, p2))
}

// orientation is the sign of the turn a→b→c: 1 counter-clockwise, -1
// clockwise, 0 collinear.
func orientation(a, b, c orb.Point) int {
	v := (b[0]-a[0])*(c[1]-a[1]) - (b[1]-a[1])*(c[0]-a[0])
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// onSegment: c, collinear with a and b, lies between them.
func onSegment(a, b, c orb.Point) bool {
	return min(a[0], b[0]) <= c[0] && c[0] <= max(a[0], b[0]) && min(a[1], b[1]) <= c[1] && c[1] <= max(a[1], b[1])
}
