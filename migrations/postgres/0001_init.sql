-- Application settings: one key per row (definition, JWT secret, options).
CREATE TABLE sys_settings (
    key   text PRIMARY KEY,
    value text NOT NULL
);

-- Accounts. email is stored trimmed and lower-cased, so the unique index
-- makes emails unique case-insensitively.
CREATE TABLE sys_users (
    id                  bigserial PRIMARY KEY,
    name                text NOT NULL DEFAULT '',
    email               text NOT NULL,
    password            text NOT NULL,
    privilege           integer NOT NULL DEFAULT 40,
    oauth_provider      text NULL,
    oauth_sub           text NULL,
    token_version       integer NOT NULL DEFAULT 1,
    reset_token_hash    text NULL,
    reset_token_expires timestamptz NULL,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL
);
CREATE UNIQUE INDEX sys_users_email_uq ON sys_users (email);
-- NULLs are distinct in unique indexes on both engines: the pair is unique
-- only where an OAuth identity is set.
CREATE UNIQUE INDEX sys_users_oauth_uq ON sys_users (oauth_provider, oauth_sub);
