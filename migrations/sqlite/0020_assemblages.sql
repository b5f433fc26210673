-- Saved assemblage analyses (core/assemblage): a pivot definition (source
-- table, characteristic field, group path and field, measure, filters) of
-- its owner's, shared with every user of the app or not.
CREATE TABLE sys_assemblages (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL,
    owner      INTEGER NULL REFERENCES sys_users (id) ON DELETE SET NULL,
    shared     INTEGER NOT NULL DEFAULT 0,
    definition TEXT NOT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE INDEX sys_assemblages_owner ON sys_assemblages (owner);
