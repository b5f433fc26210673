package geo

import (
	"testing"

	"github.com/paulmach/orb"

	"github.com/strata-archaeo/strata/core/errs"
)

// FuzzParse: any input is a geometry or a coded 400, never a panic; what
// parses survives the WKT and GeoJSON round trips unchanged.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"type":"Point","coordinates":[12.48,41.89]}`,
		`{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}`,
		`{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,2]}]}`,
		`"POINT(1 2)"`, `"MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))"`,
		`"GEOMETRYCOLLECTION(POINT(1 2),LINESTRING(1 2,3 4))"`, `"LINESTRING(1 2,3 4"`, `"POLYGON((0 0))"`,
		`"MULTIPOINT(1 2,3 4)"`, `"POINT EMPTY"`, `{"type":"Feature","geometry":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		g, err := Parse(in)
		if err != nil {
			if e, ok := errs.As(err); !ok || e.Kind != errs.Invalid {
				t.Fatalf("%q: uncoded error %v", in, err)
			}
			return
		}
		back, err := ParseWKT(WKT(g))
		if err != nil || !orb.Equal(back, g) {
			t.Fatalf("%q: WKT round trip %v %v", in, back, err)
		}
		again, err := Parse(GeoJSON(g))
		if err != nil || !orb.Equal(again, g) {
			t.Fatalf("%q: GeoJSON round trip %v %v", in, again, err)
		}
	})
}
