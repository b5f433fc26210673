-- Non-unique indexes of user tables end with "id" (core/schema keyColumns),
-- as every SQLite index does implicitly (its rowid): a list filtered by
-- equality on the indexed columns and ordered by id, the default order and
-- every sort's tiebreak, reads its page off the index instead of fetching
-- and sorting every match, so its cost stops growing with the table.
-- Indexes made before this step are rebuilt so: those of
-- POST /config/table/{tb}/indexes (sys_indexes) and those lookup fields
-- imply (ix_<table id>_f<field id>). Unique indexes keep their columns.
DO $ixid$
DECLARE
    r    record;
    cols text;
BEGIN
    FOR r IN SELECT name, table_name, columns FROM sys_indexes
             WHERE NOT is_unique AND NOT (columns::jsonb ? 'id') LOOP
        SELECT string_agg(quote_ident(c), ', ' ORDER BY n) INTO cols
            FROM jsonb_array_elements_text(r.columns::jsonb) WITH ORDINALITY AS t(c, n);
        IF EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = r.name) THEN
            EXECUTE format('DROP INDEX %I', r.name);
            EXECUTE format('CREATE INDEX %I ON %I (%s, "id")', r.name, r.table_name, cols);
        END IF;
    END LOOP;
    FOR r IN SELECT 'ix_' || f.table_id || '_f' || f.id AS name, t.name AS table_name, f.name AS column_name
             FROM sys_fields f JOIN sys_tables t ON t.id = f.table_id
             WHERE COALESCE(f.id_from_tb, '') <> '' AND NOT f.is_unique LOOP
        IF EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = r.name) THEN
            EXECUTE format('DROP INDEX %I', r.name);
            EXECUTE format('CREATE INDEX %I ON %I (%I, "id")', r.name, r.table_name, r.column_name);
        END IF;
    END LOOP;
END
$ixid$;
