package schema

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// CheckItem is one line of the configuration check (GET
// /config/validation), in the shape BraDypUS's Validate report has and its
// ConfigValidation screen reads: Status is head (a section title),
// success, info, warning or danger; Suggest labels the fix button and Fix
// is what the screen posts back to /config/validation/fix as {action, tb,
// col}. Check names the kind of problem (or of passed check) for clients
// that branch on it; BraDypUS clients ignore it.
type CheckItem struct {
	Status  string   `json:"status"`
	Text    string   `json:"text"`
	Suggest string   `json:"suggest,omitempty"`
	Fix     []string `json:"fix,omitempty"`
	Check   string   `json:"check,omitempty"`
}

// Report statuses (BraDypUS's Resp).
const (
	CheckHead    = "head"
	CheckSuccess = "success"
	CheckInfo    = "info"
	CheckWarning = "warning"
	CheckDanger  = "danger"
)

// Fix actions. create, delete are BraDypUS's; the others are Strata's.
const (
	FixCreate  = "create"  // create a configured table, or add a configured column, that is missing physically
	FixDelete  = "delete"  // drop a physical column the configuration does not know
	FixAdopt   = "adopt"   // add a physical column the configuration does not know to it, as a field
	FixUnlink  = "unlink"  // remove configuration references to tables, fields or vocabularies that do not exist
	FixReindex = "reindex" // build the indexes and search indexes the configuration asks for and the table lacks
)

// FixActions lists the actions FixConfiguration takes.
var FixActions = []string{FixCreate, FixDelete, FixAdopt, FixUnlink, FixReindex}

// checker holds what one report reads once.
type checker struct {
	db     *store.DB
	st     *state
	vocabs map[string]bool
	items  map[string]map[string]bool // vocabulary items, read once (check_vocab.go)
	out    []CheckItem
}

func (c *checker) add(status, check, text string) {
	c.out = append(c.out, CheckItem{Status: status, Text: text, Check: check})
}

func (c *checker) fix(status, check, text, suggest string, fix ...string) {
	c.out = append(c.out, CheckItem{Status: status, Text: text, Check: check, Suggest: suggest, Fix: fix})
}

// CheckConfiguration compares the catalog with the database and with
// itself, as BraDypUS's validation report does: configured tables and
// columns missing physically, physical columns the configuration does not
// know (system columns never count), column types, references to tables,
// fields and vocabularies that do not exist (lookups, value sources,
// relations, plugin parents, table settings), and what Strata keeps
// besides (field and user indexes, relation constraints, search indexes).
// Every problem a fix can mend carries it (FixConfiguration).
func CheckConfiguration(ctx context.Context, db *store.DB) ([]CheckItem, error) {
	st, err := loadState(ctx, db)
	if err != nil {
		return nil, err
	}
	vocabs, err := vocabularySet(ctx, db)
	if err != nil {
		return nil, err
	}
	c := &checker{db: db, st: st, vocabs: vocabs}

	c.add(CheckHead, "", "Main system information")
	c.add(CheckInfo, "engine", "App database engine: "+engineName(db.Engine))
	c.add(CheckInfo, "catalog", fmt.Sprintf("Configuration: %d tables, catalog version %d", len(st.cat.Tables), st.cat.Version))

	c.add(CheckHead, "", "Configuration and database tables alignment")
	present := map[string]bool{}
	for _, t := range st.cat.Tables {
		ok, err := physicalTableExists(ctx, db, t.Name)
		if err != nil {
			return nil, err
		}
		present[t.Name] = ok
		if ok {
			c.add(CheckSuccess, "table_exists", "Configuration table "+t.Name+" exists in database")
		} else {
			c.fix(CheckDanger, "table_missing", "Configuration table "+t.Name+" does not exist in database",
				"Create table "+t.Name, FixCreate, t.Name)
		}
	}
	tables, err := physicalTables(ctx, db)
	if err != nil {
		return nil, err
	}
	for _, name := range tables {
		if _, ok := st.cat.Table(name); !ok {
			// No fix: a table of unknown rows is neither adopted nor dropped
			// from a button.
			c.add(CheckWarning, "table_extra", "Database table "+name+" is not in the configuration")
		}
	}

	for _, t := range st.cat.Tables {
		if present[t.Name] {
			if err := c.columns(ctx, t); err != nil {
				return nil, err
			}
		}
	}

	c.add(CheckHead, "", "Configuration references")
	broken := func() int {
		n := 0
		for _, it := range c.out {
			if it.Status == CheckWarning || it.Status == CheckDanger {
				n++
			}
		}
		return n
	}
	before := broken()
	for _, t := range st.cat.Tables {
		c.tableRefs(t)
		for _, f := range t.Fields {
			c.fieldRefs(t, f)
		}
	}
	for _, r := range st.relations {
		if p := brokenRelation(st.cat, r); p != "" {
			c.fix(CheckDanger, "relation_broken", fmt.Sprintf("Relation %s.%s → %s.%s: %s", r.FromTb, r.FromCol, r.ToTb, r.ToCol, p),
				"Remove the relation", FixUnlink, r.FromTb, r.FromCol)
		}
	}
	if broken() == before {
		c.add(CheckSuccess, "references", "Every lookup, value list, relation, plugin parent and table setting names an existing table, field or vocabulary")
	}
	if err := c.vocabularyValues(ctx, present); err != nil {
		return nil, err
	}
	return c.out, nil
}

func engineName(e store.Engine) string {
	if e == store.Postgres {
		return "postgres"
	}
	return "sqlite"
}

// columns reports a present table's columns both ways, its indexes and
// constraints, from ValidateTable's comparison.
func (c *checker) columns(ctx context.Context, t *Table) error {
	diffs, err := validateTable(ctx, c.db, c.st, t)
	if err != nil {
		return err
	}
	cols, err := physicalColumns(ctx, c.db, t.Name)
	if err != nil {
		return err
	}
	by := map[string][]Difference{}
	for _, d := range diffs {
		by[d.Kind+"/"+d.Column] = append(by[d.Kind+"/"+d.Column], d)
	}
	c.add(CheckHead, "", "Checking "+t.Name+" from configuration to database")
	for _, name := range append(t.SystemColumns(), fieldNames(t)...) {
		q := t.Name + "." + name
		sys := t.IsSystemColumn(name)
		switch {
		case len(by["column_missing/"+name]) > 0 && sys:
			// A system column is not rebuilt in place: the table would
			// need to be recreated with its rows.
			c.add(CheckDanger, "column_missing", "System column "+q+" is not available in database table")
		case len(by["column_missing/"+name]) > 0:
			c.fix(CheckDanger, "column_missing", "Configuration field "+q+" is not available in database table",
				"Add column "+q+" to the database", FixCreate, t.Name, name)
		case len(by["type_mismatch/"+name]) > 0:
			d := by["type_mismatch/"+name][0]
			c.add(CheckWarning, "type_mismatch", fmt.Sprintf("Column %s is %s in the database, the configuration expects %s", q, d.Actual, d.Expected))
		case sys:
			c.add(CheckSuccess, "column_exists", "System column "+q+" is available in database table")
		default:
			c.add(CheckSuccess, "column_exists", "Configuration field "+q+" is available in database table")
		}
	}
	c.add(CheckHead, "", "Checking "+t.Name+" from database to configuration")
	for _, col := range cols {
		q := t.Name + "." + col.Name
		switch {
		case t.IsSystemColumn(col.Name):
			c.add(CheckSuccess, "column_known", "Database column "+q+" is a system column")
		case len(by["column_extra/"+col.Name]) == 0:
			c.add(CheckSuccess, "column_known", "Database column "+q+" is available in the configuration")
		case CheckFieldName(col.Name) != nil:
			// Never quoted into SQL: a name outside the identifier rule
			// is reported and left to the database's own tools.
			c.add(CheckDanger, "column_extra", "Database column "+q+" is not in the configuration, and its name is not a valid field name")
		default:
			c.fix(CheckDanger, "column_extra", "Database column "+q+" is not in the configuration",
				"Add "+q+" to the configuration", FixAdopt, t.Name, col.Name)
			c.fix(CheckInfo, "column_extra", "Or drop the column "+q+" and its values from the database",
				"Drop "+q+" from the database", FixDelete, t.Name, col.Name)
		}
	}
	for _, d := range diffs {
		if d.Kind == "constraint_missing" {
			c.add(CheckWarning, "constraint_missing", "Relation constraint "+d.Constraint+" on "+t.Name+"."+d.Column+
				" is missing in the database (POST /config/apply-constraints adds it when the rows allow)")
		}
	}
	set := make(map[string]PhysicalColumn, len(cols))
	for _, col := range cols {
		set[col.Name] = col
	}
	todo := reindexable(c.st, t, set, diffs)
	for _, d := range todo {
		switch {
		case d.Kind == "index_missing" && d.Column != "":
			c.add(CheckWarning, "index_missing", "Index of "+t.Name+"."+d.Column+" is missing in the database")
		case d.Kind == "index_missing":
			c.add(CheckWarning, "index_missing", "Index "+d.Index+" of "+t.Name+" is missing in the database")
		case d.Kind == "search_index_missing":
			c.add(CheckWarning, "search_index_missing", "Search index of "+t.Name+"."+d.Column+" is missing in the database")
		default:
			c.add(CheckWarning, "search_index_extra", "Search index "+d.Index+" of "+t.Name+" is no longer asked for by the configuration")
		}
	}
	if len(todo) > 0 {
		c.fix(CheckWarning, "indexes", "Indexes of "+t.Name+" differ from what the configuration asks for",
			"Rebuild the indexes of "+t.Name, FixReindex, t.Name)
	}
	return nil
}

func fieldNames(t *Table) []string {
	out := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		out[i] = f.Name
	}
	return out
}

// fieldRefs reports the broken value sources of f.
func (c *checker) fieldRefs(t *Table, f *Field) {
	for _, p := range brokenFieldRefs(c.st.cat, c.vocabs, f) {
		status := CheckDanger
		if p.kind == "vocabulary_set" {
			status = CheckWarning // an empty vocabulary is not stored: it may be filled later
		}
		c.fix(status, p.kind+"_broken", fmt.Sprintf("Field %s.%s: %s", t.Name, f.Name, p.text),
			"Remove "+p.kind+" from "+t.Name+"."+f.Name, FixUnlink, t.Name, f.Name)
	}
}

// tableRefs reports the broken settings of t: plugin parent, id_field,
// preview, order, rs, backlinks, chrono_density_path.
func (c *checker) tableRefs(t *Table) {
	if t.IsPlugin && t.PluginOf == "" {
		c.add(CheckInfo, "plugin_detached", "Plugin table "+t.Name+" is not attached to a parent table (PUT /config/table/"+t.Name+" with plugin_of attaches it)")
	}
	for _, p := range brokenTableRefs(c.st.cat, t) {
		status := CheckWarning
		if p.kind == "plugin_of" {
			status = CheckDanger
		}
		c.fix(status, p.kind+"_broken", "Table "+t.Name+": "+p.text, "Remove the broken settings of "+t.Name, FixUnlink, t.Name)
	}
}

// problem is one broken reference.
type problem struct{ kind, text string }

func brokenFieldRefs(cat *Catalog, vocabs map[string]bool, f *Field) []problem {
	var out []problem
	if f.IDFromTb != "" {
		if ref, ok := cat.Table(f.IDFromTb); !ok {
			out = append(out, problem{"id_from_tb", "id_from_tb names table " + f.IDFromTb + ", which does not exist"})
		} else if ref.IsPlugin {
			out = append(out, problem{"id_from_tb", "id_from_tb names plugin table " + f.IDFromTb})
		}
	}
	if f.GetValuesFromTb != "" {
		tb, fld := valuesSource(f.GetValuesFromTb)
		if ref, ok := cat.Table(tb); !ok {
			out = append(out, problem{"get_values_from_tb", "get_values_from_tb names table " + tb + ", which does not exist"})
		} else if _, ok := ref.Field(fld); !ok {
			out = append(out, problem{"get_values_from_tb", "get_values_from_tb names field " + tb + "." + fld + ", which does not exist"})
		}
	}
	if f.VocabularySet != "" && !vocabs[f.VocabularySet] {
		out = append(out, problem{"vocabulary_set", "vocabulary_set names vocabulary " + f.VocabularySet + ", which has no values"})
	}
	return out
}

func brokenTableRefs(cat *Catalog, t *Table) []problem {
	var out []problem
	isCol := func(name string) bool { _, ok := t.Field(name); return ok || t.IsSystemColumn(name) }
	if t.IsPlugin && t.PluginOf != "" {
		if p, ok := cat.Table(t.PluginOf); !ok || p.IsPlugin {
			out = append(out, problem{"plugin_of", "parent table " + t.PluginOf + " does not exist (or is itself a plugin table)"})
		}
	}
	if t.IDField != "" && !isCol(t.IDField) {
		out = append(out, problem{"id_field", "id_field names field " + t.IDField + ", which does not exist"})
	}
	for _, p := range t.Preview {
		if !isCol(p) {
			out = append(out, problem{"preview", "preview lists field " + p + ", which does not exist"})
		}
	}
	if t.SortField != "" && !isCol(t.SortField) {
		out = append(out, problem{"order", "order names field " + t.SortField + ", which does not exist"})
	}
	if t.RSField != "" && !isCol(t.RSField) {
		out = append(out, problem{"rs", "rs names field " + t.RSField + ", which does not exist"})
	}
	for _, s := range t.Backlinks {
		if !backlinkValid(cat, s) {
			out = append(out, problem{"backlinks", "backlink " + s + " names a table or field that does not exist"})
		}
	}
	for _, s := range t.ChronoDensityPath {
		if _, ok := cat.Table(s); !ok {
			out = append(out, problem{"chrono_density_path", "chrono_density_path names table " + s + ", which does not exist"})
		}
	}
	return out
}

func backlinkValid(cat *Catalog, s string) bool {
	b, ok := ParseBacklink(s)
	if !ok {
		return false
	}
	if _, ok := cat.Table(b.RefTb); !ok {
		return false
	}
	via, ok := cat.Table(b.ViaTb)
	if !ok {
		return false
	}
	_, ok = via.Field(b.FkCol)
	return ok
}

// brokenRelation says what a recorded relation names that does not exist
// ("" when it is whole).
func brokenRelation(cat *Catalog, r *Relation) string {
	has := func(tb, col string) string {
		t, ok := cat.Table(tb)
		if !ok {
			return "table " + tb + " does not exist"
		}
		if _, ok := t.Field(col); !ok && !t.IsSystemColumn(col) {
			return "field " + tb + "." + col + " does not exist"
		}
		return ""
	}
	if p := has(r.FromTb, r.FromCol); p != "" {
		return p
	}
	return has(r.ToTb, r.ToCol)
}

// vocabularySet is the set of vocabularies that have values.
func vocabularySet(ctx context.Context, db *store.DB) (map[string]bool, error) {
	names, err := vocabularyNames(ctx, db)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n.(string)] = true
	}
	return out, nil
}

// physicalTables lists the tables of the application's database that are
// not system tables (sys_*, which include plugins' system tables, and the
// engines' own).
func physicalTables(ctx context.Context, db *store.DB) ([]string, error) {
	var q string
	var args []any
	if db.Engine == store.Postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE' ORDER BY table_name`
		args = []any{db.Schema()}
	} else {
		q = `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
	}
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		if strings.HasPrefix(n, store.SystemTablePrefix) || strings.HasPrefix(n, "sqlite_") {
			continue
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// ErrInvalidFixAction: the action is not one FixConfiguration takes.
// ErrNothingToFix: the target has no problem the action mends (it was
// fixed already, or never broken). ErrColumnTypeUnknown: a column of a type
// no field stores cannot be adopted.
var (
	ErrInvalidFixAction  = errs.New(errs.Invalid, "invalid_action", "action is one of create, delete, adopt, unlink, reindex")
	ErrNothingToFix      = errs.New(errs.Conflict, "nothing_to_fix", "the configuration check reports no problem this action fixes for this table or column")
	ErrColumnTypeUnknown = errs.New(errs.Conflict, "col_type_not_found", "the column's type is not one a field stores (text, int, float, date, bool): convert it first")
)

// FixResult is what a fix did: Code is BraDypUS's success code for it.
type FixResult struct {
	Code    string   `json:"code"`
	Removed []string `json:"removed,omitempty"` // unlink: the references removed
}

// needsColumn reports whether action fixes nothing without a column.
func needsColumn(action string) bool {
	return action == FixDelete || action == FixAdopt
}

// FixConfiguration mends one problem CheckConfiguration reports, in one
// transaction with the catalog locked; the problem is looked for again
// inside it, and a target without it is nothing_to_fix. Names come from
// the request only to be matched against the catalog and the engine's
// own description of the tables: what reaches SQL is the matched name.
func FixConfiguration(ctx context.Context, db *store.DB, action, table, column string, now time.Time) (*FixResult, error) {
	if !slices.Contains(FixActions, action) {
		return nil, ErrInvalidFixAction.With("allowed", FixActions)
	}
	if table == "" {
		return nil, ErrParameterMissing.With("parameter", "tb")
	}
	if needsColumn(action) && column == "" {
		return nil, ErrParameterMissing.With("parameter", "col")
	}
	var out *FixResult
	err := change(ctx, db, func(tx *store.DB, st *state) error {
		var err error
		switch action {
		case FixCreate:
			out, err = fixCreate(ctx, tx, st, table, column)
		case FixDelete:
			out, err = fixDelete(ctx, tx, st, table, column)
		case FixAdopt:
			out, err = fixAdopt(ctx, tx, st, table, column, now)
		case FixUnlink:
			out, err = fixUnlink(ctx, tx, st, table, column, now)
		case FixReindex:
			out, err = fixReindex(ctx, tx, st, table)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
