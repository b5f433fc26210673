-- Record history: a snapshot {core, plugins} is stored before every update
-- and delete, so any version can be compared or restored.
CREATE TABLE sys_versions (
    id        bigserial PRIMARY KEY,
    tb        text NOT NULL,
    record_id bigint NOT NULL,
    userid    bigint NULL REFERENCES sys_users (id) ON DELETE SET NULL,
    time      timestamptz NOT NULL,
    operation text NOT NULL,
    content   text NOT NULL
);
CREATE INDEX sys_versions_record_ix ON sys_versions (tb, record_id);

-- Stratigraphic relations between records of one table. A pair is stored
-- once; (first, r, second) and (second, inverse(r), first) are the same.
CREATE TABLE sys_rs (
    id         bigserial PRIMARY KEY,
    tb         text NOT NULL,
    first      bigint NOT NULL,
    second     bigint NOT NULL,
    relation   integer NOT NULL,
    creator    bigint NULL REFERENCES sys_users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX sys_rs_pair_uq ON sys_rs (tb, first, second);
CREATE INDEX sys_rs_second_ix ON sys_rs (tb, second);

-- Manual links between any two records, shown on both.
CREATE TABLE sys_manual_links (
    id         bigserial PRIMARY KEY,
    tb_one     text NOT NULL,
    id_one     bigint NOT NULL,
    tb_two     text NOT NULL,
    id_two     bigint NOT NULL,
    label      text NULL,
    sort       integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX sys_manual_links_uq ON sys_manual_links (tb_one, id_one, tb_two, id_two);
CREATE INDEX sys_manual_links_two_ix ON sys_manual_links (tb_two, id_two);
