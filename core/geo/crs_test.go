package geo

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/project"
)

// utmForward is Krüger's forward series (Karney 2011, eq. 9–10), here only
// to check the inverse both ways.
func utmForward(e ellipsoid, zone int, south bool, lon, lat float64) orb.Point {
	s := seriesOf(e)
	phi, lam := lat*math.Pi/180, (lon-float64(zone*6-183))*math.Pi/180
	c := 2 * math.Sqrt(s.n) / (1 + s.n)
	t := math.Sinh(math.Atanh(math.Sin(phi)) - c*math.Atanh(c*math.Sin(phi)))
	xi1 := math.Atan2(t, math.Cos(lam))
	eta1 := math.Atanh(math.Sin(lam) / math.Sqrt(1+t*t))
	x, y := eta1, xi1
	for j := 1; j <= 3; j++ {
		a := s.alpha[j-1]
		x += a * math.Cos(2*float64(j)*xi1) * math.Sinh(2*float64(j)*eta1)
		y += a * math.Sin(2*float64(j)*xi1) * math.Cosh(2*float64(j)*eta1)
	}
	n0 := 0.0
	if south {
		n0 = utmNSouth
	}
	return orb.Point{utmE0 + utmK0*s.A*x, n0 + utmK0*s.A*y}
}

// TestUTMInverse: published points, and the forward series inverted back
// to within a micro-degree over each zone's width.
func TestUTMInverse(t *testing.T) {
	for _, tc := range []struct {
		name     string
		code     int
		e, n     float64
		lon, lat float64
		tol      float64
	}{
		// The CN Tower, 17T 630084 4833438 (metre precision).
		{"CN Tower", 32617, 630084, 4833438, -79.387139, 43.642567, 2e-5},
		// A zone's origin: the central meridian on the equator.
		{"origin 33N", 32633, 500000, 0, 15, 0, 1e-9},
		{"origin 33S", 32733, 500000, 10000000, 15, 0, 1e-9},
	} {
		pr, err := ProjectionOf(tc.code)
		if err != nil {
			t.Fatal(err)
		}
		p := pr(orb.Point{tc.e, tc.n})
		if math.Abs(p[0]-tc.lon) > tc.tol || math.Abs(p[1]-tc.lat) > tc.tol {
			t.Fatalf("%s: %v, want %v %v", tc.name, p, tc.lon, tc.lat)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		zone, south := 1+r.IntN(60), r.IntN(2) == 0
		lon := float64(zone*6-183) + r.Float64()*6 - 3
		lat := r.Float64() * 80
		if south {
			lat = -lat
		}
		code := 32600 + zone
		if south {
			code = 32700 + zone
		}
		pr, _ := ProjectionOf(code)
		p := pr(utmForward(wgs84, zone, south, lon, lat))
		if math.Abs(p[0]-lon) > 1e-6 || math.Abs(p[1]-lat) > 1e-6 {
			t.Fatalf("zone %d south=%v (%g,%g): back %v", zone, south, lon, lat, p)
		}
	}
}

// TestWebMercatorInverse agrees with orb's projection.
func TestWebMercatorInverse(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 1000; i++ {
		ll := orb.Point{r.Float64()*360 - 180, r.Float64()*170 - 85}
		merc := project.WGS84.ToMercator(ll)
		p := webMercatorInverse(merc)
		if math.Abs(p[0]-ll[0]) > 1e-9 || math.Abs(p[1]-ll[1]) > 1e-9 {
			t.Fatalf("%v: %v", ll, p)
		}
	}
}

func TestParseCRS(t *testing.T) {
	for in, want := range map[string]int{"": 4326, "EPSG:4326": 4326, "urn:ogc:def:crs:OGC:1.3:CRS84": 4326,
		"urn:ogc:def:crs:EPSG::32633": 32633, "EPSG:3857": 3857, "urn:ogc:def:crs:EPSG:6.6:32733": 32733, "25832": 25832} {
		if got, err := ParseCRS(in); err != nil || got != want {
			t.Fatalf("%q: %d %v", in, got, err)
		}
	}
	for _, in := range []string{"EPSG:2100", "EPSG:32661", "whatever"} {
		if _, err := ParseCRS(in); err == nil {
			t.Fatalf("%q accepted", in)
		}
	}
}

// TestParseCollectionProjected: a file in UTM 33N comes out in degrees.
func TestParseCollectionProjected(t *testing.T) {
	pt := utmForward(wgs84, 33, false, 12.4964, 41.9028)
	doc := `{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::32633"}},"features":[` +
		`{"type":"Feature","properties":{"sigla":"A"},"geometry":{"type":"Point","coordinates":[` +
		formatF(pt[0]) + `,` + formatF(pt[1]) + `]}}]}`
	f, err := ParseCollection([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p := f.Features[0].Geometry.(orb.Point)
	if f.CRS != 32633 || math.Abs(p[0]-12.4964) > 1e-7 || math.Abs(p[1]-41.9028) > 1e-7 {
		t.Fatalf("%d %v", f.CRS, p)
	}
	// Without its crs member, the same numbers are out of range.
	if _, err := ParseCollection([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[` +
		formatF(pt[0]) + `,` + formatF(pt[1]) + `]}}]}`)); err == nil {
		t.Fatal("projected numbers taken as degrees")
	}
}

func formatF(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
