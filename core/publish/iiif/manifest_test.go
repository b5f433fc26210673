package iiif

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/strata-archaeo/strata/core/publish/publishtest"
)

// publishedImage runs WriteImage on a generated image, as a manifest's canvas needs.
func publishedImage(t *testing.T, name string, w, h int) Image {
	t.Helper()
	s := newMemSink(t)
	im, err := WriteImage(s, "iiif/"+name, "https://example.org/app/publish/snapshots/3/iiif/"+name, bytes.NewReader(encodePNG(t, gradient(w, h))), ImageOptions{TileSize: 128})
	if err != nil {
		t.Fatal(err)
	}
	return im
}

func sampleManifest(t *testing.T) Manifest {
	base := "https://example.org/app/publish/snapshots/3/records/finds/12"
	return Manifest{
		ID:      base + "/manifest.json",
		Label:   LangMap{"en": {"Find 12"}, "it": {"Reperto 12"}},
		Summary: LangMap{"en": {"Bronze fibula from US 1043"}},
		Metadata: []MetadataEntry{
			{Label: LangMap{"en": {"Material"}}, Value: LangMap{"none": {"bronze"}}},
			{Label: LangMap{"en": {"Context"}}, Value: LangMap{"none": {"US 1043"}}},
		},
		Rights:            "https://creativecommons.org/licenses/by/4.0/",
		RequiredStatement: &MetadataEntry{Label: LangMap{"en": {"Attribution"}}, Value: LangMap{"none": {"Excavation of Example, CC BY 4.0"}}},
		Homepage:          base,
		Canvases: []Canvas{
			{ID: base + "/canvas/1", Label: LangMap{"none": {"front"}}, Image: publishedImage(t, "finds-12-1", 700, 300)},
			{ID: base + "/canvas/2", Image: publishedImage(t, "finds-12-2", 90, 60)},
		},
	}
}

// checkPresentationRules returns every violation of the IIIF Presentation 3 rules (those of
// the presentation validator's schema, which may not be redistributed, encoded in
// publishtest) found in a manifest.
func checkPresentationRules(data []byte) []string {
	return publishtest.IIIFPresentationProblems(data)
}

func writeManifest(t *testing.T, m Manifest) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteManifest(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestManifestRules(t *testing.T) {
	base := sampleManifest(t)
	cases := []struct {
		name   string
		edit   func(*Manifest)
		expect func(t *testing.T, doc map[string]any)
	}{
		{"full", func(*Manifest) {}, func(t *testing.T, doc map[string]any) {
			if doc["rights"] != "http://creativecommons.org/licenses/by/4.0/" {
				t.Errorf("rights %v: https CC URI not written in its http form", doc["rights"])
			}
			c := doc["items"].([]any)[0].(map[string]any)
			body := c["items"].([]any)[0].(map[string]any)["items"].([]any)[0].(map[string]any)["body"].(map[string]any)
			if body["id"] != "https://example.org/app/publish/snapshots/3/iiif/finds-12-1/full/max/0/default.jpg" {
				t.Errorf("body id %v", body["id"])
			}
			if c["width"] != 700.0 || c["height"] != 300.0 {
				t.Errorf("canvas %vx%v", c["width"], c["height"])
			}
			// 700x300 with 128 tiles: sizes 350x150, 175x75, 88x38; the largest under 400.
			th := c["thumbnail"].([]any)[0].(map[string]any)
			if th["id"] != "https://example.org/app/publish/snapshots/3/iiif/finds-12-1/full/350,150/0/default.jpg" {
				t.Errorf("thumbnail %v", th["id"])
			}
			if _, ok := doc["items"].([]any)[1].(map[string]any)["thumbnail"]; ok {
				t.Error("a one-tile image has no reduced size, so no thumbnail")
			}
		}},
		{"minimal", func(m *Manifest) {
			*m = Manifest{ID: m.ID, Label: LangMap{"none": {"x"}}, Canvases: m.Canvases[1:]}
		}, func(t *testing.T, doc map[string]any) {
			for _, k := range []string{"summary", "metadata", "rights", "requiredStatement", "homepage"} {
				if _, ok := doc[k]; ok {
					t.Errorf("empty %s written", k)
				}
			}
		}},
		{"rightsstatements https", func(m *Manifest) { m.Rights = "https://rightsstatements.org/vocab/InC/1.0/" }, func(t *testing.T, doc map[string]any) {
			if doc["rights"] != "http://rightsstatements.org/vocab/InC/1.0/" {
				t.Errorf("rights %v", doc["rights"])
			}
		}},
		{"other licence goes to metadata", func(m *Manifest) { m.Rights = "https://opendatacommons.org/licenses/odbl/1-0/" }, func(t *testing.T, doc map[string]any) {
			if _, ok := doc["rights"]; ok {
				t.Errorf("rights %v written", doc["rights"])
			}
			md := doc["metadata"].([]any)
			last := md[len(md)-1].(map[string]any)
			if fmt.Sprint(last["value"]) != "map[none:[https://opendatacommons.org/licenses/odbl/1-0/]]" || fmt.Sprint(last["label"]) != "map[en:[License]]" {
				t.Errorf("licence entry %v", last)
			}
		}},
		{"homepage label", func(m *Manifest) { m.HomepageLabel = LangMap{"en": {"Record page"}} }, func(t *testing.T, doc map[string]any) {
			h := doc["homepage"].([]any)[0].(map[string]any)
			if fmt.Sprint(h["label"]) != "map[en:[Record page]]" || h["type"] != "Text" || h["format"] != "text/html" {
				t.Errorf("homepage %v", h)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := base
			c.edit(&m)
			data := writeManifest(t, m)
			for _, e := range checkPresentationRules(data) {
				t.Error(e)
			}
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			c.expect(t, doc)
		})
	}
}

// TestPresentationRulesCatch keeps the encoded rules honest: each broken manifest must be
// reported.
func TestPresentationRulesCatch(t *testing.T) {
	good := string(writeManifest(t, sampleManifest(t)))
	cases := []struct{ name, from, to string }{
		{"context", `"http://iiif.io/api/presentation/3/context.json"`, `"http://iiif.io/api/presentation/2/context.json"`},
		{"extra property", `"type": "Manifest",`, `"type": "Manifest", "creator": "x",`},
		{"https rights", `"http://creativecommons.org/licenses/by/4.0/"`, `"https://creativecommons.org/licenses/by/4.0/"`},
		{"language with digits", `"it": [`, `"es-419": [`},
		{"motivation", `"painting"`, `"commenting"`},
		{"relative id", `"id": "https://example.org/app/publish/snapshots/3/records/finds/12/canvas/2"`, `"id": "canvas/2"`},
		{"profile", `"level0"`, `"level2"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			broken := strings.Replace(good, c.from, c.to, 1)
			if broken == good {
				t.Fatalf("%s not in the manifest", c.from)
			}
			if len(checkPresentationRules([]byte(broken))) == 0 {
				t.Error("not caught")
			}
		})
	}
}

// TestManifestSchema validates against the presentation validator's own JSON schema when a
// local copy is named by IIIF_PRESENTATION_SCHEMA (it may not be redistributed; see
// testdata/README.md).
func TestManifestSchema(t *testing.T) {
	path := os.Getenv("IIIF_PRESENTATION_SCHEMA")
	if path == "" {
		t.Skip("IIIF_PRESENTATION_SCHEMA not set; the encoded rules in TestManifestRules still run")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	schemaDoc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("file:///iiif_3_0.json", schemaDoc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("file:///iiif_3_0.json")
	if err != nil {
		t.Fatal(err)
	}
	validate := func(data []byte) error {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return err
		}
		return sch.Validate(inst)
	}
	full := sampleManifest(t)
	minimal := Manifest{ID: full.ID, Label: LangMap{"none": {"x"}}, Canvases: full.Canvases[1:]}
	hostile := full
	hostile.Label = LangMap{"none": {hostileStrings[0]}, "en": hostileStrings}
	for name, m := range map[string]Manifest{"full": full, "minimal": minimal, "hostile": hostile} {
		if err := validate(writeManifest(t, m)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The schema must also reject something, or the check above proves nothing.
	broken := bytes.Replace(writeManifest(t, full), []byte(`"http://creativecommons.org/`), []byte(`"https://creativecommons.org/`), 1)
	if validate(broken) == nil {
		t.Error("the schema accepted an https Creative Commons rights URI")
	}
}

var hostileStrings = []string{
	`He said "stop" \ 'here'`,
	`</script><script>alert(1)</script>`,
	"<!-- & &amp; -->",
	"line\nbreak\ttab\r\x00nul\x1fcontrol",
	"\u2028\u2029 separators",
	"Ünïcödé ﬁ ligature, 中文, עברית RTL \u202e override, emoji 🏺",
	"\ufeffBOM and \u200b zero width",
	"",
}

func TestManifestHostileStrings(t *testing.T) {
	m := sampleManifest(t)
	m.Label = LangMap{"en": hostileStrings, "none": {"\xff\xfe invalid UTF-8"}}
	m.Summary = LangMap{"it": hostileStrings}
	m.Metadata = []MetadataEntry{{Label: LangMap{"en": {hostileStrings[1]}}, Value: LangMap{"none": hostileStrings}}}
	m.Canvases[0].Label = LangMap{"none": {hostileStrings[0]}}
	data := writeManifest(t, m)
	if !json.Valid(data) {
		t.Fatalf("invalid JSON:\n%s", data)
	}
	for _, e := range checkPresentationRules(data) {
		t.Error(e)
	}
	for _, raw := range []string{"</script>", "<script>", "<!--", "\u2028", "\x00"} {
		if bytes.Contains(data, []byte(raw)) {
			t.Errorf("%q written unescaped", raw)
		}
	}
	var back struct {
		Label   map[string][]string `json:"label"`
		Summary map[string][]string `json:"summary"`
	}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if strings.Join(back.Label["en"], "|") != strings.Join(hostileStrings, "|") || strings.Join(back.Summary["it"], "|") != strings.Join(hostileStrings, "|") {
		t.Errorf("strings did not round-trip: %q", back.Label["en"])
	}
	// Invalid UTF-8 cannot round-trip; it becomes U+FFFD, deterministically.
	if back.Label["none"][0] != "\ufffd\ufffd invalid UTF-8" {
		t.Errorf("invalid UTF-8 became %q", back.Label["none"][0])
	}
}

func TestManifestDeterministic(t *testing.T) {
	m := sampleManifest(t)
	// Many languages, so that an unsorted map would show.
	for _, l := range []string{"de", "fr", "es", "nl", "pl", "el", "zh-Hant", "sr-Latn"} {
		m.Label[l] = []string{"label " + l}
	}
	a := writeManifest(t, m)
	for i := 0; i < 20; i++ {
		if b := writeManifest(t, m); !bytes.Equal(a, b) {
			t.Fatalf("run %d differs", i)
		}
	}
	// Key order is fixed: @context first, items last.
	if !bytes.HasPrefix(a, []byte("{\n  \"@context\": ")) {
		t.Errorf("manifest starts %q", a[:40])
	}
}

func TestManifestRefused(t *testing.T) {
	im := publishedImage(t, "x", 20, 20)
	ok := Manifest{ID: "https://e.org/m", Label: LangMap{"en": {"m"}}, Canvases: []Canvas{{ID: "https://e.org/m/c1", Image: im}}}
	cases := []struct {
		name string
		edit func(*Manifest)
	}{
		{"relative id", func(m *Manifest) { m.ID = "/m" }},
		{"no label", func(m *Manifest) { m.Label = nil }},
		{"label key with space", func(m *Manifest) { m.Label = LangMap{"en us": {"m"}} }},
		{"label key empty", func(m *Manifest) { m.Label = LangMap{"": {"m"}} }},
		{"label without values", func(m *Manifest) { m.Label = LangMap{"en": nil} }},
		{"summary key injection", func(m *Manifest) { m.Summary = LangMap{`en"}`: {"s"}} }},
		{"metadata without value", func(m *Manifest) { m.Metadata = []MetadataEntry{{Label: LangMap{"en": {"a"}}}} }},
		{"required statement without label", func(m *Manifest) { m.RequiredStatement = &MetadataEntry{Value: LangMap{"none": {"a"}}} }},
		{"rights not a URI", func(m *Manifest) { m.Rights = "CC BY 4.0" }},
		{"homepage relative", func(m *Manifest) { m.Homepage = "records/12" }},
		{"no canvas", func(m *Manifest) { m.Canvases = nil }},
		{"canvas id relative", func(m *Manifest) { m.Canvases = []Canvas{{ID: "c1", Image: im}} }},
		{"canvas id twice", func(m *Manifest) { m.Canvases = append(m.Canvases, m.Canvases[0]) }},
		{"canvas id equals manifest id", func(m *Manifest) { m.Canvases[0].ID = m.ID }},
		{"canvas without image", func(m *Manifest) { m.Canvases = []Canvas{{ID: "https://e.org/m/c1"}} }},
		{"image without size", func(m *Manifest) {
			m.Canvases = []Canvas{{ID: "https://e.org/m/c1", Image: Image{ServiceID: "https://e.org/i"}}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := ok
			m.Canvases = append([]Canvas(nil), ok.Canvases...)
			c.edit(&m)
			var b bytes.Buffer
			if err := WriteManifest(&b, m); err == nil {
				t.Errorf("accepted:\n%s", b.Bytes())
			}
			if b.Len() != 0 {
				t.Error("wrote output on error")
			}
		})
	}
	if err := WriteManifest(&bytes.Buffer{}, ok); err != nil {
		t.Errorf("the base case itself fails: %v", err)
	}
	if err := WriteManifest(failingWriter{}, ok); err == nil || !strings.Contains(err.Error(), "pipe closed") {
		t.Errorf("writer error not returned: %v", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("pipe closed") }
