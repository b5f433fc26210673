package geo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkt"
	"github.com/paulmach/orb/geojson"

	"github.com/strata-archaeo/strata/core/errs"
)

// Limits of one geometry. A feature is a place on an excavation map, not a
// national coastline: 50,000 vertices hold a detailed survey polygon, and
// a bound keeps one request from costing the exact tests a fortune.
const (
	MaxVertices = 50000
	// MaxCollectionDepth bounds GeometryCollections inside collections.
	MaxCollectionDepth = 4
	// MaxText bounds a geometry's text (WKT or GeoJSON) before parsing.
	MaxText = 4 << 20
)

// The errors of a geometry that cannot be stored: each names the problem.
var (
	ErrInvalidGeometry   = errs.New(errs.Invalid, "invalid_geometry", "the geometry is neither GeoJSON nor WKT")
	ErrUnknownType       = errs.New(errs.Invalid, "geometry_unknown_type", "unknown geometry type")
	ErrNesting           = errs.New(errs.Invalid, "geometry_invalid_nesting", "the coordinates are not nested as the geometry type requires")
	ErrBadCoordinate     = errs.New(errs.Invalid, "geometry_invalid_coordinate", "a coordinate is not a finite number")
	ErrOutOfRange        = errs.New(errs.Invalid, "geometry_out_of_range", "a coordinate is outside longitude -180..180 or latitude -90..90 (EPSG:4326)")
	ErrRingNotClosed     = errs.New(errs.Invalid, "geometry_ring_not_closed", "a polygon ring does not end at its first position")
	ErrTooFewPoints      = errs.New(errs.Invalid, "geometry_too_few_points", "a line needs 2 positions, a polygon ring 4")
	ErrTooManyVertices   = errs.New(errs.Invalid, "geometry_too_many_vertices", fmt.Sprintf("a geometry has at most %d vertices", MaxVertices))
	ErrEmpty             = errs.New(errs.Invalid, "geometry_empty", "the geometry has no positions")
	ErrCollectionTooDeep = errs.New(errs.Invalid, "geometry_invalid_nesting", fmt.Sprintf("geometry collections nest at most %d deep", MaxCollectionDepth))
)

// Parse reads a geometry as clients send it: a GeoJSON geometry object, a
// GeoJSON Feature (its geometry), or a JSON string holding WKT or GeoJSON
// text. The geometry is checked (Validate) in EPSG:4326.
func Parse(raw []byte) (orb.Geometry, error) {
	g, err := ParseUnchecked(raw)
	if err != nil {
		return nil, err
	}
	if err := Validate(g, true); err != nil {
		return nil, err
	}
	return g, nil
}

// ParseUnchecked is Parse without the range check of Validate (its other
// checks are made): for coordinates in a projected system, converted
// before they are checked again.
func ParseUnchecked(raw []byte) (orb.Geometry, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > MaxText {
		return nil, ErrTooManyVertices.With("detail", "the geometry text is too long")
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, ErrEmpty
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, ErrInvalidGeometry.With("detail", err.Error())
		}
		return ParseText(s)
	}
	g, err := decodeGeoJSON(raw, 0)
	if err != nil {
		return nil, err
	}
	return g, Validate(g, false)
}

// ParseText reads WKT or GeoJSON text.
func ParseText(s string) (orb.Geometry, error) {
	s = strings.TrimSpace(s)
	if len(s) > MaxText {
		return nil, ErrTooManyVertices.With("detail", "the geometry text is too long")
	}
	if strings.HasPrefix(s, "{") {
		return ParseUnchecked([]byte(s))
	}
	return ParseWKT(s)
}

// ParseWKT reads WKT with orb's decoder and checks the result (without the
// range check).
func ParseWKT(s string) (g orb.Geometry, err error) {
	if strings.TrimSpace(s) == "" {
		return nil, ErrEmpty
	}
	if len(s) > MaxText {
		return nil, ErrTooManyVertices.With("detail", "the geometry text is too long")
	}
	defer func() {
		// A decoder must never take a request down with it.
		if r := recover(); r != nil {
			g, err = nil, ErrInvalidGeometry.With("detail", "malformed WKT")
		}
	}()
	g, err = wkt.Unmarshal(s)
	if err != nil {
		if err == wkt.ErrUnsupportedGeometry {
			return nil, ErrUnknownType.With("detail", err.Error())
		}
		return nil, ErrInvalidGeometry.With("detail", err.Error())
	}
	if err := Validate(g, false); err != nil {
		return nil, err
	}
	return g, nil
}

// Validate checks a geometry: finite coordinates (in EPSG:4326 range when
// inRange), lines of 2 positions or more, closed rings of 4 or more, at
// most MaxVertices, nothing empty.
func Validate(g orb.Geometry, inRange bool) error {
	v := &validator{inRange: inRange}
	if err := v.geometry(g, 0); err != nil {
		return err
	}
	if v.n == 0 {
		return ErrEmpty
	}
	return nil
}

type validator struct {
	inRange bool
	n       int
}

func (v *validator) point(p orb.Point) error {
	v.n++
	if v.n > MaxVertices {
		return ErrTooManyVertices
	}
	for _, c := range p {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return ErrBadCoordinate.With("detail", fmt.Sprint(c))
		}
	}
	if v.inRange && (p[0] < -180 || p[0] > 180 || p[1] < -90 || p[1] > 90) {
		return ErrOutOfRange.With("position", []float64{p[0], p[1]})
	}
	return nil
}

func (v *validator) line(ls []orb.Point, min int) error {
	if len(ls) < min {
		return ErrTooFewPoints.With("detail", fmt.Sprintf("%d positions where %d are needed", len(ls), min))
	}
	for _, p := range ls {
		if err := v.point(p); err != nil {
			return err
		}
	}
	return nil
}

func (v *validator) polygon(p orb.Polygon) error {
	if len(p) == 0 {
		return ErrEmpty.With("detail", "a polygon without rings")
	}
	for _, r := range p {
		if err := v.line(r, 4); err != nil {
			return err
		}
		if r[0] != r[len(r)-1] {
			return ErrRingNotClosed.With("position", []float64{r[0][0], r[0][1]})
		}
	}
	return nil
}

func (v *validator) geometry(g orb.Geometry, depth int) error {
	switch g := g.(type) {
	case orb.Point:
		return v.point(g)
	case orb.MultiPoint:
		if len(g) == 0 {
			return ErrEmpty.With("detail", "a multipoint without points")
		}
		return v.line(g, 1)
	case orb.LineString:
		return v.line(g, 2)
	case orb.MultiLineString:
		if len(g) == 0 {
			return ErrEmpty.With("detail", "a multilinestring without lines")
		}
		for _, ls := range g {
			if err := v.line(ls, 2); err != nil {
				return err
			}
		}
		return nil
	case orb.Polygon:
		return v.polygon(g)
	case orb.MultiPolygon:
		if len(g) == 0 {
			return ErrEmpty.With("detail", "a multipolygon without polygons")
		}
		for _, p := range g {
			if err := v.polygon(p); err != nil {
				return err
			}
		}
		return nil
	case orb.Collection:
		if depth >= MaxCollectionDepth {
			return ErrCollectionTooDeep
		}
		if len(g) == 0 {
			return ErrEmpty.With("detail", "a collection without geometries")
		}
		for _, c := range g {
			if err := v.geometry(c, depth+1); err != nil {
				return err
			}
		}
		return nil
	case nil:
		return ErrEmpty
	}
	return ErrUnknownType.With("detail", fmt.Sprintf("%T", g))
}

// WKT is the geometry's WKT text.
func WKT(g orb.Geometry) string { return wkt.MarshalString(g) }

// GeoJSON is the geometry's GeoJSON object.
func GeoJSON(g orb.Geometry) []byte {
	b, err := geojson.NewGeometry(g).MarshalJSON()
	if err != nil {
		// Only non-finite numbers fail to encode, and Validate refused them.
		panic(fmt.Sprintf("geo: encode a checked geometry: %v", err))
	}
	return b
}

// Bound is the geometry's bounding box.
func Bound(g orb.Geometry) orb.Bound { return g.Bound() }
