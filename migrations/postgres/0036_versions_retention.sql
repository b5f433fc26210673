-- Retention of versions (core/retention, issue 35): the highest version id
-- pruned of each record. A sync push's three-way merge takes its base from
-- the first version after the device's base version (records.BaseAt); when
-- a version above that base has been pruned the base is unknown and the
-- push answers a conflict instead of merging against a later state. One
-- row per record ever pruned (bounded by the records), dropped with the
-- record's last version.
CREATE TABLE sys_versions_pruned (
    tb        text NOT NULL,
    record_id bigint NOT NULL,
    upto      bigint NOT NULL,
    PRIMARY KEY (tb, record_id)
);
-- The pruning job finds a record's N-th newest version and its latest
-- (ORDER BY id DESC within the record), as the ETag (MAX(id)) and the
-- merge base (the first id above a version) do: with id in the key these
-- are index seeks, as SQLite's index gives them (its entries end with the
-- rowid). Replaces the (tb, record_id) index, whose prefix this is.
CREATE INDEX sys_versions_record_id_ix ON sys_versions (tb, record_id, id);
DROP INDEX sys_versions_record_ix;
