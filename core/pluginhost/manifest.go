package pluginhost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/pluginsdk"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// The server's manifest rules. pluginsdk.Manifest.Validate mirrors them
// for plugin authors; the server checks again because a plugin need not be
// built with the SDK.
var (
	pluginNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{1,30}$`)
	identPattern      = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)
	aliasPattern      = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)
	suffixPattern     = regexp.MustCompile(`^[a-z][a-z0-9_]{0,30}$`)
	operatorPattern   = regexp.MustCompile(`^_[a-z][a-z0-9_]{0,62}$`)
	staticSegment     = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)
	paramSegment      = regexp.MustCompile(`^[:*][A-Za-z_][A-Za-z0-9_]*$`)
	queryParamPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)
)

// reservedPluginNames would let a plugin's system tables sys_<name>_<x>
// meet the server's own sys_ tables and indexes (sys_table_features,
// sys_rs_pair_uq, ...), now or later.
var reservedPluginNames = []string{"api", "core", "fields", "history", "indexes", "login", "manual",
	"plugin", "plugins", "relations", "rs", "settings", "strata", "table", "tables", "users",
	"versions", "vocabularies"}

// maxSystemIndexes bounds a system table's declared indexes (each costs
// every write to the table).
const maxSystemIndexes = 8

// reservedSections are the server's own keys of a full record.
var reservedSections = []string{"status", "metadata", "rec_id", "id_field", "can_add", "can_edit",
	"can_delete", "core", "plugins", "links", "backlinks", "manualLinks", "files", "geodata",
	"rs", "schema"} // bibliography is left to a plugin (DESIGN §5)

// reservedFlags are keys of the full record's schema a plugin may not set.
var reservedFlags = []string{"fields", "plugins", "rs", "id_field", "has_geodata", "has_refmgr", "template"}

var routeMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// accessByName maps a manifest route's access to the server's gate.
var accessByName = map[string]auth.Access{
	"public": auth.Public, "enter": auth.Enter, "read": auth.Read, "add_new": auth.AddNew,
	"edit": auth.Edit, "admin": auth.AdminOnly, "super_admin": auth.SuperAdminOnly,
}

// Bounds of a route's own settings.
const (
	maxRouteTimeoutMS = 10 * 60 * 1000
	maxBodyLimit      = pluginsdk.MaxBodyLimit
)

// validateManifest lists everything wrong with one plugin's manifest on
// its own; collisions with other plugins and with the server's routes are
// checked when plugins are loaded and mounted.
func validateManifest(m *pluginv1.Manifest) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if !pluginNamePattern.MatchString(m.GetName()) {
		bad("name %q: a lower-case letter, then 1 to 30 lower-case letters, digits or underscores", m.GetName())
	} else if slices.Contains(reservedPluginNames, m.GetName()) {
		bad("name %q is reserved by the server", m.GetName())
	}
	if v := m.GetVersion(); v == "" || len(v) > 64 || strings.ContainsAny(v, " \t\n") {
		bad("version %q: a version without spaces, e.g. 1.0.0", v)
	}
	if m.GetProtocolVersion() != pluginsdk.ProtocolVersion {
		bad("protocol version %d: the server speaks %d", m.GetProtocolVersion(), pluginsdk.ProtocolVersion)
	}
	if s := bytes.TrimSpace(m.GetSettingsSchema()); len(s) > 0 {
		var obj map[string]any
		if json.Unmarshal(s, &obj) != nil || obj == nil {
			bad("settings schema is not a JSON object")
		}
	}

	features := map[string]*pluginv1.TableFeature{}
	names := map[string]string{} // feature names and aliases → feature
	for _, f := range m.GetFeatures() {
		where := fmt.Sprintf("feature %q", f.GetName())
		if !identPattern.MatchString(f.GetName()) {
			bad("%s: names are a lower-case letter, then lower-case letters, digits or underscores", where)
		}
		if other, dup := names[f.GetName()]; dup {
			bad("%s: already a name or alias of feature %q", where, other)
		}
		names[f.GetName()] = f.GetName()
		features[f.GetName()] = f
		for _, a := range f.GetAliases() {
			if !aliasPattern.MatchString(a) {
				bad("%s: alias %q: a lower-case letter, then lower-case letters, digits, _ or -", where, a)
			}
			if other, dup := names[a]; dup {
				bad("%s: alias %q is already a name or alias of feature %q", where, a, other)
			}
			names[a] = f.GetName()
		}
		own := map[string]bool{}
		for _, c := range f.GetColumns() {
			probs = append(probs, checkColumn(where, c, true)...)
			if own[c.GetName()] {
				bad("%s: column %q declared twice", where, c.GetName())
			}
			own[c.GetName()] = true
		}
		if ch := f.GetChild(); ch != nil {
			cw := fmt.Sprintf("%s: child table %q", where, ch.GetSuffix())
			if !suffixPattern.MatchString(ch.GetSuffix()) {
				bad("%s: suffixes are a lower-case letter, then up to 30 lower-case letters, digits or underscores", cw)
			}
			if len(ch.GetColumns()) == 0 {
				bad("%s: no columns", cw)
			}
			childCols := map[string]bool{}
			for _, c := range ch.GetColumns() {
				probs = append(probs, checkColumn(cw, c, true)...)
				if childCols[c.GetName()] {
					bad("%s: column %q declared twice", cw, c.GetName())
				}
				childCols[c.GetName()] = true
				own[c.GetName()] = true
			}
		}
		for _, c := range f.GetComputed() {
			if !own[c] {
				bad("%s: computed column %q is not one of its columns", where, c)
			}
		}
		hooks := f.GetBeforeSave() || f.GetAfterSave()
		if len(f.GetComputed()) > 0 && !f.GetBeforeSave() {
			bad("%s: computed columns need the BeforeSave hook that computes them", where)
		}
		if f.GetRequired() && !hooks {
			bad("%s: required only applies to a feature with a hook", where)
		}
		if (hooks || f.GetRequired()) && len(f.GetColumns()) > 0 && f.GetChild() != nil {
			// A hook call carries rows of one table: the record's or the child's.
			bad("%s: a feature with hooks has columns or a child table, not both", where)
		}
		if fl := f.GetSchemaFlag(); fl != "" && (!identPattern.MatchString(fl) || slices.Contains(reservedFlags, fl)) {
			bad("%s: schema flag %q is not an identifier of its own", where, fl)
		}
		// Fields of the activated table outside the feature; one the
		// table lacks is simply absent from the hook's record.
		for _, d := range f.GetDependsOn() {
			if !identPattern.MatchString(d) {
				bad("%s: depends_on %q is not an identifier", where, d)
			} else if own[d] {
				bad("%s: depends_on %q is one of its own columns", where, d)
			}
		}
		if len(f.GetDependsOn()) > 0 && f.GetChild() != nil {
			bad("%s: depends_on is for a feature with columns, not a child table", where)
		}
	}

	probs = append(probs, checkRoutes(m.GetRoutes())...)

	builtins := append(filter.BuiltinOperators(), "_and", "_or")
	ops := map[string]bool{}
	for _, o := range m.GetOperators() {
		where := fmt.Sprintf("operator %q", o.GetName())
		if !operatorPattern.MatchString(o.GetName()) {
			bad("%s: operators are _ then a lower-case letter, then lower-case letters, digits or underscores", where)
		}
		if slices.Contains(builtins, o.GetName()) {
			bad("%s: a built-in operator of the filter language", where)
		}
		if ops[o.GetName()] {
			bad("%s: declared twice", where)
		}
		ops[o.GetName()] = true
		if o.GetFeature() != "" && features[o.GetFeature()] == nil {
			bad("%s: feature %q is not declared", where, o.GetFeature())
		}
		for _, fld := range o.GetFields() {
			if !identPattern.MatchString(fld) {
				bad("%s: field %q is not an identifier", where, fld)
			}
		}
	}

	sections := map[string]bool{}
	for _, s := range m.GetSections() {
		where := fmt.Sprintf("section %q", s.GetName())
		if !identPattern.MatchString(s.GetName()) || slices.Contains(reservedSections, s.GetName()) {
			bad("%s: not an identifier of its own (the server's record keys are taken)", where)
		}
		if sections[s.GetName()] {
			bad("%s: declared twice", where)
		}
		sections[s.GetName()] = true
		if s.GetFeature() != "" && features[s.GetFeature()] == nil {
			bad("%s: feature %q is not declared", where, s.GetFeature())
		}
	}

	tables := map[string]bool{}
	systemCols := map[string]map[string]bool{}
	for _, t := range m.GetSystemTables() {
		where := fmt.Sprintf("system table %q", t.GetName())
		full := systemTableName(m.GetName(), t.GetName())
		if !identPattern.MatchString(t.GetName()) || !store.ValidIdent(full) {
			bad("%s: %s is not an identifier of at most 63 characters", where, full)
		}
		if tables[t.GetName()] {
			bad("%s: declared twice", where)
		}
		tables[t.GetName()] = true
		if len(t.GetColumns()) == 0 {
			bad("%s: no columns", where)
		}
		cols := map[string]bool{}
		for _, c := range t.GetColumns() {
			probs = append(probs, checkColumn(where, c, false)...)
			if c.GetName() == "id" {
				bad("%s: id is created by the server", where)
			}
			if cols[c.GetName()] {
				bad("%s: column %q declared twice", where, c.GetName())
			}
			cols[c.GetName()] = true
		}
		systemCols[t.GetName()] = cols
		if len(t.GetIndexes()) > maxSystemIndexes {
			bad("%s: more than %d indexes", where, maxSystemIndexes)
		}
		indexes := map[string]bool{}
		for i, ix := range t.GetIndexes() {
			if len(ix.GetColumns()) == 0 {
				bad("%s: index %d has no columns", where, i)
			}
			for _, c := range ix.GetColumns() {
				if c != "id" && !cols[c] {
					bad("%s: index %d: column %q is not declared", where, i, c)
				}
			}
			key := strings.Join(ix.GetColumns(), ",")
			if indexes[key] {
				bad("%s: index (%s) declared twice", where, key)
			}
			indexes[key] = true
		}
	}
	for _, s := range m.GetSections() {
		r := s.GetRows()
		if r == nil {
			continue
		}
		where := fmt.Sprintf("section %q", s.GetName())
		cols, ok := systemCols[r.GetTable()]
		switch {
		case !ok:
			bad("%s: rows: system table %q is not declared", where, r.GetTable())
		case !cols[r.GetTableColumn()]:
			bad("%s: rows: table column %q is not a column of %q", where, r.GetTableColumn(), r.GetTable())
		case !cols[r.GetIdColumn()]:
			bad("%s: rows: id column %q is not a column of %q", where, r.GetIdColumn(), r.GetTable())
		}
		if e := r.GetEmpty(); len(e) > 0 && !json.Valid(e) {
			bad("%s: rows: the empty value is not JSON", where)
		}
	}
	return append(probs, validateLabels(m)...)
}

// checkColumn checks one declared column; userTable: a column of a user
// table (the activated table or a child), where system names are taken.
func checkColumn(where string, c *pluginv1.Column, userTable bool) []string {
	var probs []string
	if !identPattern.MatchString(c.GetName()) {
		probs = append(probs, fmt.Sprintf("%s: column %q: names are a lower-case letter, then lower-case letters, digits or underscores", where, c.GetName()))
	}
	if userTable && (slices.Contains([]string{schema.ColID, schema.ColCreator, schema.ColIDLink}, c.GetName()) ||
		strings.HasPrefix(c.GetName(), store.SystemTablePrefix)) {
		probs = append(probs, fmt.Sprintf("%s: column %q is a name the server keeps", where, c.GetName()))
	}
	if t := c.GetType(); (t != "" || userTable) && !slices.Contains(schema.FieldTypes, schema.FieldType(t)) {
		probs = append(probs, fmt.Sprintf("%s: column %q: type %q is not a field type", where, c.GetName(), t))
	}
	if d := c.GetDbType(); d != "" && !slices.Contains(schema.DBTypes, schema.DBType(d)) {
		probs = append(probs, fmt.Sprintf("%s: column %q: db type %q is not one of text, int, float, date, bool", where, c.GetName(), d))
	}
	return probs
}

// checkRoutes checks the shape of each route; that two routes of the
// whole instance never answer the same path is checked at load and mount.
func checkRoutes(routes []*pluginv1.Route) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	seen := map[string]bool{}
	for _, r := range routes {
		where := fmt.Sprintf("route %s %s", r.GetMethod(), r.GetPath())
		if !slices.Contains(routeMethods, r.GetMethod()) {
			bad("%s: the method is one of %s", where, strings.Join(routeMethods, ", "))
		}
		if _, ok := accessByName[r.GetAccess()]; !ok {
			bad("%s: access %q is not one of public, enter, read, add_new, edit, admin, super_admin", where, r.GetAccess())
		}
		if r.GetTimeoutMs() > maxRouteTimeoutMS {
			bad("%s: the timeout is at most 10 minutes", where)
		}
		if r.GetJob() && r.GetMethod() == "GET" {
			bad("%s: a job route is not a GET (it starts something)", where)
		}
		if r.GetBodyLimit() > maxBodyLimit {
			bad("%s: the body limit is at most %d bytes", where, maxBodyLimit)
		}
		if tp := r.GetTableParam(); tp != "" && !queryParamPattern.MatchString(tp) {
			bad("%s: table parameter %q is not a query parameter name (letters, digits, _)", where, tp)
		}
		key := r.GetMethod() + " " + r.GetPath()
		if seen[key] {
			bad("%s: declared twice", where)
		}
		seen[key] = true
		p := r.GetPath()
		if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || len(p) > 512 {
			bad("%s: a path starts with / and does not end with one", where)
			continue
		}
		params := map[string]bool{}
		segs := strings.Split(p[1:], "/")
		for i, s := range segs {
			switch {
			case staticSegment.MatchString(s):
			case !paramSegment.MatchString(s):
				bad("%s: segment %q is neither static (letters, digits, . _ ~ -) nor a :param", where, s)
			case i == 0:
				bad("%s: the first segment must be static", where)
			case s[0] == '*' && i != len(segs)-1:
				bad("%s: a catch-all *param must be the last segment", where)
			case s[1:] == "app" || params[s[1:]]:
				// :app is the application of /<app>/api.
				bad("%s: parameter %s is taken", where, s)
			default:
				params[s[1:]] = true
			}
		}
	}
	return probs
}

// systemTableName is the physical name of a plugin's system table.
func systemTableName(plugin, table string) string {
	return store.SystemTablePrefix + plugin + "_" + table
}

// PathsOverlap reports whether some request path would match both gin
// patterns (":x" one segment, "*x" the rest): two such routes would
// shadow each other, so the server refuses the plugin that brings the
// second.
func PathsOverlap(a, b string) bool {
	as := strings.Split(strings.TrimPrefix(a, "/"), "/")
	bs := strings.Split(strings.TrimPrefix(b, "/"), "/")
	for i := 0; ; i++ {
		aEnd, bEnd := i >= len(as), i >= len(bs)
		switch {
		case aEnd && bEnd:
			return true
		case !aEnd && strings.HasPrefix(as[i], "*"), !bEnd && strings.HasPrefix(bs[i], "*"):
			return true
		case aEnd || bEnd:
			return false
		}
		if as[i] != bs[i] && !strings.HasPrefix(as[i], ":") && !strings.HasPrefix(bs[i], ":") {
			return false
		}
	}
}
