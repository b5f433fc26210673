package geo

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/paulmach/orb"
)

// geoJSONObject is a GeoJSON geometry, or a Feature holding one.
type geoJSONObject struct {
	Type        string            `json:"type"`
	Coordinates json.RawMessage   `json:"coordinates"`
	Geometries  []json.RawMessage `json:"geometries"`
	Geometry    json.RawMessage   `json:"geometry"`
}

// decodeGeoJSON reads a GeoJSON geometry (or a Feature's) strictly: the
// type must be one of GeoJSON's seven, and the coordinates nested exactly
// as it requires, so that each fault is named (orb's decoder answers one
// error for all of them).
func decodeGeoJSON(raw []byte, depth int) (orb.Geometry, error) {
	var o geoJSONObject
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, ErrInvalidGeometry.With("detail", err.Error())
	}
	if o.Type == "Feature" {
		if depth > 0 {
			return nil, ErrNesting.With("detail", "a Feature inside a geometry")
		}
		return decodeGeoJSON(o.Geometry, depth+1)
	}
	if o.Type == "GeometryCollection" {
		if depth >= MaxCollectionDepth {
			return nil, ErrCollectionTooDeep
		}
		if len(o.Geometries) == 0 {
			return nil, ErrEmpty.With("detail", "a collection without geometries")
		}
		c := make(orb.Collection, 0, len(o.Geometries))
		for _, r := range o.Geometries {
			g, err := decodeGeoJSON(r, depth+1)
			if err != nil {
				return nil, err
			}
			c = append(c, g)
		}
		return c, nil
	}
	levels, ok := coordinateDepth[o.Type]
	if !ok {
		if o.Type == "" {
			return nil, ErrUnknownType.With("detail", "the geometry has no type")
		}
		return nil, ErrUnknownType.With("type", clip(o.Type))
	}
	if len(bytes.TrimSpace(o.Coordinates)) == 0 || string(bytes.TrimSpace(o.Coordinates)) == "null" {
		return nil, ErrEmpty.With("detail", o.Type+" without coordinates")
	}
	var tree any
	d := json.NewDecoder(bytes.NewReader(o.Coordinates))
	d.UseNumber()
	if err := d.Decode(&tree); err != nil {
		return nil, ErrInvalidGeometry.With("detail", err.Error())
	}
	c := &coords{}
	switch o.Type {
	case "Point":
		return c.position(tree)
	case "MultiPoint":
		ps, err := c.positions(tree)
		return orb.MultiPoint(ps), err
	case "LineString":
		ps, err := c.positions(tree)
		return orb.LineString(ps), err
	case "MultiLineString":
		lines, err := c.lines(tree)
		if err != nil {
			return nil, err
		}
		out := make(orb.MultiLineString, len(lines))
		for i, l := range lines {
			out[i] = orb.LineString(l)
		}
		return out, nil
	case "Polygon":
		return c.polygon(tree)
	default: // MultiPolygon, the last of coordinateDepth
		list, ok := tree.([]any)
		if !ok {
			return nil, nesting(levels)
		}
		out := make(orb.MultiPolygon, 0, len(list))
		for _, item := range list {
			p, err := c.polygon(item)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	}
}

// coordinateDepth is how deep each type's coordinates nest arrays of
// positions.
var coordinateDepth = map[string]int{"Point": 0, "MultiPoint": 1, "LineString": 1, "MultiLineString": 2, "Polygon": 2, "MultiPolygon": 3}

func nesting(levels int) error {
	want := "a position [x, y]"
	for range levels {
		want = "an array of " + strings.TrimPrefix(want, "a ")
	}
	return ErrNesting.With("detail", "expected "+want)
}

// coords reads nested coordinate arrays, counting positions as it goes so
// that an oversized geometry stops early.
type coords struct{ n int }

func (c *coords) position(v any) (orb.Point, error) {
	list, ok := v.([]any)
	if !ok || len(list) < 2 {
		return orb.Point{}, nesting(0)
	}
	c.n++
	if c.n > MaxVertices {
		return orb.Point{}, ErrTooManyVertices
	}
	var p orb.Point
	for i := range 2 {
		f, err := number(list[i])
		if err != nil {
			return orb.Point{}, err
		}
		p[i] = f
	}
	// A third (altitude) or further value is allowed and dropped; it must
	// still be a number.
	for _, x := range list[2:] {
		if _, err := number(x); err != nil {
			return orb.Point{}, err
		}
	}
	return p, nil
}

// number is a coordinate: a JSON number, or a numeric string (the filter
// language hands operands over as text).
func number(v any) (float64, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case []any, map[string]any:
		return 0, nesting(0)
	default:
		return 0, ErrBadCoordinate.With("detail", "not a number")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return 0, ErrBadCoordinate.With("detail", clip(s))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, ErrBadCoordinate.With("detail", clip(s))
	}
	return f, nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func (c *coords) positions(v any) ([]orb.Point, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, nesting(1)
	}
	out := make([]orb.Point, 0, len(list))
	for _, item := range list {
		p, err := c.position(item)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (c *coords) lines(v any) ([][]orb.Point, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, nesting(2)
	}
	out := make([][]orb.Point, 0, len(list))
	for _, item := range list {
		ps, err := c.positions(item)
		if err != nil {
			return nil, err
		}
		out = append(out, ps)
	}
	return out, nil
}

func (c *coords) polygon(v any) (orb.Polygon, error) {
	rings, err := c.lines(v)
	if err != nil {
		return nil, err
	}
	out := make(orb.Polygon, len(rings))
	for i, r := range rings {
		out[i] = orb.Ring(r)
	}
	return out, nil
}

// clip shortens client text quoted back in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
