-- Controlled vocabularies: the items of a named set, in order. Select
-- fields name a set in vocabulary_set.
CREATE TABLE sys_vocabularies (
    id    INTEGER PRIMARY KEY AUTOINCREMENT,
    voc   TEXT NOT NULL,
    value TEXT NOT NULL,
    sort  INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX sys_vocabularies_item_uq ON sys_vocabularies (voc, value);
