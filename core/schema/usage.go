package schema

import (
	"slices"
	"strings"

	"github.com/strata-archaeo/strata/core/store"
)

// Usage is one catalog entry that refers to a table or a field; a refused
// delete lists them (used_by), a cascading one removes them.
type Usage struct {
	// Kind is lookup (a field's id_from_tb), values_from (a field's
	// get_values_from_tb), relation, plugin_table, backlink,
	// chrono_density_path, index or id_field.
	Kind     string `json:"kind"`
	Table    string `json:"table"`              // the table holding the reference
	Field    string `json:"field,omitempty"`    // the referring field (lookup, values_from)
	Relation int64  `json:"relation,omitempty"` // relation id
	Index    string `json:"index,omitempty"`    // index name
	Value    string `json:"value,omitempty"`    // the list entry (backlink)
}

// Usage kinds.
const (
	UseLookup      = "lookup"
	UseValuesFrom  = "values_from"
	UseRelation    = "relation"
	UsePluginTable = "plugin_table"
	UseBacklink    = "backlink"
	UseChronoPath  = "chrono_density_path"
	UseIndex       = "index"
	UseIDField     = "id_field"
)

// Backlink is a parsed "refTb:viaTb:fkCol" entry: records of RefTb are
// shown on a record of the owning table, reached through ViaTb.FkCol,
// which references the owning table.
type Backlink struct{ RefTb, ViaTb, FkCol string }

// ParseBacklink splits a backlink entry; ok is false unless it has three
// identifier parts.
func ParseBacklink(s string) (b Backlink, ok bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return b, false
	}
	for _, p := range parts {
		if !store.ValidIdent(p) {
			return b, false
		}
	}
	return Backlink{parts[0], parts[1], parts[2]}, true
}

func (b Backlink) String() string { return b.RefTb + ":" + b.ViaTb + ":" + b.FkCol }

// valuesSource splits a get_values_from_tb "tb:field".
func valuesSource(s string) (tb, field string) {
	tb, field, _ = strings.Cut(s, ":")
	return tb, field
}

// tableUsages lists the references to any table of gone from tables not in
// gone (references inside gone disappear with it). Plugin children of a
// table in gone are reported by the caller, which decides whether they go.
func tableUsages(st *state, gone []string) []Usage {
	in := func(name string) bool { return slices.Contains(gone, name) }
	var out []Usage
	for _, t := range st.cat.Tables {
		if in(t.Name) {
			continue
		}
		for _, f := range t.Fields {
			if f.IDFromTb != "" && in(f.IDFromTb) {
				out = append(out, Usage{Kind: UseLookup, Table: t.Name, Field: f.Name, Value: f.IDFromTb})
			}
			if tb, _ := valuesSource(f.GetValuesFromTb); f.GetValuesFromTb != "" && in(tb) {
				out = append(out, Usage{Kind: UseValuesFrom, Table: t.Name, Field: f.Name, Value: f.GetValuesFromTb})
			}
		}
		for _, s := range t.Backlinks {
			if b, ok := ParseBacklink(s); ok && (in(b.RefTb) || in(b.ViaTb)) {
				out = append(out, Usage{Kind: UseBacklink, Table: t.Name, Value: s})
			}
		}
		for _, s := range t.ChronoDensityPath {
			if in(s) {
				out = append(out, Usage{Kind: UseChronoPath, Table: t.Name, Value: s})
			}
		}
	}
	for _, r := range st.relations {
		if in(r.ToTb) && !in(r.FromTb) {
			out = append(out, Usage{Kind: UseRelation, Table: r.FromTb, Field: r.FromCol, Relation: r.ID})
		}
	}
	return out
}

// fieldUsages lists what refers to field f of table t, besides the preview
// list (which simply forgets a deleted field).
func fieldUsages(st *state, t *Table, f *Field) []Usage {
	var out []Usage
	if t.IDField == f.Name {
		out = append(out, Usage{Kind: UseIDField, Table: t.Name, Field: f.Name})
	}
	ref := t.Name + ":" + f.Name
	for _, o := range st.cat.Tables {
		for _, of := range o.Fields {
			if of.ID != f.ID && of.GetValuesFromTb == ref {
				out = append(out, Usage{Kind: UseValuesFrom, Table: o.Name, Field: of.Name, Value: ref})
			}
		}
		for _, s := range o.Backlinks {
			if b, ok := ParseBacklink(s); ok && b.ViaTb == t.Name && b.FkCol == f.Name {
				out = append(out, Usage{Kind: UseBacklink, Table: o.Name, Value: s})
			}
		}
	}
	out = append(out, fieldRelationUsages(st, t, f)...)
	for _, ix := range st.indexes {
		if ix.Table == t.Name && slices.Contains(ix.Columns, f.Name) {
			out = append(out, Usage{Kind: UseIndex, Table: t.Name, Index: ix.Name})
		}
	}
	return out
}

// fieldRelationUsages lists the relations from or to field f of t.
func fieldRelationUsages(st *state, t *Table, f *Field) []Usage {
	var out []Usage
	for _, r := range st.relations {
		if (r.FromTb == t.Name && r.FromCol == f.Name) || (r.ToTb == t.Name && r.ToCol == f.Name) {
			out = append(out, Usage{Kind: UseRelation, Table: r.FromTb, Field: r.FromCol, Relation: r.ID})
		}
	}
	return out
}
