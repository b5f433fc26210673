-- Geodata (core/geo, SPEC §2.8): one table for the features of every
-- geo-enabled table, keyed by table and record. A feature is kept as WKT
-- and as GeoJSON (both answered as stored) with its bounding box in
-- EPSG:4326, indexed so that a viewport narrows by box before the exact
-- test.
CREATE TABLE sys_geodata (
    id        BIGSERIAL PRIMARY KEY,
    tb        TEXT NOT NULL,
    record_id BIGINT NOT NULL,
    geometry  TEXT NOT NULL,
    geojson   TEXT NOT NULL,
    min_x     DOUBLE PRECISION NOT NULL,
    min_y     DOUBLE PRECISION NOT NULL,
    max_x     DOUBLE PRECISION NOT NULL,
    max_y     DOUBLE PRECISION NOT NULL
);
CREATE INDEX sys_geodata_record ON sys_geodata (tb, record_id);
CREATE INDEX sys_geodata_box ON sys_geodata (tb, min_x, max_x, min_y, max_y);
-- The built-in box type's GiST index answers "boxes overlapping this one"
-- on both axes at once (no PostGIS needed); core/geo's viewport uses it.
CREATE INDEX sys_geodata_gist ON sys_geodata USING gist (box(point(min_x, min_y), point(max_x, max_y)));

-- Vector files shown as map layers (/config/geofile): GeoJSON, KML or GPX,
-- kept in the app's database so that its backup holds them.
CREATE TABLE sys_geofiles (
    name       TEXT PRIMARY KEY,
    mime       TEXT NOT NULL,
    content    TEXT NOT NULL,
    size       BIGINT NOT NULL,
    created_at timestamptz NOT NULL
);
