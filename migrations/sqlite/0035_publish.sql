-- Open-data publishing (issue 34, core/publish).
-- sys_publish holds the application's one publication setting (what is
-- public, the licence, the authors, the DOI provider), as JSON checked by
-- core/publish against the catalog when it is saved and again when a
-- snapshot starts. The DOI provider's secret is kept encrypted by the
-- instance's keyring (core/secrets), never in the JSON.
CREATE TABLE sys_publish (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    config      TEXT NOT NULL,
    doi_secret  TEXT NULL,
    updated_at  INTEGER NOT NULL,
    updated_by  INTEGER NULL
);
-- A snapshot is a numbered, immutable publication: version is its number,
-- given when it is done (a failed attempt takes none), config the setting
-- it was made with (frozen, with the public address), blob_key the
-- RO-Crate zip in the files storage once it is done. status: running,
-- done, failed. previous is the snapshot this one is a new version of.
-- doi_state is the minting's resumable state (core/publish/doi) so that a
-- retry never mints twice. Times are Unix milliseconds.
CREATE TABLE sys_publish_snapshots (
    id           INTEGER PRIMARY KEY,
    status       TEXT NOT NULL,
    version      INTEGER NULL UNIQUE,
    job_id       INTEGER NULL,
    config       TEXT NOT NULL,
    previous     INTEGER NULL,
    created_by   INTEGER NULL,
    created_at   INTEGER NOT NULL,
    published_at INTEGER NULL,
    blob_key     TEXT NULL,
    size         INTEGER NULL,
    sha256       TEXT NULL,
    records      INTEGER NULL,
    files        INTEGER NULL,
    doi          TEXT NULL,
    doi_status   TEXT NULL,
    doi_state    TEXT NULL,
    error        TEXT NULL
);
-- One snapshot runs at a time per application: a second start is refused
-- by the database, whichever node it reaches.
CREATE UNIQUE INDEX sys_publish_snapshots_running ON sys_publish_snapshots (status) WHERE status = 'running';
-- The records each snapshot published, for the landing pages and OAI-PMH
-- (which answer from the latest done snapshot, never from the live
-- tables): one row per public record, its JSON-LD and the summary the
-- other formats are written from. datestamp moves only when the record's
-- published content changes (hash), so harvesters take only what
-- changed; a record a later snapshot no longer publishes is carried on as
-- deleted (OAI-PMH "persistent"). A snapshot's rows are removed once a
-- later one is done, so the table holds about one snapshot's worth.
CREATE TABLE sys_publish_items (
    tb         TEXT NOT NULL,
    rid        INTEGER NOT NULL,
    snapshot   INTEGER NOT NULL,
    datestamp  INTEGER NOT NULL,
    hash       TEXT NOT NULL,
    deleted    INTEGER NOT NULL DEFAULT 0,
    summary    TEXT NOT NULL,
    doc        TEXT NULL,
    PRIMARY KEY (snapshot, tb, rid)
);
CREATE INDEX sys_publish_items_datestamp ON sys_publish_items (snapshot, datestamp, tb, rid);
