-- auth_version in sys_settings moves whenever what a request's access is
-- decided from changes: a user's name, email, privilege or token version,
-- a deleted user, a per-table override. The server caches users and their
-- overrides by it and checks it with the catalog version in one query per
-- request. Triggers keep it in step, so no write path (API, CLI, a restore)
-- can forget it.
CREATE TRIGGER sys_users_auth_version_u AFTER UPDATE OF name, email, privilege, token_version ON sys_users
BEGIN
    INSERT INTO sys_settings (key, value) VALUES ('auth_version', '1')
        ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT);
END;
CREATE TRIGGER sys_users_auth_version_d AFTER DELETE ON sys_users
BEGIN
    INSERT INTO sys_settings (key, value) VALUES ('auth_version', '1')
        ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT);
END;
CREATE TRIGGER sys_table_privileges_auth_version_i AFTER INSERT ON sys_table_privileges
BEGIN
    INSERT INTO sys_settings (key, value) VALUES ('auth_version', '1')
        ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT);
END;
CREATE TRIGGER sys_table_privileges_auth_version_u AFTER UPDATE ON sys_table_privileges
BEGIN
    INSERT INTO sys_settings (key, value) VALUES ('auth_version', '1')
        ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT);
END;
CREATE TRIGGER sys_table_privileges_auth_version_d AFTER DELETE ON sys_table_privileges
BEGIN
    INSERT INTO sys_settings (key, value) VALUES ('auth_version', '1')
        ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT);
END;
