-- The records each user created or changed most recently (GET /history):
-- one row per (user, table, record), moved forward on every save.
CREATE TABLE sys_history (
    user_id   bigint NOT NULL REFERENCES sys_users (id) ON DELETE CASCADE,
    tb        text NOT NULL,
    record_id bigint NOT NULL,
    action    text NOT NULL,
    at        timestamptz NOT NULL,
    PRIMARY KEY (user_id, tb, record_id)
);
CREATE INDEX sys_history_recent_ix ON sys_history (user_id, at);
