package bradypus

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strings"

	"modernc.org/sqlite"
)

// A BraDypUS 4 folder, as BraDypUS 5's own migrations read it when they
// bring one to 5 (lib/DB/System/Migrate.php's maybeRemovePrefix* and
// M001–M038, read in lad-sapienza/bdus-api):
//   - cfg/app_data.json (or cfg/config.json): the definition, no
//     bdus_version (Migrate::isMajorUpgradeNeeded);
//   - cfg/tables.json, {"tables": [...]}: name, label, order, id_field,
//     preview, is_plugin, the parent's plugin list (a plugin table names no
//     parent: M021), link [{other_tb, fld: [{my, other}]}] (M011), rs (the
//     field that names a unit in bdus_rs: M030), backlinks; everything
//     else is the table's extra (M011). Names may carry the application's
//     prefix "<app>__", and system tables may be listed (both dropped by
//     maybeRemovePrefixFromConfig);
//   - cfg/<tb>.json: tb's fields, a list of {name, label, type, db_type,
//     ...} (M011), id_from_tb and get_values_from_tb perhaps prefixed;
//   - template/<tb>.<name>.json: the print templates (M011);
//   - db/bdus.sqlite: every table named with the prefix (or, in later 4.x,
//     bare): the user tables, users, vocabularies, versions (no operation:
//     M009), userlinks (file links among them, the file side named files:
//     M002, M033; table names prefixed), files, geodata (table_link
//     prefixed), rs (first and second are values of the rs field, or ids:
//     M030), queries (text is SQL: M003), charts (sqltext: M004), log,
//     api_keys. user_table_privs and file_links do not exist yet (M001,
//     M002).
//
// readLegacy4 reads that into the model readLegacy builds for 5: the
// configuration from the JSON files, and the data through views named as
// BraDypUS 5 names them (bdus_users over <prefix>users, bare table names
// over prefixed ones, the values remapped as the migrations remap them),
// made on every connection of the file (openLegacy4), so the one
// conversion reads both. What cannot be mapped with confidence is listed
// and refused (major_upgrade_not_supported), never dropped.

// systemNames4 are BraDypUS's system tables without prefix
// (Migrate::SYSTEM_TABLE_NAMES, M011's isSystemTable).
var systemNames4 = []string{"files", "file_links", "userlinks", "users", "user_table_privs", "geodata", "rs", "versions", "log",
	"vocabularies", "queries", "charts", "api_keys", "migrations", "cfg_tables", "cfg_fields", "cfg_templates"}

// tableKeys4 are the tables.json keys M011 stores in columns; the others
// go to the table's extra.
var tableKeys4 = []string{"name", "label", "order", "id_field", "preview", "is_plugin", "plugin_of", "sort", "link", "backlink", "fields"}

// stmt is a statement run on every connection of a BraDypUS 4 file.
type stmt struct {
	q    string
	args []any
}

// layout4 is a BraDypUS 4 folder read: the model, the views that show its
// file as BraDypUS 5's, and what it holds that cannot be converted.
type layout4 struct {
	la      *legacyApp
	prefix  string
	file    map[string]string // bare name → the table's name in the file
	cols    map[string][]string
	types   map[string]string // "tb.col" → declared type
	views   []stmt
	refused []string
	notes   []string  // warnings for the report
	skipped []Refused // entries of the folder not read (confine.go)
}

func (l *layout4) refuse(format string, args ...any) {
	l.refused = append(l.refused, fmt.Sprintf(format, args...))
}

func sqlString(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// strip is the SQL of column c without the prefix (as the REPLACEs of
// maybeRemovePrefixFromTableLinks and M007, at its start only).
func (l *layout4) strip(c string) string {
	if l.prefix == "" {
		return c
	}
	n := len(l.prefix)
	return fmt.Sprintf(`CASE WHEN substr(%s, 1, %d) = %s THEN substr(%s, %d) ELSE %s END`, c, n, sqlString(l.prefix), c, n+1, c)
}

func (l *layout4) bare(name string) string { return strings.TrimPrefix(name, l.prefix) }

// main is the quoted name, in the file, of the table named bare.
func (l *layout4) main(bare string) string { return `main.` + quoteLegacy(l.file[bare]) }

// col is column c of the system table bare when the file has it, else NULL.
func (l *layout4) col(bare, c string) string {
	if slices.Contains(l.cols[bare], c) {
		return quoteLegacy(c)
	}
	return "NULL"
}

func (l *layout4) has(bare string) bool { _, ok := l.file[bare]; return ok }

// readLegacy4 reads the BraDypUS 4 folder f. An error is a folder that is
// not readable at all; what it holds and cannot be converted is in
// refused.
func readLegacy4(ctx context.Context, r *folderRoot) (*layout4, error) {
	raw, err := openLegacy(r)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	l := &layout4{file: map[string]string{}, cols: map[string][]string{}, types: map[string]string{}}
	var names []string
	rows, err := raw.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, n)
	}
	rows.Close()
	l.la = &legacyApp{tables: map[string]bool{}}
	if slices.Contains(names, "bdus_users") {
		// BraDypUS 5 has already been at it but did not finish (it writes
		// bdus_version last): neither layout can be read with confidence.
		l.refuse("the database has BraDypUS 5's tables (bdus_users) but the folder has no bdus_version: open it once with BraDypUS 5 to finish its migration")
		return l, nil
	}
	if err := l.findPrefix(names); err != nil {
		return nil, err
	}
	for _, n := range names {
		if o, ok := l.file[l.bare(n)]; ok {
			// Both <prefix>x and x: which one the application reads is unclear.
			l.refuse("tables %s and %s are both named %s without the prefix", min(o, n), max(o, n), l.bare(n))
			continue
		}
		l.file[l.bare(n)] = n
		cr, err := raw.QueryContext(ctx, `SELECT name, COALESCE(type, '') FROM pragma_table_info(?)`, n)
		if err != nil {
			return nil, err
		}
		for cr.Next() {
			var c, typ string
			if err := cr.Scan(&c, &typ); err != nil {
				cr.Close()
				return nil, err
			}
			l.cols[l.bare(n)] = append(l.cols[l.bare(n)], c)
			l.types[l.bare(n)+"."+c] = typ
		}
		cr.Close()
	}
	if err := l.readConfig(r); err != nil {
		return nil, err
	}
	if err := l.systemViews(ctx, raw); err != nil {
		return nil, err
	}
	if err := l.templates(r); err != nil {
		return nil, err
	}
	if err := l.checkPlugins(ctx, raw); err != nil {
		return nil, err
	}
	l.la.markFeatures()
	return l, nil
}

// findPrefix finds the application's table prefix: the one its users
// table carries (BraDypUS 4 named it <app>__users), or none.
func (l *layout4) findPrefix(names []string) error {
	var prefixed []string
	for _, n := range names {
		if p, ok := strings.CutSuffix(n, "__users"); ok && p != "" {
			prefixed = append(prefixed, p+"__")
		}
	}
	switch {
	case len(prefixed) == 1:
		l.prefix = prefixed[0]
	case len(prefixed) > 1:
		return fmt.Errorf("more than one users table (%s): which prefix is the application's is unclear", strings.Join(prefixed, ", "))
	case !slices.Contains(names, "users"):
		return errors.New("no users table: not a BraDypUS 4 database")
	}
	return nil
}

func isSystem4(bare string) bool {
	return slices.Contains(systemNames4, strings.TrimPrefix(bare, "bdus_"))
}

// readConfig reads cfg/tables.json and cfg/<tb>.json into the model.
func (l *layout4) readConfig(r *folderRoot) error {
	raw, err := r.readFile("cfg/tables.json")
	if _, ok := asRefused(err); ok {
		// The configuration cannot be left out: nothing starts.
		l.refuse("%s", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("cfg/tables.json: %w", err)
	}
	var doc struct {
		Tables []map[string]any `json:"tables"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("cfg/tables.json: %w", err)
	}
	byName := map[string]*legacyTable{}
	parents := map[string][]string{} // plugin → its parents
	type link struct{ from, my, to, other string }
	var links []link
	for i, row := range doc.Tables {
		name := l.bare(str(row["name"]))
		if name == "" || isSystem4(name) {
			continue
		}
		if byName[name] != nil {
			l.refuse("cfg/tables.json lists table %s twice", name)
			continue
		}
		t := &legacyTable{Name: name, Label: str(row["label"]), Order: str(row["order"]), IDField: str(row["id_field"]),
			IsPlugin: truthy(row["is_plugin"]), Sort: i, Extra: map[string]any{}}
		if t.IDField == "" {
			t.IDField = "id"
		}
		switch p := row["preview"].(type) {
		case []any:
			for _, x := range p {
				t.Preview = append(t.Preview, str(x))
			}
		case string:
			// BraDypUS 4 wrote a single preview field as a string too.
			for _, x := range strings.Split(p, ",") {
				if x = strings.TrimSpace(x); x != "" {
					t.Preview = append(t.Preview, x)
				}
			}
		}
		for k, v := range row {
			if !slices.Contains(tableKeys4, k) {
				t.Extra[k] = v
			}
		}
		if pl, ok := t.Extra["plugin"]; ok {
			list, _ := pl.([]any)
			if s, isStr := pl.(string); isStr && s != "" {
				list = []any{s}
			}
			for _, p := range list {
				if ps := l.bare(str(p)); ps != "" {
					parents[ps] = append(parents[ps], name)
				}
			}
			delete(t.Extra, "plugin") // M021 removes it once attached
		}
		if bl, ok := t.Extra["backlinks"].([]any); ok {
			for i, b := range bl {
				bl[i] = strings.ReplaceAll(str(b), l.prefix, "")
			}
		}
		if rs, ok := t.Extra["rs"]; ok && !truthy(rs) {
			delete(t.Extra, "rs")
		}
		if ls, ok := row["link"].([]any); ok {
			for _, x := range ls {
				m, _ := x.(map[string]any)
				other := l.bare(str(m["other_tb"]))
				flds, _ := m["fld"].([]any)
				for _, p := range flds {
					pm, _ := p.(map[string]any)
					if my := strings.TrimSpace(str(pm["my"])); other != "" && my != "" {
						links = append(links, link{name, my, other, strings.TrimSpace(str(pm["other"]))})
					}
				}
			}
		}
		if err := l.readFields(r, t); err != nil {
			return err
		}
		l.la.Tables = append(l.la.Tables, t)
		byName[name] = t
	}
	for plugin, ps := range parents {
		ps = slices.Compact(slices.Sorted(slices.Values(ps)))
		t, ok := byName[plugin]
		switch {
		case !ok:
			l.refuse("plugin table %s (of %s) is not in cfg/tables.json", plugin, strings.Join(ps, ", "))
		case len(ps) > 1:
			// M021 splits it into one table per parent; the split renames
			// tables, which this upgrade does not do.
			l.refuse("plugin table %s is shared by %s (BraDypUS 5 splits it into one table per parent)", plugin, strings.Join(ps, ", "))
		default:
			t.IsPlugin, t.PluginOf = true, ps[0]
		}
	}
	for _, t := range l.la.Tables {
		if t.IsPlugin && t.PluginOf == "" {
			l.refuse("plugin table %s has no parent (no table lists it in plugin)", t.Name)
		}
	}
	field := func(tb, c string) bool {
		t, ok := byName[tb]
		return ok && slices.ContainsFunc(t.Fields, func(f legacyField) bool { return f.Name == c })
	}
	for _, k := range links {
		// M011 stores a link as from this table's my to other's other;
		// Strata's relation goes from a field to id or a field (M026 turns
		// a link whose my is id around).
		r := legacyRelation{FromTb: k.from, FromCol: k.my, ToTb: k.to, ToCol: k.other, OnDelete: "RESTRICT", OnUpdate: "CASCADE"}
		if k.my == "id" && field(k.to, k.other) {
			r = legacyRelation{FromTb: k.to, FromCol: k.other, ToTb: k.from, ToCol: "id", OnDelete: "RESTRICT", OnUpdate: "CASCADE"}
		}
		ok := field(r.FromTb, r.FromCol) && (r.ToCol == "id" || field(r.ToTb, r.ToCol)) && !byName[r.FromTb].IsPlugin
		if !ok {
			l.refuse("link of %s (%s) to %s (%s) is not a field pointing at a table's id or field", k.from, k.my, k.to, k.other)
			continue
		}
		if !slices.Contains(l.la.Relations, r) {
			l.la.Relations = append(l.la.Relations, r)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(l.file)) {
		if !isSystem4(n) && byName[n] == nil {
			l.refuse("table %s is in the database but not in cfg/tables.json", l.file[n])
		}
	}
	sort.SliceStable(l.la.Tables, func(i, j int) bool { return !l.la.Tables[i].IsPlugin && l.la.Tables[j].IsPlugin })
	for _, t := range l.la.Tables {
		if n, ok := l.file[t.Name]; ok {
			l.la.tables[t.Name] = true
			if n != t.Name {
				l.views = append(l.views, stmt{q: `CREATE TEMP VIEW ` + quoteLegacy(t.Name) + ` AS SELECT * FROM main.` + quoteLegacy(n)})
			}
		}
	}
	return nil
}

// readFields reads cfg/<tb>.json (the prefixed name too: M011 reads the
// bare one, after maybeRemovePrefixFromFieldConfigs).
func (l *layout4) readFields(r *folderRoot, t *legacyTable) error {
	var raw []byte
	var err error
	for _, n := range []string{t.Name, l.prefix + t.Name} {
		// The table's name comes from cfg/tables.json: it must name one
		// file of cfg/, nothing else.
		if err = checkBase("cfg", n+".json"); err == nil {
			raw, err = r.readFile("cfg/" + n + ".json")
		}
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if _, ok := asRefused(err); ok {
		l.refuse("the fields of table %s: %s", t.Name, err)
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if len(l.cols[t.Name]) > 0 && slices.ContainsFunc(l.cols[t.Name], func(c string) bool { return !isSystemColumn(c) }) {
			l.refuse("table %s has columns but no cfg/%s.json", t.Name, t.Name)
		}
		return nil
	}
	if err != nil {
		return err
	}
	var list []map[string]any
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("cfg/%s.json: %w", t.Name, err)
	}
	described := map[string]bool{}
	for _, def := range list {
		name := strings.TrimSpace(str(def["name"]))
		if name == "" || isSystemColumn(name) {
			continue
		}
		described[name] = true
		for _, k := range []string{"id_from_tb", "get_values_from_tb"} {
			if s, ok := def[k].(string); ok {
				def[k] = strings.TrimPrefix(s, l.prefix)
			}
		}
		if str(def["type"]) == "" {
			def["type"] = "text" // M011's default
		}
		if str(def["db_type"]) == "" {
			// BraDypUS 4 could leave it out: the column says it.
			def["db_type"] = l.declared(t.Name, name)
		}
		def["name"] = name
		t.Fields = append(t.Fields, legacyField{Name: name, Def: def})
	}
	for _, c := range l.cols[t.Name] {
		if !isSystemColumn(c) && !described[c] {
			l.refuse("column %s.%s is not described in cfg/%s.json", t.Name, c, t.Name)
		}
	}
	return nil
}

// declared is the declared type of column c of table tb ("TEXT" if none).
func (l *layout4) declared(tb, c string) string {
	if s := l.types[tb+"."+c]; s != "" {
		return s
	}
	return "TEXT"
}

// systemViews makes the views of BraDypUS 5's system tables over the 4
// ones, remapped as the migrations remap them, and refuses what they do
// not map.
func (l *layout4) systemViews(ctx context.Context, raw *sql.DB) error {
	view := func(name, sel string) {
		l.views = append(l.views, stmt{q: `CREATE TEMP VIEW ` + name + ` AS ` + sel})
		l.la.tables[name] = true
	}
	if !l.has("users") {
		return errors.New("no users table")
	}
	view("bdus_users", `SELECT * FROM `+l.main("users"))
	if l.has("vocabularies") {
		view("bdus_vocabularies", `SELECT * FROM `+l.main("vocabularies"))
	}
	if l.has("versions") {
		// M009 adds operation (every older version an update); M010 drops
		// BraDypUS 4's versions table, whose content this keeps.
		view("bdus_versions", `SELECT id, `+l.col("versions", "userid")+` AS userid, `+l.col("versions", "time")+` AS time, `+
			l.strip("tb")+` AS tb, "rowid" AS "rowid", `+l.col("versions", "content")+` AS content, `+
			`COALESCE(`+l.col("versions", "operation")+`, 'update') AS operation FROM `+l.main("versions"))
	}
	if l.has("files") {
		view("bdus_files", `SELECT * FROM `+l.main("files"))
	}
	if l.has("geodata") {
		view("bdus_geodata", `SELECT id, `+l.strip("table_link")+` AS table_link, id_link, geometry FROM `+l.main("geodata"))
		// BraDypUS 4's tables.json has no flag for it: a table with
		// geodata keeps geodata.
		rows, err := raw.QueryContext(ctx, `SELECT DISTINCT `+l.strip("table_link")+` FROM `+l.main("geodata"))
		if err != nil {
			return err
		}
		with := map[string]bool{}
		for rows.Next() {
			var tb sql.NullString
			if err := rows.Scan(&tb); err != nil {
				rows.Close()
				return err
			}
			with[tb.String] = true
		}
		rows.Close()
		for _, t := range l.la.Tables {
			if with[t.Name] && !t.IsPlugin {
				t.Extra["geodata"] = true
			}
		}
	}
	if l.has("userlinks") {
		// A link with files on one side is a file's link to a record
		// (M002, M033).
		one, two := l.strip("tb_one"), l.strip("tb_two")
		isFile := func(c string) string { return c + ` IN ('files', 'bdus_files')` }
		from := ` FROM ` + l.main("userlinks")
		view("bdus_userlinks", `SELECT id, `+one+` AS tb_one, id_one, `+two+` AS tb_two, id_two, sort, `+l.col("userlinks", "label")+` AS label`+
			from+` WHERE NOT `+isFile(one)+` AND NOT `+isFile(two))
		view("bdus_file_links", `SELECT id, id_one AS file_id, `+two+` AS table_name, id_two AS record_id, sort`+from+` WHERE `+isFile(one)+` AND NOT `+isFile(two)+
			` UNION ALL SELECT id, id_two, `+one+`, id_one, sort`+from+` WHERE `+isFile(two)+` AND NOT `+isFile(one))
		if err := l.refuseRows(ctx, raw, `SELECT id FROM `+l.main("userlinks")+` WHERE `+isFile(one)+` AND `+isFile(two),
			"userlinks %s link a file to a file"); err != nil {
			return err
		}
	}
	if l.has("rs") {
		view("bdus_rs", l.rsSelect())
		if err := l.refuseRows(ctx, raw, `SELECT id FROM (`+l.rsSelect()+`) WHERE first IS NULL OR second IS NULL`,
			"stratigraphic relations %s name units that are not records of their table"); err != nil {
			return err
		}
		for _, t := range l.la.Tables {
			f := l.rsField(t)
			if f == "" || !l.has(t.Name) {
				continue
			}
			// A label two records share cannot say which one is meant.
			q := `SELECT DISTINCT r.id FROM ` + l.main("rs") + ` r JOIN ` + l.main(t.Name) + ` x ON CAST(x.` + quoteLegacy(f) + ` AS TEXT) IN (CAST(r.first AS TEXT), CAST(r.second AS TEXT))
				WHERE ` + l.strip("r.tb") + ` = ` + sqlString(t.Name) + ` GROUP BY r.id, CAST(x.` + quoteLegacy(f) + ` AS TEXT) HAVING COUNT(*) > 1`
			if err := l.refuseRows(ctx, raw, q, "stratigraphic relations %s name a unit by a "+f+" that more than one record of "+t.Name+" has"); err != nil {
				return err
			}
		}
	}
	if l.has("queries") {
		// M003: BraDypUS 4 kept a saved query as SQL text; 5 keeps it as
		// an expert search of that text, created when it was dated.
		query := `json_object('search_type', 'sqlExpert', 'querytext', COALESCE(` + l.col("queries", "text") + `, ''))`
		if slices.Contains(l.cols["queries"], "query") {
			query = `COALESCE("query", ` + query + `)`
		}
		created := `COALESCE(` + l.col("queries", "created_at") + `, ` + l.col("queries", "date") + `)`
		view("bdus_queries", `SELECT id, user_id, `+created+` AS created_at, name, `+l.strip("tb")+` AS tb, `+query+` AS query, `+
			l.col("queries", "is_global")+` AS is_global FROM `+l.main("queries"))
		if l.prefix != "" {
			var n int
			if err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+l.main("queries")+` WHERE instr(`+l.col("queries", "text")+`, ?) > 0`, l.prefix).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				l.notes = append(l.notes, fmt.Sprintf("%d saved queries name tables with the prefix %s in their SQL: they are kept as written", n, l.prefix))
			}
		}
	}
	if l.has("charts") {
		// BraDypUS 4 kept a chart as SQL (sqltext); M004 gives it an empty
		// definition, losing it: this upgrade will not.
		if err := l.refuseRows(ctx, raw, `SELECT id FROM `+l.main("charts"), "charts %s are BraDypUS 4 SQL charts (sqltext), which have no definition to convert"); err != nil {
			return err
		}
	}
	for _, s := range []string{"user_table_privs", "file_links"} {
		if l.has(s) {
			l.refuse("the table %s%s is not a BraDypUS 4 table (BraDypUS 5 makes it): the folder is half migrated", l.prefix, s)
		}
	}
	return nil
}

// rsField is the field whose values bdus_rs of BraDypUS 4 holds for t
// ("" when they are ids: M030).
func (l *layout4) rsField(t *legacyTable) string {
	s, ok := t.Extra["rs"].(string)
	if !ok || s == "id" || s == "1" || strings.TrimSpace(s) == "" {
		return ""
	}
	return s
}

// rsSelect reads BraDypUS 4's rs as 5's: first and second resolved to
// record ids as M030 does (the record whose rs field has the value, else
// the value itself when it is a whole number; NULL when neither).
func (l *layout4) rsSelect() string {
	asID := func(c string) string {
		return `(CASE WHEN CAST(CAST(r.` + c + ` AS INTEGER) AS TEXT) = CAST(r.` + c + ` AS TEXT) THEN CAST(r.` + c + ` AS INTEGER) END)`
	}
	tb := l.strip("r.tb")
	resolve := func(c string) string {
		var b strings.Builder
		b.WriteString(`CASE ` + tb)
		n := 0
		for _, t := range l.la.Tables {
			f := l.rsField(t)
			if f == "" || !l.has(t.Name) || !slices.Contains(l.cols[t.Name], f) {
				continue
			}
			n++
			b.WriteString(` WHEN ` + sqlString(t.Name) + ` THEN COALESCE((SELECT MIN(x.id) FROM ` + l.main(t.Name) + ` x WHERE CAST(x.` + quoteLegacy(f) +
				` AS TEXT) = CAST(r.` + c + ` AS TEXT)), ` + asID(c) + `)`)
		}
		if n == 0 {
			return asID(c)
		}
		b.WriteString(` ELSE ` + asID(c) + ` END`)
		return b.String()
	}
	return `SELECT r.id AS id, ` + tb + ` AS tb, ` + resolve("first") + ` AS first, ` + resolve("second") + ` AS second, r.relation AS relation FROM ` + l.main("rs") + ` r`
}

// refuseRows refuses the rows q finds (their ids in msg's %s), naming up
// to ten.
func (l *layout4) refuseRows(ctx context.Context, raw *sql.DB, q, msg string) error {
	rows, err := raw.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	var ids []string
	n := 0
	for rows.Next() {
		var id any
		if err := rows.Scan(&id); err != nil {
			return err
		}
		if n++; n <= 10 {
			ids = append(ids, fmt.Sprint(id))
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n > 0 {
		list := strings.Join(ids, ", ")
		if n > 10 {
			list += fmt.Sprintf(" and %d more", n-10)
		}
		l.refuse(msg, list)
	}
	return nil
}

// checkPlugins refuses rows of a plugin table that belong to another
// table than its parent (BraDypUS 4 discriminated them by table_link;
// M021 and M037 move them to new tables).
func (l *layout4) checkPlugins(ctx context.Context, raw *sql.DB) error {
	for _, t := range l.la.Tables {
		if !t.IsPlugin || t.PluginOf == "" || !l.has(t.Name) || !slices.Contains(l.cols[t.Name], "table_link") {
			continue
		}
		q := `SELECT id FROM ` + l.main(t.Name) + ` WHERE table_link IS NOT NULL AND table_link <> '' AND ` + l.strip("table_link") + ` <> ` + sqlString(t.PluginOf)
		if err := l.refuseRows(ctx, raw, q, "rows %s of plugin table "+t.Name+" belong to another table than "+t.PluginOf); err != nil {
			return err
		}
	}
	return nil
}

// templates reads template/<tb>.<name>.json into bdus_cfg_templates, as
// M011 imports them (a temporary table of each connection).
func (l *layout4) templates(r *folderRoot) error {
	l.views = append(l.views, stmt{q: `CREATE TEMP TABLE bdus_cfg_templates (id INTEGER PRIMARY KEY, table_name TEXT, name TEXT, content TEXT, updated_at TEXT)`})
	l.la.tables["bdus_cfg_templates"] = true
	entries, err := r.readDir("template")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if e, ok := asRefused(err); ok {
		l.skipped = append(l.skipped, e)
		l.notes = append(l.notes, fmt.Sprintf("the template folder is not read: %s", err))
		return nil
	}
	if err != nil {
		return fmt.Errorf("template folder: %w", err)
	}
	for _, e := range entries {
		parts := strings.SplitN(e.Name(), ".", 3)
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || len(parts) != 3 {
			continue
		}
		// A link or anything but a regular file is left out, named in
		// the answer, never followed.
		b, err := r.readFile("template/" + e.Name())
		if re, ok := asRefused(err); ok {
			l.skipped = append(l.skipped, re)
			l.notes = append(l.notes, fmt.Sprintf("template file template/%s (%s of %s) is not converted: %s", e.Name(), parts[1], parts[0], err))
			continue
		}
		if err != nil {
			return err
		}
		l.views = append(l.views, stmt{q: `INSERT INTO temp.bdus_cfg_templates (table_name, name, content) VALUES (?, ?, ?)`,
			args: []any{l.bare(parts[0]), parts[1], string(b)}})
	}
	return nil
}

// openLegacy4 opens the file of a BraDypUS 4 folder read only, every
// connection with l's views.
func openLegacy4(r *folderRoot, l *layout4) (*sql.DB, error) {
	db, err := openLegacyWith(r, func(conn sqlite.ExecQuerierContext) error {
		for _, s := range l.views {
			args := make([]driver.NamedValue, len(s.args))
			for i, a := range s.args {
				args[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
			}
			if _, err := conn.ExecContext(context.Background(), s.q, args); err != nil {
				return fmt.Errorf("%s: %w", s.q, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.la.db = db
	return db, nil
}

type connector struct {
	drv *sqlite.Driver
	dsn string
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.drv }
