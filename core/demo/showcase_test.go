package demo_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/demo"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// featurePlugins are the plugins whose features the demo turns on.
var featurePlugins = []string{"chronology", "osteology", "radiocarbon"}

// pluginBin holds the real plugin binaries, built once for the test run.
var pluginBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "strata-demo-plugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, p := range append(slices.Clone(featurePlugins), "sequence") {
		args = append(args, "./plugins/"+p)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build the plugins: %v: %s", err, stderr.String())
		return 1
	}
	pluginBin = dir
	return m.Run()
}

const adminEmail = "demo@example.org"

// showcaseSite is a server on engine e with the plugins of pluginDir and
// a demo application "demo" filled by Seed; logs collects the log.
func showcaseSite(t *testing.T, e store.Engine, pluginDir string) (*testenv.Instance, *apps.App, *testenv.SyncBuffer) {
	t.Helper()
	ctx := context.Background()
	reg := testenv.NewRegistry(t, e)
	app, err := reg.Create(ctx, apps.CreateParams{Name: "demo", Definition: "Demo excavation", Email: adminEmail,
		Password: "demo-password", AdminName: "Demo Admin"})
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.Seed(ctx, app, demo.Small, 1, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	logs := &testenv.SyncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	mgr := pluginhost.New(pluginhost.Options{Dir: pluginDir, Apps: reg, Logger: log, Env: pluginhost.Environment(func(string) string { return "" }, t.TempDir())})
	if err := mgr.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mgr.Stop)
	inst := testenv.NewInstanceWith(t, e, server.Deps{Apps: reg, Plugins: mgr, Logger: log})
	return inst, app, logs
}

// counts are the rows of everything the showcase makes.
func counts(t *testing.T, db *store.DB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for name, q := range map[string]string{
		"geodata":        `SELECT COUNT(*) FROM ` + db.Sys("geodata") + ` WHERE tb = 'sites'`,
		"burials":        `SELECT COUNT(*) FROM ` + db.Qualify("burials"),
		"files":          `SELECT COUNT(*) FROM ` + db.Sys("files") + ` WHERE mime = 'image/png'`,
		"file_links":     `SELECT COUNT(*) FROM ` + db.Sys("file_links"),
		"charts":         `SELECT COUNT(*) FROM ` + db.Sys("charts"),
		"saved_queries":  `SELECT COUNT(*) FROM ` + db.Sys("saved_queries"),
		"templates":      `SELECT COUNT(*) FROM ` + db.Sys("templates") + ` WHERE tb = 'units'`,
		"relations":      `SELECT COUNT(*) FROM ` + db.Sys("rs") + ` WHERE tb = 'units'`,
		"active_feature": `SELECT COUNT(*) FROM ` + db.Sys("table_features") + ` WHERE active = ?`,
	} {
		var n int
		var args []any
		if name == "active_feature" {
			args = []any{true}
		}
		if err := db.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = n
	}
	return out
}

// TestShowcaseEveryFeature: the demo application shows every feature at
// once with the plugins built: sites on the map at real coordinates, the
// three plugin features on, units dated by the chronology plugin, three
// radiocarbon dates calibrated by theirs, burials with an osteology
// inventory the plugin checked, images on records, a chart, a saved query
// and a template, and a matrix without a cycle. A second call adds nothing.
func TestShowcaseEveryFeature(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		inst, app, logs := showcaseSite(t, e, pluginBin)
		db := app.DB
		start := time.Now()
		shown, err := demo.Showcase(ctx, inst.Server, app, adminEmail, time.Now().UTC(), slog.New(slog.NewTextHandler(logs, nil)))
		if err != nil {
			t.Fatalf("%v\nlog:\n%s", err, logs)
		}
		t.Logf("showcase in %v", time.Since(start))
		want := []string{"units/chronology", "units/radiocarbon", "burials/osteology"}
		if !slices.Equal(shown.Features, want) || len(shown.Missing) != 0 {
			t.Fatalf("features on %v, left off %v; want %v", shown.Features, shown.Missing, want)
		}
		got := counts(t, db)
		for k, n := range map[string]int{"geodata": 6, "burials": 3, "files": 4, "file_links": 4, "charts": 1,
			"saved_queries": 1, "templates": 1, "relations": 42, "active_feature": 3} {
			if got[k] != n {
				t.Errorf("%s: %d, want %d", k, got[k], n)
			}
		}

		// Geodata at real coordinates: every site's box inside Italy.
		var minX, minY, maxX, maxY float64
		if err := db.QueryRow(ctx, `SELECT MIN(min_x), MIN(min_y), MAX(max_x), MAX(max_y) FROM `+db.Sys("geodata")+` WHERE tb = 'sites'`).
			Scan(&minX, &minY, &maxX, &maxY); err != nil {
			t.Fatal(err)
		}
		if minX < 6.6 || maxX > 18.6 || minY < 36.6 || maxY > 47.1 {
			t.Errorf("sites at %v,%v–%v,%v: not in Italy", minX, minY, maxX, maxY)
		}

		// The chronology plugin computed the years from the labels.
		var from, to *int64
		if err := db.QueryRow(ctx, `SELECT chrono_from, chrono_to FROM `+db.Qualify("units")+` WHERE id = 8`).Scan(&from, &to); err != nil {
			t.Fatal(err)
		}
		if from == nil || to == nil || *from != -500 || *to != -401 {
			t.Errorf("US 8 dated %v–%v, want -500–-401 (c5 BCE)", deref(from), deref(to))
		}
		// The radiocarbon plugin calibrated every date, the 2σ range
		// holding the 1σ one.
		rows, err := db.Query(ctx, `SELECT lab_code, cal_1s_from, cal_1s_to, cal_2s_from, cal_2s_to FROM `+db.Qualify("units_radiocarbon")+` ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		var labs []string
		for rows.Next() {
			var lab string
			var s1f, s1t, s2f, s2t *int64
			if err := rows.Scan(&lab, &s1f, &s1t, &s2f, &s2t); err != nil {
				t.Fatal(err)
			}
			labs = append(labs, lab)
			if s1f == nil || s2f == nil || s1t == nil || s2t == nil || *s2f > *s1f || *s2t < *s1t || *s1f >= *s1t {
				t.Errorf("%s not calibrated (cal BP 1σ %v–%v, 2σ %v–%v)", lab, deref(s1f), deref(s1t), deref(s2f), deref(s2t))
			}
		}
		rows.Close()
		if len(labs) != 3 {
			t.Errorf("radiocarbon dates %v, want 3", labs)
		}
		// The osteology plugin stored its normalised document.
		var osteo *string
		if err := db.QueryRow(ctx, `SELECT osteo_data FROM `+db.Qualify("burials")+` WHERE code = 'T 1'`).Scan(&osteo); err != nil {
			t.Fatal(err)
		}
		if osteo == nil || !strings.Contains(*osteo, `"femur_left"`) {
			t.Errorf("T 1 osteology: %v", deref(osteo))
		}
		// The files are images the server read as such.
		var images int
		if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Sys("files")+` WHERE ext = 'png' AND size > 200`).Scan(&images); err != nil || images != 4 {
			t.Errorf("%d png files (%v), want 4", images, err)
		}
		// The saved views work for another user: run through the API.
		token := testenv.Login(t, inst.Server, "demo", adminEmail, "demo-password")
		for path, want := range map[string]string{
			"/saved-queries": "Bronze finds", "/charts": "Finds by material",
			"/template/units/unit_sheet": "units_radiocarbon", "/geoface?tb=sites": "Polygon",
			"/saved-query/1/run": "INV-",
		} {
			status, body := testenv.Do(t, inst.Server, "GET", "/demo/api"+path, "", testenv.Bearer(token))
			if status != 200 || !strings.Contains(fmt.Sprint(body), want) {
				t.Errorf("GET %s: %d, lacks %q: %.300v", path, status, want, body)
			}
		}

		// The sequence plugin's model of the first trench: its preview
		// has the dated periods, oldest first, and the three dates.
		status, body := testenv.Do(t, inst.Server, "GET", "/demo/api/sequence/units/models/1/preview", "", testenv.Bearer(token))
		if dates, _ := body["dates"].([]any); status != 200 || fmt.Sprint(body["phases"]) != "[c5 BCE c4 BCE c3 BCE]" || len(dates) != 3 {
			t.Errorf("sequence preview: %d %v", status, body)
		}

		// The publication setting is saved; this server runs no jobs, so
		// the first version is left for the visitor and the log says so.
		if _, body := testenv.Do(t, inst.Server, "GET", "/demo/api/publish/config", "", testenv.Bearer(token)); body["configured"] != true ||
			!strings.Contains(fmt.Sprint(body["config"]), "Demo excavation") {
			t.Errorf("publication setting: %v", body)
		}
		if !strings.Contains(logs.String(), "the first publication is not made") {
			t.Errorf("the log does not say the first publication is not made:\n%s", logs)
		}

		assertAcyclic(t, db)

		// Again: nothing added.
		if _, err := demo.Showcase(ctx, inst.Server, app, adminEmail, time.Now().UTC(), slog.New(slog.NewTextHandler(logs, nil))); err != nil {
			t.Fatal(err)
		}
		if again := counts(t, db); fmt.Sprint(again) != fmt.Sprint(got) {
			t.Errorf("a second call changed the demo: %v, was %v", again, got)
		}
		if _, body := testenv.Do(t, inst.Server, "GET", "/demo/api/sequence/units/models", "", testenv.Bearer(token)); len(body["models"].([]any)) != 1 {
			t.Errorf("sequence models after a second call: %v", body["models"])
		}
	})
}

// TestShowcaseWithoutPlugins: with no plugin binary the demo is still
// made (map, burials, files, chart, query, template) and the log names
// each feature left off.
func TestShowcaseWithoutPlugins(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		inst, app, logs := showcaseSite(t, e, t.TempDir())
		shown, err := demo.Showcase(ctx, inst.Server, app, adminEmail, time.Now().UTC(), slog.New(slog.NewTextHandler(logs, nil)))
		if err != nil {
			t.Fatalf("%v\nlog:\n%s", err, logs)
		}
		if len(shown.Features) != 0 || len(shown.Missing) != 3 {
			t.Errorf("features on %v, left off %v", shown.Features, shown.Missing)
		}
		for _, f := range featurePlugins {
			if !strings.Contains(logs.String(), "feature="+f) {
				t.Errorf("the log does not name %s:\n%s", f, logs)
			}
		}
		got := counts(t, app.DB)
		for k, n := range map[string]int{"geodata": 6, "burials": 3, "files": 4, "charts": 1, "saved_queries": 1, "templates": 1, "active_feature": 0} {
			if got[k] != n {
				t.Errorf("%s: %d, want %d", k, got[k], n)
			}
		}
	})
}

// assertAcyclic fails when the units' relations hold a cycle: each
// relation read as "later → earlier" (9 and 10, contemporaneity, have no
// direction), Kahn's algorithm must consume every unit.
func assertAcyclic(t *testing.T, db *store.DB) {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT first, second, relation FROM `+db.Sys("rs")+` WHERE tb = 'units'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	later := map[int64][]int64{}
	indeg := map[int64]int{}
	for rows.Next() {
		var a, b int64
		var r int
		if err := rows.Scan(&a, &b, &r); err != nil {
			t.Fatal(err)
		}
		switch {
		case r >= 1 && r <= 4: // a is covered by / cut by / carries / is filled by b: b is later
			a, b = b, a
		case r >= 5 && r <= 8: // a covers / cuts / leans against / fills b: a is later
		default:
			continue
		}
		later[a] = append(later[a], b)
		indeg[b]++
		if _, ok := indeg[a]; !ok {
			indeg[a] = 0
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var queue []int64
	for n, d := range indeg {
		if d == 0 {
			queue = append(queue, n)
		}
	}
	seen := 0
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		seen++
		for _, m := range later[n] {
			if indeg[m]--; indeg[m] == 0 {
				queue = append(queue, m)
			}
		}
	}
	if seen != len(indeg) {
		t.Errorf("the matrix has a cycle: %d of %d units ordered", seen, len(indeg))
	}
	if len(indeg) == 0 {
		t.Error("no relations")
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
