package geo

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/paulmach/orb"

	"github.com/strata-archaeo/strata/core/errs"
)

// Coordinate systems an import converts from (to EPSG:4326, what the
// geodata table keeps). The projections are written here from their
// published formulas rather than taken from a library: Go has no
// well-kept pure-Go PROJ, and the two needed are short.
//
//   - EPSG:3857 (Web Mercator, also 900913, 102100, 102113): the spherical
//     Mercator inverse on the WGS84 semi-major axis (EPSG Guidance Note
//     7-2, method 1024).
//   - UTM on WGS84 (EPSG:32601–32660 north, 32701–32760 south) and on
//     ETRS89/GRS80 (EPSG:25828–25838): the inverse transverse Mercator by
//     Krüger's series to n³ (Karney 2011, "Transverse Mercator with an
//     accuracy of a few nanometers", eq. 7, 11, 15; the three-term form
//     is accurate to well under a millimetre within a zone).

// ErrUnsupportedCRS: the file names a coordinate system not converted.
var ErrUnsupportedCRS = errs.New(errs.Invalid, "unsupported_crs",
	"coordinate system not supported: EPSG:4326, EPSG:3857 and the UTM zones (EPSG:326xx, 327xx, 258xx) are")

// Projection converts a projected position to longitude and latitude.
type Projection func(orb.Point) orb.Point

var epsgPattern = regexp.MustCompile(`(?i)(?:EPSG:+(?:[0-9.]*:)?|^)(\d{4,6})$`)

// ParseCRS reads a CRS name as GeoJSON files give it ("EPSG:32633",
// "urn:ogc:def:crs:EPSG::32633", "urn:ogc:def:crs:OGC:1.3:CRS84", a bare
// code) and returns its EPSG code (4326 for CRS84 and the empty name).
func ParseCRS(name string) (int, error) {
	s := strings.TrimSpace(name)
	if s == "" || strings.HasSuffix(strings.ToUpper(s), "CRS84") {
		return 4326, nil
	}
	m := epsgPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, ErrUnsupportedCRS.With("crs", clip(s))
	}
	code, _ := strconv.Atoi(m[1])
	if _, err := ProjectionOf(code); err != nil {
		return 0, err
	}
	return code, nil
}

// ProjectionOf is the conversion of EPSG code to EPSG:4326 (nil for 4326
// itself).
func ProjectionOf(code int) (Projection, error) {
	switch {
	case code == 4326:
		return nil, nil
	case code == 3857 || code == 900913 || code == 102100 || code == 102113:
		return webMercatorInverse, nil
	case code >= 32601 && code <= 32660:
		return utmInverse(wgs84, code-32600, false), nil
	case code >= 32701 && code <= 32760:
		return utmInverse(wgs84, code-32700, true), nil
	case code >= 25828 && code <= 25838:
		return utmInverse(grs80, code-25800, false), nil
	}
	return nil, ErrUnsupportedCRS.With("crs", fmt.Sprintf("EPSG:%d", code))
}

// earthRadius is WGS84's semi-major axis, Web Mercator's sphere.
const earthRadius = 6378137.0

func webMercatorInverse(p orb.Point) orb.Point {
	lon := p[0] / earthRadius * 180 / math.Pi
	lat := (2*math.Atan(math.Exp(p[1]/earthRadius)) - math.Pi/2) * 180 / math.Pi
	return orb.Point{lon, lat}
}

// ellipsoid is a semi-major axis and flattening.
type ellipsoid struct{ a, f float64 }

var (
	wgs84 = ellipsoid{6378137, 1 / 298.257223563}
	grs80 = ellipsoid{6378137, 1 / 298.257222101}
)

// tmSeries are Krüger's coefficients for one ellipsoid.
type tmSeries struct {
	A                  float64 // rectifying radius
	alpha, beta, delta [3]float64
	n                  float64
}

func seriesOf(e ellipsoid) tmSeries {
	n := e.f / (2 - e.f)
	n2, n3 := n*n, n*n*n
	return tmSeries{
		n:     n,
		A:     e.a / (1 + n) * (1 + n2/4 + n2*n2/64),
		alpha: [3]float64{n/2 - 2*n2/3 + 5*n3/16, 13*n2/48 - 3*n3/5, 61 * n3 / 240},
		beta:  [3]float64{n/2 - 2*n2/3 + 37*n3/96, n2/48 + n3/15, 17 * n3 / 480},
		delta: [3]float64{2*n - 2*n2/3 - 2*n3, 7*n2/3 - 8*n3/5, 56 * n3 / 15},
	}
}

// UTM's constants: scale on the central meridian, false easting, false
// northing of the southern hemisphere.
const (
	utmK0     = 0.9996
	utmE0     = 500000.0
	utmNSouth = 10000000.0
)

// utmInverse converts easting and northing of a zone to longitude and
// latitude in degrees.
func utmInverse(e ellipsoid, zone int, south bool) Projection {
	s := seriesOf(e)
	lon0 := float64(zone*6-183) * math.Pi / 180
	n0 := 0.0
	if south {
		n0 = utmNSouth
	}
	return func(p orb.Point) orb.Point {
		xi := (p[1] - n0) / (utmK0 * s.A)
		eta := (p[0] - utmE0) / (utmK0 * s.A)
		xi1, eta1 := xi, eta
		for j := 1; j <= 3; j++ {
			b := s.beta[j-1]
			xi1 -= b * math.Sin(2*float64(j)*xi) * math.Cosh(2*float64(j)*eta)
			eta1 -= b * math.Cos(2*float64(j)*xi) * math.Sinh(2*float64(j)*eta)
		}
		chi := math.Asin(math.Sin(xi1) / math.Cosh(eta1))
		phi := chi
		for j := 1; j <= 3; j++ {
			phi += s.delta[j-1] * math.Sin(2*float64(j)*chi)
		}
		lon := lon0 + math.Atan2(math.Sinh(eta1), math.Cos(xi1))
		return orb.Point{lon * 180 / math.Pi, phi * 180 / math.Pi}
	}
}

// Project applies pr to every position of g (g itself when pr is nil).
func Project(g orb.Geometry, pr Projection) orb.Geometry {
	if pr == nil {
		return g
	}
	line := func(ps []orb.Point) []orb.Point {
		out := make([]orb.Point, len(ps))
		for i, p := range ps {
			out[i] = pr(p)
		}
		return out
	}
	switch g := g.(type) {
	case orb.Point:
		return pr(g)
	case orb.MultiPoint:
		return orb.MultiPoint(line(g))
	case orb.LineString:
		return orb.LineString(line(g))
	case orb.MultiLineString:
		out := make(orb.MultiLineString, len(g))
		for i, l := range g {
			out[i] = line(l)
		}
		return out
	case orb.Polygon:
		out := make(orb.Polygon, len(g))
		for i, r := range g {
			out[i] = line(r)
		}
		return out
	case orb.MultiPolygon:
		out := make(orb.MultiPolygon, len(g))
		for i, p := range g {
			out[i] = Project(p, pr).(orb.Polygon)
		}
		return out
	case orb.Collection:
		out := make(orb.Collection, len(g))
		for i, c := range g {
			out[i] = Project(c, pr)
		}
		return out
	}
	return g
}
