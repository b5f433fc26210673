-- Failed-login counters, per normalised email whether or not an account
-- has it, so the lock (5 failures, 15 minutes) cannot reveal which emails
-- exist. A successful login or password reset deletes the row.
CREATE TABLE sys_login_attempts (
    email        TEXT PRIMARY KEY,
    failures     INTEGER NOT NULL DEFAULT 0,
    locked_until DATETIME NULL,
    updated_at   DATETIME NOT NULL
);

-- API keys: only the SHA-256 of the key is kept.
CREATE TABLE sys_api_keys (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    label        TEXT NOT NULL,
    key_hash     TEXT NOT NULL,
    privilege    INTEGER NOT NULL,
    created_by   INTEGER NULL REFERENCES sys_users (id) ON DELETE SET NULL,
    created_at   DATETIME NOT NULL,
    last_used_at DATETIME NULL,
    revoked_at   DATETIME NULL
);
CREATE UNIQUE INDEX sys_api_keys_hash_uq ON sys_api_keys (key_hash);

-- Per-table privilege overrides with an optional row subset, stored as the
-- JSON of what the admin sent: a filter object or an SQL WHERE string.
CREATE TABLE sys_table_privileges (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    INTEGER NOT NULL REFERENCES sys_users (id) ON DELETE CASCADE,
    table_name TEXT NOT NULL,
    privilege  INTEGER NOT NULL,
    subset     TEXT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX sys_table_privileges_uq ON sys_table_privileges (user_id, table_name);
