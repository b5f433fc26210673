package records

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Caps of the search helpers (CONTRACT §5). Larger asks clamp, as per_page
// does.
const (
	MaxSearchValues   = 200  // GET /search/{tb}/values
	MaxFieldOptions   = 1000 // GET /record/{tb}/field-options
	MaxLinkCandidates = 50   // GET /record/{tb}/link-candidates
)

// Where a select field's options come from: the "source" of field-options,
// the type of schema.OptionsSource.
const (
	SourceVocabulary = "vocabulary"
	SourceDB         = "db"
	SourceIDFromTb   = "id_from_tb"
)

var errSearchParamMissing = errs.New(errs.Invalid, "parameter_missing", "a required parameter is missing")

// SearchField is one field the advanced search offers: value is
// "table:field", for the table's own fields and its plugin tables' alike.
type SearchField struct {
	Value    string           `json:"value"`
	Label    string           `json:"label"`
	Type     schema.FieldType `json:"type"`
	RefTb    string           `json:"ref_tb,omitempty"`
	RefField string           `json:"ref_field,omitempty"`
}

// SearchFields lists every field of the scope's table, then those of its
// plugin tables, in display order. A lookup declares the table it points at
// and that table's id_field (id when none), which a nested filter on it is
// written against (SPEC §4.4).
func SearchFields(s *Scope) []SearchField {
	out := []SearchField{}
	tables := append([]*schema.Table{s.Table}, s.Catalog.PluginTables(s.Table.Name)...)
	for _, t := range tables {
		for _, f := range t.Fields {
			sf := SearchField{Value: t.Name + ":" + f.Name, Label: f.Label, Type: f.Type}
			if f.IDFromTb != "" {
				sf.RefTb, sf.RefField = f.IDFromTb, schema.ColID
				if ref, ok := s.Catalog.Table(f.IDFromTb); ok {
					sf.RefField = IDFieldOf(ref)
				}
			}
			out = append(out, sf)
		}
	}
	return out
}

// searchField resolves a field named by the search helpers: "field" or
// "table:field" for the scope's table, "plugin_table:field" for one of its
// plugin tables. Anything else is invalid_field.
func (s *Scope) searchField(name string) (*schema.Table, *schema.Field, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, nil, errSearchParamMissing.With("parameter", "fld")
	}
	t := s.Table
	fld := name
	if tb, f, ok := strings.Cut(name, ":"); ok {
		fld = f
		switch pt, found := s.Catalog.Table(tb); {
		case tb == s.Table.Name:
		case found && pt.IsPlugin && pt.PluginOf == s.Table.Name:
			t = pt
		default:
			return nil, nil, ErrInvalidField.With("field", name).
				With("detail", "a field of "+s.Table.Name+" or of one of its plugin tables")
		}
	}
	f, ok := t.Field(fld)
	if !ok {
		return nil, nil, ErrInvalidField.With("field", name)
	}
	return t, f, nil
}

// clampLimit applies a cap: 0 (not given) is the cap itself.
func clampLimit(n, limit int) int {
	if n <= 0 || n > limit {
		return limit
	}
	return n
}

// likeEscaper makes %, _ and \ of an operand match themselves in a LIKE
// with ESCAPE '\', as the filter language does (CONTRACT §5).
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// containsCond is a case-insensitive "contains text" on column col of
// storage type typ: text is compared folded (store.Fold on both sides, so
// both engines fold alike); numbers, dates and booleans as the text of
// their JSON form, which has no case to fold. The operand is bound.
func containsCond(db *store.DB, col string, typ schema.DBType, text string) Cond {
	expr := col
	switch typ {
	case schema.DBText:
		expr = db.FoldSQL(col)
	case schema.DBInt, schema.DBFloat:
		expr = "CAST(" + col + " AS TEXT)"
	case schema.DBBool:
		// SQLite stores 0/1; CASE reads both that and PostgreSQL's boolean.
		expr = "CASE WHEN " + col + " THEN 'true' ELSE 'false' END"
	case schema.DBDate:
		if db.Engine == store.Postgres {
			expr = "to_char(" + col + ", 'YYYY-MM-DD')" // CAST would follow DateStyle
		}
	}
	return Cond{SQL: expr + ` LIKE ? ESCAPE '\'`, Args: []any{"%" + likeEscaper.Replace(store.Fold(text)) + "%"}}
}

// joinConds joins conditions with AND (nil ones are skipped).
func joinConds(conds ...*Cond) *Cond {
	var parts []string
	var args []any
	for _, c := range conds {
		if c != nil && c.SQL != "" {
			parts = append(parts, "("+c.SQL+")")
			args = append(args, c.Args...)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return &Cond{SQL: strings.Join(parts, " AND "), Args: args}
}

// rowsOf is the condition that keeps the rows of t the caller may see: the
// scope's restriction on its own table; for a plugin table, the rows whose
// parent the restriction keeps.
func (s *Scope) rowsOf(t *schema.Table) *Cond {
	if t == s.Table {
		return s.Restrict
	}
	where, args := s.where(nil)
	parent := s.DB.Qualify(s.Table.Name)
	return &Cond{SQL: s.DB.Qualify(t.Name) + "." + s.DB.Engine.Quote(schema.ColIDLink) +
		` IN (SELECT ` + parent + `."id" FROM ` + parent + ` WHERE ` + where + `)`, Args: args}
}

// distinct returns the distinct values of field f of t (the scope's table
// or one of its plugin tables) among the rows the caller may see, in the
// list's order (numbers numerically, text in byte order), at most limit.
// NULL and the empty string are not values; q keeps values whose text
// contains it, ignoring case.
func (s *Scope) distinct(ctx context.Context, t *schema.Table, f *schema.Field, q string, limit int) ([]any, error) {
	col := s.DB.Qualify(t.Name) + "." + s.DB.Engine.Quote(f.Name)
	present := &Cond{SQL: col + " IS NOT NULL"}
	if f.DBType == schema.DBText {
		present.SQL += " AND " + col + " <> ''"
	}
	var match *Cond
	if q = strings.TrimSpace(q); q != "" {
		c := containsCond(s.DB, col, f.DBType, q)
		match = &c
	}
	where := joinConds(present, s.rowsOf(t), match)
	key := col
	if f.DBType == schema.DBText && s.DB.Engine == store.Postgres {
		key += ` COLLATE "C"`
	}
	// GROUP BY rather than DISTINCT: PostgreSQL refuses an ORDER BY
	// expression (the collation) that is not in a DISTINCT select list.
	query := `SELECT ` + col + ` FROM ` + s.DB.Qualify(t.Name) + ` WHERE ` + where.SQL +
		` GROUP BY ` + col + ` ORDER BY ` + key + ` LIMIT ?`
	rows, err := s.DB.Query(ctx, query, append(where.Args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("values of %s.%s: %w", t.Name, f.Name, err)
	}
	defer rows.Close()
	out := []any{}
	for rows.Next() {
		var v any
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, fromDB(f.DBType, v))
	}
	return out, rows.Err()
}

// ValuesQuery asks for the distinct values of a field.
type ValuesQuery struct {
	Field string // "field", "table:field" or "plugin_table:field"
	Q     string // keep values containing this text, ignoring case
	Limit int    // at most MaxSearchValues (0: the cap)
}

// Values lists the distinct values of a field of the scope's table or of
// one of its plugin tables, within the caller's rows (GET
// /search/{tb}/values).
func Values(ctx context.Context, s *Scope, q ValuesQuery) ([]any, error) {
	t, f, err := s.searchField(q.Field)
	if err != nil {
		return nil, err
	}
	return s.distinct(ctx, t, f, q.Q, clampLimit(q.Limit, MaxSearchValues))
}

// IDLabel is a record named by its label (id_field value, or id).
type IDLabel struct {
	ID    int64  `json:"id"`
	Label string `json:"label"`
}

// labelled returns records of the scope's table the caller may see whose
// label contains q (ignoring case; blank q: any), ordered by label then
// id, at most limit.
func (s *Scope) labelled(ctx context.Context, q string, limit int) ([]IDLabel, error) {
	lc := labelColumn(s.Table)
	typ, _ := dbTypeOf(s.Table, lc)
	var match *Cond
	if q = strings.TrimSpace(q); q != "" {
		c := containsCond(s.DB, s.column(lc), typ, q)
		match = &c
	}
	order, err := s.orderBy(lc, "asc")
	if err != nil {
		return nil, err
	}
	where, args := s.where(match)
	query := `SELECT ` + s.column(schema.ColID) + `, ` + s.column(lc) + ` FROM ` + s.DB.Qualify(s.Table.Name) +
		` WHERE ` + where + ` ORDER BY ` + order + ` LIMIT ?`
	rows, err := s.DB.Query(ctx, query, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("labels of %s: %w", s.Table.Name, err)
	}
	defer rows.Close()
	out := []IDLabel{}
	for rows.Next() {
		var id int64
		var v any
		if err := rows.Scan(&id, &v); err != nil {
			return nil, err
		}
		out = append(out, IDLabel{ID: id, Label: labelText(fromDB(typ, v))})
	}
	return out, rows.Err()
}

// LinkCandidates lists records of the scope's table whose label contains
// q, for picking the other end of a manual link (GET
// /record/{tb}/link-candidates).
func LinkCandidates(ctx context.Context, s *Scope, q string, limit int) ([]IDLabel, error) {
	return s.labelled(ctx, q, clampLimit(limit, MaxLinkCandidates))
}

// Option is one choice of a select field.
type Option struct {
	Value any    `json:"value"`
	Label string `json:"label"`
}

// FieldOptionsQuery asks for the choices of a select field.
type FieldOptionsQuery struct {
	Field string // "field", "table:field" or "plugin_table:field"
	Q     string // keep options whose label contains this text, ignoring case
	Limit int    // at most MaxFieldOptions (0: the cap)
}

// FieldOptions lists the choices of a select field of the scope's table (or
// of one of its plugin tables), from the field's source
// (schema.Field.OptionsSource): the records of id_from_tb's table (value
// id, label its id_field), the distinct values of get_values_from_tb's
// "table:field", or the items of vocabulary_set in their order. A source
// table is read as the caller: scopeOf gives the caller's scope there
// (level and row restriction), and the caller must be allowed to read it.
func FieldOptions(ctx context.Context, s *Scope, q FieldOptionsQuery, scopeOf func(table string) (*Scope, error)) (source string, options []Option, err error) {
	_, f, err := s.searchField(q.Field)
	if err != nil {
		return "", nil, err
	}
	src := f.OptionsSource()
	if src == nil {
		return "", nil, ErrInvalidField.With("field", q.Field).
			With("detail", "not a select field with a value list (vocabulary_set, get_values_from_tb or id_from_tb)")
	}
	limit := clampLimit(q.Limit, MaxFieldOptions)
	options = []Option{}
	switch src.Type {
	case SourceIDFromTb:
		ref, err := optionsScope(scopeOf, src.Ref, q.Field)
		if err != nil {
			return "", nil, err
		}
		recs, err := ref.labelled(ctx, q.Q, limit)
		if err != nil {
			return "", nil, err
		}
		for _, r := range recs {
			options = append(options, Option{Value: r.ID, Label: r.Label})
		}

	case SourceDB:
		tb, fld, _ := strings.Cut(src.Ref, ":")
		ref, err := optionsScope(scopeOf, tb, q.Field)
		if err != nil {
			return "", nil, err
		}
		rf, ok := ref.Table.Field(fld)
		if !ok {
			return "", nil, ErrInvalidField.With("field", q.Field).
				With("detail", "get_values_from_tb names "+src.Ref+", which is not a field")
		}
		vals, err := ref.distinct(ctx, ref.Table, rf, q.Q, limit)
		if err != nil {
			return "", nil, err
		}
		for _, v := range vals {
			options = append(options, Option{Value: v, Label: labelText(v)})
		}

	case SourceVocabulary:
		items, err := vocabularyItems(ctx, s.DB, src.Set, q.Q, limit)
		if err != nil {
			return "", nil, err
		}
		for _, it := range items {
			options = append(options, Option{Value: it, Label: it})
		}
	}
	return src.Type, options, nil
}

// vocabularyItems returns the items of a vocabulary set in their order,
// those containing q (ignoring case) when q is given. Vocabularies are
// application-wide: no row restriction applies. A set without items (or
// not defined yet) has none.
func vocabularyItems(ctx context.Context, db *store.DB, set, q string, limit int) ([]string, error) {
	where := &Cond{SQL: `"voc" = ?`, Args: []any{set}}
	if q = strings.TrimSpace(q); q != "" {
		c := containsCond(db, `"value"`, schema.DBText, q)
		where = joinConds(where, &c)
	}
	rows, err := db.Query(ctx, `SELECT "value" FROM `+db.Sys("vocabularies")+` WHERE `+where.SQL+
		` ORDER BY "sort", "id" LIMIT ?`, append(where.Args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", set, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// optionsScope is the caller's scope on the table a field takes its options
// from; the caller must be allowed to read it.
func optionsScope(scopeOf func(string) (*Scope, error), table, field string) (*Scope, error) {
	ref, err := scopeOf(table)
	if e, ok := errs.As(err); ok && e.Code == schema.ErrTableNotFound.Code {
		return nil, ErrInvalidField.With("field", field).With("detail", "the field's value list names the table "+table+", which does not exist")
	}
	if err != nil {
		return nil, err
	}
	if !auth.Read.Allows(ref.Level) {
		return nil, auth.ErrNotEnoughPrivilege.With("required", auth.Read.String()).With("table", table)
	}
	return ref, nil
}

// CheckUnique reports whether no record of the table other than excludeID
// has value in field, compared in the field's storage type, as the save's
// unique rule does: over the whole table, whatever the caller's row
// restriction (a save would clash with a hidden row just the same), and a
// blank value is never a duplicate.
func CheckUnique(ctx context.Context, s *Scope, field, value string, excludeID int64) (bool, error) {
	f, ok := s.Table.Field(strings.TrimSpace(field))
	if !ok {
		return false, schema.ErrFieldNotFound.With("field", field)
	}
	v, err := toDB(s.DB.Engine, f.DBType, value)
	if err != nil {
		return false, ErrInvalidParameter.With("parameter", "value").With("detail", err.Error())
	}
	if v == nil || v == "" {
		return true, nil
	}
	var n int
	err = s.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+s.DB.Qualify(s.Table.Name)+` WHERE `+s.column(f.Name)+` = ? AND `+
		s.column(schema.ColID)+` <> ?`, v, excludeID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("check unique %s.%s: %w", s.Table.Name, f.Name, err)
	}
	return n == 0, nil
}

// TableEntry is a table as the navigation lists it (GET /tables).
type TableEntry struct {
	Name       string `json:"name"`
	Label      string `json:"label"`
	RS         bool   `json:"rs"`
	Chronology bool   `json:"chronology"`
}

// ReadableTables lists the catalog's tables the actor may read, in display
// order: plugin tables are reached through their parent and left out, and
// level gives the caller's effective level per table (a per-table override
// decides for its table in either direction; the caller reads the
// overrides once, not once per table). Chronology says whether the
// chronology feature is active on the table.
func ReadableTables(cat *schema.Catalog, level func(table string) int) []TableEntry {
	out := []TableEntry{}
	for _, t := range cat.Tables {
		if t.IsPlugin || !auth.Read.Allows(level(t.Name)) {
			continue
		}
		out = append(out, TableEntry{Name: t.Name, Label: t.Label, RS: t.RS, Chronology: t.Active(schema.ChronologyFeature)})
	}
	return out
}
