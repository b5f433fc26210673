-- Plugin features activated per table (POST /config/table/{tb}/{feature}).
-- Deactivation keeps the columns, child table and data; the catalog then
-- hides them from records until the feature is activated again.
CREATE TABLE sys_table_features (
    table_name  text NOT NULL,
    feature     text NOT NULL,
    plugin      text NOT NULL,
    active      boolean NOT NULL DEFAULT true,
    child_table text NULL,
    changed_at  timestamptz NOT NULL,
    PRIMARY KEY (table_name, feature)
);

-- The feature a field or a child table belongs to (NULL: an ordinary one).
ALTER TABLE sys_fields ADD COLUMN feature text NULL;
ALTER TABLE sys_tables ADD COLUMN feature text NULL;
