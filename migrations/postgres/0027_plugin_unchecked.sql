-- Saves that went on without a plugin's BeforeSave (a non-required
-- feature whose plugin was down, or whose call failed): one marker per
-- plugin, feature and row, written in the save's transaction, listed by
-- GET /plugins/{name}/unchecked and cleared by its revalidation job.
-- row_table/row_id name the row the hook would have checked: the record
-- itself (row_table = tb, row_id = record_id) or a child row of the
-- feature's plugin table.
CREATE TABLE sys_plugin_unchecked (
    id        BIGSERIAL PRIMARY KEY,
    plugin    TEXT NOT NULL,
    feature   TEXT NOT NULL,
    tb        TEXT NOT NULL,
    record_id BIGINT NOT NULL,
    row_table TEXT NOT NULL,
    row_id    BIGINT NOT NULL,
    reason    TEXT NOT NULL,
    at        TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX sys_plugin_unchecked_uq ON sys_plugin_unchecked (plugin, feature, tb, record_id, row_table, row_id);

-- Who made a version's change when no user did: "plugin:<name>" for a
-- plugin's system save (Host.UpdateRecords, a revalidation). NULL for a
-- user's or an API key's change.
ALTER TABLE sys_versions ADD COLUMN actor TEXT NULL;
