-- Table settings of BraDypUS clients that have no column of their own:
-- the default sort field of the record list ("order"), the field that
-- labels stratigraphic relations ("rs"), and the declared links to other
-- tables ("link"). JSON text, read by core/schema.
ALTER TABLE sys_tables ADD COLUMN extra TEXT NOT NULL DEFAULT '{}';
