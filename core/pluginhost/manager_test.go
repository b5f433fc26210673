package pluginhost_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func names(infos []pluginhost.Info) []string {
	var out []string
	for _, in := range infos {
		out = append(out, in.Name)
	}
	return out
}

// Valid plugins load; every kind of broken one is logged and left out, and
// none of them stops the others.
func TestStartLoadsValidPluginsAndSkipsBrokenOnes(t *testing.T) {
	t.Parallel()
	dir := pluginDir(t, "testplug", "testplug2", "badname", "oldproto", "hang", "exit", "zz_dupname")
	if err := os.WriteFile(filepath.Join(dir, "README.txt"), []byte("not a plugin"), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	opts := fastOptions(dir, nil, slog.New(slog.NewTextHandler(logs, nil)))
	opts.DescribeTimeout = 1500 * time.Millisecond // room for a loaded machine; the hanging plugin still fails it
	start := time.Now()
	m := startManager(t, opts)
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("start took %v: a hanging plugin must not hold the others up", took)
	}
	if got := names(m.List()); !slices.Equal(got, []string{"testplug", "testplug2"}) {
		t.Fatalf("loaded %v; log:\n%s", got, logs)
	}
	for _, in := range m.List() {
		if in.State != pluginhost.StateRunning {
			t.Errorf("%s is %s", in.Name, in.State)
		}
	}
	in, err := m.Describe("testplug")
	if err != nil || in.Version != "1.2.3" || len(in.Features) != 3 || in.Features[0].Name != "labels" ||
		!slices.Equal(in.Features[0].Aliases, []string{"label-set"}) || len(in.Routes) != 13 || len(in.Operators) != 4 {
		t.Errorf("describe: %+v %v", in, err)
	}
	log := logs.String()
	for _, want := range []string{"Bad-Name", "protocol version 99", "describe", "did not start", `another plugin is called \"testplug\"`} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not mention %q:\n%s", want, log)
		}
	}
	if m.PID("testplug") == 0 || m.PID("badname") != 0 {
		t.Errorf("pids: %d %d", m.PID("testplug"), m.PID("badname"))
	}
	m.Stop()
	if s := m.State("testplug"); s != pluginhost.StateStopped {
		t.Errorf("after Stop: %s", s)
	}
}

func TestMissingPluginDirMeansNoPlugins(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	m := startManager(t, pluginhost.Options{Dir: filepath.Join(t.TempDir(), "nope"), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if len(m.List()) != 0 || !strings.Contains(logs.String(), "no plugin directory") {
		t.Fatalf("%v %s", m.List(), logs)
	}
	var nilManager *pluginhost.Manager
	if len(nilManager.List()) != 0 || nilManager.Operators() != nil {
		t.Fatal("a nil manager has plugins")
	}
	nilManager.Stop()
}

// The server refuses plugins whose routes or feature names collide with
// its own (the manager stops them), and starts with the rest.
func TestServerRejectsCollidingPlugins(t *testing.T) {
	t.Parallel()
	testenv.RequireEngine(t, store.SQLite)
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	reg := testenv.NewRegistry(t, store.SQLite)
	m := startManager(t, fastOptions(pluginDir(t, "collide", "badfeature", "testplug"), reg, log))
	if got := names(m.List()); !slices.Equal(got, []string{"badfeature", "collide", "testplug"}) {
		t.Fatalf("loaded %v", got)
	}
	srv, err := server.New(server.Deps{Config: config.Default(), Apps: reg, Logger: log, Plugins: m})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(m.List()); !slices.Equal(got, []string{"testplug"}) {
		t.Fatalf("after mounting: %v", got)
	}
	for _, want := range []string{"overlaps GET /records/:tb", `feature \"fields\"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logs)
		}
	}
	if m.PID("collide") != 0 {
		t.Error("a rejected plugin still runs")
	}
	testenv.NewApp(t, reg, "digs")
	code, body := testenv.Do(t, srv, http.MethodGet, "/api/info", "", nil)
	plugins, _ := body["plugins"].([]any)
	if code != 200 || len(plugins) != 1 || plugins[0].(map[string]any)["name"] != "testplug" ||
		plugins[0].(map[string]any)["state"] != "running" || plugins[0].(map[string]any)["version"] != "1.2.3" {
		t.Fatalf("/api/info: %d %v", code, body)
	}
}

// A plugin process gets only the variables the manager passes (and
// go-plugin's own), and its settings file.
func TestPluginEnvironmentIsMinimal(t *testing.T) {
	t.Parallel()
	dir := pluginDir(t, "testplug")
	if err := os.WriteFile(filepath.Join(dir, "testplug.json"), []byte(`{"colour":"red"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// PATH, HOME and the rest of the test process's environment must not
	// reach the plugin, nor what getenv has beyond STRATA_CURVES_DIR.
	getenv := func(k string) string {
		return map[string]string{"STRATA_CURVES_DIR": "/srv/curves", "DATABASE_URL": "postgres://secret"}[k]
	}
	f := newFixture(t, store.SQLite, dir, func(o *pluginhost.Options) { o.Env = pluginhost.Environment(getenv, "data") })
	body := f.json(http.MethodGet, "/digs/api/testplug/env", "", f.super, http.StatusOK)
	var env []string
	for _, v := range body["env"].([]any) {
		env = append(env, v.(string))
	}
	abs, _ := filepath.Abs("data")
	for _, want := range []string{"STRATA_DATA_DIR=" + abs, "STRATA_CURVES_DIR=/srv/curves"} {
		if !slices.Contains(env, want) {
			t.Errorf("env lacks %s: %v", want, env)
		}
	}
	for _, v := range env {
		name, _, _ := strings.Cut(v, "=")
		switch {
		case strings.HasPrefix(name, "PLUGIN_"), name == "STRATA_PLUGIN", name == "STRATA_DATA_DIR", name == "STRATA_CURVES_DIR":
		default:
			t.Errorf("the plugin sees %s", v)
		}
	}
	if body["settings"] != `{"colour":"red"}` {
		t.Errorf("settings: %v", body["settings"])
	}
	if int(body["pid"].(float64)) != f.mgr.PID("testplug") {
		t.Errorf("pid %v vs %d", body["pid"], f.mgr.PID("testplug"))
	}
	if _, err := f.mgr.Enable(context.Background(), "nope"); errs.CodeOf(err) != "plugin_not_found" {
		t.Errorf("enable an unknown plugin: %v", err)
	}
}
