// Package geo is the geodata area (SPEC §2.8, §4.5, §4.6; CONTRACT §5,
// §10): one table per app (sys_geodata) holds the features of every
// geo-enabled table, keyed by table and record id, each stored as WKT and
// GeoJSON with its bounding box in indexed columns.
//
// Geometries are parsed, checked and converted with github.com/paulmach/orb
// (the WKT and GeoJSON encodings, planar point-in-polygon); what orb does
// not have — a strict reading of GeoJSON coordinates that names what is
// wrong, the intersection test, the UTM and Web Mercator inverses — is
// here. Spatial queries narrow by the indexed box in SQL, then test the
// exact geometry in Go.
//
// Its routes: the map of a table (GET /geoface) with the records filter,
// a viewport (bbox) and the _intersects operator of the filter language;
// feature writes (/geoface/feature), which version the record; the map's
// layers (/config/geoface, /config/geofile).
package geo
