package bradypus_test

import (
	"context"
	"crypto/sha1"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// fixture4 describes a BraDypUS-4-shaped application to generate, as
// BraDypUS 5's migrations read one (Migrate::maybeRemovePrefix*, M002,
// M003, M004, M009, M011, M021, M030, M033): cfg/app_data.json without
// bdus_version, cfg/tables.json and cfg/<tb>.json, template/<tb>.<name>.json,
// and db/bdus.sqlite with every table named <app>__<name> (or bare).
type fixture4 struct {
	records     int
	bare        bool   // tables without the prefix (later 4.x)
	badValue    string // finds.weight of the last find
	sharedPlug  bool   // the samples plugin is listed by sites too (M021's split)
	chart       bool   // a BraDypUS 4 SQL chart
	orphanRS    bool   // a stratigraphic relation names a unit no record has
	foreignPlug bool   // a samples row belongs to sites (table_link)
	undescribed bool   // finds has a column cfg/finds.json does not describe
	unlisted    bool   // a table of the database is not in tables.json
	twin        bool   // finds is there with the prefix and without
}

// makeFolder4 writes the fixture as <dir>/<name>.
func makeFolder4(t testing.TB, dir, name string, fx fixture4) string {
	t.Helper()
	root := filepath.Join(dir, name)
	for _, d := range []string{"db", "files", "cfg", "template"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	p := name + "__"
	if fx.bare {
		p = ""
	}
	write := func(rel string, v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if s, ok := v.(string); ok {
			b = []byte(s)
		}
		if err := os.WriteFile(filepath.Join(root, rel), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("cfg/app_data.json", map[string]any{"definition": "Old excavations at " + name, "db_engine": "sqlite", "status": "on", "maxImageSize": 1500})
	plugin := []string{p + "finds_samples"}
	tables := []map[string]any{
		// BraDypUS 4 listed system tables too (maybeRemovePrefixFromConfig).
		{"name": p + "files", "label": "Files", "order": "id", "id_field": "id", "preview": []string{"id", "filename"}},
		{"name": p + "sites", "label": "Sites", "order": "name", "id_field": "name", "preview": []string{"id", "name"},
			"backlinks": []string{p + "finds:" + p + "finds:site"}},
		{"name": p + "finds", "label": "Finds", "order": "id", "id_field": "label", "preview": []string{"id", "label", "material"},
			"rs": "label", "plugin": plugin,
			"link": []any{map[string]any{"other_tb": p + "sites", "fld": []any{map[string]string{"my": "site", "other": "id"}}}}},
		{"name": p + "finds_samples", "label": "Samples", "order": "id", "id_field": "id", "is_plugin": "1"},
	}
	if fx.sharedPlug {
		tables[1]["plugin"] = plugin
	}
	write("cfg/tables.json", map[string]any{"tables": tables})
	write("cfg/sites.json", []map[string]any{
		{"name": "id", "label": "ID", "type": "text", "db_type": "INTEGER", "readonly": "1"},
		{"name": "name", "label": "Name", "type": "text", "db_type": "TEXT", "check": []string{"not_empty", "unique"}},
		// No db_type: BraDypUS 4 could leave it to the column.
		{"name": "region", "label": "Region", "type": "combo_select", "get_values_from_tb": p + "sites:region"},
	})
	write("cfg/finds.json", []map[string]any{
		{"name": "id", "label": "ID", "type": "text", "db_type": "INTEGER"},
		{"name": "label", "label": "Label", "type": "text", "db_type": "TEXT", "check": []string{"not_empty"}},
		{"name": "weight", "label": "Weight", "type": "text", "db_type": "REAL"},
		{"name": "site", "label": "Site", "type": "select", "db_type": "INTEGER", "id_from_tb": p + "sites"},
		{"name": "material", "label": "Material", "type": "select", "db_type": "TEXT", "vocabulary_set": "materials"},
		{"name": "found", "label": "Found on", "type": "date", "db_type": "TEXT"},
		{"name": "complete", "label": "Complete", "type": "boolean", "db_type": "INTEGER"},
		{"name": "notes", "label": "Notes", "type": "long_text"},
		{"name": "tags", "label": "Tags", "type": "multi_select", "db_type": "TEXT", "vocabulary_set": "materials"},
		{"name": "pct", "label": "Preserved", "type": "slider", "db_type": "INTEGER", "min": "0", "max": "100"},
	})
	// M011 reads cfg/<bare name>.json; a prefixed file name is read too.
	write("cfg/"+p+"finds_samples.json", []map[string]any{{"name": "lab", "label": "Lab", "type": "text", "db_type": "TEXT"}})
	write("template/finds.card.json", `{"sections":[{"label":"Find","content":[{"field":"label","width":"1/2"},"material"]}]}`)

	db, err := sql.Open("sqlite", filepath.Join(root, "db", "bdus.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		q = strings.ReplaceAll(q, "P_", p)
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	extra := ""
	if fx.undescribed {
		extra = ", colour TEXT"
	}
	for _, ddl := range []string{
		`CREATE TABLE P_users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, password TEXT NOT NULL, privilege INTEGER NOT NULL, settings TEXT)`,
		`CREATE TABLE P_vocabularies (id INTEGER PRIMARY KEY, voc TEXT NOT NULL, def TEXT NOT NULL, sort INTEGER)`,
		// Before M009 (operation) and M010 (editsql NOT NULL).
		`CREATE TABLE P_versions (id INTEGER PRIMARY KEY, userid INTEGER NOT NULL, time INTEGER NOT NULL, tb TEXT NOT NULL, rowid INTEGER NOT NULL,
			content TEXT NOT NULL, editsql TEXT NOT NULL, editvalues TEXT)`,
		// Before M029 (label); file links are here (M002, M033).
		`CREATE TABLE P_userlinks (id INTEGER PRIMARY KEY, tb_one TEXT NOT NULL, id_one INTEGER NOT NULL, tb_two TEXT NOT NULL, id_two INTEGER NOT NULL, sort INTEGER)`,
		`CREATE TABLE P_files (id INTEGER PRIMARY KEY, creator TEXT NOT NULL, ext TEXT NOT NULL, keywords TEXT, description TEXT, printable INTEGER, filename TEXT NOT NULL)`,
		`CREATE TABLE P_geodata (id INTEGER PRIMARY KEY, table_link TEXT NOT NULL, id_link INTEGER NOT NULL, geometry TEXT NOT NULL)`,
		// Before M030: first and second are values of the rs field.
		`CREATE TABLE P_rs (id INTEGER PRIMARY KEY, tb TEXT NOT NULL, first TEXT NOT NULL, second TEXT NOT NULL, relation INTEGER NOT NULL)`,
		// Before M003 and M024.
		`CREATE TABLE P_queries (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, name TEXT NOT NULL, tb TEXT NOT NULL, text TEXT, date TEXT, vals TEXT, is_global INTEGER)`,
		// Before M004 and M024.
		`CREATE TABLE P_charts (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, name TEXT NOT NULL, sqltext TEXT, date TEXT)`,
		`CREATE TABLE P_log (id INTEGER PRIMARY KEY, msg TEXT)`,
		`CREATE TABLE P_sites (id INTEGER PRIMARY KEY, creator INTEGER, name TEXT, region VARCHAR(100))`,
		`CREATE TABLE P_finds (id INTEGER PRIMARY KEY, creator INTEGER, label TEXT, weight TEXT, site INTEGER, material TEXT, found TEXT,
			complete INTEGER, notes TEXT, tags TEXT, pct INTEGER` + extra + `)`,
		`CREATE TABLE P_finds_samples (id INTEGER PRIMARY KEY, creator INTEGER, table_link TEXT, id_link INTEGER, lab TEXT)`,
	} {
		exec(ddl)
	}
	if fx.twin && p != "" {
		exec(`CREATE TABLE finds (id INTEGER PRIMARY KEY, creator INTEGER, label TEXT)`)
	}
	if fx.unlisted {
		exec(`CREATE TABLE P_trenches (id INTEGER PRIMARY KEY, creator INTEGER, code TEXT)`)
	}
	bc, _ := bcrypt.GenerateFromPassword([]byte(superPwd), bcrypt.MinCost)
	sum := sha1.Sum([]byte(writerPwd))
	exec(`INSERT INTO P_users VALUES (1, 'Boss', ?, ?, 1, NULL), (7, 'Writer', 'writer@example.org', ?, 20, NULL)`, superEmail, string(bc), hex.EncodeToString(sum[:]))
	exec(`INSERT INTO P_vocabularies VALUES (1, 'materials', 'pottery', 1), (2, 'materials', 'glass', 2)`)
	exec(`INSERT INTO P_sites VALUES (1, 1, 'Ostia', 'Lazio'), (2, 7, 'Pompeii', 'Campania')`)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= fx.records; i++ {
		weight := fmt.Sprintf("%d.5", i)
		if i == fx.records && fx.badValue != "" {
			weight = fx.badValue
		}
		q := `INSERT INTO P_finds (id, creator, label, weight, site, material, found, complete, notes, tags, pct) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
		if _, err := tx.Exec(strings.ReplaceAll(q, "P_", p), i, 7, fmt.Sprintf("US-%d", 100+i), weight, 1+i%2, []string{"pottery", "glass"}[i%2],
			"2019-07-0"+fmt.Sprint(1+i%9), i%2, "notes of find "+fmt.Sprint(i), "pottery;glass", i%101); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(strings.ReplaceAll(`INSERT INTO P_versions (userid, time, tb, rowid, content, editsql) VALUES (7, 1500000000, ?, ?, ?, 'UPDATE ...')`, "P_", p),
			p+"finds", i, fmt.Sprintf(`{"label":"US-%d old"}`, 100+i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	tenant := p + "finds"
	if fx.foreignPlug {
		tenant = p + "sites"
	}
	exec(`INSERT INTO P_finds_samples VALUES (1, 7, ?, 1, 'Oxford'), (2, 7, ?, 1, 'Kiel')`, p+"finds", tenant)
	// Units named by their label (finds' rs field); the second by its id.
	second := "US-103"
	if fx.orphanRS {
		second = "US-999x"
	}
	exec(`INSERT INTO P_rs VALUES (1, ?, 'US-101', 'US-102', 1), (2, ?, 'US-102', ?, 6)`, p+"finds", p+"finds", second)
	// A record-to-record link and three file links, the file on either side.
	exec(`INSERT INTO P_userlinks VALUES (1, ?, 1, ?, 1, NULL), (2, ?, 1, ?, 1, 1), (3, ?, 1, ?, 2, 2), (4, ?, 1, ?, 2, 1)`,
		p+"finds", p+"sites", p+"files", p+"finds", p+"finds", p+"files", p+"sites", p+"files")
	for i := 1; i <= 2; i++ {
		exec(`INSERT INTO P_files VALUES (?, '7', 'txt', ?, ?, 1, ?)`, i, "kw"+fmt.Sprint(i), "desc "+fmt.Sprint(i), "photo-"+fmt.Sprint(i))
		if err := os.WriteFile(filepath.Join(root, "files", fmt.Sprintf("%d.txt", i)), fileBytes(i), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO P_geodata VALUES (1, ?, 1, 'POINT(12.2833 41.7558)'), (2, ?, 1, '{"type":"Point","coordinates":[12.29,41.76]}')`, p+"finds", p+"sites")
	exec(`INSERT INTO P_queries VALUES (1, 7, 'Glass', ?, 'material = ''glass''', '2018-03-04 10:00:00', NULL, 0)`, p+"finds")
	if fx.chart {
		exec(`INSERT INTO P_charts VALUES (1, 1, 'By material', 'SELECT material, count(*) FROM finds GROUP BY material', '2018-01-01')`)
	}
	exec(`INSERT INTO P_log VALUES (1, 'logged in')`)
	return root
}

func upgradeApp(app, email, pwd string) string {
	b, _ := json.Marshal(map[string]string{"app": app, "email": email, "password": pwd})
	return string(b)
}

func TestMajorUpgrade4(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, false)
		for _, c := range []struct {
			app  string
			bare bool
		}{{"old", false}, {"later", true}} {
			t.Run(c.app, func(t *testing.T) {
				folder := makeFolder4(t, filepath.Join(v.data, "bradypus"), c.app, fixture4{records: 12, bare: c.bare})
				if up, ok := v.listed(t, c.app); !ok || up != "major" {
					t.Fatalf("listed %v %v, want upgrade major", ok, up)
				}
				if code, body := v.do(t, "GET", "/"+c.app+"/api/records/finds", "", nil); code != http.StatusConflict || body["code"] != "major_upgrade_required" {
					t.Fatalf("before: %d %v", code, body)
				}
				if code, body := v.do(t, "POST", "/"+c.app+"/api/upgrade/major", upgradeApp(c.app, superEmail, "wrong"), nil); code != 401 {
					t.Fatalf("wrong password: %d %v", code, body)
				}
				code, body := v.do(t, "POST", "/"+c.app+"/api/upgrade/major", upgradeApp(c.app, superEmail, superPwd), nil)
				if code != 200 || body["code"] != "upgrade_complete" {
					t.Fatalf("upgrade: %d %v", code, body)
				}
				got := counts(body)
				for tb, want := range map[string][2]float64{"finds": {12, 12}, "sites": {2, 2}, "finds_samples": {2, 2}, "bdus_users": {2, 2},
					"bdus_versions": {12, 12}, "bdus_rs": {2, 2}, "bdus_userlinks": {1, 1}, "bdus_vocabularies": {2, 2},
					"bdus_files": {2, 2}, "bdus_file_links": {3, 3}, "bdus_geodata": {2, 2}, "bdus_queries": {1, 1}, "bdus_charts": {0, 0},
					"bdus_cfg_templates": {1, 1}} {
					if got[tb] != want {
						t.Errorf("count of %s: %v, want %v", tb, got[tb], want)
					}
				}
				if body["verified"] != true {
					t.Errorf("not verified: %v", body["counts"])
				}
				if _, err := os.Stat(folder); !os.IsNotExist(err) {
					t.Errorf("the BraDypUS folder was not set aside: %v", err)
				}
				// Both password schemes sign in (the SHA-1 one is rehashed).
				boss := testenv.Bearer(testenv.Login(t, v.inst.Server, c.app, superEmail, superPwd))
				writer := testenv.Bearer(testenv.Login(t, v.inst.Server, c.app, "writer@example.org", writerPwd))
				a, err := v.inst.Apps.Get(context.Background(), c.app)
				if err != nil {
					t.Fatal(err)
				}
				var hash string
				if err := a.DB.QueryRow(context.Background(), `SELECT password FROM `+a.DB.Sys("users")+` WHERE id = 7`).Scan(&hash); err != nil || !strings.HasPrefix(hash, "$2") {
					t.Errorf("the writer's SHA-1 hash was not upgraded on login: %q %v", hash, err)
				}
				base := "/" + c.app + "/api/"
				code, rec := v.do(t, "GET", base+"record/finds/2", "", writer)
				if code != 200 {
					t.Fatalf("record: %d %v", code, rec)
				}
				for f, want := range map[string]any{"label": "US-102", "weight": 2.5, "site": 1.0, "material": "pottery", "found": "2019-07-03",
					"complete": 0.0, "notes": "notes of find 2", "tags": "pottery;glass", "pct": 2.0} {
					if got := val(rec, f); got != want {
						t.Errorf("finds 2 %s: %#v, want %#v", f, got, want)
					}
				}
				// RS by label (US-101 > US-102 > US-103) became record ids.
				if rs := fmt.Sprint(rec["rs"]); len(rec["rs"].(map[string]any)) != 2 {
					t.Errorf("rs of finds 2: %s", rs)
				}
				code, rec = v.do(t, "GET", base+"record/finds/1", "", boss)
				if code != 200 {
					t.Fatalf("record 1: %d %v", code, rec)
				}
				if files, _ := rec["files"].([]any); len(files) != 2 {
					t.Errorf("files of finds 1: %v", rec["files"])
				}
				if s := fmt.Sprint(rec["plugins"]); !strings.Contains(s, "Oxford") || !strings.Contains(s, "Kiel") {
					t.Errorf("plugin rows of finds 1: %s", s)
				}
				if s := fmt.Sprint(rec["manualLinks"]); !strings.Contains(s, "ref_label:Ostia") {
					t.Errorf("manual link of finds 1: %v", s)
				}
				dl := v.raw(t, "GET", base+"file/2/download", "", boss)
				if dl.Code != 200 || dl.Body.String() != string(fileBytes(2)) {
					t.Errorf("download file 2: %d %q", dl.Code, dl.Body.String())
				}
				code, geo := v.do(t, "GET", base+"geoface?tb=sites", "", boss)
				if code != 200 || !strings.Contains(fmt.Sprint(geo), "12.29") {
					t.Errorf("geodata: %d %v", code, geo)
				}
				code, vers := v.do(t, "GET", base+"record/finds/2/versions", "", boss)
				if code != 200 || len(vers["versions"].([]any)) != 1 || !strings.Contains(fmt.Sprint(vers), "operation:update") {
					t.Errorf("versions: %d %v", code, vers)
				}
				code, qs := v.do(t, "GET", base+"saved-queries", "", writer)
				if code != 200 || !strings.Contains(fmt.Sprint(qs), "sqlExpert") || !strings.Contains(fmt.Sprint(qs), "material = 'glass'") {
					t.Errorf("saved queries: %d %v", code, qs)
				}
				code, tp := v.do(t, "GET", base+"template/finds/card", "", boss)
				if code != 200 || !strings.Contains(fmt.Sprint(tp), "material") {
					t.Errorf("template: %d %v", code, tp)
				}
				code, cfg := v.do(t, "GET", base+"config/relations", "", boss)
				if code != 200 || !strings.Contains(fmt.Sprint(cfg), "site") {
					t.Errorf("relations: %d %v", code, cfg)
				}
				code, vo := v.do(t, "GET", base+"vocabularies", "", boss)
				if code != 200 || !strings.Contains(fmt.Sprint(vo), "glass") {
					t.Errorf("vocabularies: %d %v", code, vo)
				}
				code, saved := v.do(t, "POST", base+"record/finds", `{"core":{"label":"new"}}`, boss)
				if code != 200 || saved["id"] != 13.0 {
					t.Errorf("a new record after the copied ids: %d %v", code, saved)
				}
			})
		}
	})
}

func TestMajorUpgrade4Refusals(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, false)
		for _, c := range []struct {
			app  string
			fx   fixture4
			want string
		}{
			{"shared", fixture4{records: 3, sharedPlug: true}, "plugin table finds_samples is shared by finds, sites"},
			{"chart", fixture4{records: 3, chart: true}, "charts 1 are BraDypUS 4 SQL charts"},
			{"orphan", fixture4{records: 3, orphanRS: true}, "stratigraphic relations 2 name units"},
			{"tenant", fixture4{records: 3, foreignPlug: true}, "rows 2 of plugin table finds_samples belong to another table"},
			{"undescr", fixture4{records: 3, undescribed: true}, "column finds.colour is not described"},
			{"unlisted", fixture4{records: 3, unlisted: true, bare: true}, "table trenches is in the database but not in cfg/tables.json"},
			{"twin", fixture4{records: 3, twin: true}, "tables finds and twin__finds are both named finds"},
		} {
			makeFolder4(t, filepath.Join(v.data, "bradypus"), c.app, c.fx)
			if code, body := v.do(t, "POST", "/"+c.app+"/api/upgrade/major", upgradeApp(c.app, superEmail, "wrong"), nil); code != 401 {
				t.Fatalf("%s: a wrong password learns: %d %v", c.app, code, body)
			}
			code, body := v.do(t, "POST", "/"+c.app+"/api/upgrade/major", upgradeApp(c.app, superEmail, superPwd), nil)
			if code != 409 || body["code"] != "major_upgrade_not_supported" || !strings.Contains(fmt.Sprint(body["not_supported"]), c.want) {
				t.Fatalf("%s: %d %v", c.app, code, body)
			}
			if _, err := os.Stat(filepath.Join(v.data, "upgrades")); !os.IsNotExist(err) {
				t.Fatalf("%s: a refused upgrade started: %v", c.app, err)
			}
		}
	})
}

func TestMajorUpgrade4RollsBack(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, false)
		folder := makeFolder4(t, filepath.Join(v.data, "bradypus"), "dig", fixture4{records: 4, badValue: "heavy"})
		code, body := v.do(t, "POST", "/dig/api/upgrade/major", upgradeApp("dig", superEmail, superPwd), nil)
		if code != 400 || body["code"] != "upgrade_failed" || !strings.Contains(fmt.Sprint(body["detail"]), "heavy") {
			t.Fatalf("broken fixture: %d %v", code, body)
		}
		if ok, err := v.inst.Apps.Backend().Exists(context.Background(), "dig"); err != nil || ok {
			t.Fatalf("the failed upgrade left an application: %v %v", ok, err)
		}
		if n := storedBlobs(t, v.data, "dig"); n != 0 {
			t.Errorf("the failed upgrade left %d blobs", n)
		}
		if _, err := os.Stat(folder); err != nil {
			t.Fatalf("the folder moved: %v", err)
		}
		if up, _ := v.listed(t, "dig"); up != "major" {
			t.Fatalf("after the failure: %v", up)
		}
	})
}
