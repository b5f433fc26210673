package geo

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"

	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/store"
)

// ExportFormats are the records export's map formats: GeoJSON (a
// FeatureCollection, a feature per stored feature of each exported
// record, a record without one as a feature with a null geometry) and KML
// (a Placemark per record, its features as one MultiGeometry). The
// exported columns are the properties.
func ExportFormats() []records.ExportFormat {
	return []records.ExportFormat{
		{Name: "geojson", Ext: "geojson", ContentType: "application/geo+json", OpenFor: func(ctx context.Context, s *records.Scope, w io.Writer) (records.RowWriter, error) {
			return newMapWriter(ctx, s, w, geoJSONOut{}), nil
		}},
		{Name: "kml", Ext: "kml", ContentType: "application/vnd.google-earth.kml+xml", OpenFor: func(ctx context.Context, s *records.Scope, w io.Writer) (records.RowWriter, error) {
			return newMapWriter(ctx, s, w, kmlOut{label: records.IDFieldOf(s.Table)}), nil
		}},
	}
}

// mapOut writes one document kind.
type mapOut interface {
	head(w io.Writer, table string) error
	record(w io.Writer, first bool, cols []records.FieldRef, vals []any, geoms []string) error
	tail(w io.Writer) error
}

// mapWriter buffers the export's rows and reads their features a batch at
// a time (one query per batch, never per row).
type mapWriter struct {
	ctx     context.Context
	s       *records.Scope
	w       io.Writer
	out     mapOut
	cols    []records.FieldRef
	pending [][]any
	first   bool
}

const mapBatch = 500

func newMapWriter(ctx context.Context, s *records.Scope, w io.Writer, out mapOut) *mapWriter {
	return &mapWriter{ctx: ctx, s: s, w: w, out: out, first: true}
}

func (m *mapWriter) Header(cols []records.FieldRef) error {
	m.cols = cols
	return m.out.head(m.w, m.s.Table.Name)
}

func (m *mapWriter) Row(vals []any) error {
	m.pending = append(m.pending, vals)
	if len(m.pending) >= mapBatch {
		return m.flush()
	}
	return nil
}

func (m *mapWriter) Finish() error {
	if err := m.flush(); err != nil {
		return err
	}
	return m.out.tail(m.w)
}

func (m *mapWriter) Close() error { return nil }

// flush writes the pending rows with their features (GeoJSON text).
func (m *mapWriter) flush() error {
	if len(m.pending) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(m.pending))
	for _, r := range m.pending {
		if id, ok := r[0].(int64); ok {
			ids = append(ids, id)
		}
	}
	byRecord := map[int64][]string{}
	if m.s.Table.Geodata && len(ids) > 0 {
		b, _ := json.Marshal(ids)
		db := m.s.DB
		in := `(SELECT value FROM json_each(?))`
		if db.Engine == store.Postgres {
			in = `(SELECT CAST(value AS bigint) FROM json_array_elements_text(CAST(? AS json)))`
		}
		rows, err := db.Query(m.ctx, `SELECT record_id, geojson FROM `+db.Sys("geodata")+` WHERE tb = ? AND record_id IN `+in+` ORDER BY id`,
			m.s.Table.Name, string(b))
		if err != nil {
			return fmt.Errorf("export geodata: %w", err)
		}
		for rows.Next() {
			var id int64
			var g string
			if err := rows.Scan(&id, &g); err != nil {
				rows.Close()
				return err
			}
			byRecord[id] = append(byRecord[id], g)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	for _, r := range m.pending {
		id, _ := r[0].(int64)
		if err := m.out.record(m.w, m.first, m.cols, r, byRecord[id]); err != nil {
			return err
		}
		m.first = false
	}
	m.pending = m.pending[:0]
	return nil
}

type geoJSONOut struct{}

func (geoJSONOut) head(w io.Writer, _ string) error {
	_, err := io.WriteString(w, `{"type":"FeatureCollection","features":[`)
	return err
}

func (geoJSONOut) record(w io.Writer, first bool, cols []records.FieldRef, vals []any, geoms []string) error {
	props := make(map[string]any, len(cols))
	for i, c := range cols {
		props[c.Name] = vals[i]
	}
	pb, err := json.Marshal(props)
	if err != nil {
		return err
	}
	if len(geoms) == 0 {
		geoms = []string{"null"}
	}
	for _, g := range geoms {
		sep := ","
		if first {
			sep = ""
		}
		first = false
		if _, err := fmt.Fprintf(w, `%s{"type":"Feature","geometry":%s,"properties":%s}`, sep, g, pb); err != nil {
			return err
		}
	}
	return nil
}

func (geoJSONOut) tail(w io.Writer) error {
	_, err := io.WriteString(w, "]}\n")
	return err
}

// kmlOut writes KML 2.2; label is the column that names each Placemark.
type kmlOut struct{ label string }

func (kmlOut) head(w io.Writer, table string) error {
	_, err := fmt.Fprintf(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<kml xmlns=\"http://www.opengis.net/kml/2.2\"><Document><name>%s</name>\n", esc(table))
	return err
}

func (k kmlOut) record(w io.Writer, _ bool, cols []records.FieldRef, vals []any, geoms []string) error {
	var b strings.Builder
	name := ""
	for i, c := range cols {
		if c.Name == k.label {
			name = text(vals[i])
		}
	}
	if name == "" {
		name = text(vals[0])
	}
	b.WriteString("<Placemark><name>" + esc(name) + "</name><ExtendedData>")
	for i, c := range cols {
		b.WriteString(`<Data name="` + esc(c.Name) + `"><value>` + esc(text(vals[i])) + `</value></Data>`)
	}
	b.WriteString("</ExtendedData>")
	var gs []orb.Geometry
	for _, g := range geoms {
		parsed, err := geojson.UnmarshalGeometry([]byte(g))
		if err != nil {
			return fmt.Errorf("stored geodata: %w", err)
		}
		gs = append(gs, parsed.Geometry())
	}
	switch len(gs) {
	case 0:
	case 1:
		kmlGeometry(&b, gs[0])
	default:
		kmlGeometry(&b, orb.Collection(gs))
	}
	b.WriteString("</Placemark>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (kmlOut) tail(w io.Writer) error {
	_, err := io.WriteString(w, "</Document></kml>\n")
	return err
}

func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func kmlCoords(b *strings.Builder, ps []orb.Point) {
	b.WriteString("<coordinates>")
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatFloat(p[0], 'f', -1, 64) + "," + strconv.FormatFloat(p[1], 'f', -1, 64))
	}
	b.WriteString("</coordinates>")
}

// kmlGeometry writes g as KML: multi-geometries and collections as
// MultiGeometry.
func kmlGeometry(b *strings.Builder, g orb.Geometry) {
	switch g := g.(type) {
	case orb.Point:
		b.WriteString("<Point>")
		kmlCoords(b, []orb.Point{g})
		b.WriteString("</Point>")
	case orb.LineString:
		b.WriteString("<LineString>")
		kmlCoords(b, g)
		b.WriteString("</LineString>")
	case orb.Polygon:
		b.WriteString("<Polygon>")
		for i, r := range g {
			tag := "innerBoundaryIs"
			if i == 0 {
				tag = "outerBoundaryIs"
			}
			b.WriteString("<" + tag + "><LinearRing>")
			kmlCoords(b, r)
			b.WriteString("</LinearRing></" + tag + ">")
		}
		b.WriteString("</Polygon>")
	case orb.MultiPoint:
		multi(b, len(g), func(i int) orb.Geometry { return g[i] })
	case orb.MultiLineString:
		multi(b, len(g), func(i int) orb.Geometry { return g[i] })
	case orb.MultiPolygon:
		multi(b, len(g), func(i int) orb.Geometry { return g[i] })
	case orb.Collection:
		multi(b, len(g), func(i int) orb.Geometry { return g[i] })
	}
}

func multi(b *strings.Builder, n int, at func(int) orb.Geometry) {
	b.WriteString("<MultiGeometry>")
	for i := range n {
		kmlGeometry(b, at(i))
	}
	b.WriteString("</MultiGeometry>")
}
