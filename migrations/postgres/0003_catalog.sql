-- The catalog of user tables and fields. Names are the stable handles the
-- API uses; every table and field also has an id, so a rename updates one
-- row (and the references listed in schema.Rename) instead of drop + add.
CREATE TABLE sys_tables (
    id                  bigserial PRIMARY KEY,
    name                text NOT NULL,
    label               text NOT NULL DEFAULT '',
    sort                integer NOT NULL DEFAULT 0,
    id_field            text NULL,
    preview             text NOT NULL DEFAULT '[]',
    rs                  boolean NOT NULL DEFAULT false,
    geodata             boolean NOT NULL DEFAULT false,
    refmgr              boolean NOT NULL DEFAULT false,
    chrono_density_path text NOT NULL DEFAULT '[]',
    backlinks           text NOT NULL DEFAULT '[]',
    is_plugin           boolean NOT NULL DEFAULT false,
    plugin_of           text NULL,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL
);
CREATE UNIQUE INDEX sys_tables_name_uq ON sys_tables (name);

CREATE TABLE sys_fields (
    id                 bigserial PRIMARY KEY,
    table_id           bigint NOT NULL REFERENCES sys_tables (id) ON DELETE CASCADE,
    name               text NOT NULL,
    label              text NOT NULL DEFAULT '',
    type               text NOT NULL,
    db_type            text NOT NULL,
    sort               integer NOT NULL DEFAULT 0,
    readonly           boolean NOT NULL DEFAULT false,
    hide               boolean NOT NULL DEFAULT false,
    vocabulary_set     text NULL,
    get_values_from_tb text NULL,
    id_from_tb         text NULL,
    widget             text NULL,
    required           boolean NOT NULL DEFAULT false,
    is_unique          boolean NOT NULL DEFAULT false,
    min_value          double precision NULL,
    max_value          double precision NULL,
    max_length         integer NULL,
    pattern            text NULL,
    def_value          text NULL,
    help               text NULL,
    extra              text NOT NULL DEFAULT '{}',
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL
);
CREATE UNIQUE INDEX sys_fields_name_uq ON sys_fields (table_id, name);
