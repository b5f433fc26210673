-- Relations between user tables (foreign keys: real constraints where the
-- engine allows adding them, and always recorded here) and user-defined
-- indexes. Tables and columns are named; renames update these rows.
CREATE TABLE sys_relations (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    from_tb    TEXT NOT NULL,
    from_col   TEXT NOT NULL,
    to_tb      TEXT NOT NULL,
    to_col     TEXT NOT NULL DEFAULT 'id',
    on_delete  TEXT NOT NULL DEFAULT 'restrict',
    on_update  TEXT NOT NULL DEFAULT 'restrict',
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX sys_relations_from_uq ON sys_relations (from_tb, from_col);

CREATE TABLE sys_indexes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    table_name TEXT NOT NULL,
    name       TEXT NOT NULL,
    columns    TEXT NOT NULL,
    is_unique  INTEGER NOT NULL DEFAULT 0,
    created_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX sys_indexes_name_uq ON sys_indexes (name);
