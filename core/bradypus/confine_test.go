package bradypus_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// outside is what lies in the data folder beside an adopted BraDypUS
// folder and must never reach the application the upgrade makes: the
// instance key, another tenant's database and its configuration file.
type outside struct {
	secretKey, otherDB, otherConfig string // paths
	markers                         [][]byte
}

// outsideFiles writes the instance key (when the instance has none on
// disk), another application (its app.db on SQLite; a stand-in file of
// the same name on PostgreSQL, whose databases are not files) and that
// application's configuration file (a JSON document shaped like a print
// template, so a reader that follows a link would take it).
func outsideFiles(t *testing.T, v env) outside {
	t.Helper()
	o := outside{secretKey: filepath.Join(v.data, "secret.key"), otherConfig: filepath.Join(v.data, "config", "beta.json")}
	key := []byte("SECRET-KEY-MARKER-0123456789abcdef\n")
	if b, err := os.ReadFile(o.secretKey); err == nil {
		key = b
	} else if err := os.WriteFile(o.secretKey, key, 0o600); err != nil {
		t.Fatal(err)
	}
	testenv.NewApp(t, v.inst.Apps, "beta")
	if sb, ok := v.inst.Apps.Backend().(*store.SQLiteBackend); ok {
		o.otherDB = filepath.Join(sb.AppDir("beta"), "app.db")
	} else {
		o.otherDB = filepath.Join(v.data, "apps", "beta", "app.db")
		if err := os.MkdirAll(filepath.Dir(o.otherDB), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(o.otherDB, []byte("SQLite format 3\x00 BETA-DATABASE-MARKER"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(o.otherConfig), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.otherConfig, []byte(`{"sections":[{"label":"BETA-CONFIG-MARKER"}],"s3_secret":"BETA-CONFIG-MARKER"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o.markers = [][]byte{key, []byte("SQLite format 3\x00"), []byte("BETA-DATABASE-MARKER"), []byte("BETA-CONFIG-MARKER")}
	return o
}

// leaks names the markers of o found in b.
func (o outside) leaks(b []byte) []string {
	var found []string
	for _, m := range o.markers {
		if bytes.Contains(b, m) {
			found = append(found, fmt.Sprintf("%q", m))
		}
	}
	return found
}

// fixtureExec runs statements on the fixture's db/bdus.sqlite.
func fixtureExec(t *testing.T, folder string, stmts ...[]any) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(folder, "db", "bdus.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s[0].(string), s[1:]...); err != nil {
			t.Fatalf("%s: %v", s[0], err)
		}
	}
}

// checkStore reads every file the application's file store holds: each
// must be one of the folder's own files (want), and none may hold a byte
// sequence of what lies outside.
func checkStore(t *testing.T, v env, app string, o outside, want ...[]byte) {
	t.Helper()
	n := 0
	err := filepath.Walk(filepath.Join(v.data, "files", app), func(p string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if l := o.leaks(b); len(l) > 0 {
			t.Errorf("stored file %s holds %v from outside the folder", p, l)
		}
		for _, w := range want {
			if bytes.Equal(b, w) {
				n++
				return nil
			}
		}
		if !strings.Contains(p, ".thumb") {
			t.Errorf("stored file %s is none of the folder's files: %.60q", p, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Errorf("%d of the folder's %d files stored", n, len(want))
	}
}

// checkSnapshot reads the upgrade's snapshot: none of its members holds
// what lies outside the folder, and no member is a link.
func checkSnapshot(t *testing.T, path string, o outside) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeDir {
			t.Errorf("snapshot member %s is of type %c", h.Name, h.Typeflag)
		}
		b, _ := io.ReadAll(tr)
		if strings.HasSuffix(h.Name, "/db/bdus.sqlite") {
			// The folder's own database: a SQLite file, so the header is
			// no sign of another tenant's (their markers still are).
			b = bytes.Replace(b, []byte("SQLite format 3\x00"), nil, 1)
		}
		if l := o.leaks(b); len(l) > 0 {
			t.Errorf("snapshot member %s holds %v from outside the folder", h.Name, l)
		}
	}
}

// refusedOf is the answer's refused entries, path → reason.
func refusedOf(t *testing.T, body map[string]any) map[string]string {
	t.Helper()
	list, ok := body["refused"].([]any)
	if !ok {
		t.Fatalf("no refused list in the answer: %v", body)
	}
	out := map[string]string{}
	for _, x := range list {
		m := x.(map[string]any)
		out[m["path"].(string)] = fmt.Sprint(m["reason"])
	}
	return out
}

// TestMajorUpgradeStaysInFolder: a BraDypUS folder whose stored file
// names climb out of it (bdus_files.ext with ../, or with a slash at all)
// and whose files/ holds links to the instance key and to another
// tenant's database: the upgrade brings the folder's own files, refuses
// the rest by name with the reason, and nothing from outside reaches the
// new application's files or the snapshot.
func TestMajorUpgradeStaysInFolder(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, false)
		o := outsideFiles(t, v)
		folder := makeFolder(t, filepath.Join(v.data, "bradypus"), "dig", fixture{records: 2, noPlugins: true})
		files := filepath.Join(folder, "files")
		fixtureExec(t, folder,
			// files/4.x/../../../../secret.key is <data>/secret.key.
			[]any{`INSERT INTO bdus_files VALUES (4, '1', 'x/../../../../secret.key', NULL, NULL, 0, 'key')`},
			// An absolute path after the id's dot.
			[]any{`INSERT INTO bdus_files VALUES (5, '1', ?, NULL, NULL, 0, 'beta')`, "/" + o.otherDB},
			// files/6.db links to another tenant's database.
			[]any{`INSERT INTO bdus_files VALUES (6, '1', 'db', NULL, NULL, 0, 'beta')`},
			// files/7.json links to another tenant's configuration.
			[]any{`INSERT INTO bdus_files VALUES (7, '1', 'json', NULL, NULL, 0, 'config')`},
			// files/8.txt links inside the folder: still a link.
			[]any{`INSERT INTO bdus_files VALUES (8, '1', 'txt', NULL, NULL, 0, 'inside')`},
			// A NUL in the stored name.
			[]any{`INSERT INTO bdus_files VALUES (9, '1', ?, NULL, NULL, 0, 'nul')`, "txt\x00/../../../../secret.key"},
			[]any{`INSERT INTO bdus_file_links VALUES (10, 4, 'finds', 1, 3), (11, 6, 'finds', 1, 4), (12, 7, 'sites', 1, 2)`},
		)
		for name, target := range map[string]string{"6.db": o.otherDB, "7.json": o.otherConfig, "8.txt": filepath.Join(folder, "config.json")} {
			if err := os.Symlink(target, filepath.Join(files, name)); err != nil {
				t.Fatal(err)
			}
		}
		// A link elsewhere in the folder, to the key: not in the snapshot.
		if err := os.Symlink(o.secretKey, filepath.Join(folder, "key.txt")); err != nil {
			t.Fatal(err)
		}
		code, body := v.do(t, "POST", "/dig/api/upgrade/major", upgradeBody(superEmail, superPwd), nil)
		if code != 200 || body["code"] != "upgrade_complete" {
			t.Fatalf("upgrade: %d %v", code, body)
		}
		checkStore(t, v, "dig", o, fileBytes(1), fileBytes(2), fileBytes(3))
		checkSnapshot(t, filepath.Join(body["dir"].(string), "snapshot.tar.gz"), o)
		refused := refusedOf(t, body)
		for path, reason := range map[string]string{
			"files/4.x/../../../../secret.key":       "invalid_name",
			"files/5./" + o.otherDB:                  "invalid_name",
			"files/6.db":                             "symlink",
			"files/7.json":                           "symlink",
			"files/8.txt":                            "symlink",
			"files/9.txt\x00/../../../../secret.key": "invalid_name",
			"key.txt":                                "symlink",
		} {
			if refused[path] != reason {
				t.Errorf("refused[%q] = %q, want %q (refused: %v)", path, refused[path], reason, refused)
			}
		}
		warnings := fmt.Sprint(body["warnings"])
		for _, w := range []string{"file 4", "file 5", "file 6", "file 7", "file 8", "file 9"} {
			if !strings.Contains(warnings, w+" ") {
				t.Errorf("no warning names %s: %s", w, warnings)
			}
		}
		if got := counts(body)["bdus_files"]; got != [2]float64{9, 3} {
			t.Errorf("files before and after: %v", got)
		}
		if body["verified"] != false {
			t.Errorf("verified with files refused: %v", body["verified"])
		}
		if b, err := os.ReadFile(filepath.Join(body["dir"].(string), "report.json")); err != nil || !strings.Contains(string(b), `"refused"`) {
			t.Errorf("report.json does not list the refused entries: %v %s", err, b)
		}
		// The application answers only its own files.
		boss := testenv.Bearer(testenv.Login(t, v.inst.Server, "dig", superEmail, superPwd))
		for id := 4; id <= 9; id++ {
			if code, _ := v.do(t, "GET", fmt.Sprintf("/dig/api/file/%d/download", id), "", boss); code != 404 {
				t.Errorf("file %d: %d, want 404", id, code)
			}
		}
	})
}

// TestMajorUpgrade4StaysInFolder: a BraDypUS 4 folder, whose print
// templates the upgrade reads from template/: a template that links to
// another tenant's configuration file is refused by name, never read;
// a stored file name that climbs out of files/ is refused too.
func TestMajorUpgrade4StaysInFolder(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, false)
		o := outsideFiles(t, v)
		folder := makeFolder4(t, filepath.Join(v.data, "bradypus"), "old", fixture4{records: 12})
		if err := os.Symlink(o.otherConfig, filepath.Join(folder, "template", "finds.leak.json")); err != nil {
			t.Fatal(err)
		}
		fixtureExec(t, folder, []any{`INSERT INTO old__files VALUES (9, '7', 'x/../../../../secret.key', NULL, NULL, 1, 'key')`})
		code, body := v.do(t, "POST", "/old/api/upgrade/major", upgradeApp("old", superEmail, superPwd), nil)
		if code != 200 || body["code"] != "upgrade_complete" {
			t.Fatalf("upgrade: %d %v", code, body)
		}
		checkStore(t, v, "old", o, fileBytes(1), fileBytes(2))
		checkSnapshot(t, filepath.Join(body["dir"].(string), "snapshot.tar.gz"), o)
		refused := refusedOf(t, body)
		for path, reason := range map[string]string{"template/finds.leak.json": "symlink", "files/9.x/../../../../secret.key": "invalid_name"} {
			if refused[path] != reason {
				t.Errorf("refused[%q] = %q, want %q (refused: %v)", path, refused[path], reason, refused)
			}
		}
		boss := testenv.Bearer(testenv.Login(t, v.inst.Server, "old", superEmail, superPwd))
		if code, tp := v.do(t, "GET", "/old/api/template/finds/leak", "", boss); code != 404 {
			t.Errorf("the linked template was brought over: %d %v", code, tp)
		}
	})
}
