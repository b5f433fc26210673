package geo

import (
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/strata-archaeo/strata/core/errs"
)

// TestParseRoundTrip: every geometry type read from GeoJSON and from WKT
// comes back the same through the other encoding.
func TestParseRoundTrip(t *testing.T) {
	cases := []struct{ name, geojson, wkt string }{
		{"point", `{"type":"Point","coordinates":[12.48,41.89]}`, "POINT(12.48 41.89)"},
		{"point with altitude", `{"type":"Point","coordinates":[12.48,41.89,30]}`, "POINT(12.48 41.89)"},
		{"multipoint", `{"type":"MultiPoint","coordinates":[[1,2],[3,4]]}`, "MULTIPOINT((1 2),(3 4))"},
		{"linestring", `{"type":"LineString","coordinates":[[1,2],[3,4],[5,1]]}`, "LINESTRING(1 2,3 4,5 1)"},
		{"multilinestring", `{"type":"MultiLineString","coordinates":[[[1,2],[3,4]],[[5,6],[7,8]]]}`, "MULTILINESTRING((1 2,3 4),(5 6,7 8))"},
		{"polygon with a hole", `{"type":"Polygon","coordinates":[[[0,0],[10,0],[10,10],[0,10],[0,0]],[[2,2],[2,3],[3,3],[2,2]]]}`,
			"POLYGON((0 0,10 0,10 10,0 10,0 0),(2 2,2 3,3 3,2 2))"},
		{"multipolygon", `{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]],[[[5,5],[6,5],[6,6],[5,5]]]]}`,
			"MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))"},
		{"collection", `{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,2]},{"type":"LineString","coordinates":[[1,2],[3,4]]}]}`,
			"GEOMETRYCOLLECTION(POINT(1 2),LINESTRING(1 2,3 4))"},
		{"feature", `{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[1,2]}}`, "POINT(1 2)"},
	}
	for _, tc := range cases {
		g, err := Parse([]byte(tc.geojson))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := WKT(g); got != tc.wkt {
			t.Fatalf("%s: WKT %s, want %s", tc.name, got, tc.wkt)
		}
		back, err := ParseWKT(tc.wkt)
		if err != nil {
			t.Fatalf("%s: WKT back: %v", tc.name, err)
		}
		if !orb.Equal(back, g) {
			t.Fatalf("%s: WKT round trip %v != %v", tc.name, back, g)
		}
		again, err := Parse(GeoJSON(g))
		if err != nil || !orb.Equal(again, g) {
			t.Fatalf("%s: GeoJSON round trip %v %v", tc.name, again, err)
		}
		// The same as JSON strings (BraDypUS clients may send either).
		for _, text := range []string{tc.wkt, tc.geojson} {
			q := `"` + strings.ReplaceAll(text, `"`, `\"`) + `"`
			if s, err := Parse([]byte(q)); err != nil || !orb.Equal(s, g) {
				t.Fatalf("%s: as a string %s: %v %v", tc.name, q, s, err)
			}
		}
	}
}

// TestParseInvalid: each bad geometry is refused with the code naming its
// problem.
func TestParseInvalid(t *testing.T) {
	many := `{"type":"LineString","coordinates":[` + strings.Repeat(`[1,2],`, MaxVertices) + `[1,2]]}`
	cases := []struct{ name, in, code string }{
		{"unclosed ring", `{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}`, "geometry_ring_not_closed"},
		{"unclosed ring in WKT", `"POLYGON((0 0,1 0,1 1,0 1))"`, "geometry_ring_not_closed"},
		{"short ring", `{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0]]]}`, "geometry_too_few_points"},
		{"one-point line", `{"type":"LineString","coordinates":[[0,0]]}`, "geometry_too_few_points"},
		{"NaN in WKT", `"POINT(NaN 1)"`, "geometry_invalid_coordinate"},
		{"Inf in WKT", `"POINT(1 +Inf)"`, "geometry_invalid_coordinate"},
		{"overflowing number", `{"type":"Point","coordinates":[1e400,1]}`, "geometry_invalid_coordinate"},
		{"text coordinate", `{"type":"Point","coordinates":["east",1]}`, "geometry_invalid_coordinate"},
		{"boolean coordinate", `{"type":"Point","coordinates":[true,1]}`, "geometry_invalid_coordinate"},
		{"out of range", `{"type":"Point","coordinates":[200,10]}`, "geometry_out_of_range"},
		{"latitude out of range", `{"type":"Point","coordinates":[10,-91]}`, "geometry_out_of_range"},
		{"too many vertices", many, "geometry_too_many_vertices"},
		{"flat polygon", `{"type":"Polygon","coordinates":[[0,0],[1,0],[1,1],[0,0]]}`, "geometry_invalid_nesting"},
		{"nested point", `{"type":"Point","coordinates":[[1,2]]}`, "geometry_invalid_nesting"},
		{"short position", `{"type":"Point","coordinates":[1]}`, "geometry_invalid_nesting"},
		{"polygon as multipolygon", `{"type":"MultiPolygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}`, "geometry_invalid_nesting"},
		{"unknown type", `{"type":"Circle","coordinates":[1,2]}`, "geometry_unknown_type"},
		{"no type", `{"coordinates":[1,2]}`, "geometry_unknown_type"},
		{"unknown WKT type", `"CIRCLE(1 2)"`, "geometry_unknown_type"},
		{"empty collection", `{"type":"GeometryCollection","geometries":[]}`, "geometry_empty"},
		{"no coordinates", `{"type":"Point"}`, "geometry_empty"},
		{"empty multipoint", `{"type":"MultiPoint","coordinates":[]}`, "geometry_empty"},
		{"null", `null`, "geometry_empty"},
		{"not JSON", `{"type":`, "invalid_geometry"},
		{"garbage WKT", `"POINT(1"`, "invalid_geometry"},
		{"deep collection", strings.Repeat(`{"type":"GeometryCollection","geometries":[`, MaxCollectionDepth+1) +
			`{"type":"Point","coordinates":[1,2]}` + strings.Repeat(`]}`, MaxCollectionDepth+1), "geometry_invalid_nesting"},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(tc.in))
		e, ok := errs.As(err)
		if !ok || e.Code != tc.code || e.Kind != errs.Invalid {
			t.Fatalf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
}
