-- Offline field recording's push (core/fieldsync), keyed like 0030 by
-- who pushed (actor: "user:<id>" or "key:<id>") and the device: another
-- account naming the same device reaches none of these rows.
--
-- sys_sync_devices: how far each device's mutations have been applied
-- (last_seq), so that a mutation whose predecessor has not arrived waits.
-- One row per device that ever pushed.
CREATE TABLE sys_sync_devices (
    actor      TEXT NOT NULL,
    device_id  TEXT NOT NULL,
    last_seq   INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (actor, device_id)
);
-- sys_sync_mutations: every mutation received, once (mutation_id per
-- actor), so that a batch sent again answers its first results and
-- changes nothing. state: held (waits for seq - 1; body is the mutation)
-- or done (result is its answer; body is cleared). The row's state
-- changes in the transaction of the mutation's save, so two nodes never
-- apply it twice. Bounded: held mutations per device are capped by the
-- push (sync_too_many_held), done ones are trimmed after the retention
-- (30 days). Times are Unix milliseconds.
CREATE TABLE sys_sync_mutations (
    actor       TEXT NOT NULL,
    mutation_id TEXT NOT NULL,
    device_id   TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    state       TEXT NOT NULL,
    body        TEXT NULL,
    result      TEXT NULL,
    received_at INTEGER NOT NULL,
    done_at     INTEGER NULL,
    PRIMARY KEY (actor, mutation_id)
);
CREATE INDEX sys_sync_mutations_device ON sys_sync_mutations (actor, device_id, state, seq);
CREATE INDEX sys_sync_mutations_held ON sys_sync_mutations (state, received_at);
CREATE INDEX sys_sync_mutations_done ON sys_sync_mutations (state, done_at);
-- sys_sync_conflicts: one field both a device and the server changed to
-- different values since the device's base version (base, mine, theirs:
-- JSON), or a held mutation applied out of order (field "": reason says
-- so). The server value stays until someone resolves it; the row keeps
-- the three values (and the one chosen) for good: bounded by the records
-- times their fields times the pushes that conflict, the way versions
-- are. user_id / key_id: who pushed; resolved_by: who resolved.
CREATE TABLE sys_sync_conflicts (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    tb             TEXT NOT NULL,
    record_id      INTEGER NOT NULL,
    field          TEXT NOT NULL,
    base           TEXT NULL,
    mine           TEXT NULL,
    theirs         TEXT NULL,
    reason         TEXT NOT NULL,
    user_id        INTEGER NULL,
    key_id         INTEGER NULL,
    mutation_id    TEXT NOT NULL,
    device_id      TEXT NOT NULL,
    created_at     INTEGER NOT NULL,
    status         TEXT NOT NULL,
    resolved_value TEXT NULL,
    resolved_by    INTEGER NULL,
    resolved_at    INTEGER NULL
);
CREATE INDEX sys_sync_conflicts_record ON sys_sync_conflicts (tb, record_id);
CREATE INDEX sys_sync_conflicts_status ON sys_sync_conflicts (status, id);
