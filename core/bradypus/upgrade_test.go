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

// fixture describes a BraDypUS-5-shaped application to generate: the
// system tables as BraDypUS's Structure/*.json declare them (the columns
// the upgrade reads), and a small archaeological schema.
type fixture struct {
	records  int    // rows of finds
	badValue string // a value of finds.weight (a float field); "" for a good one
	files    int    // rows of bdus_files (not converted yet)
}

const (
	superEmail = "boss@example.org"
	superPwd   = "bradypus-boss"
	writerPwd  = "old-sha1-pass"
)

// makeFolder writes the fixture as <dir>/<name>: config.json and
// db/bdus.sqlite.
func makeFolder(t *testing.T, dir, name string, fx fixture) string {
	t.Helper()
	root := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Join(root, "db"), 0o700); err != nil {
		t.Fatal(err)
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
		`CREATE TABLE bdus_files (id INTEGER PRIMARY KEY, creator TEXT, ext TEXT, keywords TEXT, description TEXT, printable INTEGER, filename TEXT)`,
		`CREATE TABLE bdus_geodata (id INTEGER PRIMARY KEY, table_link TEXT, id_link INTEGER, geometry TEXT)`,
		`CREATE TABLE sites (id INTEGER PRIMARY KEY, creator INTEGER, name TEXT, region TEXT)`,
		`CREATE TABLE finds (id INTEGER PRIMARY KEY, creator INTEGER, label TEXT, weight TEXT, site INTEGER, material TEXT, found TEXT, complete INTEGER)`,
		`CREATE TABLE finds_samples (id INTEGER PRIMARY KEY, id_link INTEGER, lab TEXT)`,
	} {
		exec(ddl)
	}
	bc, _ := bcrypt.GenerateFromPassword([]byte(superPwd), bcrypt.MinCost)
	sum := sha1.Sum([]byte(writerPwd))
	exec(`INSERT INTO bdus_users VALUES (1, 'Boss', ?, ?, 1, '{}', NULL, NULL, 1)`, "Boss@Example.org ", string(bc))
	exec(`INSERT INTO bdus_users VALUES (7, 'Writer', 'writer@example.org', ?, 20, '{}', NULL, NULL, 1)`, hex.EncodeToString(sum[:]))
	exec(`INSERT INTO bdus_cfg_tables VALUES (1, 'bdus_files', 'Files', 'id', 'id', '["id","filename"]', 0, 0, NULL, NULL, NULL)`)
	exec(`INSERT INTO bdus_cfg_tables VALUES (2, 'sites', 'Sites', 'name', 'name', '["id","name"]', 0, 1, NULL, NULL, NULL)`)
	exec(`INSERT INTO bdus_cfg_tables VALUES (3, 'finds', 'Finds', 'id', 'label', '["id","label","material"]', 0, 2, NULL, NULL, '{"rs":"label","geodata":true}')`)
	exec(`INSERT INTO bdus_cfg_tables VALUES (4, 'finds_samples', 'Samples', NULL, 'id', '[]', 1, 3, NULL, NULL, NULL)`)
	fields := []struct{ tb, name, label, typ, dbType, extra string }{
		{"sites", "id", "ID", "text", "INTEGER", `{"readonly":true}`},
		{"sites", "name", "Name", "text", "TEXT", `{"check":["not_empty","unique"]}`},
		{"sites", "region", "Region", "combo_select", "TEXT", `{"get_values_from_tb":"sites:region"}`},
		{"finds", "label", "Label", "text", "TEXT", `{"check":["not_empty"]}`},
		{"finds", "weight", "Weight", "text", "REAL", `{}`},
		{"finds", "site", "Site", "select", "INTEGER", `{"id_from_tb":"sites"}`},
		{"finds", "material", "Material", "select", "TEXT", `{"vocabulary_set":"materials"}`},
		{"finds", "found", "Found on", "date", "TEXT", `{}`},
		{"finds", "complete", "Complete", "boolean", "INTEGER", `{}`},
		{"finds_samples", "lab", "Lab", "text", "TEXT", `{}`},
	}
	for i, f := range fields {
		exec(`INSERT INTO bdus_cfg_fields (table_name, name, label, type, db_type, sort, extra) VALUES (?, ?, ?, ?, ?, ?, ?)`, f.tb, f.name, f.label, f.typ, f.dbType, i, f.extra)
	}
	exec(`INSERT INTO bdus_cfg_relations VALUES (1, 'finds_samples', 'id_link', 'finds', 'id', 'CASCADE', 'CASCADE')`)
	exec(`INSERT INTO bdus_cfg_relations VALUES (2, 'finds', 'site', 'sites', 'id', 'RESTRICT', 'CASCADE')`)
	exec(`INSERT INTO bdus_vocabularies VALUES (1, 'materials', 'pottery', 1), (2, 'materials', 'glass', 2), (3, 'materials', 'bone', NULL)`)
	exec(`INSERT INTO bdus_user_table_privs VALUES (1, 7, 'finds', 25, NULL)`)
	exec(`INSERT INTO sites VALUES (1, 1, 'Ostia', 'Lazio'), (2, 99, 'Pompeii', '')`)
	for i := 1; i <= fx.records; i++ {
		weight := fmt.Sprintf("%d.5", i)
		if i == fx.records && fx.badValue != "" {
			weight = fx.badValue
		}
		creator := any(7)
		if i%3 == 0 {
			creator = nil
		}
		exec(`INSERT INTO finds VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, i, creator, fmt.Sprintf("F-%04d", i), weight, 1+i%2,
			[]string{"pottery", "glass", ""}[i%3], []string{"2021-06-01", ""}[i%2], i%2)
		exec(`INSERT INTO bdus_versions (userid, time, tb, rowid, content, operation) VALUES (7, 1700000000, 'finds', ?, ?, 'update')`,
			i, fmt.Sprintf(`{"label":"F-%04d old"}`, i))
	}
	exec(`INSERT INTO finds_samples VALUES (1, 1, 'Oxford'), (2, 1, 'Kiel')`)
	exec(`INSERT INTO bdus_rs VALUES (1, 'finds', 1, 2, 1), (2, 'finds', 2, 3, 6)`)
	exec(`INSERT INTO bdus_userlinks VALUES (1, 'finds', 1, 'sites', 1, NULL, 'found at')`)
	for i := 1; i <= fx.files; i++ {
		exec(`INSERT INTO bdus_files (id, ext, filename) VALUES (?, 'jpg', 'photo')`, i)
	}
	return root
}

type env struct {
	inst *testenv.Instance
	data string
}

func newEnv(t *testing.T, e store.Engine) env {
	inst := testenv.NewInstance(t, e)
	return env{inst: inst, data: inst.Config.DataDir}
}

func (v env) do(t *testing.T, method, path, body string, h map[string]string) (int, map[string]any) {
	t.Helper()
	return testenv.Do(t, v.inst.Server, method, path, body, h)
}

func (v env) listed(t *testing.T, name string) (any, bool) {
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

func TestMajorUpgrade(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		folder := makeFolder(t, filepath.Join(v.data, "bradypus"), "dig", fixture{records: 30})
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
		if code != 200 || body["code"] != "upgrade_complete" || body["verified"] != true {
			t.Fatalf("upgrade: %d %v", code, body)
		}
		counts := map[string][2]float64{}
		for _, x := range body["counts"].([]any) {
			m := x.(map[string]any)
			counts[m["table"].(string)] = [2]float64{m["before"].(float64), m["after"].(float64)}
		}
		for tb, want := range map[string]float64{"finds": 30, "sites": 2, "finds_samples": 2, "bdus_users": 2, "bdus_versions": 30,
			"bdus_rs": 2, "bdus_userlinks": 1, "bdus_vocabularies": 3, "bdus_user_table_privs": 1} {
			if counts[tb] != [2]float64{want, want} {
				t.Errorf("count of %s: %v, want %v", tb, counts[tb], want)
			}
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
		boss := testenv.Login(t, v.inst.Server, "dig", superEmail, superPwd)
		writer := testenv.Login(t, v.inst.Server, "dig", "writer@example.org", writerPwd)
		code, rec := v.do(t, "GET", "/dig/api/record/finds/2", "", testenv.Bearer(boss))
		if code != 200 {
			t.Fatalf("record: %d %v", code, rec)
		}
		core := rec["core"].(map[string]any)
		if core["label"].(map[string]any)["val"] != "F-0002" || core["weight"].(map[string]any)["val"] != 2.5 ||
			core["material"].(map[string]any)["val"] != "" || core["site"].(map[string]any)["val"] != 1.0 {
			t.Fatalf("record values: %v", core)
		}
		if n := len(rec["rs"].(map[string]any)); n != 2 {
			t.Errorf("rs of record 2: %d", n)
		}
		if n := len(rec["manualLinks"].(map[string]any)); n != 0 {
			t.Errorf("manual links of record 2: %d", n)
		}
		code, vers := v.do(t, "GET", "/dig/api/record/finds/2/versions", "", testenv.Bearer(boss))
		if code != 200 || len(vers["versions"].([]any)) != 1 {
			t.Fatalf("versions: %d %v", code, vers)
		}
		// The writer's table privilege came along: self_writer on finds.
		code, saved := v.do(t, "POST", "/dig/api/record/finds", `{"core":{"label":"new"}}`, testenv.Bearer(writer))
		if code != 200 {
			t.Fatalf("writer saves: %d %v", code, saved)
		}
		if id := saved["id"].(float64); id != 31 {
			t.Errorf("new record id %v, want 31 (after the copied ids)", id)
		}
		if code, body := v.do(t, "POST", "/dig/api/upgrade/major", upgradeBody(superEmail, superPwd), nil); code != http.StatusConflict || body["code"] != "no_major_upgrade_needed" {
			t.Fatalf("again: %d %v", code, body)
		}
	})
}

func TestMajorUpgradeRollsBack(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		folder := makeFolder(t, filepath.Join(v.data, "bradypus"), "dig", fixture{records: 5, badValue: "heavy"})
		code, body := v.do(t, "POST", "/dig/api/upgrade/major", upgradeBody(superEmail, superPwd), nil)
		if code != 400 || body["code"] != "upgrade_failed" || !strings.Contains(body["detail"].(string), "heavy") {
			t.Fatalf("broken fixture: %d %v", code, body)
		}
		if ok, err := v.inst.Apps.Backend().Exists(context.Background(), "dig"); err != nil || ok {
			t.Fatalf("the failed upgrade left an application: %v %v", ok, err)
		}
		if _, err := os.Stat(folder); err != nil {
			t.Fatalf("the folder moved: %v", err)
		}
		if up, _ := v.listed(t, "dig"); up != "major" {
			t.Fatalf("after the failure: %v", up)
		}
	})
}

func TestMajorUpgradeRefusals(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		makeFolder(t, filepath.Join(v.data, "bradypus"), "dig", fixture{records: 2, files: 1})
		code, body := v.do(t, "POST", "/dig/api/upgrade/major", upgradeBody(superEmail, superPwd), nil)
		if code != 400 || body["code"] != "upgrade_failed" || !strings.Contains(body["detail"].(string), "files") {
			t.Fatalf("unsupported: %d %v", code, body)
		}
		if _, err := os.Stat(filepath.Join(v.data, "upgrades")); !os.IsNotExist(err) {
			t.Fatalf("a refused upgrade started: %v", err)
		}
		// A snapshot that cannot be written starts nothing.
		makeFolder(t, v.data, "dig2", fixture{records: 2})
		if err := os.WriteFile(filepath.Join(v.data, "upgrades"), []byte("in the way"), 0o600); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(map[string]string{"email": superEmail, "password": superPwd})
		code, body = v.do(t, "POST", "/dig2/api/upgrade/major", string(b), nil)
		if code != 503 || body["code"] != "snapshot_failed" {
			t.Fatalf("snapshot: %d %v", code, body)
		}
		if ok, _ := v.inst.Apps.Backend().Exists(context.Background(), "dig2"); ok {
			t.Fatal("an application was created without a snapshot")
		}
		// A Strata application needs none.
		testenv.NewApp(t, v.inst.Apps, "plain")
		code, body = v.do(t, "POST", "/plain/api/upgrade/major", string(b), nil)
		if code != http.StatusConflict || body["code"] != "no_major_upgrade_needed" {
			t.Fatalf("strata app: %d %v", code, body)
		}
	})
}
