-- Strict stratigraphic relations (issue 33): rs_strict makes a relation
-- that would close a cycle of above/below a refusal (rs_cycle). Tables
-- that exist when this step runs keep it off, whether their app was
-- created natively or adopted from BraDypUS: their relations were
-- recorded without the check and may already hold cycles, so an admin
-- turns it on after looking (PUT /config/table/{tb}). Tables created from
-- now on get it on (core/schema.Create), except those the BraDypUS
-- upgrade adopts.
ALTER TABLE sys_tables ADD COLUMN rs_strict INTEGER NOT NULL DEFAULT 0;
-- rs_gen names the state of a table's relations: a fresh random value on
-- every write of sys_rs, so the strict check's in-memory graph (one per
-- app and table, per process) is known good when it was loaded at the
-- value read under the table's lock. Random rather than a counter: a
-- restored backup or a table dropped and created again brings a value no
-- cache has seen for other relations. Triggers keep it, so no write path
-- (API, sync, rename, upgrade, restore, another node) can forget it.
ALTER TABLE sys_tables ADD COLUMN rs_gen INTEGER NOT NULL DEFAULT 0;
UPDATE sys_tables SET rs_gen = random();
CREATE TRIGGER sys_rs_gen_i AFTER INSERT ON sys_rs
BEGIN
    UPDATE sys_tables SET rs_gen = random() WHERE name = NEW.tb;
END;
CREATE TRIGGER sys_rs_gen_u AFTER UPDATE ON sys_rs
BEGIN
    UPDATE sys_tables SET rs_gen = random() WHERE name IN (OLD.tb, NEW.tb);
END;
CREATE TRIGGER sys_rs_gen_d AFTER DELETE ON sys_rs
BEGIN
    UPDATE sys_tables SET rs_gen = random() WHERE name = OLD.tb;
END;
