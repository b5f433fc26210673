-- Widgets (core/widgets): per-app ES modules a field's `widget` parameter
-- names, served to the client as text/javascript. In the app's database so
-- backups carry them.
CREATE TABLE sys_widgets (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL,
    content    TEXT NOT NULL,
    etag       TEXT NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX sys_widgets_uq ON sys_widgets (name);
