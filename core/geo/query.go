package geo

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/store"
)

// boxOverlap is the SQL condition "feature alias's box overlaps b", made
// to use the engine's index: on PostgreSQL the GiST index of the built-in
// box type (both axes at once), on SQLite the covering B-tree index
// (tb, min_x, max_x, min_y, max_y): a range on min_x, the rest read from
// the index.
func boxOverlap(e store.Engine, alias string, b orb.Bound) (string, []any) {
	if e == store.Postgres {
		return `box(point(` + alias + `.min_x, ` + alias + `.min_y), point(` + alias + `.max_x, ` + alias + `.max_y)) && ` +
				`box(point(CAST(? AS double precision), CAST(? AS double precision)), point(CAST(? AS double precision), CAST(? AS double precision)))`,
			[]any{b.Min[0], b.Min[1], b.Max[0], b.Max[1]}
	}
	return alias + `.min_x <= ? AND ` + alias + `.max_x >= ? AND ` + alias + `.min_y <= ? AND ` + alias + `.max_y >= ?`,
		[]any{b.Max[0], b.Min[0], b.Max[1], b.Min[1]}
}

// Shape is what a spatial condition tests against: a box, or a geometry
// (with its box).
type Shape struct {
	Bound    orb.Bound
	Geometry orb.Geometry // nil: the box itself
}

// meets is the exact test of a stored feature (its box b, its GeoJSON
// read only when the box alone cannot decide).
func (s Shape) meets(b orb.Bound, stored string) (bool, error) {
	if !s.Bound.Intersects(b) {
		return false, nil
	}
	if s.Geometry == nil && s.Bound.Contains(b.Min) && s.Bound.Contains(b.Max) {
		return true, nil // inside the box: nothing to test
	}
	if s.Geometry == nil && b.Min == b.Max {
		return true, nil // a point whose box overlaps is in it
	}
	g, err := geojson.UnmarshalGeometry([]byte(stored))
	if err != nil {
		return false, fmt.Errorf("stored geodata: %w", err)
	}
	var q orb.Geometry = s.Bound
	if s.Geometry != nil {
		q = s.Geometry
	}
	return Intersects(g.Geometry(), q), nil
}

// ParseBBox reads "minx,miny,maxx,maxy" (EPSG:4326, lon then lat).
func ParseBBox(s string) (orb.Bound, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return orb.Bound{}, errBBox.With("detail", "four numbers: minx,miny,maxx,maxy")
	}
	var v [4]float64
	for i, p := range parts {
		f, err := number(p)
		if err != nil {
			return orb.Bound{}, errBBox.With("detail", "four numbers: minx,miny,maxx,maxy")
		}
		v[i] = f
	}
	return bboxOf(v)
}

var errBBox = errs.New(errs.Invalid, "invalid_parameter", "bbox is not a box").With("parameter", "bbox")

func bboxOf(v [4]float64) (orb.Bound, error) {
	if v[0] > v[2] || v[1] > v[3] {
		return orb.Bound{}, errBBox.With("detail", "min before max: minx,miny,maxx,maxy")
	}
	for _, f := range v {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return orb.Bound{}, errBBox.With("detail", "finite numbers")
		}
	}
	return orb.Bound{Min: orb.Point{v[0], v[1]}, Max: orb.Point{v[2], v[3]}}, nil
}

var errIntersects = errs.New(errs.Invalid, "invalid_filter", "_intersects takes a bbox (minx,miny,maxx,maxy) or a GeoJSON geometry")

// shapeOf reads the operand of _intersects: a bbox as text or a list of
// four numbers, or a GeoJSON geometry (an object, or its JSON text).
func shapeOf(v any) (Shape, error) {
	switch x := v.(type) {
	case string:
		x = strings.TrimSpace(x)
		if strings.HasPrefix(x, "{") || strings.HasPrefix(x, "[") {
			var decoded any
			if err := json.Unmarshal([]byte(x), &decoded); err != nil {
				return Shape{}, errIntersects.With("detail", err.Error())
			}
			return shapeOf(decoded)
		}
		b, err := ParseBBox(x)
		if err != nil {
			return Shape{}, errIntersects.With("detail", "a bbox is minx,miny,maxx,maxy")
		}
		return Shape{Bound: b}, nil
	case []any:
		if len(x) != 4 {
			return Shape{}, errIntersects.With("detail", "a bbox is four numbers")
		}
		var n [4]float64
		for i, e := range x {
			f, err := number(e)
			if err != nil {
				return Shape{}, errIntersects.With("detail", "a bbox is four numbers")
			}
			n[i] = f
		}
		b, err := bboxOf(n)
		if err != nil {
			return Shape{}, errIntersects.With("detail", "min before max: minx,miny,maxx,maxy")
		}
		return Shape{Bound: b}, nil
	case map[string]any:
		raw, err := json.Marshal(x)
		if err != nil {
			return Shape{}, errIntersects
		}
		g, err := Parse(raw)
		if err != nil {
			return Shape{}, err
		}
		return Shape{Bound: g.Bound(), Geometry: g}, nil
	}
	return Shape{}, errIntersects
}

var (
	coreOps     *filter.Registry
	coreOpsOnce sync.Once
)

// Operators are the area's filter operators (filter.Options.Core):
// geodata: {_intersects: bbox | geometry} (CONTRACT §10), the records
// one of whose features meets the shape.
func Operators() *filter.Registry {
	coreOpsOnce.Do(func() {
		coreOps = filter.NewRegistry()
		if err := coreOps.Register(filter.Operator{Name: "_intersects", Fields: []string{"geodata"}, Virtual: true, Resolve: resolveIntersects}); err != nil {
			panic(err)
		}
	})
	return coreOps
}

func resolveIntersects(ctx context.Context, call filter.OperatorCall) (filter.Resolution, error) {
	if !call.Table.Geodata {
		return filter.Resolution{}, errIntersects.With("detail", call.Table.Name+" does not keep geodata")
	}
	sh, err := shapeOf(call.Value)
	if err != nil {
		return filter.Resolution{}, err
	}
	ids := []int64{}
	seen := map[int64]bool{}
	err = scanCandidates(ctx, call.DB, call.Table.Name, sh, func(c candidate) error {
		if seen[c.record] {
			return nil
		}
		ok, err := sh.meets(c.bound, c.geojson)
		if ok {
			seen[c.record] = true
			ids = append(ids, c.record)
		}
		return err
	})
	return filter.Resolution{IDs: ids}, err
}

type candidate struct {
	record  int64
	bound   orb.Bound
	geojson string
}

// scanCandidates reads the features of table whose box overlaps the
// shape's (the indexed narrowing; the caller makes the exact test).
func scanCandidates(ctx context.Context, db *store.DB, table string, sh Shape, fn func(candidate) error) error {
	cond, args := boxOverlap(db.Engine, "g", sh.Bound)
	rows, err := db.Query(ctx, `SELECT g.record_id, g.min_x, g.min_y, g.max_x, g.max_y, g.geojson FROM `+db.Sys("geodata")+
		` AS g WHERE g.tb = ? AND `+cond, append([]any{table}, args...)...)
	if err != nil {
		return fmt.Errorf("geodata of %s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.record, &c.bound.Min[0], &c.bound.Min[1], &c.bound.Max[0], &c.bound.Max[1], &c.geojson); err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
	}
	return rows.Err()
}
