-- The catalog of user tables and fields. Names are the stable handles the
-- API uses; every table and field also has an id, so a rename updates one
-- row (and the references listed in schema.Rename) instead of drop + add.
CREATE TABLE sys_tables (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    name                TEXT NOT NULL,
    label               TEXT NOT NULL DEFAULT '',
    sort                INTEGER NOT NULL DEFAULT 0,
    id_field            TEXT NULL,
    preview             TEXT NOT NULL DEFAULT '[]',
    rs                  INTEGER NOT NULL DEFAULT 0,
    geodata             INTEGER NOT NULL DEFAULT 0,
    refmgr              INTEGER NOT NULL DEFAULT 0,
    chrono_density_path TEXT NOT NULL DEFAULT '[]',
    backlinks           TEXT NOT NULL DEFAULT '[]',
    is_plugin           INTEGER NOT NULL DEFAULT 0,
    plugin_of           TEXT NULL,
    created_at          DATETIME NOT NULL,
    updated_at          DATETIME NOT NULL
);
CREATE UNIQUE INDEX sys_tables_name_uq ON sys_tables (name);

CREATE TABLE sys_fields (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    table_id           INTEGER NOT NULL REFERENCES sys_tables (id) ON DELETE CASCADE,
    name               TEXT NOT NULL,
    label              TEXT NOT NULL DEFAULT '',
    type               TEXT NOT NULL,
    db_type            TEXT NOT NULL,
    sort               INTEGER NOT NULL DEFAULT 0,
    readonly           INTEGER NOT NULL DEFAULT 0,
    hide               INTEGER NOT NULL DEFAULT 0,
    vocabulary_set     TEXT NULL,
    get_values_from_tb TEXT NULL,
    id_from_tb         TEXT NULL,
    widget             TEXT NULL,
    required           INTEGER NOT NULL DEFAULT 0,
    is_unique          INTEGER NOT NULL DEFAULT 0,
    min_value          REAL NULL,
    max_value          REAL NULL,
    max_length         INTEGER NULL,
    pattern            TEXT NULL,
    def_value          TEXT NULL,
    help               TEXT NULL,
    extra              TEXT NOT NULL DEFAULT '{}',
    created_at         DATETIME NOT NULL,
    updated_at         DATETIME NOT NULL
);
CREATE UNIQUE INDEX sys_fields_name_uq ON sys_fields (table_id, name);
