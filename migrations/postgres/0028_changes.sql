-- The app's change log (DESIGN §10, one change log): one row per
-- committed change, written in the change's own transaction
-- (core/changes). Realtime delivery replays from it; nothing reads "what
-- changed" any other way. Ids come from the sequence after the writer
-- took the app's change-log lock (pg_advisory_xact_lock, held to commit),
-- so they commit in order: a reader never sees an id before a lower one.
-- op: create, update, delete (a record; plugin rows, files and geodata
-- are an update of their record), schema (tb names the table, or "" for
-- the whole catalog), privilege (record_id is the user).
-- version: the record's version once changed (RecordVersion), 0 if none.
-- user_id: who, when a user did; actor: a plugin's or an API key's name.
CREATE TABLE sys_changes (
    id        BIGSERIAL PRIMARY KEY,
    tb        TEXT NOT NULL,
    record_id BIGINT NOT NULL,
    op        TEXT NOT NULL,
    version   BIGINT NOT NULL,
    user_id   BIGINT NULL,
    actor     TEXT NULL,
    at        TIMESTAMPTZ NOT NULL
);
CREATE INDEX sys_changes_at ON sys_changes (at);
