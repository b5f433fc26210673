package schema

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/strata-archaeo/strata/core/wire"
)

// BraDypUS clients describe fields in their own words: SQL type names for
// db_type ("INTEGER", "TEXT"), a type "integer" or "id_from_tb", a list of
// checks ("not_empty", "no_dupl", "email", "int", "range", "regex") and an
// inline value list ("dic"). They are read here into the catalog's terms,
// so everything after checkFieldDef sees one model.

// Checks are the validation names BraDypUS clients send in "check".
var Checks = []string{"not_empty", "no_dupl", "email", "int", "range", "regex"}

// EmailPattern is the pattern the "email" check stands for.
const EmailPattern = `^[^@\s]+@[^@\s]+\.[^@\s]+$`

// IntPattern is the pattern the "int" check stands for on a text field.
const IntPattern = `^-?[0-9]+$`

// NormalizeDBType reads a storage type in any of the spellings clients
// send (SQL names in any case); ok is false for an unknown one.
func NormalizeDBType(s string) (DBType, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.IndexByte(s, '('); i > 0 { // VARCHAR(255), DECIMAL(10,2)
		s = strings.TrimSpace(s[:i])
	}
	switch s {
	case "text", "varchar", "char", "string", "character varying", "clob":
		return DBText, true
	case "int", "integer", "bigint", "smallint", "tinyint", "int4", "int8", "serial", "bigserial":
		return DBInt, true
	case "float", "real", "double", "double precision", "numeric", "decimal", "number", "float8", "float4":
		return DBFloat, true
	case "date", "datetime", "timestamp":
		return DBDate, true
	case "bool", "boolean":
		return DBBool, true
	}
	return "", false
}

// normalizeFieldType maps a type alias to a field type and, for the
// numeric aliases, the storage it implies.
func normalizeFieldType(s string) (FieldType, DBType) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "integer", "int", "number", "numeric":
		return TypeText, DBInt
	case "float", "decimal", "real", "double":
		return TypeText, DBFloat
	case "id_from_tb", "lookup":
		return TypeSelect, ""
	case "markdown":
		return TypeMarkdown, ""
	case "bool", "checkbox":
		return TypeBoolean, ""
	case "textarea", "longtext":
		return TypeLongText, ""
	}
	return FieldType(strings.ToLower(strings.TrimSpace(s))), ""
}

// normalizeLegacy rewrites the BraDypUS forms of def into the catalog's.
func (def *FieldDef) normalizeLegacy() error {
	if def.Type != "" {
		ft, implied := normalizeFieldType(def.Type)
		def.Type = string(ft)
		if def.DBType == "" && implied != "" {
			def.DBType = string(implied)
		}
	}
	if def.DBType != "" {
		if d, ok := NormalizeDBType(def.DBType); ok {
			def.DBType = string(d)
		}
	}
	checks := make(wire.List, 0, len(def.Check))
	for _, c := range def.Check {
		c = strings.ToLower(strings.TrimSpace(c))
		switch c {
		case "not_empty", "required":
			def.Required, c = true, "not_empty"
		case "no_dupl", "unique":
			def.Unique, c = true, "no_dupl"
		case "email":
			if def.Pattern == "" {
				def.Pattern = EmailPattern
			}
		case "int":
			if (def.DBType == "" || def.DBType == string(DBText)) && def.Pattern == "" {
				def.Pattern = IntPattern
			}
		case "range", "regex":
			// min/max and pattern carry them.
		case "":
			continue
		default:
			return ErrInvalidParameter.With("parameter", "check").With("detail", "unknown check "+c).With("allowed", Checks)
		}
		if !slices.Contains(checks, c) {
			checks = append(checks, c)
		}
	}
	def.Check = checks
	return nil
}

// legacyExtra records the client's check list and inline values in the
// field's extra settings, so that they read back as they were sent.
func (def *FieldDef) legacyExtra(extra map[string]any) {
	delete(extra, "check")
	delete(extra, "dic")
	if len(def.Check) > 0 {
		extra["check"] = []string(def.Check)
	}
	if len(def.Dic) > 0 {
		extra["dic"] = []string(def.Dic)
	}
}

// applySearchIndex records the search_index setting in the field's extra
// settings (absent when unset).
func (def *FieldDef) applySearchIndex(extra map[string]any) {
	delete(extra, SettingSearchIndex)
	if def.SearchIndex != nil {
		extra[SettingSearchIndex] = *def.SearchIndex
	}
}

func searchIndexPtr(f *Field) *bool {
	if on, set := f.SearchIndexSetting(); set {
		return &on
	}
	return nil
}

// ChecksOf lists a field's checks in BraDypUS's terms.
func (f *Field) ChecksOf() []string {
	out := stringsOf(f.Extra["check"])
	add := func(c string) {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	if f.Required {
		add("not_empty")
	}
	if f.Unique {
		add("no_dupl")
	}
	if f.Min != nil || f.Max != nil {
		add("range")
	}
	if f.Pattern != "" && f.Pattern != EmailPattern && f.Pattern != IntPattern {
		add("regex")
	}
	return out
}

// Dic is a field's inline value list (empty when it has none).
func (f *Field) Dic() []string { return stringsOf(f.Extra["dic"]) }

func stringsOf(v any) []string {
	out := []string{}
	switch x := v.(type) {
	case []string:
		out = append(out, x...)
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// DateBound is a date field's "min" or "max" (yyyy-mm-dd), "" when unset.
func (f *Field) DateBound(which string) string {
	s, _ := f.Extra["date_"+which].(string)
	return s
}

var isoDateBound = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// splitDateBounds takes "min" and "max" out of a field body when they are
// dates (BraDypUS bounds date fields with yyyy-mm-dd); the rest decodes as
// usual, where min and max are numbers.
func splitDateBounds(b []byte) (rest []byte, lo, hi string, err error) {
	var m map[string]any
	if err := wire.Decode(b, &m, wire.Options{ExactNumbers: true}); err != nil || m == nil {
		return b, "", "", err
	}
	take := func(k string) string {
		if s, ok := m[k].(string); ok && isoDateBound.MatchString(strings.TrimSpace(s)) {
			delete(m, k)
			return strings.TrimSpace(s)
		}
		return ""
	}
	lo, hi = take("min"), take("max")
	if lo == "" && hi == "" {
		return b, "", "", nil
	}
	rest, err = json.Marshal(m)
	return rest, lo, hi, err
}

type plainFieldDef FieldDef

// UnmarshalJSON reads a field definition with date bounds (see
// splitDateBounds) and the API's liberal rules for everything else.
func (def *FieldDef) UnmarshalJSON(b []byte) error {
	rest, lo, hi, err := splitDateBounds(b)
	if err != nil {
		return err
	}
	var p plainFieldDef
	if err := wire.Decode(rest, &p, wire.Options{}); err != nil {
		return err
	}
	*def = FieldDef(p)
	def.DateMin, def.DateMax = lo, hi
	return nil
}

type plainFieldUpdate FieldUpdate

// UnmarshalJSON: see FieldDef.UnmarshalJSON.
func (in *FieldUpdate) UnmarshalJSON(b []byte) error {
	rest, lo, hi, err := splitDateBounds(b)
	if err != nil {
		return err
	}
	var p plainFieldUpdate
	if err := wire.Decode(rest, &p, wire.Options{}); err != nil {
		return err
	}
	*in = FieldUpdate(p)
	if lo != "" {
		in.DateMin = Set(lo)
	}
	if hi != "" {
		in.DateMax = Set(hi)
	}
	return nil
}

// applyDateBounds records a date field's bounds in its extra settings.
func (def *FieldDef) applyDateBounds(dbt DBType, extra map[string]any) error {
	delete(extra, "date_min")
	delete(extra, "date_max")
	if def.DateMin == "" && def.DateMax == "" {
		return nil
	}
	if dbt != DBDate && FieldType(def.Type) != TypeDate {
		return ErrInvalidParameter.With("parameter", "min").With("detail", "only date fields take dates as min and max")
	}
	if def.DateMin != "" && def.DateMax != "" && def.DateMin > def.DateMax {
		return ErrInvalidParameter.With("parameter", "min").With("detail", "min is after max")
	}
	if def.DateMin != "" {
		extra["date_min"] = def.DateMin
	}
	if def.DateMax != "" {
		extra["date_max"] = def.DateMax
	}
	return nil
}

// DefaultLinkSchemes are the URL schemes a link_out field accepts unless
// its "link_schemes" setting lists others: nothing a browser would run.
var DefaultLinkSchemes = []string{"http", "https", "mailto"}

// LinkSchemes is the list of schemes a link_out field accepts (relative
// URLs, without a scheme, are always accepted).
func (f *Field) LinkSchemes() []string {
	if l := stringsOf(f.Extra["link_schemes"]); len(l) > 0 {
		return l
	}
	return DefaultLinkSchemes
}

var schemeName = regexp.MustCompile(`^[a-z][a-z0-9+.-]{0,31}$`)

// applyLinkSchemes records a link_out field's own scheme list.
func (def *FieldDef) applyLinkSchemes(ft FieldType, extra map[string]any) error {
	delete(extra, "link_schemes")
	if len(def.LinkSchemes) == 0 {
		return nil
	}
	if ft != TypeLinkOut {
		return ErrInvalidParameter.With("parameter", "link_schemes").With("detail", "only link_out fields take link_schemes")
	}
	out := make([]string, 0, len(def.LinkSchemes))
	for _, s := range def.LinkSchemes {
		s = strings.ToLower(strings.TrimSpace(s))
		if !schemeName.MatchString(s) || s == "javascript" || s == "vbscript" || s == "data" {
			return ErrInvalidParameter.With("parameter", "link_schemes").With("detail", "not a scheme a link may use: "+s)
		}
		out = append(out, s)
	}
	extra["link_schemes"] = out
	return nil
}

// SettingVocabFree is the field option that lets a select field store
// values outside its vocabulary ("allow other values").
const SettingVocabFree = "vocab_free"

// applyVocabFree records the vocab_free option in the field's extra
// settings (absent when off, so that fields read as they always did).
func (def *FieldDef) applyVocabFree(ft FieldType, extra map[string]any) {
	delete(extra, SettingVocabFree)
	if def.VocabFree && ft.IsSelect() {
		extra[SettingVocabFree] = true
	}
}

// VocabFree reports whether the field allows values outside its
// vocabulary.
func (f *Field) VocabFree() bool {
	on, _ := f.Extra[SettingVocabFree].(bool)
	return on
}

// VocabEnforced reports whether a save must refuse values of f that are
// not items of its vocabulary: a select or multi_select bound to a
// vocabulary, without vocab_free. A combo_select is a select the user may
// type into (BraDypUS's editable select): it suggests, never enforces.
func (f *Field) VocabEnforced() bool {
	return f.VocabularySet != "" && !f.VocabFree() && (f.Type == TypeSelect || f.Type == TypeMultiSelect)
}

// SelectValues are the values a select field's stored text holds. A
// multi_select stores a JSON list; BraDypUS clients send it as text with
// the values separated by commas (or semicolons), which is read as that
// list; a lone value is itself. Other selects hold their value.
func SelectValues(f *Field, stored string) []string {
	if f.Type != TypeMultiSelect {
		return []string{stored}
	}
	var list []string
	if json.Unmarshal([]byte(stored), &list) == nil {
		return list
	}
	out := []string{}
	for _, v := range strings.FieldsFunc(stored, func(r rune) bool { return r == ',' || r == ';' }) {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
