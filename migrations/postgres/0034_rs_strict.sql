-- Strict stratigraphic relations (issue 33): rs_strict makes a relation
-- that would close a cycle of above/below a refusal (rs_cycle). Tables
-- that exist when this step runs keep it off, whether their app was
-- created natively or adopted from BraDypUS: their relations were
-- recorded without the check and may already hold cycles, so an admin
-- turns it on after looking (PUT /config/table/{tb}). Tables created from
-- now on get it on (core/schema.Create), except those the BraDypUS
-- upgrade adopts.
ALTER TABLE sys_tables ADD COLUMN rs_strict boolean NOT NULL DEFAULT false;
-- rs_gen names the state of a table's relations: a fresh random value on
-- every write of sys_rs, so the strict check's in-memory graph (one per
-- app and table, per process) is known good when it was loaded at the
-- value read under the table's lock (SELECT ... FOR UPDATE of this row).
-- Random rather than a counter: a restored backup or a table dropped and
-- created again brings a value no cache has seen for other relations.
-- Triggers keep it, so no write path (API, sync, rename, upgrade,
-- restore, another node) can forget it; per statement, so a bulk copy
-- updates each table's row once. The function keeps the app's schema as
-- its search_path (migrations run with it set).
ALTER TABLE sys_tables ADD COLUMN rs_gen bigint NOT NULL DEFAULT 0;
UPDATE sys_tables SET rs_gen = (random() * 9007199254740991)::bigint;
CREATE FUNCTION strata_bump_rs_gen() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
AS $bump$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE sys_tables SET rs_gen = (random() * 9007199254740991)::bigint
            WHERE name IN (SELECT tb FROM rs_new);
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE sys_tables SET rs_gen = (random() * 9007199254740991)::bigint
            WHERE name IN (SELECT tb FROM rs_old);
    ELSE
        UPDATE sys_tables SET rs_gen = (random() * 9007199254740991)::bigint
            WHERE name IN (SELECT tb FROM rs_new UNION SELECT tb FROM rs_old);
    END IF;
    RETURN NULL;
END
$bump$;
CREATE TRIGGER sys_rs_gen_i AFTER INSERT ON sys_rs REFERENCING NEW TABLE AS rs_new
    FOR EACH STATEMENT EXECUTE FUNCTION strata_bump_rs_gen();
CREATE TRIGGER sys_rs_gen_u AFTER UPDATE ON sys_rs REFERENCING OLD TABLE AS rs_old NEW TABLE AS rs_new
    FOR EACH STATEMENT EXECUTE FUNCTION strata_bump_rs_gen();
CREATE TRIGGER sys_rs_gen_d AFTER DELETE ON sys_rs REFERENCING OLD TABLE AS rs_old
    FOR EACH STATEMENT EXECUTE FUNCTION strata_bump_rs_gen();
