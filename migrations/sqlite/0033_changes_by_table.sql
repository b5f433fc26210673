-- Offline sync's pull (core/fieldsync) reads one table's changes after a
-- checkpoint, in id order (WHERE tb = ? AND id > ? ORDER BY id): with the
-- change log now kept for weeks (a million rows), this index makes that a
-- range scan of the table's own rows instead of a walk over every app
-- change since the checkpoint. Bounded with the log itself (its retention).
CREATE INDEX sys_changes_tb_id ON sys_changes (tb, id);
