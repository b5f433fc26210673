package dbmlapi

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/dbml"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/vocab"
)

// Issue is an error or a warning of a plan, with where it is in the text.
type Issue struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Table   string `json:"table,omitempty"`
	Field   string `json:"field,omitempty"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
}

func issue(code string, at dbml.Pos, table, field, format string, args ...any) Issue {
	return Issue{Code: code, Message: fmt.Sprintf(format, args...), Table: table, Field: field, Line: at.Line, Column: at.Column}
}

// issueOf turns a refusal of the schema package into an issue.
func issueOf(err error, at dbml.Pos, table, field string) Issue {
	e, ok := errs.As(err)
	if !ok || e.Kind == errs.Internal {
		return issue("internal_error", at, table, field, "an internal error occurred; it has been logged")
	}
	msg := e.Message
	if d, ok := e.Extra["detail"].(string); ok && d != "" {
		msg += ": " + d
	}
	return Issue{Code: e.Code, Message: msg, Table: table, Field: field, Line: at.Line, Column: at.Column}
}

// FieldPlan is a field a table of the text would get.
type FieldPlan struct {
	Name            string           `json:"name"`
	Label           string           `json:"label"`
	Type            schema.FieldType `json:"type"`
	DBType          schema.DBType    `json:"db_type"`
	NotNull         bool             `json:"not_null"`
	Unique          bool             `json:"unique"`
	VocabularySet   string           `json:"vocabulary_set,omitempty"`
	IDFromTb        string           `json:"id_from_tb,omitempty"`
	GetValuesFromTb string           `json:"get_values_from_tb,omitempty"`
	Line            int              `json:"line"`
	Column          int              `json:"column"`

	def schema.FieldDef
}

// IndexPlan is a user index a table of the text would get.
type IndexPlan struct {
	Name    string   `json:"name,omitempty"`
	Columns []string `json:"columns"`
	Unique  bool     `json:"unique"`
	Line    int      `json:"line"`
	Column  int      `json:"column"`
}

// TablePlan is a table of the text: what it would be, and why it would
// be skipped (Errors) or changed on the way (Warnings).
type TablePlan struct {
	Name     string       `json:"name"`
	Label    string       `json:"label"`
	IsPlugin bool         `json:"is_plugin"`
	PluginOf string       `json:"plugin_of"`
	Preview  []string     `json:"preview"`
	Order    string       `json:"order"`
	IDField  string       `json:"id_field"`
	RS       bool         `json:"rs"`
	Geodata  bool         `json:"geodata"`
	RefMgr   bool         `json:"refmgr"`
	Features []string     `json:"features"`
	Fields   []*FieldPlan `json:"fields"`
	Indexes  []*IndexPlan `json:"indexes"`
	Errors   []Issue      `json:"errors"`
	Warnings []Issue      `json:"warnings"`
	Line     int          `json:"line"`
	Column   int          `json:"column"`

	src     *dbml.Table
	nbase   int // warnings of the table itself, before its fields'
	rsField string
	deps    []string // tables of the text it needs first
}

func (t *TablePlan) fail(i Issue)  { t.Errors = append(t.Errors, i) }
func (t *TablePlan) warn(i Issue)  { t.Warnings = append(t.Warnings, i) }
func (t *TablePlan) ok() bool      { return len(t.Errors) == 0 }
func (t *TablePlan) pos() dbml.Pos { return t.src.Pos }

// VocabularyPlan is an enum of the text that becomes vocabulary items.
type VocabularyPlan struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
	// New are the values the vocabulary does not have yet (only they are
	// added).
	New    []string `json:"new"`
	Errors []Issue  `json:"errors"`
	Line   int      `json:"line"`
	Column int      `json:"column"`
}

// RelationPlan is a Ref of the text (or a column's ref that is not a
// lookup) that becomes a relation (CONTRACT §6).
type RelationPlan struct {
	FromTb   string  `json:"from_tb"`
	FromCol  string  `json:"from_col"`
	ToTb     string  `json:"to_tb"`
	ToCol    string  `json:"to_col"`
	OnDelete string  `json:"on_delete"`
	OnUpdate string  `json:"on_update"`
	Errors   []Issue `json:"errors"`
	Line     int     `json:"line"`
	Column   int     `json:"column"`
}

// Plan is what applying a text would do. Nothing is written to make it.
type Plan struct {
	Tables       []*TablePlan      `json:"tables"`
	Vocabularies []*VocabularyPlan `json:"vocabularies"`
	Relations    []*RelationPlan   `json:"relations"`
	// Warnings are about the text as a whole (what the parser left out).
	Warnings  []Issue `json:"warnings"`
	HasErrors bool    `json:"has_errors"`

	order []*TablePlan // dependencies first
}

// MakePlan checks a parsed text against the app: the tables it would
// create, with their fields checked as adding them would check them, and
// the vocabularies and relations it would add.
func MakePlan(ctx context.Context, db *store.DB, s *dbml.Schema) (*Plan, error) {
	cat, err := schema.Load(ctx, db)
	if err != nil {
		return nil, err
	}
	sets, err := vocab.List(ctx, db, "")
	if err != nil {
		return nil, err
	}
	p := &Plan{Tables: []*TablePlan{}, Vocabularies: []*VocabularyPlan{}, Relations: []*RelationPlan{}, Warnings: []Issue{}}
	for _, w := range s.Warnings {
		p.Warnings = append(p.Warnings, issue("dbml_ignored", w.Pos, "", "", "%s", w.Message))
	}
	p.planVocabularies(s, sets)
	for _, t := range s.Tables {
		p.Tables = append(p.Tables, planTable(cat, s, t))
	}
	p.order = dependencyOrder(p.Tables)
	p.planFields(cat, s)
	p.planRelations(cat, s)
	for _, t := range p.Tables {
		p.HasErrors = p.HasErrors || !t.ok()
	}
	for _, r := range p.Relations {
		p.HasErrors = p.HasErrors || len(r.Errors) > 0
	}
	for _, v := range p.Vocabularies {
		p.HasErrors = p.HasErrors || len(v.Errors) > 0
	}
	return p, nil
}

// usedAsType reports whether a column of the text has the enum as its type.
func usedAsType(s *dbml.Schema, e *dbml.Enum) bool {
	for _, t := range s.Tables {
		for _, c := range t.Columns {
			if c.Type.Name == e.Name && c.Type.Schema == e.Schema {
				return true
			}
		}
	}
	return false
}

// planVocabularies: the enums marked as vocabularies (// bdus:vocabulary,
// or a note saying bdus:vocabulary) and those a column uses as its type.
func (p *Plan) planVocabularies(s *dbml.Schema, sets []vocab.Set) {
	have := map[string][]string{}
	for _, set := range sets {
		for _, it := range set.Items {
			have[set.Name] = append(have[set.Name], it.Def)
		}
	}
	for _, e := range s.Enums {
		if !e.Vocabulary && !parseNote(e.Note).has("vocabulary") && !usedAsType(s, e) {
			continue
		}
		v := &VocabularyPlan{Name: e.Name, Values: []string{}, New: []string{}, Errors: []Issue{}, Line: e.Line, Column: e.Column}
		if strings.TrimSpace(e.Name) == "" || len([]rune(e.Name)) > vocab.MaxNameLen || strings.ContainsAny(e.Name, "\n\r\t") {
			v.Errors = append(v.Errors, issue("invalid_vocabulary", e.Pos, "", "", "a vocabulary name has 1 to %d characters and no control characters", vocab.MaxNameLen))
		}
		for _, val := range e.Values {
			v.Values = append(v.Values, val.Name)
			if len([]rune(val.Name)) > vocab.MaxItemLen || strings.TrimSpace(val.Name) == "" || strings.ContainsAny(val.Name, "\n\r\t") {
				v.Errors = append(v.Errors, issue("invalid_vocabulary", val.Pos, "", "", "a vocabulary item has 1 to %d characters and no control characters", vocab.MaxItemLen))
				continue
			}
			if !slices.Contains(have[e.Name], strings.TrimSpace(val.Name)) {
				v.New = append(v.New, strings.TrimSpace(val.Name))
			}
		}
		p.Vocabularies = append(p.Vocabularies, v)
	}
}

// planTable reads a table's name, primary key and bdus:* settings.
func planTable(cat *schema.Catalog, s *dbml.Schema, t *dbml.Table) *TablePlan {
	tp := &TablePlan{Name: t.Name, Label: t.Name, Preview: []string{}, Order: schema.ColID, IDField: schema.ColID,
		Features: []string{}, Fields: []*FieldPlan{}, Indexes: []*IndexPlan{}, Errors: []Issue{}, Warnings: []Issue{},
		Line: t.Line, Column: t.Column, src: t}
	if t.Schema != "" && t.Schema != "public" {
		tp.warn(issue("schema_ignored", t.Pos, t.Name, "", "the schema %q is left out: an app's tables are in one schema", t.Schema))
	}
	if !schema.ValidTableName(t.Name) {
		tp.fail(issue(schema.ErrInvalidTableName.Code, t.Pos, t.Name, "", "%s", schema.ErrInvalidTableName.Message))
		return tp
	}
	if _, ok := cat.Table(t.Name); ok {
		tp.fail(issue(schema.ErrTableExists.Code, t.Pos, t.Name, "", "table %s already exists", t.Name))
		return tp
	}
	for _, c := range t.Columns {
		if c.PK && c.Name != schema.ColID {
			tp.fail(issue("pk_must_be_id", c.Pos, t.Name, c.Name, "the primary key of a table is its id column, not %s", c.Name))
			return tp
		}
	}
	for _, ix := range t.Indexes {
		if ix.PK && (len(ix.Columns) != 1 || ix.Columns[0].Expr || ix.Columns[0].Name != schema.ColID) {
			name := ix.Columns[0].Name
			tp.fail(issue("pk_must_be_id", ix.Pos, t.Name, name, "the primary key of a table is its id column alone"))
			return tp
		}
	}
	a := parseNote(t.Note)
	if a.get("label") != "" {
		tp.Label = a.get("label")
	}
	if a.has("is_plugin") {
		tp.IsPlugin, tp.PluginOf = true, a.get("is_plugin")
		if tp.PluginOf != "" {
			tp.deps = append(tp.deps, tp.PluginOf)
		}
	}
	for _, name := range strings.Split(a.get("preview"), ",") {
		// BraDypUS lists id among the preview fields; it is always shown.
		if name = strings.TrimSpace(name); name != "" && !isSystemColumn(name) && !slices.Contains(tp.Preview, name) {
			tp.Preview = append(tp.Preview, name)
		}
	}
	if a.get("order") != "" {
		tp.Order = a.get("order")
	}
	if a.get("id_field") != "" {
		tp.IDField = a.get("id_field")
	}
	switch rs := a.get("rs"); {
	case a.on("rs"):
		tp.RS = true
	case rs != "" && rs != "0" && !strings.EqualFold(rs, "false"):
		tp.RS, tp.rsField = true, rs
	}
	tp.Geodata, tp.RefMgr = a.on("geodata"), a.on("refmgr")
	for _, f := range strings.Split(a.get("features"), ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(tp.Features, f) {
			tp.Features = append(tp.Features, f)
		}
	}
	if (a.on("fuzzy_date") || a.on("chronology")) && !slices.Contains(tp.Features, "chronology") {
		tp.Features = append(tp.Features, "chronology")
	}
	if t.ColumnNamed(schema.ColID) == nil {
		tp.warn(issue("auto_add_id", t.Pos, t.Name, schema.ColID, "table %s gets an id column (integer primary key)", t.Name))
	}
	if !tp.IsPlugin && t.ColumnNamed(schema.ColCreator) == nil {
		tp.warn(issue("auto_add_creator", t.Pos, t.Name, schema.ColCreator, "table %s gets a creator column (who created each record)", t.Name))
	}
	for _, c := range t.Columns {
		a := parseNote(c.Note)
		if c.Ref != nil && a.on("id_from_tb") {
			tp.deps = append(tp.deps, c.Ref.To.Table)
		}
		if tb, _, ok := strings.Cut(a.get("get_values_from_tb"), ":"); ok {
			tp.deps = append(tp.deps, tb)
		}
	}
	tp.nbase = len(tp.Warnings)
	return tp
}

// dependencyOrder puts each table after the tables of the text it needs
// (its parent, the tables its lookups and value lists name), keeping the
// text's order otherwise; tables in a cycle keep the text's order.
func dependencyOrder(tables []*TablePlan) []*TablePlan {
	byName := map[string]*TablePlan{}
	for _, t := range tables {
		byName[t.Name] = t
	}
	var out []*TablePlan
	done := map[*TablePlan]bool{}
	for len(out) < len(tables) {
		progress := false
		for _, t := range tables {
			if done[t] {
				continue
			}
			ready := true
			for _, d := range t.deps {
				if dt, ok := byName[d]; ok && dt != t && !done[dt] {
					ready = false
				}
			}
			if ready {
				out, done[t], progress = append(out, t), true, true
			}
		}
		if !progress { // a cycle: the first one left goes next
			for _, t := range tables {
				if !done[t] {
					out, done[t] = append(out, t), true
					break
				}
			}
		}
	}
	return out
}

var isoDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// fieldDef reads a column as the field AddField would add.
func fieldDef(s *dbml.Schema, tp *TablePlan, c *dbml.Column) (schema.FieldDef, []Issue, []Issue) {
	var errors, warnings []Issue
	a := parseNote(c.Note)
	enum := s.Enum(c.Type.Name)
	isEnum := enum != nil && enum.Schema == c.Type.Schema && len(c.Type.Args) == 0
	lookup := c.Ref != nil && a.on("id_from_tb")
	k := kindOf(c.Type.Name, isEnum, lookup, a)
	if !k.known {
		warnings = append(warnings, issue("unknown_type", c.Pos, tp.Name, c.Name, "type %s is read as text", c.Type.Name))
	}
	def := schema.FieldDef{Name: c.Name, Label: a.get("label"), Type: string(k.ft), DBType: string(k.dbt),
		Required: c.NotNull, Unique: c.Unique, Readonly: a.on("readonly"), Hide: a.on("hide"), Widget: a.get("widget"),
		VocabularySet: a.get("voc"), GetValuesFromTb: a.get("get_values_from_tb"), Pattern: a.get("pattern"), Help: a.get("help")}
	if !a.has("help") {
		def.Help = a.free
	}
	if isEnum && def.VocabularySet == "" {
		def.VocabularySet = enum.Name
	}
	if lookup {
		def.IDFromTb = c.Ref.To.Table
		if c.Ref.To.Columns[0] != schema.ColID {
			errors = append(errors, issue(schema.ErrInvalidParameter.Code, c.Ref.Pos, tp.Name, c.Name, "a lookup (bdus:id_from_tb) refers to the id of its table"))
		}
	}
	bad := func(param, detail string) {
		errors = append(errors, issue(schema.ErrInvalidParameter.Code, c.Pos, tp.Name, c.Name, "bdus:%s %s", param, detail))
	}
	for _, which := range []string{"min", "max"} {
		v := a.get(which)
		switch {
		case v == "":
		case isoDate.MatchString(v) && which == "min":
			def.DateMin = v
		case isoDate.MatchString(v):
			def.DateMax = v
		default:
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				bad(which, "is a number or a yyyy-mm-dd date")
				continue
			}
			if which == "min" {
				def.Min = &n
			} else {
				def.Max = &n
			}
		}
	}
	if v := a.get("max_length"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			bad("max_length", "is a whole number")
		} else {
			def.MaxLength = &n
		}
	}
	if c.Default != nil {
		switch c.Default.Kind {
		case dbml.KindString, dbml.KindNumber, dbml.KindBool:
			def.DefValue = c.Default.Text
		case dbml.KindExpr:
			warnings = append(warnings, issue("default_ignored", c.Pos, tp.Name, c.Name, "the default `%s` is an expression: fields take a value (or %%today%%, %%current_user%%)", c.Default.Text))
		}
	}
	return def, errors, warnings
}

// planFields checks every field of the tables that can be created, in
// dependency order, against the catalog as it would be; a table refused
// here leaves the catalog and its dependants are checked again.
func (p *Plan) planFields(cat *schema.Catalog, s *dbml.Schema) {
	for {
		planned := map[string]*schema.Table{}
		tables := slices.Clone(cat.Tables)
		for _, tp := range p.order {
			if tp.ok() {
				st := &schema.Table{Name: tp.Name, Label: tp.Label, IsPlugin: tp.IsPlugin, PluginOf: tp.PluginOf}
				planned[tp.Name] = st
				tables = append(tables, st)
			}
		}
		pcat := schema.NewCatalog(cat.Version, tables)
		failed := false
		for _, tp := range p.order {
			if !tp.ok() {
				continue
			}
			st := planned[tp.Name]
			tp.Warnings = tp.Warnings[:tp.nbase]
			tp.Fields = []*FieldPlan{}
			tp.Indexes = []*IndexPlan{}
			var errors, warnings []Issue
			if tp.IsPlugin && tp.PluginOf != "" {
				if parent, ok := pcat.Table(tp.PluginOf); !ok || parent.IsPlugin {
					errors = append(errors, issue(schema.ErrInvalidPluginOf.Code, tp.pos(), tp.Name, "", "bdus:is_plugin names %s, which is not a table that can have plugin tables", tp.PluginOf))
				}
			}
			for _, c := range tp.src.Columns {
				if isSystemColumn(c.Name) {
					continue
				}
				def, errs, warns := fieldDef(s, tp, c)
				errors, warnings = append(errors, errs...), append(warnings, warns...)
				if len(errs) > 0 {
					continue
				}
				f, err := schema.CheckFieldDef(pcat, st, def)
				if err != nil {
					errors = append(errors, issueOf(err, c.Pos, tp.Name, c.Name))
					continue
				}
				st.Fields = append(st.Fields, f)
				tp.Fields = append(tp.Fields, &FieldPlan{Name: f.Name, Label: f.Label, Type: f.Type, DBType: f.DBType, NotNull: f.Required,
					Unique: f.Unique, VocabularySet: f.VocabularySet, IDFromTb: f.IDFromTb, GetValuesFromTb: f.GetValuesFromTb,
					Line: c.Line, Column: c.Column, def: def})
			}
			errors = append(errors, tp.checkSettings(st)...)
			warnings = append(warnings, tp.planIndexes(st)...)
			if len(errors) > 0 {
				tp.Errors, failed = errors, true
				continue
			}
			tp.Warnings = append(tp.Warnings, warnings...)
		}
		if !failed {
			return
		}
	}
}

// checkSettings checks the fields the table's settings name.
func (tp *TablePlan) checkSettings(st *schema.Table) []Issue {
	var out []Issue
	has := func(name string) bool {
		_, ok := st.Field(name)
		return ok || name == schema.ColID
	}
	bad := func(setting, name string) {
		out = append(out, issue(schema.ErrInvalidTableConfig.Code, tp.pos(), tp.Name, name, "bdus:%s names %s, which is not a field of the table", setting, name))
	}
	for _, name := range tp.Preview {
		if !has(name) {
			bad("preview", name)
		}
	}
	if !has(tp.Order) {
		bad("order", tp.Order)
	}
	if !has(tp.IDField) {
		bad("id_field", tp.IDField)
	}
	if tp.rsField != "" && !has(tp.rsField) {
		bad("rs", tp.rsField)
	}
	if tp.IsPlugin && (tp.RS || tp.Geodata || tp.RefMgr) {
		out = append(out, issue(schema.ErrInvalidTableConfig.Code, tp.pos(), tp.Name, "", "a plugin table takes no rs, geodata or refmgr: they belong to its parent"))
	}
	return out
}

// planIndexes keeps the indexes the app can make: on fields, by name.
func (tp *TablePlan) planIndexes(st *schema.Table) []Issue {
	var out []Issue
	for _, ix := range tp.src.Indexes {
		if ix.PK {
			continue // the id, checked above
		}
		ip := &IndexPlan{Name: ix.Name, Unique: ix.Unique, Line: ix.Line, Column: ix.Column}
		skip := ""
		for _, c := range ix.Columns {
			switch {
			case c.Expr:
				skip = "an index on an expression"
			case !func() bool { _, ok := st.Field(c.Name); return ok }():
				skip = fmt.Sprintf("%s is not a field of the table", c.Name)
			}
			ip.Columns = append(ip.Columns, c.Name)
		}
		if ix.Name != "" && (!store.ValidIdent(ix.Name) || strings.HasPrefix(ix.Name, store.SystemTablePrefix)) {
			skip = "index names are lower-case letters, digits and _"
		}
		if skip != "" {
			out = append(out, issue("index_ignored", ix.Pos, tp.Name, "", "index left out: %s", skip))
			continue
		}
		tp.Indexes = append(tp.Indexes, ip)
	}
	return out
}

// planRelations reads the Ref lines, and the refs of columns that are not
// lookups, as relations from a column to the id or a field of a table.
func (p *Plan) planRelations(cat *schema.Catalog, s *dbml.Schema) {
	byName := map[string]*TablePlan{}
	for _, t := range p.Tables {
		byName[t.Name] = t
	}
	add := func(at dbml.Pos, from, to dbml.Endpoint, rel, onDelete, onUpdate string) {
		if rel == "<" {
			from, to = to, from
		}
		rp := &RelationPlan{FromTb: from.Table, FromCol: from.Columns[0], ToTb: to.Table, ToCol: to.Columns[0],
			OnDelete: "RESTRICT", OnUpdate: "RESTRICT", Errors: []Issue{}, Line: at.Line, Column: at.Column}
		fail := func(format string, args ...any) {
			rp.Errors = append(rp.Errors, issue(schema.ErrInvalidRelation.Code, at, rp.FromTb, rp.FromCol, format, args...))
		}
		switch {
		case rel == "<>":
			p.Warnings = append(p.Warnings, issue("relation_ignored", at, from.Table, "", "a many-to-many relation (<>) needs a table of its own; it is left out"))
			return
		case len(from.Columns) != 1:
			p.Warnings = append(p.Warnings, issue("relation_ignored", at, from.Table, "", "a relation of several columns is left out: relations join one column to another"))
			return
		}
		for _, a := range []struct {
			in  string
			out *string
		}{{onDelete, &rp.OnDelete}, {onUpdate, &rp.OnUpdate}} {
			if a.in == "" {
				continue
			}
			sql, ok := schema.NormalizeAction(a.in)
			if !ok {
				fail("%s is not an action relations take (%s)", a.in, strings.Join(schema.RelationActions, ", "))
				continue
			}
			*a.out = sql
		}
		for _, end := range []struct{ tb, col, side string }{{rp.FromTb, rp.FromCol, "from"}, {rp.ToTb, rp.ToCol, "to"}} {
			if tp, ok := byName[end.tb]; ok && !tp.ok() {
				if _, exists := cat.Table(end.tb); !exists {
					fail("table %s of the text is not created", end.tb)
					continue
				}
			}
			if !columnExists(cat, byName, end.tb, end.col) {
				fail("%s.%s is neither a table's id nor one of its fields", end.tb, end.col)
			}
		}
		p.Relations = append(p.Relations, rp)
	}
	for _, t := range s.Tables {
		for _, c := range t.Columns {
			if c.Ref == nil || isSystemColumn(c.Name) || parseNote(c.Note).on("id_from_tb") {
				continue
			}
			add(c.Ref.Pos, dbml.Endpoint{Table: t.Name, Columns: []string{c.Name}}, c.Ref.To, c.Ref.Rel, "", "")
		}
	}
	for _, r := range s.Refs {
		if len(r.From.Columns) == 1 && (isSystemColumn(r.From.Columns[0]) && r.From.Columns[0] != schema.ColID) {
			continue // id_link and creator: implied by the table
		}
		add(r.Pos, r.From, r.To, r.Rel, r.OnDelete, r.OnUpdate)
	}
}

func columnExists(cat *schema.Catalog, planned map[string]*TablePlan, table, col string) bool {
	if tp, ok := planned[table]; ok && tp.ok() {
		if col == schema.ColID {
			return true
		}
		for _, f := range tp.Fields {
			if f.Name == col {
				return true
			}
		}
		return false
	}
	t, ok := cat.Table(table)
	if !ok {
		return false
	}
	if col == schema.ColID {
		return true
	}
	_, ok = t.Field(col)
	return ok
}
