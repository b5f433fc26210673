-- Saved charts (core/charts): a definition (table, type, fields,
-- aggregate, filter, the client's style) of its owner's, global or not.
CREATE TABLE sys_charts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL,
    userid     INTEGER NULL REFERENCES sys_users (id) ON DELETE SET NULL,
    is_global  INTEGER NOT NULL DEFAULT 0,
    definition TEXT NOT NULL,
    created_at DATETIME NOT NULL
);
