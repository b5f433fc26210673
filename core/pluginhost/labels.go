package pluginhost

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/language"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/pluginsdk"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// Plugins declare their labels in other languages in the manifest
// (pluginsdk v0.5.0: feature, column and help, child table, section and
// message translations). The server keeps the catalog's labels as stored
// (an admin may rename a plugin's column) and shows a plugin's label in
// the client's language only where the stored label is still the one the
// plugin declared: a renamed column keeps its admin's name.

// LabelsVersion changes whenever the loaded features change (a plugin
// loaded, removed or reloaded), so catalogs relabelled for a language are
// made again. Nil-safe.
func (m *Manager) LabelsVersion() uint64 {
	if m == nil {
		return 0
	}
	return m.labelsGen.Load()
}

// Languages are the language tags the loaded plugins translate their
// labels to, sorted, besides pluginsdk.DefaultLanguage. Nil-safe.
func (m *Manager) Languages() []string {
	if m == nil {
		return nil
	}
	seen := map[string]bool{}
	add := func(ls map[string]string) {
		for tag := range ls {
			if tag != pluginsdk.DefaultLanguage {
				seen[tag] = true
			}
		}
	}
	for _, p := range m.loaded() {
		man := p.manifest()
		for _, f := range man.GetFeatures() {
			add(f.GetLabels())
			for _, c := range f.GetColumns() {
				add(c.GetLabels())
			}
			if ch := f.GetChild(); ch != nil {
				add(ch.GetLabels())
				for _, c := range ch.GetColumns() {
					add(c.GetLabels())
				}
			}
		}
		for _, s := range man.GetSections() {
			add(s.GetLabels())
		}
		for _, t := range man.GetMessages() {
			add(t.GetText())
		}
	}
	out := make([]string, 0, len(seen))
	for tag := range seen {
		out = append(out, tag)
	}
	sort.Strings(out)
	return out
}

// PickLanguage is the language labels are shown in for an Accept-Language
// header: its first tag (by preference) that a loaded plugin translates
// to, tried whole and then as its language alone ("it-CH" → "it"); ""
// when none, or when the default language comes first (labels as
// stored). Only declared tags can be answered, so what a client sends
// cannot make the server keep more than one catalog per language.
func (m *Manager) PickLanguage(acceptLanguage string) string {
	if acceptLanguage == "" || m == nil {
		return ""
	}
	langs := m.Languages()
	if len(langs) == 0 {
		return ""
	}
	declared := map[string]bool{}
	for _, l := range langs {
		declared[l] = true
	}
	for _, tag := range acceptedTags(acceptLanguage) {
		for _, cand := range []string{tag, baseLanguage(tag)} {
			if cand == pluginsdk.DefaultLanguage {
				return ""
			}
			if declared[cand] {
				return cand
			}
		}
	}
	return ""
}

// baseLanguage is a tag's language subtag: "pt-BR" → "pt".
func baseLanguage(tag string) string {
	base, _, _ := strings.Cut(tag, "-")
	return base
}

// Relabel returns cat with the labels of plugin columns and child tables
// in lang, where the plugin translates them and the stored label is still
// the plugin's own (Label of the running manifest). The columns' help
// follows its label the same way. lang "" returns cat.
func (m *Manager) Relabel(cat *schema.Catalog, lang string) *schema.Catalog {
	if m == nil || lang == "" {
		return cat
	}
	m.mu.RLock()
	specs := make(map[string]*pluginv1.TableFeature, len(m.features))
	for name, f := range m.features {
		if f.spec.GetName() == name {
			specs[name] = f.spec
		}
	}
	m.mu.RUnlock()
	columns := map[string]map[string]*pluginv1.Column{} // feature → column → wire column
	for name, spec := range specs {
		cols := map[string]*pluginv1.Column{}
		for _, c := range spec.GetColumns() {
			cols[c.GetName()] = c
		}
		if ch := spec.GetChild(); ch != nil {
			for _, c := range ch.GetColumns() {
				cols[c.GetName()] = c
			}
		}
		columns[name] = cols
	}
	return cat.Relabel(func(t *schema.Table) string {
		spec := specs[t.Feature]
		if !t.IsPlugin || spec == nil || spec.GetChild() == nil || t.PluginOf == "" ||
			t.Name != t.PluginOf+"_"+spec.GetChild().GetSuffix() {
			return ""
		}
		ch := spec.GetChild()
		if t.Label != ch.GetLabel() && t.Label != t.Name {
			return "" // renamed by an admin
		}
		return translated(ch.GetLabels(), lang)
	}, func(t *schema.Table, f *schema.Field) (string, string) {
		if f.Feature == "" {
			return "", ""
		}
		c := columns[f.Feature][f.Name]
		if c == nil {
			return "", ""
		}
		var label, help string
		if f.Label == c.GetLabel() {
			label = translated(c.GetLabels(), lang)
		}
		if f.Help == c.GetHelp() {
			help = translated(c.GetHelpLabels(), lang)
		}
		return label, help
	})
}

// translated is ls in lang, or in lang's language alone; "" for none.
func translated(ls map[string]string, lang string) string {
	if v := ls[lang]; v != "" {
		return v
	}
	return ls[baseLanguage(lang)]
}

// acceptedTags are the tags of an Accept-Language header in order of
// preference, in canonical case ("IT-ch" → "it-CH"); none for a header
// that does not parse, and none past the first 16.
func acceptedTags(header string) []string {
	if len(header) > 1024 {
		header = header[:1024]
	}
	tags, _, err := language.ParseAcceptLanguage(header)
	if err != nil {
		return nil
	}
	out := make([]string, 0, min(len(tags), 16))
	for _, t := range tags[:min(len(tags), 16)] {
		out = append(out, t.String())
	}
	return out
}

// withDefault is a label by language, the default language's entry being
// the label itself (a plugin without translations: that entry alone;
// none for an empty label).
func withDefault(label string, ls map[string]string) map[string]string {
	out := make(map[string]string, len(ls)+1)
	for tag, text := range ls {
		out[tag] = text
	}
	if label != "" {
		out[pluginsdk.DefaultLanguage] = label
	}
	return out
}

// sectionLabels are the titles of a manifest's sections that have one.
func sectionLabels(man *pluginv1.Manifest) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, s := range man.GetSections() {
		if s.GetLabel() != "" {
			out[s.GetName()] = withDefault(s.GetLabel(), s.GetLabels())
		}
	}
	return out
}

// messages is a manifest's message catalogue, copied.
func messages(man *pluginv1.Manifest) map[string]map[string]string {
	out := map[string]map[string]string{}
	for key, t := range man.GetMessages() {
		out[key] = withDefault("", t.GetText())
	}
	return out
}

// PluginLabels are the texts of one loaded plugin in every language it
// declares, as GET /plugin-labels shows them to any signed-in client.
type PluginLabels struct {
	Name          string                       `json:"name"`
	Features      []FeatureLabels              `json:"features"`
	SectionLabels map[string]map[string]string `json:"section_labels"`
	Messages      map[string]map[string]string `json:"messages"`
}

// FeatureLabels are a feature's labels by language (FeatureInfo's).
type FeatureLabels struct {
	Name         string                       `json:"name"`
	ChildSuffix  string                       `json:"child_suffix,omitempty"`
	Labels       map[string]string            `json:"labels"`
	ColumnLabels map[string]map[string]string `json:"column_labels"`
	ChildLabels  map[string]string            `json:"child_labels,omitempty"`
}

// Texts lists the loaded plugins' labels and messages, in name order.
// Nil-safe.
func (m *Manager) Texts() []PluginLabels {
	out := []PluginLabels{}
	if m == nil {
		return out
	}
	for _, p := range m.loaded() {
		in := p.info()
		pl := PluginLabels{Name: in.Name, Features: []FeatureLabels{}, SectionLabels: in.SectionLabels, Messages: in.Messages}
		for _, f := range in.Features {
			pl.Features = append(pl.Features, FeatureLabels{Name: f.Name, ChildSuffix: f.ChildTable, Labels: f.Labels,
				ColumnLabels: f.ColumnLabels, ChildLabels: f.ChildLabels})
		}
		out = append(out, pl)
	}
	return out
}

// languageTag is pluginsdk's rule for a translation's language: a BCP 47
// tag in canonical case (it, pt-BR, sr-Latn).
var languageTag = regexp.MustCompile(`^[a-z]{2,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|[0-9]{3}))?$`)

// validateLabels checks the translations of a manifest as pluginsdk's
// Validate does (a plugin need not be built with the SDK): language tags,
// one line of UTF-8 text, not empty, bounded; messages with an "en" text.
func validateLabels(m *pluginv1.Manifest) []string {
	var probs []string
	check := func(where string, ls map[string]string, max int) {
		for _, tag := range slices.Sorted(maps.Keys(ls)) {
			text := ls[tag]
			switch {
			case !languageTag.MatchString(tag):
				probs = append(probs, fmt.Sprintf("%s: language %q is not a BCP 47 tag in canonical case (e.g. it, pt-BR)", where, tag))
			case strings.TrimSpace(text) == "" || len(text) > max || !utf8.ValidString(text) || strings.ContainsAny(text, "\n\r\x00"):
				probs = append(probs, fmt.Sprintf("%s: the %q text is empty, too long or not one line of UTF-8", where, tag))
			}
		}
	}
	for _, f := range m.GetFeatures() {
		where := fmt.Sprintf("feature %q", f.GetName())
		check(where, f.GetLabels(), 200)
		cols := f.GetColumns()
		if ch := f.GetChild(); ch != nil {
			check(where+": child table", ch.GetLabels(), 200)
			cols = append(slices.Clip(cols), ch.GetColumns()...)
		}
		for _, c := range cols {
			check(fmt.Sprintf("%s: column %q", where, c.GetName()), c.GetLabels(), 200)
			check(fmt.Sprintf("%s: column %q help", where, c.GetName()), c.GetHelpLabels(), 1000)
		}
	}
	for _, s := range m.GetSections() {
		check(fmt.Sprintf("section %q", s.GetName()), s.GetLabels(), 200)
	}
	for _, key := range slices.Sorted(maps.Keys(m.GetMessages())) {
		texts := m.GetMessages()[key].GetText()
		if texts[pluginsdk.DefaultLanguage] == "" {
			probs = append(probs, fmt.Sprintf("message %q: no %q text", key, pluginsdk.DefaultLanguage))
		}
		check(fmt.Sprintf("message %q", key), texts, 1000)
	}
	return probs
}
