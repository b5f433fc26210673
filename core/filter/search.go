package filter

import (
	"strings"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
)

// Search is the list's quick search (CONTRACT §8, search=<text>): an OR of
// _icontains over every field of t whose type is text-like
// (schema.FieldType.IsText) and that readable accepts (nil: every field).
// The caller ANDs it with the filter (All). Blank text gives nil; a table
// without such fields matches nothing. Lookup fields (they store ids) and
// fields stored as decimals or booleans are left out: their text says
// nothing a reader typed.
func Search(t *schema.Table, text string, readable func(f *schema.Field) bool) Node {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	var ors []Node
	for _, f := range t.Fields {
		if !searchable(f) || (readable != nil && !readable(f)) {
			continue
		}
		ors = append(ors, Cond{Field: f.Name, Op: "_icontains", Args: []string{text}})
	}
	switch len(ors) {
	case 0:
		return Cond{Field: schema.ColID, Op: "_in", Args: []string{}}
	case 1:
		return ors[0]
	}
	return Or{Nodes: ors}
}

func searchable(f *schema.Field) bool {
	if !f.Type.IsText() || f.IDFromTb != "" {
		return false
	}
	return f.DBType != schema.DBFloat && f.DBType != schema.DBBool
}

// ParseSubset reads a stored row subset (CONTRACT §4): a filter object, or
// a JSON string holding an SQL WHERE clause (ParseWhere; sqlForm is then
// true: only a super_admin may set those). It is validated against the
// catalog for table; every failure is 400 invalid_subset with a detail.
// null or empty is no subset (nil).
func ParseSubset(cat *schema.Catalog, table string, raw []byte) (n Node, sqlForm bool, err error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, false, asSubsetError(err)
	}
	switch x := v.(type) {
	case nil:
		return nil, false, nil
	case string:
		sqlForm = true
		n, err = ParseWhere(x)
	case map[string]any:
		n, err = FromMap(x)
	default:
		return nil, false, subsetf("a subset is a filter object or an SQL WHERE clause string")
	}
	if err == nil {
		err = Validate(cat, table, n, Options{})
	}
	if err != nil {
		return nil, sqlForm, asSubsetError(err)
	}
	return n, sqlForm, nil
}

// asSubsetError restates a filter error as invalid_subset, keeping its
// detail and field.
func asSubsetError(err error) error {
	e, ok := errs.As(err)
	if !ok || e.Code == ErrInvalidSubset.Code {
		return err
	}
	out := ErrInvalidSubset
	for _, k := range []string{"detail", "field"} {
		if v, ok := e.Extra[k]; ok {
			out = out.With(k, v)
		}
	}
	if _, ok := out.Extra["detail"]; !ok {
		out = out.With("detail", e.Message)
	}
	return out
}
