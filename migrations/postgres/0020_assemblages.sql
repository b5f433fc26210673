-- Saved assemblage analyses (core/assemblage): a pivot definition (source
-- table, characteristic field, group path and field, measure, filters) of
-- its owner's, shared with every user of the app or not.
CREATE TABLE sys_assemblages (
    id         BIGSERIAL PRIMARY KEY,
    name       TEXT NOT NULL,
    owner      BIGINT NULL REFERENCES sys_users (id) ON DELETE SET NULL,
    shared     BOOLEAN NOT NULL DEFAULT FALSE,
    definition TEXT NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX sys_assemblages_owner ON sys_assemblages (owner);
