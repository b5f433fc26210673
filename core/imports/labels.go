package imports

import (
	"context"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/records"
)

// labelResolver turns a lookup field's label (the referenced record's
// id_field value) into its id, within the caller's rows on that table,
// remembering what it found.
type labelResolver struct {
	scopeOf func(table string) (*records.Scope, error)
	scopes  map[string]*records.Scope
	found   map[string]map[string]int64 // table → label → id (0: none, -1: several)
}

func newLabelResolver(scopeOf func(string) (*records.Scope, error)) *labelResolver {
	return &labelResolver{scopeOf: scopeOf, scopes: map[string]*records.Scope{}, found: map[string]map[string]int64{}}
}

// resolveLabels replaces, in core, every lookup value that is text but no
// id by the id of the record it names; it answers the row's errors.
func resolveLabels(ctx context.Context, sc *records.Scope, core map[string]any, r *labelResolver, row int) []RowError {
	if r.scopeOf == nil {
		return nil
	}
	var out []RowError
	for name, v := range core {
		f, ok := sc.Table.Field(name)
		if !ok || f.IDFromTb == "" {
			continue
		}
		text, ok := v.(string)
		if !ok || strings.TrimSpace(text) == "" {
			continue
		}
		if _, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64); err == nil {
			continue // an id
		}
		id, err := r.lookup(ctx, f.IDFromTb, strings.TrimSpace(text))
		switch {
		case err != nil:
			out = append(out, RowError{Row: row, Field: name, Code: "lookup_failed", Message: "the label could not be looked up"})
		case id == 0:
			out = append(out, RowError{Row: row, Field: name, Code: "label_not_found", Message: "no record of " + f.IDFromTb + " you can choose is labelled " + strconv.Quote(text)})
		case id < 0:
			out = append(out, RowError{Row: row, Field: name, Code: "label_ambiguous", Message: "several records of " + f.IDFromTb + " are labelled " + strconv.Quote(text)})
		default:
			core[name] = id
		}
	}
	return out
}

func (r *labelResolver) lookup(ctx context.Context, table, label string) (int64, error) {
	if id, ok := r.found[table][label]; ok {
		return id, nil
	}
	sc, ok := r.scopes[table]
	if !ok {
		var err error
		if sc, err = r.scopeOf(table); err != nil {
			return 0, err
		}
		r.scopes[table] = sc
		r.found[table] = map[string]int64{}
	}
	col := records.IDFieldOf(sc.Table)
	if col == "id" { // the table names its records by id alone
		r.found[table][label] = 0
		return 0, nil
	}
	q := sc.DB.Qualify(sc.Table.Name)
	where, args := sc.Where(&records.Cond{SQL: q + "." + sc.DB.Engine.Quote(col) + " = ?", Args: []any{label}})
	rows, err := sc.DB.Query(ctx, `SELECT `+q+`."id" FROM `+q+` WHERE `+where+` LIMIT 2`, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return 0, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	id := int64(0)
	switch len(ids) {
	case 1:
		id = ids[0]
	case 2:
		id = -1
	}
	r.found[table][label] = id
	return id, nil
}
