-- Offline field recording's resumable uploads (core/fieldsync): a photo
-- taken without a network arrives in parts, possibly through several
-- nodes and across restarts, so what has come is kept here, where every
-- node reads it, until the upload is whole and becomes a file of the
-- files area (sys_files, through its rules), linked to its record.
-- An upload belongs to who started it (actor: "user:<id>" or "key:<id>"):
-- another account naming the same upload_id reaches nothing of it.
-- received: the bytes kept so far (the next part's offset); status:
-- receiving, waiting_for_record (whole, its record's temp_id not pushed
-- yet), linked (file_id), failed (code, message). Times are Unix
-- milliseconds. Bounded: each upload by the instance's upload cap, each
-- account by a number of open uploads and of staged bytes, and every
-- upload not touched for the retention (7 days) is removed with its parts.
CREATE TABLE sys_sync_uploads (
    id          BIGSERIAL PRIMARY KEY,
    actor       TEXT NOT NULL,
    upload_id   TEXT NOT NULL,
    device_id   TEXT NOT NULL,
    filename    TEXT NOT NULL,
    size        BIGINT NOT NULL,
    sha256      TEXT NULL,
    tb          TEXT NOT NULL,
    record_id   BIGINT NULL,
    temp_id     TEXT NULL,
    description TEXT NULL,
    received    BIGINT NOT NULL DEFAULT 0,
    status      TEXT NOT NULL,
    code        TEXT NULL,
    message     TEXT NULL,
    file_id     BIGINT NULL,
    created_at  BIGINT NOT NULL,
    touched_at  BIGINT NOT NULL,
    UNIQUE (actor, upload_id)
);
CREATE INDEX sys_sync_uploads_touched ON sys_sync_uploads (touched_at);
-- The bytes of an upload still open, in pieces of at most 1 MiB, each at
-- its offset (start) in the file: the key makes a piece sent twice at
-- once land once.
CREATE TABLE sys_sync_upload_parts (
    upload BIGINT NOT NULL,
    start  BIGINT NOT NULL,
    bytes  BYTEA NOT NULL,
    PRIMARY KEY (upload, start)
);
