-- Saved queries (core/savedquery): a named list definition (filter,
-- search, sort, columns) of one table, its owner's, shared or not.
CREATE TABLE sys_saved_queries (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL,
    tb         TEXT NOT NULL,
    owner      INTEGER NULL REFERENCES sys_users (id) ON DELETE SET NULL,
    shared     INTEGER NOT NULL DEFAULT 0,
    definition TEXT NOT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
