package pluginsdk_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/pluginsdk"
)

func validManifest() pluginsdk.Manifest {
	col := func(name string) pluginsdk.Column { return pluginsdk.Column{Name: name, Type: "text", DBType: "text"} }
	return pluginsdk.Manifest{
		Name: "valid_one", Version: "1.2.3-rc.1", ProtocolVersion: pluginsdk.ProtocolVersion,
		Features: []pluginsdk.Feature{
			{Name: "alpha", Aliases: []string{"al-pha"}, Columns: []pluginsdk.Column{col("a_one"), col("a_two")},
				Computed: []string{"a_two"}, BeforeSave: true, Required: true, SchemaFlag: "has_alpha"},
			{Name: "beta", Child: &pluginsdk.ChildTable{Suffix: "beta", Columns: []pluginsdk.Column{col("b_one"), col("a_one")}}, AfterSave: true},
		},
		Routes: []pluginsdk.Route{
			{Method: "GET", Path: "/alpha/:id", Access: pluginsdk.AccessRead, Timeout: time.Second},
			{Method: "GET", Path: "/alpha/:id/more", Access: pluginsdk.AccessRead},
			{Method: "GET", Path: "/alpha/new", Access: pluginsdk.AccessRead},
			{Method: "POST", Path: "/alpha/:other", Access: pluginsdk.AccessEdit, BodyLimit: 1 << 20},
			{Method: "GET", Path: "/files/*rest", Access: pluginsdk.AccessPublic},
		},
		Operators: []pluginsdk.Operator{{Name: "_alpha_near", Feature: "alpha", Fields: []string{"a_one"}}, {Name: "_anything"}},
		Sections: []pluginsdk.Section{{Name: "alpha_summary", Feature: "alpha"}, {Name: "bibliography",
			Rows: &pluginsdk.SectionRows{Table: "cache", TableColumn: "tb", IDColumn: "k", Empty: map[string]any{}}}},
		SystemTables: []pluginsdk.SystemTable{{Name: "cache", Columns: []pluginsdk.Column{col("k"), col("tb")},
			Indexes: [][]string{{"tb", "k"}, {"id"}}}},
		SettingsSchema: json.RawMessage(`{"type":"object"}`),
	}
}

func TestValidManifest(t *testing.T) {
	if err := validManifest().Validate(); err != nil {
		t.Fatal(err)
	}
}

// Each case breaks one rule; the problem list must name it.
func TestManifestRules(t *testing.T) {
	cases := []struct {
		name   string
		change func(m *pluginsdk.Manifest)
		want   string
	}{
		{"upper-case name", func(m *pluginsdk.Manifest) { m.Name = "Valid" }, `name "Valid"`},
		{"one-letter name", func(m *pluginsdk.Manifest) { m.Name = "v" }, `name "v"`},
		{"long name", func(m *pluginsdk.Manifest) { m.Name = strings.Repeat("v", 32) }, "1 to 30"},
		{"version", func(m *pluginsdk.Manifest) { m.Version = "1.0" }, "semantic version"},
		{"protocol", func(m *pluginsdk.Manifest) { m.ProtocolVersion = 2 }, "protocol version 2"},
		{"settings schema", func(m *pluginsdk.Manifest) { m.SettingsSchema = json.RawMessage(`[1]`) }, "settings schema"},
		{"feature name", func(m *pluginsdk.Manifest) { m.Features[0].Name = "Alpha" }, `feature "Alpha"`},
		{"feature twice", func(m *pluginsdk.Manifest) { m.Features[1].Name = "alpha" }, `"alpha" is already a name or alias of feature "alpha"`},
		{"alias is a name", func(m *pluginsdk.Manifest) { m.Features[0].Aliases = []string{"beta"} }, `"beta" is already a name or alias of feature "alpha"`},
		{"alias twice", func(m *pluginsdk.Manifest) { m.Features[1].Aliases = []string{"al-pha"} }, `alias "al-pha" is already a name or alias of feature "alpha"`},
		{"system column", func(m *pluginsdk.Manifest) { m.Features[0].Columns[0].Name = "id_link" }, "system column"},
		{"creator", func(m *pluginsdk.Manifest) { m.Features[1].Child.Columns[0].Name = "creator" }, "system column"},
		{"sys_ prefix", func(m *pluginsdk.Manifest) { m.Features[0].Columns[0].Name = "sys_x" }, "prefix sys_"},
		{"collision between features", func(m *pluginsdk.Manifest) {
			m.Features[1].Columns = []pluginsdk.Column{{Name: "a_one", Type: "text", DBType: "text"}}
		}, `column "a_one" is also declared by feature "alpha"`},
		{"child column twice", func(m *pluginsdk.Manifest) { m.Features[1].Child.Columns[1].Name = "b_one" }, `column "b_one" declared twice`},
		{"type", func(m *pluginsdk.Manifest) { m.Features[0].Columns[0].Type = "string" }, `type "string"`},
		{"db type", func(m *pluginsdk.Manifest) { m.Features[0].Columns[0].DBType = "varchar" }, `db type "varchar"`},
		{"computed undeclared", func(m *pluginsdk.Manifest) { m.Features[0].Computed = []string{"b_one"} }, `computed column "b_one"`},
		{"computed without hook", func(m *pluginsdk.Manifest) { m.Features[0].BeforeSave = false }, "need the BeforeSave hook"},
		{"required without hook", func(m *pluginsdk.Manifest) { m.Features[1].AfterSave = false; m.Features[1].Required = true }, "required only applies"},
		{"child suffix", func(m *pluginsdk.Manifest) { m.Features[1].Child.Suffix = "Beta" }, "suffixes are"},
		{"hooks on columns and a child", func(m *pluginsdk.Manifest) {
			m.Features[1].Columns = []pluginsdk.Column{{Name: "b_col", Type: "text", DBType: "text"}}
		}, "not both"},
		{"schema flag", func(m *pluginsdk.Manifest) { m.Features[0].SchemaFlag = "has alpha" }, "schema flag"},
		{"depends_on name", func(m *pluginsdk.Manifest) { m.Features[0].DependsOn = []string{"Site"} }, `depends_on "Site" is not an identifier`},
		{"depends_on own column", func(m *pluginsdk.Manifest) { m.Features[0].DependsOn = []string{"a_one"} }, "one of its own columns"},
		{"depends_on on a child table", func(m *pluginsdk.Manifest) { m.Features[1].DependsOn = []string{"site"} }, "not a child table"},
		{"method", func(m *pluginsdk.Manifest) { m.Routes[0].Method = "get" }, "method is one of"},
		{"access", func(m *pluginsdk.Manifest) { m.Routes[0].Access = "writer" }, `access "writer"`},
		{"relative path", func(m *pluginsdk.Manifest) { m.Routes[0].Path = "alpha" }, "starts with /"},
		{"param first", func(m *pluginsdk.Manifest) { m.Routes[0].Path = "/:id" }, "first segment must be static"},
		{"catch-all not last", func(m *pluginsdk.Manifest) { m.Routes[4].Path = "/files/*rest/x" }, "catch-all"},
		{"bad segment", func(m *pluginsdk.Manifest) { m.Routes[0].Path = "/alpha/{id}" }, `segment "{id}"`},
		{"param names clash", func(m *pluginsdk.Manifest) { m.Routes[1].Path = "/alpha/:key/more" }, "parameter :key where another route has :id"},
		{"route twice", func(m *pluginsdk.Manifest) { m.Routes[1].Path = "/alpha/:id" }, "declared twice"},
		{"timeout", func(m *pluginsdk.Manifest) { m.Routes[0].Timeout = time.Hour }, "timeout"},
		{"job route by GET", func(m *pluginsdk.Manifest) { m.Routes[0].Job = true }, "job route is not a GET"},
		{"body limit", func(m *pluginsdk.Manifest) { m.Routes[0].BodyLimit = pluginsdk.MaxBodyLimit + 1 }, "body limit"},
		{"operator name", func(m *pluginsdk.Manifest) { m.Operators[0].Name = "alpha_near" }, `operator "alpha_near"`},
		{"built-in operator", func(m *pluginsdk.Manifest) { m.Operators[0].Name = "_starts_with" }, "built-in"},
		{"operator twice", func(m *pluginsdk.Manifest) { m.Operators[1].Name = "_alpha_near" }, "declared twice"},
		{"operator feature", func(m *pluginsdk.Manifest) { m.Operators[0].Feature = "gamma" }, `feature "gamma" is not declared`},
		{"operator field", func(m *pluginsdk.Manifest) { m.Operators[0].Fields = []string{"b_one"} }, `field "b_one" is not a column of feature "alpha"`},
		{"section reserved", func(m *pluginsdk.Manifest) { m.Sections[0].Name = "links" }, "a key of the server's full record"},
		{"section feature", func(m *pluginsdk.Manifest) { m.Sections[0].Feature = "gamma" }, `feature "gamma" is not declared`},
		{"system table id", func(m *pluginsdk.Manifest) { m.SystemTables[0].Columns[0].Name = "id" }, "id is created by the server"},
		{"system table long", func(m *pluginsdk.Manifest) { m.SystemTables[0].Name = strings.Repeat("c", 60) }, "longer than 63"},
		{"system table empty", func(m *pluginsdk.Manifest) { m.SystemTables[0].Columns = nil }, "no columns"},
		{"index column", func(m *pluginsdk.Manifest) { m.SystemTables[0].Indexes[0][1] = "nope" }, `index 0: column "nope" is not declared`},
		{"index empty", func(m *pluginsdk.Manifest) { m.SystemTables[0].Indexes[1] = nil }, "index 1 has no columns"},
		{"index twice", func(m *pluginsdk.Manifest) { m.SystemTables[0].Indexes[1] = []string{"tb", "k"} }, "index (tb,k) declared twice"},
		{"too many indexes", func(m *pluginsdk.Manifest) {
			for range 7 {
				m.SystemTables[0].Indexes = append(m.SystemTables[0].Indexes, []string{"k"})
			}
		}, "more than 8 indexes"},
		{"section rows table", func(m *pluginsdk.Manifest) { m.Sections[1].Rows.Table = "links" }, `system table "links" is not declared`},
		{"section rows table column", func(m *pluginsdk.Manifest) { m.Sections[1].Rows.TableColumn = "table" }, `table column "table" is not a column`},
		{"section rows id column", func(m *pluginsdk.Manifest) { m.Sections[1].Rows.IDColumn = "id_x" }, `id column "id_x" is not a column`},
		{"section rows empty", func(m *pluginsdk.Manifest) { m.Sections[1].Rows.Empty = func() {} }, "does not encode as JSON"},
	}
	for _, c := range cases {
		m := validManifest()
		c.change(&m)
		err := m.Validate()
		var me *pluginsdk.ManifestError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want a problem containing %q", c.name, err, c.want)
		}
	}
}

// translatedManifest is validManifest with every kind of translation
// (SDK v0.5.0): feature, column and help, child table, section, messages.
func translatedManifest() pluginsdk.Manifest {
	m := validManifest()
	m.Features[0].Label = "Alpha"
	m.Features[0].Labels = pluginsdk.Labels{"it": "Alfa", "pt-BR": "Alfa", "en": "Alpha"}
	m.Features[0].Columns[0].Label, m.Features[0].Columns[0].Help = "First", "the first one"
	m.Features[0].ColumnLabels = map[string]pluginsdk.Labels{"a_one": {"it": "Primo"}}
	m.Features[0].ColumnHelp = map[string]pluginsdk.Labels{"a_one": {"it": "il primo"}}
	m.Features[1].Child.Label = "Betas"
	m.Features[1].Child.Labels = pluginsdk.Labels{"it": "Beta", "sr-Latn": "Beta", "es-419": "Betas"}
	m.Features[1].Child.Columns[0].Label = "B"
	m.Features[1].ColumnLabels = map[string]pluginsdk.Labels{"b_one": {"it": "B uno"}}
	m.Sections[0].Label = "Summary"
	m.SectionLabels = map[string]pluginsdk.Labels{"alpha_summary": {"it": "Riepilogo"}}
	m.Messages = map[string]pluginsdk.Labels{"unit.cal_bp": {"en": "cal BP", "it": "cal BP"}, "region-skull": {"en": "Skull", "it": "Cranio"}}
	return m
}

func TestTranslatedManifest(t *testing.T) {
	if err := translatedManifest().Validate(); err != nil {
		t.Fatal(err)
	}
}

// Bad language tags and translations are refused, each named.
func TestManifestTranslationRules(t *testing.T) {
	cases := []struct {
		name   string
		change func(m *pluginsdk.Manifest)
		want   string
	}{
		{"upper-case language", func(m *pluginsdk.Manifest) { m.Features[0].Labels["IT"] = "Alfa" }, `feature "alpha": language "IT" is not a BCP 47 tag`},
		{"underscore tag", func(m *pluginsdk.Manifest) { m.Features[0].Labels["it_IT"] = "Alfa" }, `language "it_IT"`},
		{"a language's name", func(m *pluginsdk.Manifest) { m.Features[1].Child.Labels["italian"] = "Beta" }, `child table "beta": language "italian"`},
		{"lower-case region", func(m *pluginsdk.Manifest) { m.Features[0].ColumnLabels["a_one"]["pt-br"] = "Primo" }, `column "a_one": language "pt-br"`},
		{"empty tag", func(m *pluginsdk.Manifest) { m.SectionLabels["alpha_summary"][""] = "Riepilogo" }, `section "alpha_summary": language ""`},
		{"tag with a space", func(m *pluginsdk.Manifest) { m.Messages["unit.cal_bp"]["it "] = "cal BP" }, `message "unit.cal_bp": language "it "`},
		{"empty text", func(m *pluginsdk.Manifest) { m.Features[0].Labels["it"] = " " }, `the "it" text is empty`},
		{"two lines", func(m *pluginsdk.Manifest) { m.Features[0].ColumnHelp["a_one"]["it"] = "il\nprimo" }, `column "a_one" help: the "it" text is not one line`},
		{"not UTF-8", func(m *pluginsdk.Manifest) { m.Features[0].Labels["it"] = "Alf\xff" }, `not one line of UTF-8`},
		{"long label", func(m *pluginsdk.Manifest) { m.Features[0].Labels["it"] = strings.Repeat("a", 201) }, "longer than 200 bytes"},
		{"default differs", func(m *pluginsdk.Manifest) { m.Features[0].Labels["en"] = "Alpha!" }, `the "en" text differs from the label`},
		{"unlabelled", func(m *pluginsdk.Manifest) {
			m.Features[1].Label = ""
			m.Features[1].Labels = pluginsdk.Labels{"it": "Beta"}
		}, `feature "beta": translations of an empty label`},
		{"column not declared", func(m *pluginsdk.Manifest) { m.Features[0].ColumnLabels["b_one"] = pluginsdk.Labels{"it": "B"} }, `column labels: "b_one" is not one of its columns`},
		{"help column not declared", func(m *pluginsdk.Manifest) { m.Features[1].ColumnHelp = map[string]pluginsdk.Labels{"zz": {"it": "z"}} }, `column help: "zz" is not one of its columns`},
		{"section not declared", func(m *pluginsdk.Manifest) { m.SectionLabels["nope"] = pluginsdk.Labels{"it": "No"} }, `section labels: "nope" is not a declared section`},
		{"message key", func(m *pluginsdk.Manifest) { m.Messages["Cal BP"] = pluginsdk.Labels{"en": "cal BP"} }, `message "Cal BP": keys are`},
		{"message without default", func(m *pluginsdk.Manifest) { m.Messages["x"] = pluginsdk.Labels{"it": "x"} }, `message "x": no "en" text`},
		{"long message", func(m *pluginsdk.Manifest) { m.Messages["x"] = pluginsdk.Labels{"en": strings.Repeat("m", 1001)} }, "longer than 1000 bytes"},
	}
	for _, c := range cases {
		m := translatedManifest()
		c.change(&m)
		err := m.Validate()
		var me *pluginsdk.ManifestError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want a problem containing %q", c.name, err, c.want)
		}
	}
}

type bare struct{ m pluginsdk.Manifest }

func (b bare) Manifest() pluginsdk.Manifest { return b.m }

// Check adds what only the plugin itself can show: handlers and the
// interfaces the manifest asks for. A zero ProtocolVersion is the SDK's.
func TestCheck(t *testing.T) {
	m := validManifest()
	m.ProtocolVersion = 0
	err := pluginsdk.Check(bare{m})
	for _, want := range []string{
		"route GET /alpha/:id: no Handler",
		`feature "alpha" asks for BeforeSave`,
		`feature "beta" asks for AfterSave`,
		"does not implement FilterResolver",
		"does not implement SectionProvider",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check: %v; want %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "protocol version") {
		t.Errorf("zero protocol version refused: %v", err)
	}
	m = pluginsdk.Manifest{Name: "tiny", Version: "0.0.1", Routes: []pluginsdk.Route{
		{Method: "GET", Path: "/tiny", Access: pluginsdk.AccessPublic, Handler: http.NotFoundHandler()}}}
	if err := pluginsdk.Check(bare{m}); err != nil {
		t.Errorf("a routes-only plugin: %v", err)
	}
}
