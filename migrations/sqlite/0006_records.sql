-- Record history: a snapshot {core, plugins} is stored before every update
-- and delete, so any version can be compared or restored.
CREATE TABLE sys_versions (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    tb        TEXT NOT NULL,
    record_id INTEGER NOT NULL,
    userid    INTEGER NULL REFERENCES sys_users (id) ON DELETE SET NULL,
    time      DATETIME NOT NULL,
    operation TEXT NOT NULL,
    content   TEXT NOT NULL
);
CREATE INDEX sys_versions_record_ix ON sys_versions (tb, record_id);

-- Stratigraphic relations between records of one table. A pair is stored
-- once; (first, r, second) and (second, inverse(r), first) are the same.
CREATE TABLE sys_rs (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    tb         TEXT NOT NULL,
    first      INTEGER NOT NULL,
    second     INTEGER NOT NULL,
    relation   INTEGER NOT NULL,
    creator    INTEGER NULL REFERENCES sys_users (id) ON DELETE SET NULL,
    created_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX sys_rs_pair_uq ON sys_rs (tb, first, second);
CREATE INDEX sys_rs_second_ix ON sys_rs (tb, second);

-- Manual links between any two records, shown on both.
CREATE TABLE sys_manual_links (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    tb_one     TEXT NOT NULL,
    id_one     INTEGER NOT NULL,
    tb_two     TEXT NOT NULL,
    id_two     INTEGER NOT NULL,
    label      TEXT NULL,
    sort       INTEGER NOT NULL DEFAULT 0,
    created_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX sys_manual_links_uq ON sys_manual_links (tb_one, id_one, tb_two, id_two);
CREATE INDEX sys_manual_links_two_ix ON sys_manual_links (tb_two, id_two);
