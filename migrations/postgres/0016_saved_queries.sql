-- Saved queries (core/savedquery): a named list definition (filter,
-- search, sort, columns) of one table, its owner's, shared or not.
CREATE TABLE sys_saved_queries (
    id         BIGSERIAL PRIMARY KEY,
    name       TEXT NOT NULL,
    tb         TEXT NOT NULL,
    owner      BIGINT NULL REFERENCES sys_users (id) ON DELETE SET NULL,
    shared     boolean NOT NULL DEFAULT false,
    definition TEXT NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
