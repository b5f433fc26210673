-- Controlled vocabularies: the items of a named set, in order. Select
-- fields name a set in vocabulary_set.
CREATE TABLE sys_vocabularies (
    id    bigserial PRIMARY KEY,
    voc   text NOT NULL,
    value text NOT NULL,
    sort  integer NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX sys_vocabularies_item_uq ON sys_vocabularies (voc, value);
