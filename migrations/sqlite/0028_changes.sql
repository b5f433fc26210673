-- The app's change log (DESIGN §10, one change log): one row per
-- committed change, written in the change's own transaction
-- (core/changes). Realtime delivery replays from it; nothing reads "what
-- changed" any other way. AUTOINCREMENT: ids only grow, never reused
-- after a trim; SQLite's single writer commits them in order.
-- op: create, update, delete (a record; plugin rows, files and geodata
-- are an update of their record), schema (tb names the table, or "" for
-- the whole catalog), privilege (record_id is the user).
-- version: the record's version once changed (RecordVersion), 0 if none.
-- user_id: who, when a user did; actor: a plugin's or an API key's name.
CREATE TABLE sys_changes (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    tb        TEXT NOT NULL,
    record_id INTEGER NOT NULL,
    op        TEXT NOT NULL,
    version   INTEGER NOT NULL,
    user_id   INTEGER NULL,
    actor     TEXT NULL,
    at        DATETIME NOT NULL
);
CREATE INDEX sys_changes_at ON sys_changes (at);
