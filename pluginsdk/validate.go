package pluginsdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// These mirror the server's rules so that a plugin finds out in its own
// tests, not when an admin installs it. The server checks again.
var (
	pluginNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{1,30}$`)
	// identPattern is the server's rule for table and column names.
	identPattern    = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)
	aliasPattern    = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)
	suffixPattern   = regexp.MustCompile(`^[a-z][a-z0-9_]{0,30}$`)
	operatorPattern = regexp.MustCompile(`^_[a-z][a-z0-9_]{0,62}$`)
	semverPattern   = regexp.MustCompile(`^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	staticSegment   = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)
	paramSegment    = regexp.MustCompile(`^[:*][A-Za-z_][A-Za-z0-9_]*$`)
	// queryParamPattern is a Route.TableParam: what a form or a URL
	// builder names a parameter, without characters to escape.
	queryParamPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)
	// languageTagPattern is a BCP 47 tag as Labels take it, in canonical
	// case: a language (2 or 3 letters), an optional script (4 letters,
	// capitalised) and an optional region (2 capitals or 3 digits).
	languageTagPattern = regexp.MustCompile(`^[a-z]{2,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|[0-9]{3}))?$`)
	messageKeyPattern  = regexp.MustCompile(`^[a-z][a-z0-9_.-]{0,63}$`)
)

// Bounds of translated texts: a label is a line, a message a sentence or
// two; the whole catalogue travels with every Describe.
const (
	maxLabelLength   = 200
	maxMessageLength = 1000
	maxMessages      = 500
)

var (
	methods     = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}
	accessNames = []string{AccessPublic, AccessEnter, AccessRead, AccessAddNew, AccessEdit,
		AccessAdmin, AccessSuperAdmin}
	// systemColumns exist on every table the server creates.
	systemColumns = []string{"id", "creator", "id_link"}
	// builtinOperators and filter group keys of the filter language
	// (docs/filter.md); a plugin operator may not shadow them.
	builtinOperators = []string{"_eq", "_neq", "_gt", "_lt", "_gte", "_lte", "_between", "_in",
		"_nin", "_contains", "_icontains", "_ncontains", "_starts_with", "_nstarts_with",
		"_ends_with", "_nends_with", "_null", "_nnull", "_empty", "_nempty", "_and", "_or"}
	// reservedSections are the server's own keys of a full record.
	reservedSections = []string{"status", "metadata", "rec_id", "id_field", "can_add", "can_edit",
		"can_delete", "core", "plugins", "links", "backlinks", "manualLinks", "files", "geodata",
		"rs", "schema"}
)

// maxRouteTimeout bounds Route.Timeout: a longer call belongs in a
// background job of the plugin, not an HTTP request.
const maxRouteTimeout = 10 * time.Minute

// maxSystemIndexes bounds a system table's declared indexes (each costs
// every write to the table).
const maxSystemIndexes = 8

// systemTablePrefix is the server's prefix of system tables; user columns
// may not start with it.
const systemTablePrefix = "sys_"

// ManifestError lists every problem of a manifest.
type ManifestError struct {
	Problems []string
}

func (e *ManifestError) Error() string {
	return "invalid plugin manifest: " + strings.Join(e.Problems, "; ")
}

// Validate checks m against the manifest rules (PLUGINS.md): names and
// their shapes, protocol version, column types, no column collisions
// between features or with id/creator/id_link, computed columns among the
// declared ones, routes, operators, sections and system tables well formed
// and unique. It does not look at route handlers (the wire form has none):
// Check does. A nil result or a *ManifestError.
func (m Manifest) Validate() error {
	v := &validator{}
	v.check(pluginNamePattern.MatchString(m.Name),
		"name %q: a lower-case letter, then 1 to 30 lower-case letters, digits or underscores", m.Name)
	v.check(semverPattern.MatchString(m.Version), "version %q is not a semantic version (e.g. 1.0.0)", m.Version)
	v.check(m.ProtocolVersion == ProtocolVersion, "protocol version %d: this SDK speaks %d", m.ProtocolVersion, ProtocolVersion)
	if len(bytes.TrimSpace(m.SettingsSchema)) > 0 {
		var obj map[string]any
		v.check(json.Unmarshal(m.SettingsSchema, &obj) == nil && obj != nil, "settings schema is not a JSON object")
	}

	features := map[string]*Feature{}
	featureNames := map[string]string{} // names and aliases → the feature
	tableColumns := map[string]string{}
	suffixes := map[string]bool{}
	for i := range m.Features {
		f := &m.Features[i]
		where := fmt.Sprintf("feature %q", f.Name)
		v.check(identPattern.MatchString(f.Name), "%s: names are a lower-case letter, then lower-case letters, digits or underscores", where)
		if owner, dup := featureNames[f.Name]; dup {
			v.fail("%s: %q is already a name or alias of feature %q", where, f.Name, owner)
		}
		featureNames[f.Name] = f.Name
		features[f.Name] = f
		v.labels(where, f.Label, f.Labels, maxLabelLength)
		for _, a := range f.Aliases {
			v.check(aliasPattern.MatchString(a), "%s: alias %q: a lower-case letter, then lower-case letters, digits, _ or -", where, a)
			if owner, dup := featureNames[a]; dup {
				v.fail("%s: alias %q is already a name or alias of feature %q", where, a, owner)
			}
			featureNames[a] = f.Name
		}
		own := map[string]bool{}
		for _, c := range f.Columns {
			v.column(where, c, true)
			if other, dup := tableColumns[c.Name]; dup {
				v.fail("%s: column %q is also declared by feature %q", where, c.Name, other)
			}
			tableColumns[c.Name] = f.Name
			own[c.Name] = true
		}
		if f.Child != nil {
			cw := fmt.Sprintf("%s: child table %q", where, f.Child.Suffix)
			v.check(suffixPattern.MatchString(f.Child.Suffix), "%s: suffixes are a lower-case letter, then up to 30 lower-case letters, digits or underscores", cw)
			v.check(!suffixes[f.Child.Suffix], "%s: suffix used by another feature", cw)
			suffixes[f.Child.Suffix] = true
			v.check(len(f.Child.Columns) > 0, "%s: no columns", cw)
			v.labels(cw, f.Child.Label, f.Child.Labels, maxLabelLength)
			childCols := map[string]bool{}
			for _, c := range f.Child.Columns {
				v.column(cw, c, true)
				v.check(!childCols[c.Name], "%s: column %q declared twice", cw, c.Name)
				childCols[c.Name] = true
				own[c.Name] = true
			}
		}
		// Column translations name the feature's columns, and translate
		// their labels and help.
		cols := map[string]Column{}
		for _, c := range f.Columns {
			cols[c.Name] = c
		}
		if f.Child != nil {
			for _, c := range f.Child.Columns {
				cols[c.Name] = c
			}
		}
		for _, name := range slices.Sorted(maps.Keys(f.ColumnLabels)) {
			c, ok := cols[name]
			v.check(ok, "%s: column labels: %q is not one of its columns", where, name)
			v.labels(fmt.Sprintf("%s: column %q", where, name), c.Label, f.ColumnLabels[name], maxLabelLength)
		}
		for _, name := range slices.Sorted(maps.Keys(f.ColumnHelp)) {
			c, ok := cols[name]
			v.check(ok, "%s: column help: %q is not one of its columns", where, name)
			v.labels(fmt.Sprintf("%s: column %q help", where, name), c.Help, f.ColumnHelp[name], maxMessageLength)
		}
		for _, c := range f.Computed {
			v.check(own[c], "%s: computed column %q is not one of its columns", where, c)
		}
		v.check(len(f.Computed) == 0 || f.BeforeSave, "%s: computed columns need the BeforeSave hook that computes them", where)
		// The server makes one hook call per save and feature, about one
		// row table.
		v.check(!(f.BeforeSave || f.AfterSave) || len(f.Columns) == 0 || f.Child == nil,
			"%s: a feature with hooks has columns or a child table, not both (split it in two features)", where)
		v.check(!f.Required || f.BeforeSave || f.AfterSave, "%s: required only applies to a feature with a hook", where)
		v.check(f.SchemaFlag == "" || identPattern.MatchString(f.SchemaFlag), "%s: schema flag %q is not an identifier", where, f.SchemaFlag)
		for _, d := range f.DependsOn {
			v.check(identPattern.MatchString(d), "%s: depends_on %q is not an identifier", where, d)
			v.check(!own[d], "%s: depends_on %q is one of its own columns", where, d)
		}
		v.check(len(f.DependsOn) == 0 || f.Child == nil, "%s: depends_on is for a feature with columns, not a child table", where)
	}

	v.routes(m.Routes)

	ops := map[string]bool{}
	for _, o := range m.Operators {
		where := fmt.Sprintf("operator %q", o.Name)
		v.check(operatorPattern.MatchString(o.Name), "%s: operators are _ then a lower-case letter, then lower-case letters, digits or underscores", where)
		v.check(!slices.Contains(builtinOperators, o.Name), "%s: a built-in operator of the filter language", where)
		v.check(!ops[o.Name], "%s: declared twice", where)
		ops[o.Name] = true
		f := features[o.Feature]
		v.check(o.Feature == "" || f != nil, "%s: feature %q is not declared", where, o.Feature)
		for _, field := range o.Fields {
			v.check(identPattern.MatchString(field), "%s: field %q is not an identifier", where, field)
			if f != nil {
				v.check(featureHasColumn(f, field), "%s: field %q is not a column of feature %q", where, field, o.Feature)
			}
		}
	}

	sections := map[string]bool{}
	for _, s := range m.Sections {
		where := fmt.Sprintf("section %q", s.Name)
		v.check(identPattern.MatchString(s.Name), "%s: not an identifier", where)
		v.check(!slices.Contains(reservedSections, s.Name), "%s: a key of the server's full record", where)
		v.check(!sections[s.Name], "%s: declared twice", where)
		sections[s.Name] = true
		v.check(s.Feature == "" || features[s.Feature] != nil, "%s: feature %q is not declared", where, s.Feature)
		v.labels(where, s.Label, m.SectionLabels[s.Name], maxLabelLength)
	}
	for _, name := range slices.Sorted(maps.Keys(m.SectionLabels)) {
		v.check(sections[name], "section labels: %q is not a declared section", name)
	}

	v.check(len(m.Messages) <= maxMessages, "messages: more than %d", maxMessages)
	for _, key := range slices.Sorted(maps.Keys(m.Messages)) {
		where := fmt.Sprintf("message %q", key)
		v.check(messageKeyPattern.MatchString(key), "%s: keys are a lower-case letter, then up to 63 lower-case letters, digits, '_', '.' or '-'", where)
		texts := m.Messages[key]
		v.check(texts[DefaultLanguage] != "", "%s: no %q text (the fallback for other languages)", where, DefaultLanguage)
		v.labels(where, texts[DefaultLanguage], texts, maxMessageLength)
	}

	tables := map[string]bool{}
	systemCols := map[string]map[string]bool{}
	for _, t := range m.SystemTables {
		where := fmt.Sprintf("system table %q", t.Name)
		v.check(identPattern.MatchString(t.Name), "%s: not an identifier", where)
		full := systemTablePrefix + m.Name + "_" + t.Name
		v.check(len(full) <= 63, "%s: %s is longer than 63 characters", where, full)
		v.check(!tables[t.Name], "%s: declared twice", where)
		tables[t.Name] = true
		v.check(len(t.Columns) > 0, "%s: no columns", where)
		cols := map[string]bool{}
		for _, c := range t.Columns {
			v.column(where, c, false)
			v.check(c.Name != "id", "%s: id is created by the server", where)
			v.check(!cols[c.Name], "%s: column %q declared twice", where, c.Name)
			cols[c.Name] = true
		}
		systemCols[t.Name] = cols
		v.check(len(t.Indexes) <= maxSystemIndexes, "%s: more than %d indexes", where, maxSystemIndexes)
		indexes := map[string]bool{}
		for i, ix := range t.Indexes {
			v.check(len(ix) > 0, "%s: index %d has no columns", where, i)
			for _, c := range ix {
				v.check(c == "id" || cols[c], "%s: index %d: column %q is not declared", where, i, c)
			}
			key := strings.Join(ix, ",")
			v.check(!indexes[key], "%s: index (%s) declared twice", where, key)
			indexes[key] = true
		}
	}

	for _, s := range m.Sections {
		if s.Rows == nil {
			continue
		}
		where := fmt.Sprintf("section %q", s.Name)
		cols, ok := systemCols[s.Rows.Table]
		v.check(ok, "%s: rows: system table %q is not declared", where, s.Rows.Table)
		if ok {
			v.check(cols[s.Rows.TableColumn], "%s: rows: table column %q is not a column of %q", where, s.Rows.TableColumn, s.Rows.Table)
			v.check(cols[s.Rows.IDColumn], "%s: rows: id column %q is not a column of %q", where, s.Rows.IDColumn, s.Rows.Table)
		}
		_, err := json.Marshal(s.Rows.Empty)
		v.check(err == nil, "%s: rows: the empty value does not encode as JSON", where)
	}

	if len(v.problems) > 0 {
		return &ManifestError{Problems: v.problems}
	}
	return nil
}

func featureHasColumn(f *Feature, name string) bool {
	for _, c := range f.Columns {
		if c.Name == name {
			return true
		}
	}
	if f.Child != nil {
		for _, c := range f.Child.Columns {
			if c.Name == name {
				return true
			}
		}
	}
	return false
}

type validator struct{ problems []string }

func (v *validator) fail(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

func (v *validator) check(ok bool, format string, args ...any) {
	if !ok {
		v.fail(format, args...)
	}
}

// column checks one column; userTable: a column of a user table (the table
// itself or a child), where the system column names are taken.
func (v *validator) column(where string, c Column, userTable bool) {
	v.check(identPattern.MatchString(c.Name), "%s: column %q: names are a lower-case letter, then lower-case letters, digits or underscores", where, c.Name)
	if userTable {
		v.check(!slices.Contains(systemColumns, c.Name), "%s: column %q is a system column", where, c.Name)
		v.check(!strings.HasPrefix(c.Name, systemTablePrefix), "%s: column %q: the prefix %s is the server's", where, c.Name, systemTablePrefix)
	}
	okType, okDB := slices.Contains(FieldTypes, c.Type), slices.Contains(DBTypes, c.DBType)
	v.check(okType, "%s: column %q: type %q is not one of %s", where, c.Name, c.Type, joinNames(FieldTypes))
	v.check(okDB, "%s: column %q: db type %q is not one of %s", where, c.Name, c.DBType, joinNames(DBTypes))
	if okType && okDB {
		if ok, allowed := fits(c.Type, c.DBType); !ok {
			v.fail("%s: column %q: a %s field is stored as %s, not %s", where, c.Name, c.Type, joinNames(allowed), c.DBType)
		}
	}
}

// labels checks the translations of one text whose default is def: each
// key a language tag (languageTagPattern), each text non-empty, valid
// UTF-8, one line and at most max bytes, and a DefaultLanguage entry, if
// any, equal to def (the default is said once, in the Label field).
func (v *validator) labels(where, def string, ls Labels, max int) {
	for _, tag := range slices.Sorted(maps.Keys(ls)) {
		text := ls[tag]
		v.check(languageTagPattern.MatchString(tag),
			"%s: language %q is not a BCP 47 tag in canonical case (e.g. it, pt-BR, sr-Latn)", where, tag)
		v.check(strings.TrimSpace(text) != "", "%s: the %q text is empty", where, tag)
		v.check(utf8.ValidString(text) && !strings.ContainsAny(text, "\n\r\x00"), "%s: the %q text is not one line of UTF-8", where, tag)
		v.check(len(text) <= max, "%s: the %q text is longer than %d bytes", where, tag, max)
		v.check(tag != DefaultLanguage || text == def, "%s: the %q text differs from the label it translates", where, tag)
	}
	v.check(len(ls) == 0 || def != "", "%s: translations of an empty label", where)
}

func (v *validator) routes(routes []Route) {
	seen := map[string]bool{}
	// paramAt maps a method and route prefix (segments before a parameter)
	// to the parameter's name there: the server's router refuses two names
	// at the same place of one method's tree.
	paramAt := map[string]string{}
	for _, r := range routes {
		where := fmt.Sprintf("route %s %s", r.Method, r.Path)
		v.check(slices.Contains(methods, r.Method), "%s: method is one of %s", where, strings.Join(methods, ", "))
		v.check(slices.Contains(accessNames, r.Access), "%s: access %q is not one of %s", where, r.Access, strings.Join(accessNames, ", "))
		v.check(r.Timeout >= 0 && r.Timeout <= maxRouteTimeout, "%s: timeout %s is not between 0 and %s", where, r.Timeout, maxRouteTimeout)
		v.check(!r.Job || r.Method != "GET", "%s: a job route is not a GET (it starts something)", where)
		v.check(r.BodyLimit >= 0 && r.BodyLimit <= MaxBodyLimit, "%s: body limit %d is not between 0 and %d", where, r.BodyLimit, MaxBodyLimit)
		v.check(r.TableParam == "" || queryParamPattern.MatchString(r.TableParam), "%s: table parameter %q is not a query parameter name (letters, digits, _)", where, r.TableParam)
		key := r.Method + " " + r.Path
		v.check(!seen[key], "%s: declared twice", where)
		seen[key] = true

		if !strings.HasPrefix(r.Path, "/") || strings.HasSuffix(r.Path, "/") {
			v.fail("%s: a path starts with / and does not end with one", where)
			continue
		}
		segs := strings.Split(r.Path[1:], "/")
		for i, s := range segs {
			switch {
			case staticSegment.MatchString(s):
			case paramSegment.MatchString(s) && i == 0:
				v.fail("%s: the first segment must be static", where)
			case paramSegment.MatchString(s) && s[0] == '*' && i != len(segs)-1:
				v.fail("%s: a catch-all *param must be the last segment", where)
			case paramSegment.MatchString(s):
				prefix := r.Method + " " + strings.Join(segs[:i], "/")
				if name, ok := paramAt[prefix]; ok && name != s {
					v.fail("%s: parameter %s where another route has %s", where, s, name)
				}
				paramAt[prefix] = s
			default:
				v.fail("%s: segment %q is neither static (letters, digits, . _ ~ -) nor a :param", where, s)
			}
		}
	}
}

// joinNames lists named string values for a message: "a, b, c".
func joinNames[T ~string](vs []T) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return strings.Join(out, ", ")
}
