-- Uploaded files: metadata and the generated key of the stored blob. The
-- original name is metadata only (filename without its extension, ext in
-- lower case); mime is sniffed from the content.
CREATE TABLE sys_files (
    id          bigserial PRIMARY KEY,
    filename    text NOT NULL,
    ext         text NOT NULL DEFAULT '',
    mime        text NOT NULL,
    size        bigint NOT NULL,
    sha256      text NOT NULL,
    description text NULL,
    keywords    text NULL,
    printable   boolean NOT NULL DEFAULT false,
    blob_key    text NOT NULL,
    created_at  timestamptz NOT NULL,
    creator     bigint NULL
);
CREATE UNIQUE INDEX sys_files_blob_uq ON sys_files (blob_key);

-- Links of files to records; a file may be linked to several records and
-- to one record more than once. The files of a record are one index range.
CREATE TABLE sys_file_links (
    id        bigserial PRIMARY KEY,
    file_id   bigint NOT NULL REFERENCES sys_files (id) ON DELETE CASCADE,
    tb        text NOT NULL,
    record_id bigint NOT NULL,
    sort      integer NOT NULL DEFAULT 0
);
CREATE INDEX sys_file_links_record_ix ON sys_file_links (tb, record_id, sort);
CREATE INDEX sys_file_links_file_ix ON sys_file_links (file_id);
