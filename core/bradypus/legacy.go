package bradypus

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"modernc.org/sqlite" // the pure-Go driver the store uses too
)

// legacyTable is a row of bdus_cfg_tables with its fields.
type legacyTable struct {
	Name     string
	Label    string
	Order    string
	IDField  string
	Preview  []string
	IsPlugin bool
	PluginOf string
	Sort     int
	Extra    map[string]any
	Fields   []legacyField
	// Features are the plugin features BraDypUS has on the table, by
	// Strata's names (chronology for its fuzzy_date, osteology); a
	// radiocarbon table (<tb>_radiocarbon) is instead marked Child: it
	// becomes the radiocarbon feature's child table of its parent.
	Features []string
	Child    string
}

// legacyField is a row of bdus_cfg_fields: its columns and the extra JSON
// (vocabulary_set, id_from_tb, readonly, check, ...), merged.
type legacyField struct {
	Name string
	Def  map[string]any
}

type legacyRelation struct {
	FromTb, FromCol, ToTb, ToCol, OnDelete, OnUpdate string
}

// legacyApp is what the upgrade reads of a BraDypUS 5 database.
type legacyApp struct {
	db        *sql.DB
	Tables    []*legacyTable
	Relations []legacyRelation
	tables    map[string]bool // every table of the file
	zotero    bool            // it has Zotero libraries or links (refmgr.go)
}

// openLegacy opens the folder's db/bdus.sqlite read only: a regular file
// of the folder, no link (confine.go).
func openLegacy(r *folderRoot) (*sql.DB, error) { return openLegacyWith(r, nil) }

// openLegacyWith opens the folder's database, hook (if any) run on every
// connection. SQLite opens the file by path, so it cannot go through the
// root: the path is checked before the first open, and every connection
// (database/sql opens more as it needs them) checks after its open that
// the path is still the file checked, before it is used.
func openLegacyWith(r *folderRoot, hook func(conn sqlite.ExecQuerierContext) error) (*sql.DB, error) {
	path, checked, err := r.sqlitePath(dbFile)
	if err != nil {
		return nil, err
	}
	drv := &sqlite.Driver{}
	drv.RegisterConnectionHook(func(conn sqlite.ExecQuerierContext, _ string) error {
		if err := r.sameAsChecked(dbFile, checked); err != nil {
			return err
		}
		if hook != nil {
			return hook(conn)
		}
		return nil
	})
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro&_pragma=busy_timeout(5000)"}
	db := sql.OpenDB(connector{drv: drv, dsn: u.String()})
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func readLegacy(ctx context.Context, db *sql.DB) (*legacyApp, error) {
	la := &legacyApp{db: db, tables: map[string]bool{}}
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		la.tables[n] = true
	}
	rows.Close()
	for _, t := range []string{"bdus_cfg_tables", "bdus_cfg_fields", "bdus_users"} {
		if !la.tables[t] {
			return nil, fmt.Errorf("%s is missing: not a BraDypUS 5 database", t)
		}
	}
	trows, err := db.QueryContext(ctx, `SELECT name, COALESCE(label, ''), COALESCE(order_field, ''), COALESCE(id_field, ''),
		COALESCE(preview, ''), COALESCE(is_plugin, 0), COALESCE(sort, 0), COALESCE(extra, '') FROM bdus_cfg_tables ORDER BY sort, id`)
	if err != nil {
		return nil, fmt.Errorf("read bdus_cfg_tables: %w", err)
	}
	byName := map[string]*legacyTable{}
	for trows.Next() {
		t := &legacyTable{}
		var preview, extra string
		if err := trows.Scan(&t.Name, &t.Label, &t.Order, &t.IDField, &preview, &t.IsPlugin, &t.Sort, &extra); err != nil {
			trows.Close()
			return nil, err
		}
		if strings.HasPrefix(t.Name, "bdus_") {
			continue // BraDypUS's own tables (bdus_files) are configured here too
		}
		_ = json.Unmarshal([]byte(preview), &t.Preview)
		if extra != "" {
			if err := json.Unmarshal([]byte(extra), &t.Extra); err != nil {
				trows.Close()
				return nil, fmt.Errorf("bdus_cfg_tables.extra of %s: %w", t.Name, err)
			}
		}
		la.Tables = append(la.Tables, t)
		byName[t.Name] = t
	}
	trows.Close()
	frows, err := db.QueryContext(ctx, `SELECT table_name, name, COALESCE(label, ''), COALESCE(type, ''), COALESCE(db_type, ''),
		COALESCE(extra, '') FROM bdus_cfg_fields ORDER BY table_name, sort, id`)
	if err != nil {
		return nil, fmt.Errorf("read bdus_cfg_fields: %w", err)
	}
	for frows.Next() {
		var tb, name, label, typ, dbType, extra string
		if err := frows.Scan(&tb, &name, &label, &typ, &dbType, &extra); err != nil {
			frows.Close()
			return nil, err
		}
		t, ok := byName[tb]
		if !ok || isSystemColumn(name) {
			continue
		}
		def := map[string]any{}
		if extra != "" {
			if err := json.Unmarshal([]byte(extra), &def); err != nil {
				frows.Close()
				return nil, fmt.Errorf("bdus_cfg_fields.extra of %s.%s: %w", tb, name, err)
			}
		}
		def["name"], def["label"], def["type"], def["db_type"] = name, label, typ, dbType
		t.Fields = append(t.Fields, legacyField{Name: name, Def: def})
	}
	frows.Close()
	if la.tables["bdus_cfg_relations"] {
		rrows, err := db.QueryContext(ctx, `SELECT from_tb, from_col, to_tb, to_col, COALESCE(on_delete, ''), COALESCE(on_update, '')
			FROM bdus_cfg_relations ORDER BY id`)
		if err != nil {
			return nil, fmt.Errorf("read bdus_cfg_relations: %w", err)
		}
		for rrows.Next() {
			var r legacyRelation
			if err := rrows.Scan(&r.FromTb, &r.FromCol, &r.ToTb, &r.ToCol, &r.OnDelete, &r.OnUpdate); err != nil {
				rrows.Close()
				return nil, err
			}
			if r.FromCol == "id_link" {
				if t, ok := byName[r.FromTb]; ok {
					t.PluginOf = r.ToTb // a plugin table's parent (BraDypUS M035)
				}
				continue
			}
			la.Relations = append(la.Relations, r)
		}
		rrows.Close()
	}
	// Parents before their plugin tables.
	sort.SliceStable(la.Tables, func(i, j int) bool { return !la.Tables[i].IsPlugin && la.Tables[j].IsPlugin })
	la.markFeatures()
	if la.zotero, err = la.hasZotero(ctx); err != nil {
		return nil, err
	}
	return la, nil
}

// isSystemColumn: columns every BraDypUS table has, which are not fields.
func isSystemColumn(name string) bool {
	switch name {
	case "id", "creator", "id_link", "table_link":
		return true
	}
	return false
}

// count is the number of rows of a table of the legacy file (0 when the
// table is not there).
func (la *legacyApp) count(ctx context.Context, table string) (int64, error) {
	if !la.tables[table] {
		return 0, nil
	}
	var n int64
	err := la.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM "`+strings.ReplaceAll(table, `"`, `""`)+`"`).Scan(&n)
	return n, err
}

// legacyFeatures maps the flags BraDypUS sets on a table's configuration
// when one of its plugins is activated (controllers/Config.php) to
// Strata's feature of the same data: the columns keep their names.
var legacyFeatures = []struct{ flag, feature string }{
	{"fuzzy_date", "chronology"}, {"chronology", "chronology"}, {"osteology", "osteology"},
}

// markFeatures notes the plugin features of each table: chronology and
// osteology are columns of the table itself; radiocarbon is a plugin table
// flagged radiocarbon whose parent gets the feature.
func (la *legacyApp) markFeatures() {
	byName := map[string]*legacyTable{}
	for _, t := range la.Tables {
		byName[t.Name] = t
	}
	for _, t := range la.Tables {
		for _, lf := range legacyFeatures {
			if truthy(t.Extra[lf.flag]) && !slices.Contains(t.Features, lf.feature) {
				t.Features = append(t.Features, lf.feature)
			}
		}
		if t.IsPlugin && truthy(t.Extra["radiocarbon"]) {
			if p, ok := byName[t.PluginOf]; ok {
				t.Child = "radiocarbon"
				if !slices.Contains(p.Features, "radiocarbon") {
					p.Features = append(p.Features, "radiocarbon")
				}
			}
		}
	}
}

// featureNames are every feature the application needs, once each.
func (la *legacyApp) featureNames() []string {
	var out []string
	for _, t := range la.Tables {
		for _, f := range t.Features {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	sort.Strings(out)
	return out
}

func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case float64:
		return x != 0
	case int64:
		// SQLite's INTEGER flags (is_global) come as int64.
		return x != 0
	case string:
		return x != "" && x != "0" && !strings.EqualFold(x, "false")
	}
	return v != nil
}
