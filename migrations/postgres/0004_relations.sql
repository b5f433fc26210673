-- Relations between user tables (foreign keys: real constraints where the
-- engine allows adding them, and always recorded here) and user-defined
-- indexes. Tables and columns are named; renames update these rows.
CREATE TABLE sys_relations (
    id         bigserial PRIMARY KEY,
    from_tb    text NOT NULL,
    from_col   text NOT NULL,
    to_tb      text NOT NULL,
    to_col     text NOT NULL DEFAULT 'id',
    on_delete  text NOT NULL DEFAULT 'restrict',
    on_update  text NOT NULL DEFAULT 'restrict',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX sys_relations_from_uq ON sys_relations (from_tb, from_col);

CREATE TABLE sys_indexes (
    id         bigserial PRIMARY KEY,
    table_name text NOT NULL,
    name       text NOT NULL,
    columns    text NOT NULL,
    is_unique  boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX sys_indexes_name_uq ON sys_indexes (name);
