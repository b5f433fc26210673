-- Offline field recording's temporary ids (core/fieldsync): a record a
-- device created without a network has the device's own name for it
-- (temp_id) until its push; this maps that name to the record created,
-- so that later mutations, batches sent again and photo uploads of the
-- same device find it. The key includes who pushed (actor: "user:<id>"
-- or "key:<id>"): another account naming the same device and temp_id
-- reaches nothing of this one. Bounded by the records created.
CREATE TABLE sys_sync_temp_ids (
    actor      TEXT NOT NULL,
    device_id  TEXT NOT NULL,
    temp_id    TEXT NOT NULL,
    tb         TEXT NOT NULL,
    record_id  BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (actor, device_id, temp_id)
);
