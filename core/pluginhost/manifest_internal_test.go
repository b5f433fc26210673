package pluginhost

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/strata-archaeo/strata/pluginsdk"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

func goodManifest() *pluginv1.Manifest {
	col := func(n, db string) *pluginv1.Column {
		return &pluginv1.Column{Name: n, Type: "text", DbType: db}
	}
	return &pluginv1.Manifest{
		Name: "chrono", Version: "1.0.0", ProtocolVersion: pluginsdk.ProtocolVersion,
		Features: []*pluginv1.TableFeature{
			{Name: "chronology", Aliases: []string{"fuzzy-date"}, Columns: []*pluginv1.Column{col("chrono_from", "int"), col("chrono_label", "text")},
				Computed: []string{"chrono_from"}, BeforeSave: true, Required: true, SchemaFlag: "has_chronology"},
			{Name: "dates", Child: &pluginv1.ChildTable{Suffix: "dates", Columns: []*pluginv1.Column{col("bp", "int")}}, BeforeSave: true},
		},
		Routes: []*pluginv1.Route{
			{Method: "GET", Path: "/chrono/parse", Access: "read"},
			{Method: "GET", Path: "/chrono/related/:tb/:id", Access: "read", TimeoutMs: 1000},
			{Method: "GET", Path: "/chrono/files/*rest", Access: "public"},
		},
		Operators: []*pluginv1.FilterOperator{{Name: "_chrono_overlap", Fields: []string{"chrono_from"}, Feature: "chronology"}},
		Sections: []*pluginv1.RecordSection{{Name: "bibliography", Feature: "chronology"},
			{Name: "cached", Rows: &pluginv1.SectionRows{Table: "cache", TableColumn: "tb", IdColumn: "rec", Empty: []byte(`{}`)}}},
		SystemTables: []*pluginv1.SystemTable{{Name: "cache", Columns: []*pluginv1.Column{{Name: "k", DbType: "text"},
			{Name: "tb", DbType: "text"}, {Name: "rec", DbType: "int"}},
			Indexes: []*pluginv1.SystemIndex{{Columns: []string{"tb", "rec"}}, {Columns: []string{"id"}}}}},
	}
}

func TestValidateManifest(t *testing.T) {
	if probs := validateManifest(goodManifest()); len(probs) > 0 {
		t.Fatalf("a good manifest: %v", probs)
	}
	for _, c := range []struct {
		name   string
		change func(m *pluginv1.Manifest)
		want   string
	}{
		{"name shape", func(m *pluginv1.Manifest) { m.Name = "Chrono" }, "name"},
		{"reserved name", func(m *pluginv1.Manifest) { m.Name = "users" }, "reserved"},
		{"no version", func(m *pluginv1.Manifest) { m.Version = "" }, "version"},
		{"protocol", func(m *pluginv1.Manifest) { m.ProtocolVersion = 2 }, "protocol version 2"},
		{"settings schema", func(m *pluginv1.Manifest) { m.SettingsSchema = []byte("[1]") }, "settings schema"},
		{"feature name", func(m *pluginv1.Manifest) { m.Features[0].Name = "Chrono-logy" }, "feature"},
		{"duplicate alias", func(m *pluginv1.Manifest) { m.Features[1].Aliases = []string{"fuzzy-date"} }, "already a name or alias"},
		{"system column", func(m *pluginv1.Manifest) { m.Features[0].Columns[0].Name = "creator" }, "keeps"},
		{"sys_ column", func(m *pluginv1.Manifest) { m.Features[0].Columns[0].Name = "sys_x" }, "keeps"},
		{"field type", func(m *pluginv1.Manifest) { m.Features[0].Columns[0].Type = "blob" }, "type"},
		{"db type", func(m *pluginv1.Manifest) { m.Features[0].Columns[0].DbType = "blob" }, "db type"},
		{"computed not declared", func(m *pluginv1.Manifest) { m.Features[0].Computed = []string{"nope"} }, "computed column"},
		{"computed without hook", func(m *pluginv1.Manifest) { m.Features[0].BeforeSave = false }, "BeforeSave"},
		{"required without hook", func(m *pluginv1.Manifest) { m.Features[1].BeforeSave = false; m.Features[1].Required = true }, "required"},
		{"hooks on columns and child", func(m *pluginv1.Manifest) { m.Features[1].Columns = m.Features[0].Columns[1:] }, "not both"},
		{"child suffix", func(m *pluginv1.Manifest) { m.Features[1].Child.Suffix = "Dates" }, "suffix"},
		{"schema flag", func(m *pluginv1.Manifest) { m.Features[0].SchemaFlag = "has_geodata" }, "schema flag"},
		{"depends_on name", func(m *pluginv1.Manifest) { m.Features[0].DependsOn = []string{"Site Name"} }, `depends_on "Site Name" is not an identifier`},
		{"depends_on own column", func(m *pluginv1.Manifest) { m.Features[0].DependsOn = []string{m.Features[0].Columns[0].Name} }, "one of its own columns"},
		{"depends_on on a child table", func(m *pluginv1.Manifest) { m.Features[1].DependsOn = []string{"site"} }, "not a child table"},
		{"method", func(m *pluginv1.Manifest) { m.Routes[0].Method = "HEAD" }, "method"},
		{"access", func(m *pluginv1.Manifest) { m.Routes[0].Access = "root" }, "access"},
		{"timeout", func(m *pluginv1.Manifest) { m.Routes[0].TimeoutMs = 11 * 60 * 1000 }, "timeout"},
		{"job route by GET", func(m *pluginv1.Manifest) { m.Routes[0].Job = true }, "job route is not a GET"},
		{"body limit", func(m *pluginv1.Manifest) { m.Routes[0].BodyLimit = 1 << 30 }, "body limit"},
		{"first segment", func(m *pluginv1.Manifest) { m.Routes[0].Path = "/:x/parse" }, "first segment"},
		{"trailing slash", func(m *pluginv1.Manifest) { m.Routes[0].Path = "/chrono/" }, "path"},
		{"app param", func(m *pluginv1.Manifest) { m.Routes[1].Path = "/chrono/:app" }, "taken"},
		{"repeated param", func(m *pluginv1.Manifest) { m.Routes[1].Path = "/chrono/:id/:id" }, "taken"},
		{"catch-all not last", func(m *pluginv1.Manifest) { m.Routes[2].Path = "/chrono/*rest/x" }, "catch-all"},
		{"bad segment", func(m *pluginv1.Manifest) { m.Routes[0].Path = "/chrono/a b" }, "segment"},
		{"duplicate route", func(m *pluginv1.Manifest) { m.Routes[1] = proto.Clone(m.Routes[0]).(*pluginv1.Route) }, "declared twice"},
		{"builtin operator", func(m *pluginv1.Manifest) { m.Operators[0].Name = "_eq" }, "built-in"},
		{"operator shape", func(m *pluginv1.Manifest) { m.Operators[0].Name = "overlap" }, "operators are"},
		{"operator feature", func(m *pluginv1.Manifest) { m.Operators[0].Feature = "nope" }, "not declared"},
		{"reserved section", func(m *pluginv1.Manifest) { m.Sections[0].Name = "core" }, "section"},
		{"system table id", func(m *pluginv1.Manifest) { m.SystemTables[0].Columns[0].Name = "id" }, "id is created"},
		{"system table too long", func(m *pluginv1.Manifest) { m.SystemTables[0].Name = strings.Repeat("x", 60) }, "63 characters"},
		{"index column", func(m *pluginv1.Manifest) { m.SystemTables[0].Indexes[0].Columns[1] = "nope" }, `index 0: column "nope" is not declared`},
		{"index empty", func(m *pluginv1.Manifest) { m.SystemTables[0].Indexes[1].Columns = nil }, "index 1 has no columns"},
		{"index twice", func(m *pluginv1.Manifest) { m.SystemTables[0].Indexes[1].Columns = []string{"tb", "rec"} }, "declared twice"},
		{"too many indexes", func(m *pluginv1.Manifest) {
			for _, c := range []string{"k", "tb", "rec", "k", "tb", "rec", "k"} {
				m.SystemTables[0].Indexes = append(m.SystemTables[0].Indexes, &pluginv1.SystemIndex{Columns: []string{c}})
			}
		}, "more than 8 indexes"},
		{"section rows table", func(m *pluginv1.Manifest) { m.Sections[1].Rows.Table = "links" }, `system table "links" is not declared`},
		{"section rows table column", func(m *pluginv1.Manifest) { m.Sections[1].Rows.TableColumn = "table" }, `table column "table"`},
		{"section rows id column", func(m *pluginv1.Manifest) { m.Sections[1].Rows.IdColumn = "nope" }, `id column "nope"`},
		{"section rows empty", func(m *pluginv1.Manifest) { m.Sections[1].Rows.Empty = []byte("{") }, "not JSON"},
	} {
		m := goodManifest()
		c.change(m)
		probs := strings.Join(validateManifest(m), "; ")
		if !strings.Contains(probs, c.want) {
			t.Errorf("%s: %q does not mention %q", c.name, probs, c.want)
		}
	}
}

func TestPathsOverlap(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"/records/:tb", "/records/:x", true},
		{"/records/:tb", "/records/finds", true},
		{"/records/:tb", "/records/:tb/x", false},
		{"/munsell/parse", "/chrono/parse", false},
		{"/files/*rest", "/files/a/b", true},
		{"/files/*rest", "/other/a", false},
		{"/a/:x/b", "/a/c/:y", true},
		{"/a/:x/b", "/a/c/d", false},
	} {
		if got := PathsOverlap(c.a, c.b); got != c.want {
			t.Errorf("%s vs %s: %v", c.a, c.b, got)
		}
		if got := PathsOverlap(c.b, c.a); got != c.want {
			t.Errorf("%s vs %s: %v", c.b, c.a, got)
		}
	}
}

func TestBackoffDoublesUpToTheCap(t *testing.T) {
	m := New(Options{MinBackoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second})
	p := &plugin{m: m}
	var got []time.Duration
	for range 8 {
		p.crashes = append(p.crashes, time.Now())
		got = append(got, p.backoff())
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("backoffs %v, want %v", got, want)
		}
	}
	if !p.breakerOpen() {
		t.Error("8 crashes in the window: the breaker is closed")
	}
	p.crashes = []time.Time{time.Now().Add(-10 * time.Minute), time.Now().Add(-6 * time.Minute)}
	if p.breakerOpen() || p.backoff() != 500*time.Millisecond {
		t.Error("old crashes still count")
	}
}

func TestSecretSettings(t *testing.T) {
	for k, secret := range map[string]bool{"jwt_secret": true, "oauth.idp_a.client_secret": true, "smtp_password": true,
		"api_token": true, "signing_key": true, "name": false, "language": false, "oauth.idp_a.client_id": false,
		"oauth_allowed_origins": false, "maxImageSize": false} {
		if secretSetting(k) != secret {
			t.Errorf("%s: secret %v", k, !secret)
		}
	}
}

func TestEnvironment(t *testing.T) {
	env := Environment(func(k string) string {
		return map[string]string{"STRATA_CURVES_DIR": "/c", "DATABASE_URL": "postgres://x", "GAZETTEER_PLEIADES_URL": "http://g",
			"HTTPS_PROXY": "http://proxy:3128", "MAIL_PROVIDER_API_KEY": "secret"}[k]
	}, "/srv/data")
	if strings.Join(env, " ") != "STRATA_DATA_DIR=/srv/data STRATA_CURVES_DIR=/c GAZETTEER_PLEIADES_URL=http://g HTTPS_PROXY=http://proxy:3128" {
		t.Fatalf("env %v", env)
	}
	if env := Environment(func(string) string { return "" }, ""); len(env) != 0 {
		t.Fatalf("env %v", env)
	}
}

func TestPluginStderrReachesSlog(t *testing.T) {
	var b bytes.Buffer
	l := newSlogLogger(slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})), "munsell")
	l.Named("stderr").With("k", 1).Warn("careful", "x", "y")
	l.Debug("fine detail")
	l.Trace("finer still") // below the adapter's level
	if out := b.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "plugin=munsell") ||
		!strings.Contains(out, "k=1") || !strings.Contains(out, "x=y") || !strings.Contains(out, "logger=stderr") ||
		!strings.Contains(out, "fine detail") || strings.Contains(out, "finer still") {
		t.Fatalf("log: %s", out)
	}
}
