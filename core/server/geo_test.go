package server_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// geoDig is the dig fixture with finds geo-enabled.
func geoDig(t *testing.T, e store.Engine) *digFixture {
	t.Helper()
	f := newDig(t, e)
	if code, m := f.do(t, f.super, "PUT", "/dig/api/config/table/finds", `{"geodata":true,"preview":["label","weight"]}`); code != 200 {
		t.Fatalf("geodata flag: %d %v", code, m)
	}
	return f
}

func (f *digFixture) addFeature(t *testing.T, who, tb string, id int64, geometry string) int64 {
	t.Helper()
	code, m := f.do(t, who, "POST", "/dig/api/geoface/feature", fmt.Sprintf(`{"tb":%q,"id":%d,"geometry":%s}`, tb, id, geometry))
	if code != 200 || m["code"] != "ok_insert_geodata" {
		t.Fatalf("add feature %s: %d %v", geometry, code, m)
	}
	return int64(m["geo_id"].(float64))
}

// TestGeodataFeatures: every geometry type in and out (GeoJSON in, WKT and
// GeoJSON in the full record), bad geometries, who may write, updates and
// deletes, versions, and a record's delete and restore.
func TestGeodataFeatures(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := geoDig(t, e)
		const api = "/dig/api"
		id := f.create(t, f.writer, "finds", `{"label":"a"}`)
		shapes := map[string]string{
			`{"type":"Point","coordinates":[12.48,41.89]}`:                                                            "POINT(12.48 41.89)",
			`{"type":"MultiPoint","coordinates":[[12.1,41.1],[12.2,41.2]]}`:                                           "MULTIPOINT((12.1 41.1),(12.2 41.2))",
			`{"type":"LineString","coordinates":[[12,41],[12.5,41.5]]}`:                                               "LINESTRING(12 41,12.5 41.5)",
			`{"type":"MultiLineString","coordinates":[[[12,41],[12.5,41.5]],[[13,42],[13.1,42.1]]]}`:                  "MULTILINESTRING((12 41,12.5 41.5),(13 42,13.1 42.1))",
			`{"type":"Polygon","coordinates":[[[12,41],[13,41],[13,42],[12,42],[12,41]]]}`:                            "POLYGON((12 41,13 41,13 42,12 42,12 41))",
			`{"type":"MultiPolygon","coordinates":[[[[12,41],[13,41],[13,42],[12,41]]],[[[1,1],[2,1],[2,2],[1,1]]]]}`: "MULTIPOLYGON(((12 41,13 41,13 42,12 41)),((1 1,2 1,2 2,1 1)))",
			`{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,2]}]}`:                       "GEOMETRYCOLLECTION(POINT(1 2))",
			`"POINT(10 20)"`: "POINT(10 20)",
		}
		ids := map[int64]string{}
		for in, wkt := range shapes {
			ids[f.addFeature(t, f.writer, "finds", id, in)] = wkt
		}
		_, rec := f.do(t, f.reader, "GET", fmt.Sprintf("%s/record/finds/%d", api, id), "")
		gd := rec["geodata"].(map[string]any)
		if len(gd) != len(shapes) || rec["schema"].(map[string]any)["has_geodata"] != true {
			t.Fatalf("geodata section: %v", gd)
		}
		for fid, wkt := range ids {
			entry := gd[fmt.Sprint(fid)].(map[string]any)
			if entry["geometry"] != wkt || entry["id"] != float64(fid) {
				t.Fatalf("feature %d: %v, want %s", fid, entry, wkt)
			}
			if _, ok := entry["geojson"].(map[string]any)["type"]; !ok {
				t.Fatalf("feature %d geojson: %v", fid, entry["geojson"])
			}
		}

		for _, tc := range []struct {
			name, who, body string
			status          int
			code            string
		}{
			{"unclosed ring", f.writer, fmt.Sprintf(`{"tb":"finds","id":%d,"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1]]]}}`, id), 400, "geometry_too_few_points"},
			{"unclosed ring of four", f.writer, fmt.Sprintf(`{"tb":"finds","id":%d,"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}}`, id), 400, "geometry_ring_not_closed"},
			{"NaN", f.writer, fmt.Sprintf(`{"tb":"finds","id":%d,"geometry":"POINT(NaN 1)"}`, id), 400, "geometry_invalid_coordinate"},
			{"wrong nesting", f.writer, fmt.Sprintf(`{"tb":"finds","id":%d,"geometry":{"type":"LineString","coordinates":[1,2]}}`, id), 400, "geometry_invalid_nesting"},
			{"unknown type", f.writer, fmt.Sprintf(`{"tb":"finds","id":%d,"geometry":{"type":"Circle","coordinates":[1,2]}}`, id), 400, "geometry_unknown_type"},
			{"out of range", f.writer, fmt.Sprintf(`{"tb":"finds","id":%d,"geometry":{"type":"Point","coordinates":[500000,4600000]}}`, id), 400, "geometry_out_of_range"},
			{"no tb", f.writer, `{"id":1,"geometry":{"type":"Point","coordinates":[0,0]}}`, 400, "parameter_missing"},
			{"table without geodata", f.writer, `{"tb":"sites","id":1,"geometry":{"type":"Point","coordinates":[0,0]}}`, 400, "geodata_not_enabled"},
			{"no record", f.writer, `{"tb":"finds","id":99999,"geometry":{"type":"Point","coordinates":[0,0]}}`, 404, "record_not_found"},
			{"reader", f.reader, fmt.Sprintf(`{"tb":"finds","id":%d,"geometry":{"type":"Point","coordinates":[0,0]}}`, id), 403, "not_enough_privilege"},
			{"self_writer on another's record", f.self, fmt.Sprintf(`{"tb":"finds","id":%d,"geometry":{"type":"Point","coordinates":[0,0]}}`, id), 403, "not_enough_privilege"},
		} {
			if code, m := f.do(t, tc.who, "POST", api+"/geoface/feature", tc.body); code != tc.status || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}

		// Update and delete, all or nothing.
		var point int64
		for fid, wkt := range ids {
			if wkt == "POINT(12.48 41.89)" {
				point = fid
			}
		}
		if code, m := f.do(t, f.writer, "PUT", api+"/geoface/feature", fmt.Sprintf(`{"geodata":[{"id":%d,"geometry":{"type":"Point","coordinates":[12.5,41.9]}},{"id":99999,"geometry":{"type":"Point","coordinates":[1,1]}}]}`, point)); code != 404 || m["code"] != "geodata_not_found" {
			t.Fatalf("update with a missing feature: %d %v", code, m)
		}
		if code, m := f.do(t, f.writer, "PUT", api+"/geoface/feature", `{"geodata":[]}`); code != 400 || m["code"] != "parameter_missing" {
			t.Fatalf("empty update: %d %v", code, m)
		}
		if code, m := f.do(t, f.writer, "PUT", api+"/geoface/feature", fmt.Sprintf(`{"geodata":[{"id":%d,"geometry":{"type":"Point","coordinates":[12.5,41.9]}}]}`, point)); code != 200 || m["code"] != "ok_update_geometry" {
			t.Fatalf("update: %d %v", code, m)
		}
		_, rec = f.do(t, f.reader, "GET", fmt.Sprintf("%s/record/finds/%d", api, id), "")
		if g := rec["geodata"].(map[string]any)[fmt.Sprint(point)].(map[string]any)["geometry"]; g != "POINT(12.5 41.9)" {
			t.Fatalf("after update: %v", g)
		}
		if code, m := f.do(t, f.reader, "DELETE", api+"/geoface/feature", fmt.Sprintf(`{"ids":[%d]}`, point)); code != 403 {
			t.Fatalf("reader deletes: %d %v", code, m)
		}
		if code, m := f.do(t, f.writer, "DELETE", api+"/geoface/feature", fmt.Sprintf(`{"ids":[%d]}`, point)); code != 200 || m["code"] != "ok_delete_geodata" {
			t.Fatalf("delete: %d %v", code, m)
		}
		_, rec = f.do(t, f.reader, "GET", fmt.Sprintf("%s/record/finds/%d", api, id), "")
		if n := len(rec["geodata"].(map[string]any)); n != len(shapes)-1 {
			t.Fatalf("after delete: %d features", n)
		}

		// Every change left a version of the record with its features.
		_, vs := f.do(t, f.reader, "GET", fmt.Sprintf("%s/record/finds/%d/versions?per_page=100", api, id), "")
		geoVersions := 0
		for _, v := range vs["versions"].([]any) {
			if v.(map[string]any)["operation"] == "geodata" {
				geoVersions++
			}
		}
		if geoVersions != len(shapes)+2 {
			t.Fatalf("geodata versions: %d", geoVersions)
		}

		// The record's delete takes its features; restoring the delete's
		// version brings them back with their ids.
		if code, m := f.do(t, f.writer, "DELETE", fmt.Sprintf("%s/record/finds/%d", api, id), ""); code != 200 {
			t.Fatalf("delete record: %d %v", code, m)
		}
		var left int
		if err := f.app.DB.QueryRow(t.Context(), `SELECT COUNT(*) FROM `+f.app.DB.Sys("geodata")+` WHERE record_id = ?`, id).Scan(&left); err != nil || left != 0 {
			t.Fatalf("features of a deleted record: %d %v", left, err)
		}
		_, del := f.do(t, f.reader, "GET", api+"/record/finds/deleted", "")
		vid := del["deleted"].([]any)[0].(map[string]any)["id"]
		if code, m := f.do(t, f.super, "POST", fmt.Sprintf("%s/version/%v/restore", api, vid), `{}`); code != 200 {
			t.Fatalf("restore: %d %v", code, m)
		}
		_, rec = f.do(t, f.reader, "GET", fmt.Sprintf("%s/record/finds/%d", api, id), "")
		back := rec["geodata"].(map[string]any)
		if len(back) != len(shapes)-1 {
			t.Fatalf("restored features: %v", back)
		}
		for fid, wkt := range ids {
			if fid == point {
				continue
			}
			if back[fmt.Sprint(fid)].(map[string]any)["geometry"] != wkt {
				t.Fatalf("restored feature %d: %v", fid, back[fmt.Sprint(fid)])
			}
		}
		// A new feature after a restore gets an id no feature had.
		if n := f.addFeature(t, f.writer, "finds", id, `{"type":"Point","coordinates":[1,1]}`); ids[n] != "" || n == point {
			t.Fatalf("a new feature reused id %d", n)
		}
	})
}

// TestGeofaceQueries: the map of a table follows the list filter and the
// caller's row subset; its viewport (bbox) and the _intersects operator
// (on the map and on the records list) agree with a brute-force answer on
// random data.
func TestGeofaceQueries(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := geoDig(t, e)
		const api = "/dig/api"
		r := rand.New(rand.NewPCG(7, uint64(len(e))))
		type feat struct {
			rec    int64
			label  string
			kind   string
			x0, y0 float64 // point, or box corner, or segment start
			x1, y1 float64 // box corner, or segment end
		}
		var feats []feat
		for i := 0; i < 60; i++ {
			label := []string{"a", "b", "c"}[i%3]
			rec := f.create(t, f.writer, "finds", fmt.Sprintf(`{"label":%q}`, label))
			for k := 0; k < 1+i%2; k++ {
				ft := feat{rec: rec, label: label, x0: r.Float64() * 10, y0: r.Float64() * 10}
				var geom string
				switch (i + k) % 3 {
				case 0:
					ft.kind = "point"
					geom = fmt.Sprintf(`{"type":"Point","coordinates":[%g,%g]}`, ft.x0, ft.y0)
				case 1:
					ft.kind = "box"
					ft.x1, ft.y1 = ft.x0+r.Float64()*2, ft.y0+r.Float64()*2
					geom = fmt.Sprintf(`{"type":"Polygon","coordinates":[[[%g,%g],[%g,%g],[%g,%g],[%g,%g],[%g,%g]]]}`,
						ft.x0, ft.y0, ft.x1, ft.y0, ft.x1, ft.y1, ft.x0, ft.y1, ft.x0, ft.y0)
				default:
					ft.kind = "segment"
					ft.x1, ft.y1 = ft.x0+r.Float64()*3-1.5, ft.y0+r.Float64()*3-1.5
					geom = fmt.Sprintf(`{"type":"LineString","coordinates":[[%g,%g],[%g,%g]]}`, ft.x0, ft.y0, ft.x1, ft.y1)
				}
				f.addFeature(t, f.writer, "finds", rec, geom)
				feats = append(feats, ft)
			}
		}
		// meets is the brute force: points and boxes by comparisons, a
		// segment by clipping it to the box (Liang–Barsky).
		meets := func(ft feat, bx0, by0, bx1, by1 float64) bool {
			switch ft.kind {
			case "point":
				return ft.x0 >= bx0 && ft.x0 <= bx1 && ft.y0 >= by0 && ft.y0 <= by1
			case "box":
				return ft.x0 <= bx1 && ft.x1 >= bx0 && ft.y0 <= by1 && ft.y1 >= by0
			}
			t0, t1 := 0.0, 1.0
			dx, dy := ft.x1-ft.x0, ft.y1-ft.y0
			for _, pq := range [][2]float64{{-dx, ft.x0 - bx0}, {dx, bx1 - ft.x0}, {-dy, ft.y0 - by0}, {dy, by1 - ft.y0}} {
				p, q := pq[0], pq[1]
				if p == 0 {
					if q < 0 {
						return false
					}
					continue
				}
				u := q / p
				if p < 0 {
					t0 = max(t0, u)
				} else {
					t1 = min(t1, u)
				}
				if t0 > t1 {
					return false
				}
			}
			return true
		}
		for trial := 0; trial < 25; trial++ {
			bx0, by0 := r.Float64()*9, r.Float64()*9
			bx1, by1 := bx0+r.Float64()*4, by0+r.Float64()*4
			bbox := fmt.Sprintf("%g,%g,%g,%g", bx0, by0, bx1, by1)
			var wantFeats, wantRecs []int64
			for _, ft := range feats {
				if meets(ft, bx0, by0, bx1, by1) && ft.label != "c" {
					wantFeats = append(wantFeats, ft.rec)
					if !slices.Contains(wantRecs, ft.rec) {
						wantRecs = append(wantRecs, ft.rec)
					}
				}
			}
			slices.Sort(wantFeats)
			slices.Sort(wantRecs)
			// The viewport, with a list filter.
			code, m := f.do(t, f.reader, "GET", api+"/geoface?tb=finds&bbox="+bbox+"&filter[label][_neq]=c", "")
			if code != 200 {
				t.Fatalf("viewport: %d %v", code, m)
			}
			var gotFeats []int64
			for _, x := range m["geojson"].(map[string]any)["features"].([]any) {
				gotFeats = append(gotFeats, int64(x.(map[string]any)["properties"].(map[string]any)["id"].(float64)))
			}
			slices.Sort(gotFeats)
			if !slices.Equal(gotFeats, wantFeats) {
				t.Fatalf("viewport %s: features of %v, want %v", bbox, gotFeats, wantFeats)
			}
			// _intersects on the records list, as a bbox and as a GeoJSON polygon.
			poly := fmt.Sprintf(`{"type":"Polygon","coordinates":[[[%g,%g],[%g,%g],[%g,%g],[%g,%g],[%g,%g]]]}`, bx0, by0, bx1, by0, bx1, by1, bx0, by1, bx0, by0)
			for _, operand := range []string{bbox, poly} {
				q := url.Values{"filter[geodata][_intersects]": {operand}, "filter[label][_neq]": {"c"}, "ids_only": {"1"}}
				code, m := f.do(t, f.reader, "GET", api+"/records/finds?"+q.Encode(), "")
				if code != 200 {
					t.Fatalf("_intersects %s: %d %v", operand, code, m)
				}
				got := []int64{}
				for _, x := range m["ids"].([]any) {
					got = append(got, int64(x.(float64)))
				}
				slices.Sort(got)
				if !slices.Equal(got, append([]int64{}, wantRecs...)) && !(len(got) == 0 && len(wantRecs) == 0) {
					t.Fatalf("_intersects %s: %v, want %v", operand, got, wantRecs)
				}
			}
		}
		// The JSON form of the filter, on the map.
		jf, _ := json.Marshal(map[string]any{"geodata": map[string]any{"_intersects": []float64{0, 0, 10, 10}}, "label": map[string]any{"_eq": "a"}})
		code, m := f.do(t, f.reader, "GET", api+"/geoface?tb=finds&filter="+url.QueryEscape(string(jf)), "")
		if code != 200 {
			t.Fatalf("JSON filter: %d %v", code, m)
		}
		for _, x := range m["geojson"].(map[string]any)["features"].([]any) {
			p := x.(map[string]any)["properties"].(map[string]any)
			if p["Label"] != "a" || p["geo_id"] == nil {
				t.Fatalf("feature properties: %v", p)
			}
		}
		meta := m["meta"].(map[string]any)
		if meta["tb_id"] != "finds" || meta["canUserEdit"] != false || fmt.Sprint(meta["preview_fields"]) != "[Label Weight (g)]" {
			t.Fatalf("meta: %v", meta)
		}

		// The reader's row subset hides features from the map and from _intersects.
		reader := f.userID(t, "reader@example.org")
		if code, m := f.do(t, f.super, "POST", fmt.Sprintf("%s/user/%d/privileges", api, reader), `{"table_name":"finds","privilege":30,"subset":{"label":{"_eq":"b"}}}`); code != 200 {
			t.Fatalf("subset: %d %v", code, m)
		}
		_, m = f.do(t, f.reader, "GET", api+"/geoface?tb=finds", "")
		for _, x := range m["geojson"].(map[string]any)["features"].([]any) {
			if p := x.(map[string]any)["properties"].(map[string]any); p["Label"] != "b" {
				t.Fatalf("a feature outside the subset: %v", p)
			}
		}

		for _, tc := range []struct {
			name, url string
			status    int
			code      string
		}{
			{"no table", api + "/geoface", 400, "parameter_missing"},
			{"unknown table", api + "/geoface?tb=nowhere", 404, "table_not_found"},
			{"bad bbox", api + "/geoface?tb=finds&bbox=1,2,3", 400, "invalid_parameter"},
			{"inverted bbox", api + "/geoface?tb=finds&bbox=5,5,1,1", 400, "invalid_parameter"},
			{"bad _intersects", api + "/records/finds?filter[geodata][_intersects]=east", 400, "invalid_filter"},
			{"bad geometry in _intersects", api + "/records/finds?" + url.Values{"filter[geodata][_intersects]": {`{"type":"Polygon","coordinates":[[[0,0],[1,1]]]}`}}.Encode(), 400, "geometry_too_few_points"},
			{"_intersects on a table without geodata", api + "/records/sites?filter[geodata][_intersects]=0,0,1,1", 400, "invalid_filter"},
			{"_intersects on a field", api + "/records/finds?filter[label][_intersects]=0,0,1,1", 400, "invalid_filter"},
		} {
			if code, m := f.do(t, f.super, "GET", tc.url, ""); code != tc.status || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		_ = strings.TrimSpace
	})
}

// TestGeofaceWithoutGeodata: BraDypUS's client offers "View on map" for
// every table, and BraDypUS answers a table without geodata with an empty
// collection; so does GET /geoface (CONTRACT §9/§10), with reason and
// message saying why and no drawing offered. A table with geodata answers
// as before (no reason); bad input is still refused.
func TestGeofaceWithoutGeodata(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := geoDig(t, e)
		const api = "/dig/api"
		id := f.create(t, f.writer, "finds", `{"label":"a"}`)
		f.addFeature(t, f.writer, "finds", id, `{"type":"Point","coordinates":[12.48,41.89]}`)
		f.create(t, f.writer, "sites", `{"name":"Veii"}`)
		for _, tc := range []struct {
			name, who, tb string
			features      int
			reason        any // nil: no reason key
			canEdit       bool
		}{
			{"without geodata, reader", f.reader, "sites", 0, "geodata_not_enabled", false},
			{"without geodata, super admin", f.super, "sites", 0, "geodata_not_enabled", false},
			{"with geodata, reader", f.reader, "finds", 1, nil, false},
			{"with geodata, writer", f.writer, "finds", 1, nil, true},
		} {
			code, m := f.do(t, tc.who, "GET", api+"/geoface?tb="+tc.tb, "")
			if code != 200 || m["status"] != "success" {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
			gj, _ := m["geojson"].(map[string]any)
			features, ok := gj["features"].([]any)
			if gj["type"] != "FeatureCollection" || !ok || len(features) != tc.features {
				t.Fatalf("%s: geojson %v, want %d features", tc.name, m["geojson"], tc.features)
			}
			reason, has := m["reason"]
			if reason != tc.reason || has != (tc.reason != nil) {
				t.Fatalf("%s: reason %v (present %v), want %v", tc.name, reason, has, tc.reason)
			}
			if msg, _ := m["message"].(string); (tc.reason != nil) != (msg != "") {
				t.Fatalf("%s: message %q", tc.name, msg)
			}
			meta, _ := m["meta"].(map[string]any)
			if meta["tb_id"] != tc.tb || meta["canUserEdit"] != tc.canEdit || m["truncated"] != false {
				t.Fatalf("%s: meta %v, truncated %v", tc.name, meta, m["truncated"])
			}
			for _, k := range []string{"tb_label", "id_field", "preview_fields", "layers", "has_fuzzy_date"} {
				if _, ok := meta[k]; !ok {
					t.Fatalf("%s: meta without %s: %v", tc.name, k, meta)
				}
			}
		}
		// Bad input on a table without geodata is still refused, and the
		// features themselves still are.
		for _, tc := range []struct {
			name, method, url, body string
			status                  int
			code                    string
		}{
			{"unknown table", "GET", api + "/geoface?tb=nowhere", "", 404, "table_not_found"},
			{"bad bbox", "GET", api + "/geoface?tb=sites&bbox=1,2,3", "", 400, "invalid_parameter"},
			{"bad filter", "GET", api + "/geoface?tb=sites&filter[nofield][_eq]=1", "", 400, "invalid_field"},
			{"a feature", "POST", api + "/geoface/feature", `{"tb":"sites","id":1,"geometry":{"type":"Point","coordinates":[0,0]}}`, 400, "geodata_not_enabled"},
		} {
			if code, m := f.do(t, f.super, tc.method, tc.url, tc.body); code != tc.status || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
	})
}

// TestGeofaceLayers: the map's layers are checked and kept, vector files
// uploaded, served by a signed link, and deleted with their layers.
func TestGeofaceLayers(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := geoDig(t, e)
		const api = "/dig/api"
		for _, tc := range []struct{ name, body, detail string }{
			{"no label", `[{"type":"tiles","path":"https://t/{z}/{x}/{y}.png"}]`, "label"},
			{"unknown type", `[{"label":"x","type":"vector","path":"https://t"}]`, "type"},
			{"tiles without placeholders", `[{"label":"x","type":"tiles","path":"https://t/tiles.png"}]`, "{z}"},
			{"not http", `[{"label":"x","type":"tiles","path":"javascript:alert(1)/{z}/{x}/{y}"}]`, "http"},
			{"wms without layers", `[{"label":"x","type":"wms","path":"https://w/wms"}]`, "wmslayers"},
			{"unknown file", `[{"label":"x","type":"local","path":"nope.geojson"}]`, "geofile"},
			{"bad role", `[{"label":"x","type":"tiles","layertype":"middle","path":"https://t/{z}/{x}/{y}"}]`, "layertype"},
			{"bad color", `[{"label":"x","type":"tiles","path":"https://t/{z}/{x}/{y}","style":{"color":"red;}"}}]`, "color"},
			{"bad opacity", `[{"label":"x","type":"tiles","path":"https://t/{z}/{x}/{y}","opacity":2}]`, "opacity"},
		} {
			code, m := f.do(t, f.super, "PUT", api+"/config/geoface", tc.body)
			if code != 400 || m["code"] != "invalid_layer" || !strings.Contains(fmt.Sprint(m["detail"]), tc.detail) {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		if code, _ := f.do(t, f.writer, "GET", api+"/config/geoface", ""); code != 403 {
			t.Fatalf("writer reads the map config: %d", code)
		}
		// A vector file, then a layer showing it.
		if code, m := f.upload(t, f.super, api+"/config/geofile", "file", "walls.geojson", []byte(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1]]]}}]}`)); code != 400 || m["code"] != "geometry_too_few_points" {
			t.Fatalf("bad geofile: %d %v", code, m)
		}
		if code, m := f.upload(t, f.super, api+"/config/geofile", "file", "walls.exe", []byte(`{}`)); code != 400 || m["code"] != "invalid_geofile" {
			t.Fatalf("bad name: %d %v", code, m)
		}
		walls := `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"n":1},"geometry":{"type":"LineString","coordinates":[[12,41],[12.1,41.1]]}}]}`
		if code, m := f.upload(t, f.super, api+"/config/geofile", "file", "walls.geojson", []byte(walls)); code != 200 || m["filename"] != "walls.geojson" {
			t.Fatalf("geofile: %d %v", code, m)
		}
		layers := `[{"label":"OSM","type":"tiles","layertype":"base","path":"https://tile.openstreetmap.org/{z}/{x}/{y}.png"},` +
			`{"label":"Geology","type":"wms","path":"https://wms.example.org/wms","wmslayers":"geo"},` +
			`{"label":"Walls","type":"local","path":"walls.geojson","style":{"color":"#ff0000","weight":2}}]`
		if code, m := f.do(t, f.super, "PUT", api+"/config/geoface", layers); code != 200 || m["code"] != "ok_geoface_updated" {
			t.Fatalf("save layers: %d %v", code, m)
		}
		_, m := f.do(t, f.super, "GET", api+"/config/geoface", "")
		if len(m["layers"].([]any)) != 3 || fmt.Sprint(m["local_files"]) != "[walls.geojson]" {
			t.Fatalf("config: %v", m)
		}
		// The map shows the layers; the file's path is a signed link that
		// works without the Authorization header.
		_, m = f.do(t, f.reader, "GET", api+"/geoface?tb=finds", "")
		ls := m["meta"].(map[string]any)["layers"].([]any)
		local := ls[2].(map[string]any)["path"].(string)
		if !strings.HasPrefix(local, api+"/geofile/walls.geojson?t=") {
			t.Fatalf("local layer path: %s", local)
		}
		if rec := f.send(t, "", "GET", local, nil, nil); rec.Code != 200 || rec.Body.String() != walls || rec.Header().Get("Content-Security-Policy") != "sandbox" {
			t.Fatalf("signed geofile: %d %s", rec.Code, rec.Body.String())
		}
		if rec := f.send(t, "", "GET", api+"/geofile/walls.geojson", nil, nil); rec.Code != 401 {
			t.Fatalf("unsigned geofile: %d", rec.Code)
		}
		// Deleting the file takes its layer.
		if code, m := f.do(t, f.super, "DELETE", api+"/config/geofile", `{"file":"walls.geojson"}`); code != 200 || m["code"] != "ok_geofile_deleted" {
			t.Fatalf("delete geofile: %d %v", code, m)
		}
		if code, m := f.do(t, f.super, "DELETE", api+"/config/geofile", `{"file":"walls.geojson"}`); code != 404 || m["code"] != "geofile_not_found" {
			t.Fatalf("delete again: %d %v", code, m)
		}
		_, m = f.do(t, f.super, "GET", api+"/config/geoface", "")
		if len(m["layers"].([]any)) != 2 {
			t.Fatalf("layers after the file went: %v", m["layers"])
		}
	})
}

// TestGeoJSONImport: a preview, then features attached to the records
// their property names (and records created for the others), in UTM 33N
// converted to degrees; a dry run and a failing import write nothing.
func TestGeoJSONImport(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := geoDig(t, e)
		const api = "/dig/api"
		a := f.create(t, f.writer, "finds", `{"label":"A1"}`)
		f.addFeature(t, f.writer, "finds", a, `{"type":"Point","coordinates":[1,1]}`)
		// 33N: the central meridian (15°E) at the equator is 500000 0;
		// 291000 4641000 is near Rome (about 12.5°E 41.9°N).
		file := `{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::32633"}},"features":[
			{"type":"Feature","properties":{"code":"A1"},"geometry":{"type":"Point","coordinates":[500000,0]}},
			{"type":"Feature","properties":{"code":"A1"},"geometry":{"type":"LineString","coordinates":[[291000,4641000],[291100,4641100]]}},
			{"type":"Feature","properties":{"code":"B2"},"geometry":{"type":"Polygon","coordinates":[[[291000,4641000],[291100,4641000],[291100,4641100],[291000,4641000]]]}},
			{"type":"Feature","properties":{"other":1},"geometry":{"type":"Point","coordinates":[500000,100]}}]}`
		preview := func(content string) string {
			code, m := f.uploadWith(t, f.super, api+"/import/preview-file", map[string]string{"type": "geojson", "tb": "finds"}, "file", "x.geojson", []byte(content))
			if code != 200 {
				t.Fatalf("preview: %d %v", code, m)
			}
			if m["count"] != float64(4) || fmt.Sprint(m["geometry_types"]) != "[LineString Point Polygon]" || fmt.Sprint(m["geo_props"]) != "[code other]" ||
				m["crs"] != "EPSG:32633" || m["geo_field"] != "geodata" {
				t.Fatalf("preview answer: %v", m)
			}
			return m["temp_id"].(string)
		}
		// Not found without create_missing; a dry run writes nothing.
		tok := preview(file)
		code, m := f.do(t, f.super, "POST", api+"/import/geojson", fmt.Sprintf(`{"temp_id":%q,"tb":"finds","geo_prop":"code","key_field":"label","dry_run":true}`, tok))
		if code != 200 || m["code"] != "ok_import_checked" || m["updated"] != float64(2) || m["not_found"] != float64(2) {
			t.Fatalf("dry run: %d %v", code, m)
		}
		_, rec := f.do(t, f.reader, "GET", fmt.Sprintf("%s/record/finds/%d", api, a), "")
		if len(rec["geodata"].(map[string]any)) != 1 {
			t.Fatalf("a dry run wrote: %v", rec["geodata"])
		}
		code, m = f.do(t, f.super, "POST", api+"/import/geojson", fmt.Sprintf(`{"temp_id":%q,"tb":"finds","geo_prop":"code","key_field":"label","create_missing":true}`, tok))
		if code != 200 || m["code"] != "ok_import_geojson" || m["total"] != float64(4) || m["updated"] != float64(2) || m["created"] != float64(1) || m["not_found"] != float64(1) {
			t.Fatalf("import: %d %v", code, m)
		}
		// A1's features were replaced by the file's two, in degrees.
		_, rec = f.do(t, f.reader, "GET", fmt.Sprintf("%s/record/finds/%d", api, a), "")
		var wkts []string
		for _, g := range rec["geodata"].(map[string]any) {
			wkts = append(wkts, g.(map[string]any)["geometry"].(string))
		}
		slices.Sort(wkts)
		if len(wkts) != 2 || wkts[1] != "POINT(15 0)" || !strings.HasPrefix(wkts[0], "LINESTRING(12.48") {
			t.Fatalf("imported features: %v", wkts)
		}
		// B2 was created with its feature.
		ids := f.ids(t, f.reader, api+"/records/finds?filter[label][_eq]=B2")
		if len(ids) != 1 {
			t.Fatalf("created record: %v", ids)
		}
		_, rec = f.do(t, f.reader, "GET", fmt.Sprintf("%s/record/finds/%d", api, ids[0]), "")
		if len(rec["geodata"].(map[string]any)) != 1 {
			t.Fatalf("created record's features: %v", rec["geodata"])
		}
		// Errors: nothing written.
		for _, tc := range []struct {
			name, body string
			status     int
			code       string
		}{
			{"no key field", fmt.Sprintf(`{"temp_id":%q,"tb":"finds","geo_prop":"code"}`, preview(file)), 400, "parameter_missing"},
			{"unknown key field", fmt.Sprintf(`{"temp_id":%q,"tb":"finds","geo_prop":"code","key_field":"nope"}`, preview(file)), 400, "import_error_invalid_field"},
			{"table without geodata", fmt.Sprintf(`{"temp_id":%q,"tb":"sites","geo_prop":"code","key_field":"name"}`, preview(file)), 400, "geodata_not_enabled"},
			{"unknown crs", fmt.Sprintf(`{"temp_id":%q,"tb":"finds","geo_prop":"code","key_field":"label","crs":"EPSG:2100"}`, preview(file)), 400, "unsupported_crs"},
			{"gone preview", `{"temp_id":"nope","tb":"finds","geo_prop":"code","key_field":"label"}`, 404, "import_error_no_file"},
			// A new record that would not save (label is at most 5 characters) fails the whole import.
			{"a record that would not save", fmt.Sprintf(`{"temp_id":%q,"tb":"finds","geo_prop":"other","key_field":"label","create_missing":true}`,
				preview(strings.ReplaceAll(file, `"other":1`, `"other":"toolongvalue"`))), 400, "validation_failed"},
		} {
			if code, m := f.do(t, f.super, "POST", api+"/import/geojson", tc.body); code != tc.status || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		if n := len(f.ids(t, f.reader, api+"/records/finds")); n != 2 {
			t.Fatalf("records after the failed imports: %d", n)
		}
		// A bad geometry is refused at the preview, naming the feature.
		code, m = f.uploadWith(t, f.super, api+"/import/preview-file", map[string]string{"type": "geojson"}, "file", "x.geojson",
			[]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[1,1]}},{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[200,1]}}]}`))
		if code != 400 || m["code"] != "geometry_out_of_range" || m["index"] != float64(1) {
			t.Fatalf("bad preview: %d %v", code, m)
		}
	})
}

// TestGeoExport: GeoJSON and KML exports of the current selection, the
// spatial filter included.
func TestGeoExport(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := geoDig(t, e)
		a := f.create(t, f.writer, "finds", `{"label":"a & b","weight":3}`)
		f.addFeature(t, f.writer, "finds", a, `{"type":"Point","coordinates":[12.5,41.9]}`)
		f.addFeature(t, f.writer, "finds", a, `{"type":"Polygon","coordinates":[[[12,41],[13,41],[13,42],[12,41]]]}`)
		b := f.create(t, f.writer, "finds", `{"label":"b"}`)
		f.addFeature(t, f.writer, "finds", b, `{"type":"LineString","coordinates":[[1,1],[2,2]]}`)
		f.create(t, f.writer, "finds", `{"label":"none"}`)

		rec := f.export(t, f.reader, "finds", "format=geojson&columns=id,label")
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/geo+json" {
			t.Fatalf("geojson: %d %s", rec.Code, rec.Body.String())
		}
		var fc struct {
			Type     string `json:"type"`
			Features []struct {
				Geometry   map[string]any `json:"geometry"`
				Properties map[string]any `json:"properties"`
			} `json:"features"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &fc); err != nil || fc.Type != "FeatureCollection" || len(fc.Features) != 4 {
			t.Fatalf("geojson body: %v %s", err, rec.Body.String())
		}
		if fc.Features[0].Properties["label"] != "a & b" || fc.Features[0].Geometry["type"] != "Point" || fc.Features[3].Geometry != nil {
			t.Fatalf("geojson features: %+v", fc.Features)
		}
		// The selection: only the records meeting a box.
		rec = f.export(t, f.reader, "finds", "format=geojson&"+url.Values{"filter[geodata][_intersects]": {"0,0,5,5"}}.Encode())
		if err := json.Unmarshal(rec.Body.Bytes(), &fc); err != nil || len(fc.Features) != 1 || fc.Features[0].Properties["label"] != "b" {
			t.Fatalf("filtered geojson: %s", rec.Body.String())
		}
		rec = f.export(t, f.reader, "finds", "format=kml&columns=id,label")
		body := rec.Body.String()
		if rec.Code != 200 || !strings.Contains(body, `<kml xmlns="http://www.opengis.net/kml/2.2">`) ||
			!strings.Contains(body, `<Data name="label"><value>a &amp; b</value></Data>`) ||
			!strings.Contains(body, "<MultiGeometry><Point><coordinates>12.5,41.9</coordinates></Point><Polygon><outerBoundaryIs><LinearRing><coordinates>12,41 13,41 13,42 12,41</coordinates>") ||
			strings.Count(body, "<Placemark>") != 3 {
			t.Fatalf("kml: %d %s", rec.Code, body)
		}
		if rec := f.export(t, f.reader, "finds", "format=shp"); rec.Code != 400 || !strings.Contains(rec.Body.String(), `"kml"`) {
			t.Fatalf("unknown format: %d %s", rec.Code, rec.Body.String())
		}
	})
}

// TestGeoJSONDryRunKeepsIDs: as an import's (TestImportDryRunKeepsIDs), a
// GeoJSON dry run is rolled back, and on PostgreSQL it took from the real
// import the ids of the features, versions and created records. The ids
// after dry runs and the import are those of the import alone.
func TestGeoJSONDryRunKeepsIDs(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		file := `{"type":"FeatureCollection","features":[
			{"type":"Feature","properties":{"code":"A1"},"geometry":{"type":"Point","coordinates":[1,1]}},
			{"type":"Feature","properties":{"code":"A1"},"geometry":{"type":"Point","coordinates":[2,2]}},
			{"type":"Feature","properties":{"code":"B2"},"geometry":{"type":"Point","coordinates":[3,3]}}]}`
		run := func(t *testing.T, dryRuns int) (ids string) {
			f := geoDig(t, e)
			const api = "/dig/api"
			f.create(t, f.writer, "finds", `{"label":"A1"}`)
			_, m := f.uploadWith(t, f.super, api+"/import/preview-file", map[string]string{"type": "geojson", "tb": "finds"}, "file", "x.geojson", []byte(file))
			body := fmt.Sprintf(`{"temp_id":%q,"tb":"finds","geo_prop":"code","key_field":"label","create_missing":true`, m["temp_id"])
			for range dryRuns {
				if code, m := f.do(t, f.super, "POST", api+"/import/geojson", body+`,"dry_run":true}`); code != 200 || m["created"] != float64(1) {
					t.Fatalf("dry run: %d %v", code, m)
				}
			}
			if code, m := f.do(t, f.super, "POST", api+"/import/geojson", body+`}`); code != 200 || m["created"] != float64(1) {
				t.Fatalf("import: %d %v", code, m)
			}
			db := f.app.DB
			return ids + idPairs(t, db, `SELECT id, label FROM `+db.Qualify("finds"), `SELECT id, record_id FROM `+db.Sys("versions"),
				`SELECT id, record_id FROM `+db.Sys("geodata"))
		}
		want := run(t, 0)
		if got := run(t, 2); got != want {
			t.Fatalf("ids after dry runs:\n%s\nwithout:\n%s", got, want)
		}
	})
}
