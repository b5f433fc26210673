package geo

import (
	"context"
	"fmt"
	"strings"

	"github.com/paulmach/orb"

	"github.com/strata-archaeo/strata/core/jsonout"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
)

// MaxFeatures bounds the features of one map answer; beyond, the answer
// says truncated (ask for a viewport).
const MaxFeatures = 100000

// CollectionQuery is what a map asks for: the records matching Where (the
// list filter, already rendered; the caller's row subset is added by the
// scope) and, when Viewport is set, only their features meeting it.
type CollectionQuery struct {
	Where    *records.Cond
	Viewport *orb.Bound
}

// Collection is a FeatureCollection and whether it was cut at MaxFeatures.
type Collection struct {
	Features  []any
	Truncated bool
	// Preview are the properties each feature carries besides id, geo_id
	// and tb: the table's preview fields, by label (BraDypUS's client
	// shows them by these keys).
	Preview []string
}

// GeoJSON is the collection as GeoJSON.
func (c *Collection) GeoJSON() map[string]any {
	return map[string]any{"type": "FeatureCollection", "features": c.Features}
}

// previewFields are the table's preview fields (its first fields when it
// names none), without id.
func previewFields(t *schema.Table) []*schema.Field {
	var out []*schema.Field
	for _, n := range t.Preview {
		if f, ok := t.Field(n); ok {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		for _, f := range t.Fields {
			if len(out) == 3 {
				break
			}
			out = append(out, f)
		}
	}
	return out
}

// ReadCollection reads the map of sc's table in one query: its features
// joined to the caller's matching records (by the indexed box when there
// is a viewport), then the exact test of the viewport in Go.
func ReadCollection(ctx context.Context, sc *records.Scope, q CollectionQuery) (*Collection, error) {
	if !sc.Table.Geodata {
		return nil, ErrNotGeoTable.With("table", sc.Table.Name)
	}
	db := sc.DB
	tb := db.Qualify(sc.Table.Name)
	fields := previewFields(sc.Table)
	cols := []string{"g.id", "g.record_id", "g.geojson", "g.min_x", "g.min_y", "g.max_x", "g.max_y"}
	out := &Collection{Features: []any{}, Preview: []string{}}
	for _, f := range fields {
		cols = append(cols, tb+"."+db.Engine.Quote(f.Name))
		out.Preview = append(out.Preview, f.Label)
	}
	where, args := sc.Where(q.Where)
	conds := []string{"g.tb = ?"}
	qargs := []any{sc.Table.Name}
	var shape Shape
	if q.Viewport != nil {
		shape = Shape{Bound: *q.Viewport}
		c, a := boxOverlap(db.Engine, "g", *q.Viewport)
		conds, qargs = append(conds, c), append(qargs, a...)
	}
	qargs = append(qargs, args...)
	query := `SELECT ` + strings.Join(cols, ", ") + ` FROM ` + db.Sys("geodata") + ` AS g JOIN ` + tb + ` ON ` + tb + `."id" = g.record_id` +
		` WHERE ` + strings.Join(conds, " AND ") + ` AND (` + where + `) ORDER BY g.id LIMIT ?`
	rows, err := db.Query(ctx, query, append(qargs, MaxFeatures+1)...)
	if err != nil {
		return nil, fmt.Errorf("map of %s: %w", sc.Table.Name, err)
	}
	defer rows.Close()
	vals := make([]any, len(fields))
	for rows.Next() {
		var id, rec int64
		var gj string
		var b orb.Bound
		dest := []any{&id, &rec, &gj, &b.Min[0], &b.Min[1], &b.Max[0], &b.Max[1]}
		for i := range vals {
			dest = append(dest, &vals[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if q.Viewport != nil {
			ok, err := shape.meets(b, gj)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		if len(out.Features) == MaxFeatures {
			out.Truncated = true
			break
		}
		props := map[string]any{"id": rec, "geo_id": id, "tb": sc.Table.Name}
		for i, f := range fields {
			props[f.Label] = records.FromDB(f.DBType, vals[i])
		}
		out.Features = append(out.Features, map[string]any{"type": "Feature", "id": id, "geometry": jsonout.Compact(gj), "properties": props})
	}
	return out, rows.Err()
}
