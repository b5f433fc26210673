-- Failed-login counters, per normalised email whether or not an account
-- has it, so the lock (5 failures, 15 minutes) cannot reveal which emails
-- exist. A successful login or password reset deletes the row.
CREATE TABLE sys_login_attempts (
    email        text PRIMARY KEY,
    failures     integer NOT NULL DEFAULT 0,
    locked_until timestamptz NULL,
    updated_at   timestamptz NOT NULL
);

-- API keys: only the SHA-256 of the key is kept.
CREATE TABLE sys_api_keys (
    id           bigserial PRIMARY KEY,
    label        text NOT NULL,
    key_hash     text NOT NULL,
    privilege    integer NOT NULL,
    created_by   bigint NULL REFERENCES sys_users (id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz NULL,
    revoked_at   timestamptz NULL
);
CREATE UNIQUE INDEX sys_api_keys_hash_uq ON sys_api_keys (key_hash);

-- Per-table privilege overrides with an optional row subset, stored as the
-- JSON of what the admin sent: a filter object or an SQL WHERE string.
CREATE TABLE sys_table_privileges (
    id         bigserial PRIMARY KEY,
    user_id    bigint NOT NULL REFERENCES sys_users (id) ON DELETE CASCADE,
    table_name text NOT NULL,
    privilege  integer NOT NULL,
    subset     text NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX sys_table_privileges_uq ON sys_table_privileges (user_id, table_name);
