-- Uploaded files: metadata and the generated key of the stored blob. The
-- original name is metadata only (filename without its extension, ext in
-- lower case); mime is sniffed from the content.
CREATE TABLE sys_files (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    filename    TEXT NOT NULL,
    ext         TEXT NOT NULL DEFAULT '',
    mime        TEXT NOT NULL,
    size        INTEGER NOT NULL,
    sha256      TEXT NOT NULL,
    description TEXT NULL,
    keywords    TEXT NULL,
    printable   INTEGER NOT NULL DEFAULT 0,
    blob_key    TEXT NOT NULL,
    created_at  DATETIME NOT NULL,
    creator     INTEGER NULL
);
CREATE UNIQUE INDEX sys_files_blob_uq ON sys_files (blob_key);

-- Links of files to records; a file may be linked to several records and
-- to one record more than once. The files of a record are one index range.
CREATE TABLE sys_file_links (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    file_id   INTEGER NOT NULL REFERENCES sys_files (id) ON DELETE CASCADE,
    tb        TEXT NOT NULL,
    record_id INTEGER NOT NULL,
    sort      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sys_file_links_record_ix ON sys_file_links (tb, record_id, sort);
CREATE INDEX sys_file_links_file_ix ON sys_file_links (file_id);
