-- Retention of versions (core/retention, issue 35): the highest version id
-- pruned of each record. A sync push's three-way merge takes its base from
-- the first version after the device's base version (records.BaseAt); when
-- a version above that base has been pruned the base is unknown and the
-- push answers a conflict instead of merging against a later state. One
-- row per record ever pruned (bounded by the records), dropped with the
-- record's last version.
CREATE TABLE sys_versions_pruned (
    tb        TEXT NOT NULL,
    record_id INTEGER NOT NULL,
    upto      INTEGER NOT NULL,
    PRIMARY KEY (tb, record_id)
);
