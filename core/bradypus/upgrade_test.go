package bradypus_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
	"github.com/strata-archaeo/strata/plugins/refmgr/zotero/zoterotest"
)

// fixture describes a BraDypUS-5-shaped application to generate: the
// system tables as BraDypUS's Structure/*.json declare them (the columns
// the upgrade reads), a small archaeological schema with every BraDypUS
// field type, the fuzzy-date (chronology), osteology and radiocarbon
// plugins as its Config controller activates them, files with their bytes
// in files/, geodata, saved queries, charts, a print template and
// assemblage analyses (M034's bdus_assemblage_analyses).
type fixture struct {
	records    int    // rows of finds (each with a version)
	badValue   string // a value of finds.weight (a float field); "" for a good one
	badGeo     bool   // one geodata row is not a geometry
	zotero     bool   // Zotero libraries and links (refmgr's after the upgrade)
	noPlugins  bool   // no plugin flags, columns or tables
	noArchive  bool   // no files, geodata, queries, charts, templates
	missingOne bool   // file 3's bytes are not in files/
	c14Every   int    // a radiocarbon date on every n-th find too (0: none)
	badPivot   bool   // an assemblage analysis's definition is not JSON
	png        bool   // file 1 is a PNG image (so it gets a thumbnail)
	badZotero  bool   // a Zotero link's record_id is not a number
}

const (
	superEmail = "boss@example.org"
	superPwd   = "bradypus-boss"
	zoteroKey  = "zk-SECRET-123" // the API key of the fixture's user library
	writerPwd  = "old-sha1-pass"
	// 3200 ± 40 BP on IntCal20: 1σ 3386–3450, 2σ 3278–3486 cal BP (PLUGINS.md).
	osteoDoc = `{"individuals":[{"id":"T1","label":"Tomb 1","notes":"","bones":{"cranium":{"present":true,"conservation":"complete"},"femur_left":{"present":true,"conservation":"gt50"}}}]}`
)

// fileBytes is the content of fixture file i.
func fileBytes(i int) []byte { return []byte(fmt.Sprintf("photo %d of the dig\n", i)) }

// makeFolder writes the fixture as <dir>/<name>: config.json,
// db/bdus.sqlite and files/.
func makeFolder(t testing.TB, dir, name string, fx fixture) string {
	t.Helper()
	root := filepath.Join(dir, name)
	for _, d := range []string{"db", "files"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _ := json.Marshal(map[string]any{"definition": "Excavations at " + name, "db_engine": "sqlite", "bdus_version": "5.4.2"})
	if err := os.WriteFile(filepath.Join(root, "config.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(root, "db", "bdus.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, ddl := range []string{
		`CREATE TABLE bdus_users (id INTEGER PRIMARY KEY, name TEXT, email TEXT, password TEXT, privilege INTEGER, settings TEXT, oauth_provider TEXT, oauth_sub TEXT, token_version INTEGER)`,
		`CREATE TABLE bdus_cfg_tables (id INTEGER PRIMARY KEY, name TEXT, label TEXT, order_field TEXT, id_field TEXT, preview TEXT, is_plugin INTEGER, sort INTEGER, links TEXT, backlinks TEXT, extra TEXT)`,
		`CREATE TABLE bdus_cfg_fields (id INTEGER PRIMARY KEY, table_name TEXT, name TEXT, label TEXT, type TEXT, db_type TEXT, sort INTEGER, extra TEXT)`,
		`CREATE TABLE bdus_cfg_relations (id INTEGER PRIMARY KEY, from_tb TEXT, from_col TEXT, to_tb TEXT, to_col TEXT, on_delete TEXT, on_update TEXT)`,
		`CREATE TABLE bdus_vocabularies (id INTEGER PRIMARY KEY, voc TEXT, def TEXT, sort INTEGER)`,
		`CREATE TABLE bdus_user_table_privs (id INTEGER PRIMARY KEY, user_id INTEGER, table_name TEXT, privilege INTEGER, subset TEXT)`,
		`CREATE TABLE bdus_rs (id INTEGER PRIMARY KEY, tb TEXT, first INTEGER, second INTEGER, relation INTEGER)`,
		`CREATE TABLE bdus_userlinks (id INTEGER PRIMARY KEY, tb_one TEXT, id_one INTEGER, tb_two TEXT, id_two INTEGER, sort INTEGER, label TEXT)`,
		`CREATE TABLE bdus_versions (id INTEGER PRIMARY KEY, userid INTEGER, time INTEGER, tb TEXT, rowid INTEGER, content TEXT, editsql TEXT, editvalues TEXT, operation TEXT)`,
		`CREATE TABLE bdus_files (id INTEGER PRIMARY KEY, creator TEXT NOT NULL, ext TEXT NOT NULL, keywords TEXT, description TEXT, printable INTEGER, filename TEXT NOT NULL)`,
		`CREATE TABLE bdus_file_links (id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, table_name TEXT NOT NULL, record_id INTEGER NOT NULL, sort INTEGER)`,
		`CREATE TABLE bdus_geodata (id INTEGER PRIMARY KEY, table_link TEXT NOT NULL, id_link INTEGER NOT NULL, geometry TEXT NOT NULL)`,
		`CREATE TABLE bdus_queries (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, created_at INTEGER, name TEXT NOT NULL, tb TEXT NOT NULL, query TEXT, is_global INTEGER)`,
		`CREATE TABLE bdus_charts (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, name TEXT NOT NULL, definition TEXT, created_at INTEGER, is_global INTEGER)`,
		`CREATE TABLE bdus_cfg_templates (id INTEGER PRIMARY KEY, table_name TEXT NOT NULL, name TEXT NOT NULL, content TEXT NOT NULL, updated_at TEXT)`,
		`CREATE TABLE bdus_assemblage_analyses (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, name TEXT NOT NULL, definition TEXT, created_at INTEGER, is_global INTEGER)`,
		// As M023 creates them (Structure/zotero_libs.json, zotero_links.json).
		`CREATE TABLE bdus_zotero_libs (id INTEGER PRIMARY KEY, type TEXT NOT NULL, zotero_id TEXT NOT NULL, name TEXT NOT NULL, api_key TEXT,
			citation_style TEXT, created_at INTEGER)`,
		`CREATE TABLE bdus_zotero_links (id INTEGER PRIMARY KEY, tb TEXT NOT NULL, record_id INTEGER NOT NULL, lib_id INTEGER NOT NULL,
			zotero_key TEXT NOT NULL, pages TEXT, notes TEXT, sort INTEGER, author_year TEXT, full_citation TEXT, zotero_version INTEGER,
			synced_at INTEGER, detached INTEGER DEFAULT 0, created_at INTEGER)`,
		`CREATE TABLE sites (id INTEGER PRIMARY KEY, creator INTEGER, name TEXT, region TEXT)`,
		`CREATE TABLE finds (id INTEGER PRIMARY KEY, creator INTEGER, label TEXT, weight TEXT, site INTEGER, material TEXT, found TEXT, complete INTEGER,
			notes TEXT, descr TEXT, tags TEXT, pct INTEGER, logged TIMESTAMP,
			chrono_from INTEGER, chrono_to INTEGER, chrono_label VARCHAR(200), chrono_certainty INTEGER, chrono_period VARCHAR(200), osteo_data TEXT)`,
		`CREATE TABLE finds_samples (id INTEGER PRIMARY KEY, id_link INTEGER, lab TEXT)`,
		`CREATE TABLE finds_radiocarbon (id INTEGER PRIMARY KEY, id_link INTEGER, lab_code VARCHAR(100), bp INTEGER, bp_error INTEGER, material VARCHAR(100),
			d13c FLOAT, curve VARCHAR(20), cal_1s_from INTEGER, cal_1s_to INTEGER, cal_2s_from INTEGER, cal_2s_to INTEGER, notes TEXT)`,
	} {
		exec(ddl)
	}
	bc, _ := bcrypt.GenerateFromPassword([]byte(superPwd), bcrypt.MinCost)
	sum := sha1.Sum([]byte(writerPwd))
	exec(`INSERT INTO bdus_users VALUES (1, 'Boss', ?, ?, 1, '{}', NULL, NULL, 1)`, "Boss@Example.org ", string(bc))
	exec(`INSERT INTO bdus_users VALUES (7, 'Writer', 'writer@example.org', ?, 20, '{}', NULL, NULL, 1)`, hex.EncodeToString(sum[:]))
	findsExtra := `{"rs":"label","geodata":true,"fuzzy_date":true,"osteology":true}`
	if fx.noPlugins {
		findsExtra = `{"rs":"label","geodata":true}`
	}
	exec(`INSERT INTO bdus_cfg_tables VALUES (1, 'bdus_files', 'Files', 'id', 'id', '["id","filename"]', 0, 0, NULL, NULL, NULL)`)
	exec(`INSERT INTO bdus_cfg_tables VALUES (2, 'sites', 'Sites', 'name', 'name', '["id","name"]', 0, 1, NULL, NULL, NULL)`)
	exec(`INSERT INTO bdus_cfg_tables VALUES (3, 'finds', 'Finds', 'id', 'label', '["id","label","material"]', 0, 2, NULL, NULL, ?)`, findsExtra)
	exec(`INSERT INTO bdus_cfg_tables VALUES (4, 'finds_samples', 'Samples', NULL, 'id', '[]', 1, 3, NULL, NULL, NULL)`)
	if !fx.noPlugins {
		exec(`INSERT INTO bdus_cfg_tables VALUES (5, 'finds_radiocarbon', 'Datazione al radiocarbonio', 'id', 'id', '["lab_code"]', 1, 4, NULL, NULL, '{"radiocarbon":true}')`)
	}
	type fld struct{ tb, name, label, typ, dbType, extra string }
	fields := []fld{
		{"sites", "id", "ID", "text", "INTEGER", `{"readonly":true}`},
		{"sites", "name", "Name", "text", "TEXT", `{"check":["not_empty","unique"]}`},
		{"sites", "region", "Region", "combo_select", "TEXT", `{"get_values_from_tb":"sites:region"}`},
		{"finds", "label", "Label", "text", "TEXT", `{"check":["not_empty"]}`},
		{"finds", "weight", "Weight", "text", "REAL", `{}`},
		{"finds", "site", "Site", "select", "INTEGER", `{"id_from_tb":"sites"}`},
		{"finds", "material", "Material", "select", "TEXT", `{"vocabulary_set":"materials"}`},
		{"finds", "found", "Found on", "date", "TEXT", `{}`},
		{"finds", "complete", "Complete", "boolean", "INTEGER", `{}`},
		{"finds", "notes", "Notes", "long_text", "TEXT", `{}`},
		{"finds", "descr", "Description", "md", "TEXT", `{}`},
		{"finds", "tags", "Tags", "multi_select", "TEXT", `{"vocabulary_set":"materials"}`},
		{"finds", "pct", "Preserved", "slider", "INTEGER", `{"min":0,"max":100}`},
		{"finds", "logged", "Logged", "date", "TIMESTAMP", `{}`},
		{"finds_samples", "lab", "Lab", "text", "TEXT", `{}`},
	}
	if !fx.noPlugins {
		// As activateFuzzyDate, activateOsteology and activateRadiocarbon write them.
		fields = append(fields,
			fld{"finds", "chrono_from", "Cronologia da", "text", "INTEGER", `{"hide":true}`},
			fld{"finds", "chrono_to", "Cronologia a", "text", "INTEGER", `{"hide":true}`},
			fld{"finds", "chrono_label", "Etichetta crono", "text", "TEXT", `{"hide":true}`},
			fld{"finds", "chrono_certainty", "Certezza crono", "text", "INTEGER", `{"hide":true}`},
			fld{"finds", "chrono_period", "Periodo crono", "text", "TEXT", `{"hide":true}`},
			fld{"finds", "osteo_data", "Dati osteologici", "long_text", "TEXT", `{}`},
			fld{"finds_radiocarbon", "lab_code", "Codice laboratorio", "text", "VARCHAR(100)", `{}`},
			fld{"finds_radiocarbon", "bp", "BP", "text", "INTEGER", `{"check":["int"]}`},
			fld{"finds_radiocarbon", "bp_error", "Errore", "text", "INTEGER", `{"check":["int"]}`},
			fld{"finds_radiocarbon", "material", "Materiale datato", "text", "VARCHAR(100)", `{}`},
			fld{"finds_radiocarbon", "d13c", "d13C", "text", "FLOAT", `{}`},
			fld{"finds_radiocarbon", "curve", "Curva", "text", "VARCHAR(20)", `{}`},
			fld{"finds_radiocarbon", "cal_1s_from", "Cal BP 1s da", "text", "INTEGER", `{"readonly":true}`},
			fld{"finds_radiocarbon", "cal_1s_to", "Cal BP 1s a", "text", "INTEGER", `{"readonly":true}`},
			fld{"finds_radiocarbon", "cal_2s_from", "Cal BP 2s da", "text", "INTEGER", `{"readonly":true}`},
			fld{"finds_radiocarbon", "cal_2s_to", "Cal BP 2s a", "text", "INTEGER", `{"readonly":true}`},
			fld{"finds_radiocarbon", "notes", "Note", "long_text", "TEXT", `{}`},
		)
	}
	for i, f := range fields {
		exec(`INSERT INTO bdus_cfg_fields (table_name, name, label, type, db_type, sort, extra) VALUES (?, ?, ?, ?, ?, ?, ?)`, f.tb, f.name, f.label, f.typ, f.dbType, i, f.extra)
	}
	exec(`INSERT INTO bdus_cfg_relations VALUES (1, 'finds_samples', 'id_link', 'finds', 'id', 'CASCADE', 'CASCADE')`)
	exec(`INSERT INTO bdus_cfg_relations VALUES (2, 'finds', 'site', 'sites', 'id', 'RESTRICT', 'CASCADE')`)
	if !fx.noPlugins {
		exec(`INSERT INTO bdus_cfg_relations VALUES (3, 'finds_radiocarbon', 'id_link', 'finds', 'id', 'CASCADE', 'CASCADE')`)
	}
	exec(`INSERT INTO bdus_vocabularies VALUES (1, 'materials', 'pottery', 1), (2, 'materials', 'glass', 2), (3, 'materials', 'bone', NULL)`)
	exec(`INSERT INTO bdus_user_table_privs VALUES (1, 7, 'finds', 25, NULL)`)
	exec(`INSERT INTO sites VALUES (1, 1, 'Ostia', 'Lazio'), (2, 99, 'Pompeii', '')`)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= fx.records; i++ {
		weight := fmt.Sprintf("%d.5", i)
		if i == fx.records && fx.badValue != "" {
			weight = fx.badValue
		}
		creator := any(7)
		if i%3 == 0 {
			creator = nil
		}
		// Chronology on two finds in three; osteology on one in five.
		var from, to, label, certainty, period, osteo any
		switch i % 3 {
		case 1:
			from, to, label, certainty, period = -325, -301, "c4l BCE", 2, "Hellenistic"
		case 2:
			from, to, label, certainty = 50, 150, "c1 CE/c2 CE", 1
		}
		if i%5 == 0 {
			osteo = osteoDoc
		}
		if _, err := tx.Exec(`INSERT INTO finds VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, i, creator, fmt.Sprintf("F-%04d", i), weight, 1+i%2,
			[]string{"pottery", "glass", ""}[i%3], []string{"2021-06-01", ""}[i%2], i%2,
			"long notes\nof find "+fmt.Sprint(i), "**md** "+fmt.Sprint(i), "pottery;glass", i%101, "2021-06-01 10:00:00",
			from, to, label, certainty, period, osteo); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO bdus_versions (userid, time, tb, rowid, content, operation) VALUES (7, 1700000000, 'finds', ?, ?, 'update')`,
			i, fmt.Sprintf(`{"label":"F-%04d old"}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	exec(`INSERT INTO finds_samples VALUES (1, 1, 'Oxford'), (2, 1, 'Kiel')`)
	if !fx.noPlugins {
		// BraDypUS's own calibration is replaced by the plugin's; row 2
		// has an error of 0, which the plugin refuses: it is kept as it was.
		exec(`INSERT INTO finds_radiocarbon VALUES (1, 1, 'OxA-1', 3200, 40, 'charcoal', -25.1, 'intcal20', 1, 2, 3, 4, 'first'),
			(2, 1, 'OxA-2', 3100, 0, 'bone', NULL, '', NULL, NULL, NULL, NULL, NULL)`)
	}
	if fx.c14Every > 0 && !fx.noPlugins {
		for i := fx.c14Every; i <= fx.records; i += fx.c14Every {
			exec(`INSERT INTO finds_radiocarbon (id_link, lab_code, bp, bp_error, material, curve) VALUES (?, ?, ?, 35, 'charcoal', 'intcal20')`,
				i, fmt.Sprintf("LAB-%d", i), 2000+i%2500)
		}
	}
	exec(`INSERT INTO bdus_rs VALUES (1, 'finds', 1, 2, 1), (2, 'finds', 2, 3, 6)`)
	exec(`INSERT INTO bdus_userlinks VALUES (1, 'finds', 1, 'sites', 1, NULL, 'found at')`)
	if fx.zotero {
		// A public group library and a user library with its API key (in
		// clear, as BraDypUS keeps it); links as Zotero.php's addLink and
		// sync leave them: cached citations, versions, one detached, one
		// written with the application's table prefix, one on a table
		// that is gone.
		exec(`INSERT INTO bdus_zotero_libs VALUES (3, 'group', '336647', 'Pompeii group', NULL, 'chicago-author-date', 1700000000),
			(8, 'user', '4242', 'My library', ?, 'apa', 1700000100)`, zoteroKey)
		exec(`INSERT INTO bdus_zotero_links VALUES
			(2, 'finds', 1, 3, 'AAAA1111', 'p. 12', 'see plan', 1, 'Carandini 1985', '<div class="csl-entry">Carandini, A. 1985. <i>Settefinestre</i>.</div>', 7, 1700000500, 0, 1700000000),
			(5, ?, 1, 8, 'DDDD4444', NULL, NULL, 0, 'Zanker 1998', '<div class="csl-entry">Zanker, P. (1998).</div>', 3, 1700000600, 0, 1700000000),
			(9, 'finds', 2, 3, 'GONE9999', NULL, NULL, NULL, 'Old 1900', '<div>Old</div>', 2, NULL, 1, 1700000000),
			(11, 'trenches', ?, 3, 'AAAA1111', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`, filepath.Base(root)+"_finds",
			map[bool]any{false: 4, true: "four"}[fx.badZotero])
	}
	if fx.noArchive {
		return root
	}
	for i := 1; i <= 3; i++ {
		ext, body := "txt", fileBytes(i)
		if i == 1 && fx.png {
			ext, body = "png", pngBytes(t)
		}
		exec(`INSERT INTO bdus_files VALUES (?, ?, ?, ?, ?, ?, ?)`, i, []string{"", "7", "1", "anonymous"}[i], ext, "kw"+fmt.Sprint(i), "desc "+fmt.Sprint(i), i%2, "photo-"+fmt.Sprint(i))
		if i == 3 && fx.missingOne {
			continue
		}
		if err := os.WriteFile(filepath.Join(root, "files", fmt.Sprintf("%d.%s", i, ext)), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO bdus_file_links VALUES (1, 1, 'finds', 1, 1), (2, 2, 'finds', 1, 2), (3, 2, 'sites', 1, 1), (4, 3, 'finds', 2, 1)`)
	geom := "POLYGON((12.28 41.75, 12.29 41.75, 12.29 41.76, 12.28 41.75))"
	if fx.badGeo {
		geom = "POLYGON((12.28 41.75, 12.29"
	}
	exec(`INSERT INTO bdus_geodata VALUES (1, 'finds', 1, 'POINT(12.2833 41.7558)'), (2, 'finds', 2, ?), (3, 'sites', 1, '{"type":"Point","coordinates":[12.29,41.76]}')`, geom)
	exec(`INSERT INTO bdus_queries VALUES (1, 7, 1700000000, 'Glass finds', 'finds', '{"filter":{"material":{"_eq":"glass"}}}', 0),
		(2, 1, 1700000100, 'Everything', 'sites', '[]', 1)`)
	exec(`INSERT INTO bdus_charts VALUES (1, 1, 'By material', '{"tb":"finds","type":"bar","fields":["material"]}', 1700000000, 1)`)
	exec(`INSERT INTO bdus_cfg_templates VALUES (1, 'finds', 'card', ?, '2024-01-01 10:00:00')`,
		`{"sections":[{"type":"core","label":"Find","content":[{"field":"label","width":"1/2"},"material"]},{"type":"plugin","plugin":"finds_samples","content":["lab"]}]}`)
	// Template files from before 5.1, left on disk by M011: the card it
	// imported (edited in the database since), and one deleted there.
	if err := os.MkdirAll(filepath.Join(root, "template"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"finds.card.json": `{"sections":[{"label":"Old card","content":[{"field":"label"}]}]}`,
		"finds.old.json":  `{"sections":[{"label":"Gone","content":[{"field":"label"}]}]}`,
	} {
		if err := os.WriteFile(filepath.Join(root, "template", name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Assemblage analyses as the wizard saves them (json_encode of its
	// definition): the writer's own, the boss's shared one through the
	// site lookup, and one naming a field the table no longer has.
	stale := `{"source_tb":"finds","char_field":"colour","group_field":"site","measure":"count","measure_field":null,"filters":[]}`
	if fx.badPivot {
		stale = `{"source_tb":"finds",`
	}
	exec(`INSERT INTO bdus_assemblage_analyses VALUES
		(3, 7, 'Material by site', '{"source_tb":"finds","source_type":"table","char_field":"material","group_path":[],"group_field":"site","measure":"count","measure_field":null,"filters":[{"field":"complete","op":"_eq","value":"1"}]}', 1700000200, 0),
		(5, 1, 'Weight by site name', '{"source_tb":"finds","char_field":"complete","group_path":[{"local_field":"site","join_tb":"sites","join_pk":"id"}],"group_field":"name","measure":"sum","measure_field":"weight","filters":[]}', 1700000300, 1),
		(6, 1, 'Colours', ?, 1700000400, 0)`, stale)
	return root
}

type env struct {
	inst   *testenv.Instance
	data   string
	zotero *zoterotest.Fake // the refmgr plugin's provider (with plugins)
}

// The plugins whose data BraDypUS keeps, built once for the test process
// (as core/pluginhost/realplugins does) into binDir.
var (
	realPlugins = []string{"chronology", "osteology", "radiocarbon", "refmgr"}
	binDir      string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "strata-bradypus-plugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, p := range realPlugins {
		args = append(args, "./plugins/"+p)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the plugins: %v: %s\n", err, out)
		return 1
	}
	return m.Run()
}

// newEnv is a server on a fresh backend; with plugins, the real chronology,
// osteology and radiocarbon plugins run beside it.
func newEnv(t testing.TB, e store.Engine, plugins bool) env {
	t.Helper()
	return newEnvFiles(t, e, plugins, nil)
}

// newEnvFiles is newEnv with the instance's file store st (nil: the
// default, local files under the data folder).
func newEnvFiles(t testing.TB, e store.Engine, plugins bool, st files.Storage) env {
	t.Helper()
	reg := testenv.NewRegistry(t, e)
	deps := server.Deps{Apps: reg, Files: st}
	var z *zoterotest.Fake
	if plugins {
		z = zoterotest.New(t)
		dir := t.TempDir()
		for _, p := range realPlugins {
			if err := os.Symlink(filepath.Join(binDir, p), filepath.Join(dir, p)); err != nil {
				t.Fatal(err)
			}
		}
		mgr := pluginhost.New(pluginhost.Options{Dir: dir, Apps: reg, Logger: testenv.Logger(),
			Env: append(pluginhost.Environment(func(string) string { return "" }, t.TempDir()), "REFMGR_ZOTERO_URL="+z.URL)})
		if err := mgr.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(mgr.Stop)
		for _, p := range realPlugins {
			if s := mgr.State(p); s != pluginhost.StateRunning {
				t.Fatalf("plugin %s: %s", p, s)
			}
		}
		deps.Plugins = mgr
	}
	inst := testenv.NewInstanceWith(t, e, deps)
	return env{inst: inst, data: inst.Config.DataDir, zotero: z}
}

func (v env) do(t testing.TB, method, path, body string, h map[string]string) (int, map[string]any) {
	t.Helper()
	rec := v.raw(t, method, path, body, h)
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("%s %s: not JSON (%d): %s", method, path, rec.Code, rec.Body.String())
	}
	return rec.Code, m
}

func (v env) raw(t testing.TB, method, path, body string, h map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, val := range h {
		req.Header.Set(k, val)
	}
	rec := httptest.NewRecorder()
	v.inst.Server.ServeHTTP(rec, req)
	return rec
}

func (v env) listed(t testing.TB, name string) (any, bool) {
	t.Helper()
	_, body := v.do(t, "GET", "/api/auth/apps", "", nil)
	for _, x := range body["apps"].([]any) {
		if m := x.(map[string]any); m["name"] == name {
			return m["upgrade"], true
		}
	}
	return nil, false
}

func upgradeBody(email, pwd string) string {
	b, _ := json.Marshal(map[string]string{"app": "dig", "email": email, "password": pwd})
	return string(b)
}

// counts are the report's counts by table: before and after.
func counts(body map[string]any) map[string][2]float64 {
	out := map[string][2]float64{}
	for _, x := range body["counts"].([]any) {
		m := x.(map[string]any)
		out[m["table"].(string)] = [2]float64{m["before"].(float64), m["after"].(float64)}
	}
	return out
}

func val(rec map[string]any, field string) any {
	return rec["core"].(map[string]any)[field].(map[string]any)["val"]
}

// storedBlobs counts the files of app in the local file store.
func storedBlobs(t testing.TB, data, app string) int {
	n := 0
	_ = filepath.Walk(filepath.Join(data, "files", app), func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

func TestMajorUpgrade(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, true)
		folder := makeFolder(t, filepath.Join(v.data, "bradypus"), "dig", fixture{records: 30, missingOne: true, zotero: true})
		if up, ok := v.listed(t, "dig"); !ok || up != "major" {
			t.Fatalf("listed %v %v, want upgrade major", ok, up)
		}
		if code, body := v.do(t, "GET", "/dig/api/upgrade/status", "", nil); code != 200 || body["type"] != "major" {
			t.Fatalf("status: %d %v", code, body)
		}
		for _, r := range []struct{ method, path string }{{"GET", "/dig/api/records/finds"}, {"POST", "/dig/api/auth/login"}, {"GET", "/dig/api/config/dbml"}} {
			if code, body := v.do(t, r.method, r.path, "", nil); code != http.StatusConflict || body["code"] != "major_upgrade_required" {
				t.Errorf("%s %s: %d %v", r.method, r.path, code, body)
			}
		}
		if code, body := v.do(t, "POST", "/dig/api/upgrade/major", upgradeBody(superEmail, "wrong"), nil); code != 401 || body["code"] != "superadmin_auth_failed" {
			t.Fatalf("wrong password: %d %v", code, body)
		}
		if code, body := v.do(t, "POST", "/dig/api/upgrade/major", upgradeBody("writer@example.org", writerPwd), nil); code != 401 {
			t.Fatalf("a writer: %d %v", code, body)
		}
		code, body := v.do(t, "POST", "/dig/api/upgrade/major", upgradeBody(superEmail, superPwd), nil)
		if code != 200 || body["code"] != "upgrade_complete" {
			t.Fatalf("upgrade: %d %v", code, body)
		}
		// File 3's bytes were missing: its row and link are not there, and
		// the report says so; everything else is accounted for.
		got := counts(body)
		for tb, want := range map[string][2]float64{"finds": {30, 30}, "sites": {2, 2}, "finds_samples": {2, 2}, "bdus_users": {2, 2},
			"bdus_versions": {30, 30}, "bdus_rs": {2, 2}, "bdus_userlinks": {1, 1}, "bdus_vocabularies": {3, 3}, "bdus_user_table_privs": {1, 1},
			"bdus_files": {3, 2}, "bdus_file_links": {4, 3}, "bdus_geodata": {3, 3}, "bdus_queries": {2, 2}, "bdus_charts": {1, 1},
			"bdus_cfg_templates": {1, 1}, "bdus_assemblage_analyses": {3, 3}, "finds_radiocarbon": {2, 2}, "finds (chronology)": {20, 20}, "finds (osteology)": {6, 6},
			"bdus_zotero_libs": {2, 2}, "bdus_zotero_links": {4, 4}} {
			if got[tb] != want {
				t.Errorf("count of %s: %v, want %v", tb, got[tb], want)
			}
		}
		if body["verified"] != false {
			t.Errorf("verified with a file missing: %v", body["verified"])
		}
		warnings := fmt.Sprint(body["warnings"])
		for _, w := range []string{"file 3", "finds_radiocarbon 2: the radiocarbon plugin objects", "assemblage analysis 6 (Colours) is kept",
			"template file template/finds.old.json (old of finds) is not converted", `reference link 11 is on table "trenches"`} {
			if !strings.Contains(warnings, w) {
				t.Errorf("warnings %s: no %q", warnings, w)
			}
		}
		if strings.Contains(warnings, "finds.card.json") {
			t.Errorf("the imported template file is warned about: %s", warnings)
		}
		dir := body["dir"].(string)
		for _, f := range []string{"snapshot.tar.gz", "report.json", "upgrade.log"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("record %s: %v", f, err)
			}
		}
		if _, err := os.Stat(folder); !os.IsNotExist(err) {
			t.Errorf("the BraDypUS folder was not set aside: %v", err)
		}
		if up, ok := v.listed(t, "dig"); !ok || up != nil {
			t.Fatalf("after: listed %v, upgrade %v", ok, up)
		}
		// Both password schemes still sign in; ids, values and links kept.
		boss := testenv.Bearer(testenv.Login(t, v.inst.Server, "dig", superEmail, superPwd))
		writer := testenv.Bearer(testenv.Login(t, v.inst.Server, "dig", "writer@example.org", writerPwd))
		code, rec := v.do(t, "GET", "/dig/api/record/finds/2", "", boss)
		if code != 200 {
			t.Fatalf("record: %d %v", code, rec)
		}
		for f, want := range map[string]any{"label": "F-0002", "weight": 2.5, "material": "", "site": 1.0, "notes": "long notes\nof find 2",
			"descr": "**md** 2", "tags": "pottery;glass", "pct": 2.0, "chrono_from": 50.0, "chrono_to": 150.0, "chrono_label": "c1 CE/c2 CE", "chrono_certainty": 1.0} {
			if got := val(rec, f); got != want {
				t.Errorf("finds 2 %s: %#v, want %#v", f, got, want)
			}
		}
		if n := len(rec["rs"].(map[string]any)); n != 2 {
			t.Errorf("rs of record 2: %d", n)
		}
		// Relations recorded in BraDypUS were never checked for cycles:
		// the adopted table is not strict until an admin says so.
		if code, cfg := v.do(t, "GET", "/dig/api/config/table/finds", "", boss); code != 200 || cfg["table"].(map[string]any)["rs_strict"] != false {
			t.Errorf("rs_strict of an adopted table: %d %v", code, cfg["table"])
		}
		code, rec = v.do(t, "GET", "/dig/api/record/finds/1", "", boss)
		if code != 200 {
			t.Fatalf("record 1: %d %v", code, rec)
		}
		if val(rec, "chrono_from") != -325.0 || val(rec, "chrono_period") != "Hellenistic" {
			t.Errorf("chronology of finds 1: %v", rec["core"])
		}
		// Radiocarbon: the plugin's child table with the plugin's calibration
		// (not BraDypUS's 1, 2, 3, 4); the row it refused kept as it was.
		c14, _ := rec["plugins"].(map[string]any)["finds_radiocarbon"].(map[string]any)
		rows := fmt.Sprint(c14)
		for _, want := range []string{"OxA-1", "3386", "3450", "3278", "3486", "OxA-2"} {
			if !strings.Contains(rows, want) {
				t.Errorf("radiocarbon of finds 1: no %s in %s", want, rows)
			}
		}
		if files, _ := rec["files"].([]any); len(files) != 2 {
			t.Errorf("files of finds 1: %v", rec["files"])
		}
		code, rec = v.do(t, "GET", "/dig/api/record/finds/5", "", boss)
		if code != 200 || !strings.Contains(fmt.Sprint(val(rec, "osteo_data")), "femur_left") {
			t.Errorf("osteology of finds 5: %d %v", code, rec["core"])
		}
		// The file's bytes come from the file store, metadata kept.
		dl := v.raw(t, "GET", "/dig/api/file/2/download", "", boss)
		if dl.Code != 200 || dl.Body.String() != string(fileBytes(2)) {
			t.Errorf("download file 2: %d %q", dl.Code, dl.Body.String())
		}
		code, list := v.do(t, "GET", "/dig/api/files", "", boss)
		if code != 200 || !strings.Contains(fmt.Sprint(list), "desc 2") || !strings.Contains(fmt.Sprint(list), "kw1") {
			t.Errorf("files: %d %v", code, list)
		}
		// Geodata from WKT and GeoJSON.
		code, geo := v.do(t, "GET", "/dig/api/geoface?tb=finds", "", boss)
		if code != 200 || !strings.Contains(fmt.Sprint(geo), "Polygon") || !strings.Contains(fmt.Sprint(geo), "12.2833") {
			t.Errorf("geodata: %d %v", code, geo)
		}
		// Saved queries (owner and sharing kept), charts, templates.
		code, qs := v.do(t, "GET", "/dig/api/saved-queries", "", writer)
		if code != 200 || !strings.Contains(fmt.Sprint(qs), "Glass finds") || !strings.Contains(fmt.Sprint(qs), "Everything") {
			t.Errorf("writer's saved queries: %d %v", code, qs)
		}
		code, qs = v.do(t, "GET", "/dig/api/saved-queries", "", boss)
		if code != 200 || strings.Contains(fmt.Sprint(qs), "Glass finds") {
			t.Errorf("the writer's unshared query is listed to the boss: %d %v", code, qs)
		}
		code, cs := v.do(t, "GET", "/dig/api/charts", "", writer)
		if code != 200 || !strings.Contains(fmt.Sprint(cs), "By material") {
			t.Errorf("global chart: %d %v", code, cs)
		}
		code, tp := v.do(t, "GET", "/dig/api/template/finds/card", "", boss)
		if code != 200 || !strings.Contains(fmt.Sprint(tp), "finds_samples") || strings.Contains(fmt.Sprint(tp), "Old card") {
			t.Errorf("template: %d %v", code, tp)
		}
		if code, tp := v.do(t, "GET", "/dig/api/template/finds/old", "", boss); code != 404 {
			t.Errorf("the template deleted in BraDypUS came back: %d %v", code, tp)
		}
		checkAssemblages(t, v, boss, writer)
		checkRefmgr(t, v, boss)
		code, vers := v.do(t, "GET", "/dig/api/record/finds/2/versions", "", boss)
		if code != 200 || len(vers["versions"].([]any)) != 1 {
			t.Fatalf("versions: %d %v", code, vers)
		}
		// The writer's table privilege came along: self_writer on finds;
		// a new record goes through the active plugins' hooks.
		code, saved := v.do(t, "POST", "/dig/api/record/finds", `{"core":{"label":"new","chrono_label":"c4l BCE"}}`, writer)
		if code != 200 {
			t.Fatalf("writer saves: %d %v", code, saved)
		}
		if id := saved["id"].(float64); id != 31 {
			t.Errorf("new record id %v, want 31 (after the copied ids)", id)
		}
		if code, rec = v.do(t, "GET", "/dig/api/record/finds/31", "", boss); code != 200 || val(rec, "chrono_from") != -325.0 {
			t.Errorf("the chronology hook on a new record: %d %v", code, rec["core"])
		}
		// New files, links and features get ids after the copied ones.
		var mp bytes.Buffer
		mw := multipart.NewWriter(&mp)
		fw, _ := mw.CreateFormFile("file", "new.txt")
		_, _ = fw.Write([]byte("a new file"))
		_ = mw.Close()
		up := v.raw(t, "POST", "/dig/api/record/finds/2/file", mp.String(), map[string]string{"Authorization": boss["Authorization"], "Content-Type": mw.FormDataContentType()})
		if !strings.Contains(up.Body.String(), `"id":3,"link_id":4`) { // file 3 was never brought over
			t.Errorf("upload after the upgrade: %d %s", up.Code, up.Body.String())
		}
		code, feat := v.do(t, "POST", "/dig/api/geoface/feature", `{"tb":"finds","id":3,"geometry":{"type":"Point","coordinates":[12.3,41.7]}}`, boss)
		if code != 200 || feat["geo_id"] != 4.0 {
			t.Errorf("geodata after the upgrade: %d %v", code, feat)
		}
		if code, body := v.do(t, "POST", "/dig/api/upgrade/major", upgradeBody(superEmail, superPwd), nil); code != http.StatusConflict || body["code"] != "no_major_upgrade_needed" {
			t.Fatalf("again: %d %v", code, body)
		}
	})
}

// checkAssemblages: the analyses came over with their ids, owners and
// sharing; the shared one runs on the converted tables with the sums
// worked out from the fixture (finds i weighs i.5, lies in site 1 when i
// is even, 2 when odd, and is complete when odd); a new one gets the next
// id.
func checkAssemblages(t *testing.T, v env, boss, writer map[string]string) {
	t.Helper()
	byID := func(who map[string]string) map[float64]map[string]any {
		code, body := v.do(t, "GET", "/dig/api/assemblages", "", who)
		if code != 200 {
			t.Fatalf("assemblages: %d %v", code, body)
		}
		out := map[float64]map[string]any{}
		for _, x := range body["analyses"].([]any) {
			a := x.(map[string]any)
			out[a["id"].(float64)] = a
		}
		return out
	}
	mine := byID(writer)
	if len(mine) != 2 || mine[3] == nil || mine[5] == nil {
		t.Fatalf("the writer's analyses: %v", mine)
	}
	if a := mine[3]; a["name"] != "Material by site" || a["owned_by_me"] != true || a["is_global"] != false ||
		a["definition"].(map[string]any)["char_field"] != "material" || !strings.HasPrefix(a["created_at"].(string), "2023-11-14T22:") {
		t.Errorf("analysis 3: %v", a)
	}
	if a := mine[5]; a["owned_by_me"] != false || a["is_global"] != true || a["owner_name"] != "Boss" {
		t.Errorf("analysis 5 to the writer: %v", a)
	}
	if all := byID(boss); len(all) != 2 || all[6] == nil || all[5] == nil {
		t.Errorf("the boss's analyses: %v", all)
	}
	def, _ := json.Marshal(mine[5]["definition"])
	code, res := v.do(t, "POST", "/dig/api/assemblage/data", `{"definition":`+string(def)+`}`, writer)
	if code != 200 || fmt.Sprint(res["data"]) != "map[Ostia:map[0:247.5] Pompeii:map[1:232.5]]" {
		t.Errorf("analysis 5 runs: %d %v", code, res)
	}
	code, saved := v.do(t, "POST", "/dig/api/assemblages", `{"name":"new","definition":`+string(def)+`}`, writer)
	if code != 200 || saved["analysis"].(map[string]any)["id"] != 7.0 {
		t.Errorf("a new analysis after the upgrade: %d %v", code, saved)
	}
}

func TestMajorUpgradeRollsBack(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, true)
		for _, c := range []struct {
			name, want string
			fx         fixture
		}{
			{"dig", "heavy", fixture{records: 5, badValue: "heavy"}},
			{"dig2", "geodata 2", fixture{records: 5, badGeo: true}},
			{"dig3", "assemblage analysis 6", fixture{records: 5, badPivot: true}},
			// The last thing converted: the plugin's rows go with the rest.
			{"dig4", "refmgr links", fixture{records: 5, zotero: true, badZotero: true}},
		} {
			folder := makeFolder(t, filepath.Join(v.data, "bradypus"), c.name, c.fx)
			code, body := v.do(t, "POST", "/"+c.name+"/api/upgrade/major", upgradeBody(superEmail, superPwd), nil)
			if code != 400 || body["code"] != "upgrade_failed" || !strings.Contains(body["detail"].(string), c.want) {
				t.Fatalf("%s: broken fixture: %d %v", c.name, code, body)
			}
			if ok, err := v.inst.Apps.Backend().Exists(context.Background(), c.name); err != nil || ok {
				t.Fatalf("%s: the failed upgrade left an application: %v %v", c.name, ok, err)
			}
			if n := storedBlobs(t, v.data, c.name); n != 0 {
				t.Errorf("%s: the failed upgrade left %d blobs in the file store", c.name, n)
			}
			if _, err := os.Stat(folder); err != nil {
				t.Fatalf("%s: the folder moved: %v", c.name, err)
			}
			if up, _ := v.listed(t, c.name); up != "major" {
				t.Fatalf("%s: after the failure: %v", c.name, up)
			}
		}
	})
}

func TestMajorUpgradeRefusals(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, false)
		b, _ := json.Marshal(map[string]string{"email": superEmail, "password": superPwd})
		for _, c := range []struct {
			name   string
			fx     fixture
			status int
			code   string
			detail string
		}{
			// Zotero data is the refmgr plugin's: without it, nothing starts.
			{"zot", fixture{records: 2, zotero: true, noPlugins: true}, 503, "plugin_not_installed", "refmgr"},
			// Without the plugins, their data is not dropped: nothing starts.
			{"plug", fixture{records: 2}, 503, "plugin_not_installed", "chronology, osteology, radiocarbon"},
		} {
			makeFolder(t, filepath.Join(v.data, "bradypus"), c.name, c.fx)
			code, body := v.do(t, "POST", "/"+c.name+"/api/upgrade/major", string(b), nil)
			if code != c.status || body["code"] != c.code || !strings.Contains(fmt.Sprint(body["detail"]), c.detail) {
				t.Fatalf("%s: %d %v", c.name, code, body)
			}
			if _, err := os.Stat(filepath.Join(v.data, "upgrades")); !os.IsNotExist(err) {
				t.Fatalf("%s: a refused upgrade started: %v", c.name, err)
			}
		}
		// A BraDypUS 4 folder (no bdus_version) is refused with its code.
		old := makeFolder(t, v.data, "old", fixture{records: 1, noPlugins: true, noArchive: true})
		if err := os.WriteFile(filepath.Join(old, "config.json"), []byte(`{"definition":"v4"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, body := v.do(t, "POST", "/old/api/upgrade/major", string(b), nil); code != 409 || body["code"] != "major_upgrade_not_supported" {
			t.Fatalf("BraDypUS 4: %d %v", code, body)
		}
		// A snapshot that cannot be written starts nothing.
		makeFolder(t, v.data, "dig2", fixture{records: 2, noPlugins: true})
		if err := os.WriteFile(filepath.Join(v.data, "upgrades"), []byte("in the way"), 0o600); err != nil {
			t.Fatal(err)
		}
		code, body := v.do(t, "POST", "/dig2/api/upgrade/major", string(b), nil)
		if code != 503 || body["code"] != "snapshot_failed" {
			t.Fatalf("snapshot: %d %v", code, body)
		}
		if ok, _ := v.inst.Apps.Backend().Exists(context.Background(), "dig2"); ok {
			t.Fatal("an application was created without a snapshot")
		}
		if n := storedBlobs(t, v.data, "dig2"); n != 0 {
			t.Errorf("a snapshot failure stored %d files", n)
		}
		// A Strata application needs none.
		testenv.NewApp(t, v.inst.Apps, "plain")
		code, body = v.do(t, "POST", "/plain/api/upgrade/major", string(b), nil)
		if code != http.StatusConflict || body["code"] != "no_major_upgrade_needed" {
			t.Fatalf("strata app: %d %v", code, body)
		}
	})
}

// checkRefmgr: the Zotero libraries and links are refmgr's, ids kept; the
// API key is sealed in storage, never answered, and the plugin opens it
// to ask the provider; the cached citations show in the bibliography
// section at once; new links get ids after the copied ones.
func checkRefmgr(t *testing.T, v env, boss map[string]string) {
	t.Helper()
	a, err := v.inst.Apps.Get(context.Background(), "dig")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := a.DB.Query(context.Background(), `SELECT id, COALESCE(api_key, '') FROM `+a.DB.Qualify("sys_refmgr_libs")+` ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[int64]string{}
	for rows.Next() {
		var id int64
		var key string
		if err := rows.Scan(&id, &key); err != nil {
			t.Fatal(err)
		}
		stored[id] = key
	}
	rows.Close()
	if len(stored) != 2 || stored[3] != "" || !strings.HasPrefix(stored[8], "enc:v1:") || strings.Contains(stored[8], "SECRET") {
		t.Fatalf("stored libraries: %v", stored)
	}
	rec := v.raw(t, "GET", "/dig/api/refmgr/libs", "", boss)
	if rec.Code != 200 || strings.Contains(rec.Body.String(), "SECRET") || strings.Contains(rec.Body.String(), `"api_key"`) {
		t.Fatalf("libraries: %d %s", rec.Code, rec.Body)
	}
	var libs struct{ Libs []map[string]any }
	_ = json.Unmarshal(rec.Body.Bytes(), &libs)
	if len(libs.Libs) != 2 || libs.Libs[0]["id"] != 8.0 || libs.Libs[0]["has_api_key"] != true || libs.Libs[0]["citation_style"] != "apa" ||
		libs.Libs[1]["id"] != 3.0 || libs.Libs[1]["has_api_key"] != false || libs.Libs[1]["created_at"] != "2023-11-14T22:13:20Z" {
		t.Errorf("libraries: %v", libs.Libs)
	}
	code, r := v.do(t, "GET", "/dig/api/record/finds/1", "", boss)
	bib, _ := r["bibliography"].(map[string]any)
	if code != 200 || len(bib) != 2 {
		t.Fatalf("bibliography of finds 1: %d %v", code, r["bibliography"])
	}
	first, _ := bib["2"].(map[string]any)
	if first["pages"] != "p. 12" || first["notes"] != "see plan" || first["author_year"] != "Carandini 1985" ||
		!strings.Contains(fmt.Sprint(first["full_citation"]), "<i>Settefinestre</i>") || first["refmgr_version"] != 7.0 ||
		first["refmgr_url"] != "https://www.zotero.org/groups/336647/items/AAAA1111" || first["synced_at"] != "2023-11-14T22:21:40Z" {
		t.Errorf("link 2: %v", first)
	}
	// Written as dig_finds in BraDypUS: the table's own name now.
	if second, _ := bib["5"].(map[string]any); second["tb"] != "finds" || second["lib_name"] != "My library" || second["refmgr_url"] != nil {
		t.Errorf("link 5: %v", second)
	}
	code, r = v.do(t, "GET", "/dig/api/record/finds/2", "", boss)
	if gone, _ := r["bibliography"].(map[string]any)["9"].(map[string]any); code != 200 || gone["detached"] != 1.0 {
		t.Errorf("link 9: %d %v", code, r["bibliography"])
	}
	// The plugin opens the key it did not seal itself: the private
	// library answers only with it.
	v.zotero.AddLibrary("user", "4242", "Mine", zoteroKey)
	v.zotero.PutItem("user", "4242", "DDDD4444", "Paul Zanker", "1998", "Pompeii: public and private life")
	code, r = v.do(t, "GET", "/dig/api/refmgr/search?lib_id=8&q=pompeii", "", boss)
	if res, _ := r["results"].([]any); code != 200 || len(res) != 1 || res[0].(map[string]any)["author_year"] != "Zanker 1998" {
		t.Fatalf("search in the converted library: %d %v", code, r)
	}
	sent := false
	for _, req := range v.zotero.Requests() {
		sent = sent || req.Header.Get("Zotero-API-Key") == zoteroKey
	}
	if !sent {
		t.Error("the provider never got the library's key")
	}
	code, r = v.do(t, "POST", "/dig/api/refmgr/link", `{"tb":"finds","record_id":3,"lib_id":8,"refmgr_key":"DDDD4444"}`, boss)
	if code != 200 || r["id"] != 12.0 {
		t.Errorf("a new link after the upgrade: %d %v", code, r)
	}
}

// TestMajorUpgradeRefusesReservedNames: BraDypUS allowed a table or field
// named pg_… (or sqlite_… on engines other than SQLite); Strata reserves
// both prefixes on both engines (a backup of such an app would not
// restore on SQLite). The upgrade refuses such a folder with the schema
// API's code before it starts anything: no snapshot, no application.
func TestMajorUpgradeRefusesReservedNames(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, false)
		b, _ := json.Marshal(map[string]string{"email": superEmail, "password": superPwd})
		for _, c := range []struct {
			name, code, named string
			sql               []string
		}{
			{"tbl", "invalid_table_name", "pg_notes", []string{
				`CREATE TABLE pg_notes (id INTEGER PRIMARY KEY, creator INTEGER, note TEXT)`,
				`INSERT INTO bdus_cfg_tables (name, label, order_field, id_field, preview, is_plugin, sort) VALUES ('pg_notes', 'Notes', 'id', 'id', '[]', 0, 9)`,
				`INSERT INTO bdus_cfg_fields (table_name, name, label, type, db_type, sort) VALUES ('pg_notes', 'note', 'Note', 'text', 'text', 1)`,
			}},
			{"fld", "invalid_field_name", "sqlite_note", []string{
				`ALTER TABLE sites ADD COLUMN sqlite_note TEXT`,
				`INSERT INTO bdus_cfg_fields (table_name, name, label, type, db_type, sort) VALUES ('sites', 'sqlite_note', 'Note', 'text', 'text', 9)`,
			}},
		} {
			folder := makeFolder(t, filepath.Join(v.data, "bradypus"), c.name, fixture{records: 2, noPlugins: true, noArchive: true})
			db, err := sql.Open("sqlite", filepath.Join(folder, "db", "bdus.sqlite"))
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range c.sql {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			db.Close()
			code, body := v.do(t, "POST", "/"+c.name+"/api/upgrade/major", string(b), nil)
			if code != http.StatusBadRequest || body["code"] != c.code || body["name"] != c.named || body["reserved_prefix"] == nil {
				t.Fatalf("%s: %d %v", c.name, code, body)
			}
			if ok, err := v.inst.Apps.Backend().Exists(context.Background(), c.name); err != nil || ok {
				t.Fatalf("%s: the refused upgrade left an application: %v %v", c.name, ok, err)
			}
			if _, err := os.Stat(filepath.Join(v.data, "upgrades")); !os.IsNotExist(err) {
				t.Fatalf("%s: a refused upgrade started: %v", c.name, err)
			}
		}
	})
}
