-- Print templates (core/templates): per table and name, the sections of a
-- record's printed page as JSON.
CREATE TABLE sys_templates (
    id         BIGSERIAL PRIMARY KEY,
    tb         TEXT NOT NULL,
    name       TEXT NOT NULL,
    content    TEXT NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX sys_templates_uq ON sys_templates (tb, name);
