-- auth_version in sys_settings moves whenever what a request's access is
-- decided from changes: a user's name, email, privilege or token version,
-- a deleted user, a per-table override. The server caches users and their
-- overrides by it and checks it with the catalog version in one query per
-- request. Triggers keep it in step, so no write path (API, CLI, a restore,
-- another node) can forget it. The function keeps the app's schema as its
-- search_path (SET ... FROM CURRENT: migrations run with it set).
CREATE FUNCTION strata_bump_auth_version() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
AS $bump$
BEGIN
    INSERT INTO sys_settings (key, value) VALUES ('auth_version', '1')
        ON CONFLICT (key) DO UPDATE SET value = (sys_settings.value::bigint + 1)::text;
    RETURN NULL;
END
$bump$;
CREATE TRIGGER sys_users_auth_version_u AFTER UPDATE OF name, email, privilege, token_version ON sys_users
    FOR EACH STATEMENT EXECUTE FUNCTION strata_bump_auth_version();
CREATE TRIGGER sys_users_auth_version_d AFTER DELETE ON sys_users
    FOR EACH STATEMENT EXECUTE FUNCTION strata_bump_auth_version();
CREATE TRIGGER sys_table_privileges_auth_version AFTER INSERT OR UPDATE OR DELETE ON sys_table_privileges
    FOR EACH STATEMENT EXECUTE FUNCTION strata_bump_auth_version();
