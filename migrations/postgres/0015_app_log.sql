-- The application log: who did what, append-only (core/applog). level is
-- Monolog's scale as BraDypUS's clients read it (200 info, 300 warning,
-- 400 error); action names the route (or auth.login, auth.login_failed).
CREATE TABLE sys_app_log (
    id        BIGSERIAL PRIMARY KEY,
    time      TIMESTAMPTZ NOT NULL,
    level     INTEGER NOT NULL,
    channel   TEXT NOT NULL,
    action    TEXT NOT NULL,
    message   TEXT NOT NULL,
    userid    BIGINT NULL,
    user_name TEXT NULL,
    tb        TEXT NULL,
    record_id TEXT NULL,
    status    INTEGER NULL,
    detail    TEXT NULL
);
CREATE INDEX sys_app_log_time ON sys_app_log (time);
