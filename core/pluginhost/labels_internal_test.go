package pluginhost

import (
	"strings"
	"testing"

	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// The server refuses malformed translations as the SDK does: a plugin
// need not be built with it.
func TestValidateLabels(t *testing.T) {
	cases := []struct {
		name   string
		change func(m *pluginv1.Manifest)
		want   string // "" : accepted
	}{
		{"none (a plugin before SDK v0.5.0)", func(*pluginv1.Manifest) {}, ""},
		{"good", func(m *pluginv1.Manifest) {
			m.Features[0].Labels = map[string]string{"it": "Cronologia", "pt-BR": "Cronologia"}
			m.Features[0].Columns[0].Labels = map[string]string{"it": "Da"}
			m.Features[1].Child.Labels = map[string]string{"sr-Latn": "Datumi"}
			m.Sections[0].Labels = map[string]string{"it": "Bibliografia"}
			m.Messages = map[string]*pluginv1.Translations{"cal_bp": {Text: map[string]string{"en": "cal BP", "it": "cal BP"}}}
		}, ""},
		{"upper-case tag", func(m *pluginv1.Manifest) { m.Features[0].Labels = map[string]string{"IT": "x"} }, `feature "chronology": language "IT"`},
		{"underscore tag", func(m *pluginv1.Manifest) { m.Features[1].Child.Labels = map[string]string{"it_IT": "x"} }, `child table: language "it_IT"`},
		{"child column", func(m *pluginv1.Manifest) { m.Features[1].Child.Columns[0].Labels = map[string]string{"italiano": "x"} }, `column "bp": language "italiano"`},
		{"help", func(m *pluginv1.Manifest) { m.Features[0].Columns[1].HelpLabels = map[string]string{"it": "a\nb"} }, `column "chrono_label" help: the "it" text`},
		{"empty text", func(m *pluginv1.Manifest) { m.Sections[0].Labels = map[string]string{"it": " "} }, `section "bibliography": the "it" text is empty`},
		{"message without English", func(m *pluginv1.Manifest) {
			m.Messages = map[string]*pluginv1.Translations{"x": {Text: map[string]string{"it": "x"}}}
		}, `message "x": no "en" text`},
	}
	for _, c := range cases {
		m := goodManifest()
		c.change(m)
		got := strings.Join(validateManifest(m), "; ")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestAcceptedTags(t *testing.T) {
	for header, want := range map[string]string{
		"it":                        "it",
		"it-ch, en;q=0.5":           "it-CH en",
		"en;q=0.2, de-DE, it;q=0.9": "de-DE it en",
		"":                          "",
		";;;":                       "",
	} {
		if got := strings.Join(acceptedTags(header), " "); got != want {
			t.Errorf("%q: %q, want %q", header, got, want)
		}
	}
}
