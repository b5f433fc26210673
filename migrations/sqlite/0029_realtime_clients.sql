-- The open live streams of the app, on every node (core/realtime): a
-- POST to any node finds here whether a client_id is an open stream of
-- the caller, and on which node; the set of subscriptions given on
-- another node waits here (subs, subs_seq) for the stream's node, which a
-- NOTIFY on strata_realtime wakes, to apply with its own client's scopes;
-- presence (tb, record_id, field, seen_at) is one entry per client, so
-- bounded by the streams. A node refreshes its rows' heartbeat; rows of a
-- crashed node stop counting once it is old, and any node deletes them.
-- user_id or key_id: who opened the stream; name: shown to other viewers.
-- heartbeat, seen_at: Unix milliseconds (compared as numbers on both
-- engines).
CREATE TABLE sys_realtime_clients (
    client_id  TEXT PRIMARY KEY,
    node       TEXT NOT NULL,
    user_id    INTEGER NULL,
    key_id     INTEGER NULL,
    name       TEXT NOT NULL,
    heartbeat  INTEGER NOT NULL,
    subs       TEXT NULL,
    subs_seq   INTEGER NOT NULL DEFAULT 0,
    tb         TEXT NULL,
    record_id  INTEGER NULL,
    field      TEXT NULL,
    seen_at    INTEGER NULL
);
CREATE INDEX sys_realtime_clients_record ON sys_realtime_clients (tb, record_id);
