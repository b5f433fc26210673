-- Plugin features activated per table (POST /config/table/{tb}/{feature}).
-- Deactivation keeps the columns, child table and data; the catalog then
-- hides them from records until the feature is activated again.
CREATE TABLE sys_table_features (
    table_name  TEXT NOT NULL,
    feature     TEXT NOT NULL,
    plugin      TEXT NOT NULL,
    active      INTEGER NOT NULL DEFAULT 1,
    child_table TEXT NULL,
    changed_at  DATETIME NOT NULL,
    PRIMARY KEY (table_name, feature)
);

-- The feature a field or a child table belongs to (NULL: an ordinary one).
ALTER TABLE sys_fields ADD COLUMN feature TEXT NULL;
ALTER TABLE sys_tables ADD COLUMN feature TEXT NULL;
