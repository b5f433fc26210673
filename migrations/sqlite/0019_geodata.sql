-- Geodata (core/geo, SPEC §2.8): one table for the features of every
-- geo-enabled table, keyed by table and record. A feature is kept as WKT
-- and as GeoJSON (both answered as stored) with its bounding box in
-- EPSG:4326, indexed so that a viewport narrows by box before the exact
-- test.
CREATE TABLE sys_geodata (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    tb        TEXT NOT NULL,
    record_id INTEGER NOT NULL,
    geometry  TEXT NOT NULL,
    geojson   TEXT NOT NULL,
    min_x     REAL NOT NULL,
    min_y     REAL NOT NULL,
    max_x     REAL NOT NULL,
    max_y     REAL NOT NULL
);
CREATE INDEX sys_geodata_record ON sys_geodata (tb, record_id);
-- Covering: a viewport reads the range of min_x and tests the other three
-- from the index, without touching the rows.
CREATE INDEX sys_geodata_box ON sys_geodata (tb, min_x, max_x, min_y, max_y);

-- Vector files shown as map layers (/config/geofile): GeoJSON, KML or GPX,
-- kept in the app's database so that its backup holds them.
CREATE TABLE sys_geofiles (
    name       TEXT PRIMARY KEY,
    mime       TEXT NOT NULL,
    content    TEXT NOT NULL,
    size       INTEGER NOT NULL,
    created_at DATETIME NOT NULL
);
