-- Application settings: one key per row (definition, JWT secret, options).
CREATE TABLE sys_settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- Accounts. email is stored trimmed and lower-cased, so the unique index
-- makes emails unique case-insensitively.
CREATE TABLE sys_users (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    name                TEXT NOT NULL DEFAULT '',
    email               TEXT NOT NULL,
    password            TEXT NOT NULL,
    privilege           INTEGER NOT NULL DEFAULT 40,
    oauth_provider      TEXT NULL,
    oauth_sub           TEXT NULL,
    token_version       INTEGER NOT NULL DEFAULT 1,
    reset_token_hash    TEXT NULL,
    reset_token_expires DATETIME NULL,
    created_at          DATETIME NOT NULL,
    updated_at          DATETIME NOT NULL
);
CREATE UNIQUE INDEX sys_users_email_uq ON sys_users (email);
-- NULLs are distinct in unique indexes on both engines: the pair is unique
-- only where an OAuth identity is set.
CREATE UNIQUE INDEX sys_users_oauth_uq ON sys_users (oauth_provider, oauth_sub);
