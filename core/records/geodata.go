package records

import (
	"context"
	"fmt"
	"strconv"

	"github.com/strata-archaeo/strata/core/jsonout"
	"github.com/strata-archaeo/strata/core/store"
)

// The record's side of geodata (core/geo keeps the features): its
// `geodata` section, the features a version keeps, and what a delete and
// a restore do to them. The features sit in sys_geodata, one table for
// every geo-enabled table, keyed by table and record id.

// GeoFeature is a stored feature as a version keeps it: enough to put it
// back as it was, id included.
type GeoFeature struct {
	ID       int64   `json:"id"`
	Geometry string  `json:"geometry"` // WKT
	GeoJSON  string  `json:"geojson"`
	MinX     float64 `json:"min_x"`
	MinY     float64 `json:"min_y"`
	MaxX     float64 `json:"max_x"`
	MaxY     float64 `json:"max_y"`
}

const geoColumns = `id, geometry, geojson, min_x, min_y, max_x, max_y`

// queueGeodata queues the read of record id's features; the section is
// {<id>: {id, geometry, geojson}} (CONTRACT §5) once the pipeline has run.
func (s *Scope) queueGeodata(p *store.Pipeline, id int64) func() obj {
	out := obj{}
	if !s.Table.Geodata {
		return func() obj { return out }
	}
	p.Query("geodata of "+s.Table.Name, `SELECT `+geoColumns+` FROM `+s.DB.Sys("geodata")+
		` WHERE tb = ? AND record_id = ? ORDER BY id`, []any{s.Table.Name, id}, func(rows store.Rows) error {
		fs, err := scanGeo(rows)
		for _, f := range fs {
			out[strconv.FormatInt(f.ID, 10)] = obj{"id": f.ID, "geometry": f.Geometry, "geojson": jsonout.Compact(f.GeoJSON)}
		}
		return err
	})
	return func() obj { return out }
}

func scanGeo(rows store.Rows) ([]GeoFeature, error) {
	out := []GeoFeature{}
	for rows.Next() {
		var f GeoFeature
		if err := rows.Scan(&f.ID, &f.Geometry, &f.GeoJSON, &f.MinX, &f.MinY, &f.MaxX, &f.MaxY); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// geoFeatures are record id's features, for a version ([] when none).
func (s *Scope) geoFeatures(ctx context.Context, id int64) ([]GeoFeature, error) {
	rows, err := s.DB.Query(ctx, `SELECT `+geoColumns+` FROM `+s.DB.Sys("geodata")+` WHERE tb = ? AND record_id = ? ORDER BY id`, s.Table.Name, id)
	if err != nil {
		return nil, fmt.Errorf("geodata of %s %d: %w", s.Table.Name, id, err)
	}
	defer rows.Close()
	return scanGeo(rows)
}

// deleteGeodata removes record id's features (the record is going).
func (s *Scope) deleteGeodata(ctx context.Context, id int64) error {
	if _, err := s.DB.Exec(ctx, `DELETE FROM `+s.DB.Sys("geodata")+` WHERE tb = ? AND record_id = ?`, s.Table.Name, id); err != nil {
		return fmt.Errorf("delete geodata of %s %d: %w", s.Table.Name, id, err)
	}
	return nil
}

// restoreGeodata replaces record id's features with a version's, ids
// included (a feature's id is never given again once deleted).
func (s *Scope) restoreGeodata(ctx context.Context, id int64, fs []GeoFeature) error {
	if err := s.deleteGeodata(ctx, id); err != nil {
		return err
	}
	for _, f := range fs {
		if _, err := s.DB.Exec(ctx, `INSERT INTO `+s.DB.Sys("geodata")+` (`+geoColumns+`, tb, record_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			f.ID, f.Geometry, f.GeoJSON, f.MinX, f.MinY, f.MaxX, f.MaxY, s.Table.Name, id); err != nil {
			return fmt.Errorf("restore geodata of %s %d: %w", s.Table.Name, id, err)
		}
	}
	if len(fs) == 0 {
		return nil
	}
	return s.syncSequenceOf(ctx, s.DB.Sys("geodata"), s.DB.Schema()+".sys_geodata")
}

// SnapshotGeodata stores record id's state, its features included, as a
// version (operation "geodata"), in the caller's transaction, before its
// features change.
func SnapshotGeodata(ctx context.Context, s *Scope, id int64) error {
	return s.snapshotWith(ctx, id, "geodata", nil)
}
