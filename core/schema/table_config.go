package schema

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/wire"
)

// MaxChronoDensityPath is the depth limit of a chronology density path
// (SPEC §8).
const MaxChronoDensityPath = 8

// TableConfig is the body of PUT /config/table/{tb}: only keys present
// change. The name is changed by RenameTable, never here. Besides the
// catalog's own keys it reads BraDypUS's: "order" as a field name (the
// list's default sort; a number is the table's position), "rs" as a field
// name, "zotero" for refmgr, "link", and "plugin_of"/"plugin" to attach
// plugin tables created detached.
type TableConfig struct {
	Label             Patch[string]       `json:"label"`
	Order             Patch[OrderSetting] `json:"order"`
	Sort              Patch[int]          `json:"sort"`
	IDField           Patch[string]       `json:"id_field"`
	Preview           Patch[[]string]     `json:"preview"`
	RS                Patch[RSSetting]    `json:"rs"`
	RSStrict          Patch[bool]         `json:"rs_strict"`
	Geodata           Patch[bool]         `json:"geodata"`
	RefMgr            Patch[bool]         `json:"refmgr"`
	Zotero            Patch[bool]         `json:"zotero"`
	ChronoDensityPath Patch[[]string]     `json:"chrono_density_path"`
	Backlinks         Patch[[]string]     `json:"backlinks"`
	Links             Patch[[]TableLink]  `json:"link"`
	PluginOf          Patch[string]       `json:"plugin_of"`
	Plugin            Patch[wire.List]    `json:"plugin"`
}

// OrderSetting is "order": a number (or numeric text) moves the table in
// the list of tables; a field name sets the records' default sort.
type OrderSetting struct {
	Position *int
	Field    *string
}

// UnmarshalJSON reads either form.
func (o *OrderSetting) UnmarshalJSON(b []byte) error {
	var v any
	if err := wire.Decode(b, &v, wire.Options{ExactNumbers: true}); err != nil {
		return err
	}
	*o = OrderSetting{}
	if v == nil {
		empty := ""
		o.Field = &empty
		return nil
	}
	n, err := wire.Int(v)
	switch {
	case err == nil:
		p := int(n)
		o.Position = &p
	case errors.Is(err, wire.ErrEmpty):
		empty := ""
		o.Field = &empty
	default:
		s, err := wire.Text(v)
		if err != nil {
			return err
		}
		s = strings.TrimSpace(s)
		o.Field = &s
	}
	return nil
}

// RSSetting is "rs": a flag, or the name of the field that labels the
// table's units in stratigraphic relations (which also turns RS on).
type RSSetting struct {
	On    bool
	Field string
}

// UnmarshalJSON reads either form.
func (r *RSSetting) UnmarshalJSON(b []byte) error {
	var v any
	if err := wire.Decode(b, &v, wire.Options{ExactNumbers: true}); err != nil {
		return err
	}
	*r = RSSetting{}
	if v == nil {
		return nil
	}
	on, err := wire.Bool(v)
	switch {
	case err == nil:
		r.On = on
	case errors.Is(err, wire.ErrEmpty):
	default:
		s, err := wire.Text(v)
		if err != nil {
			return err
		}
		r.On, r.Field = true, strings.TrimSpace(s)
	}
	return nil
}

// PutTable changes the settings of a table. Each key sent is validated
// against the catalog; keys not sent keep their value.
func PutTable(ctx context.Context, db *store.DB, table string, in TableConfig, now time.Time) (*Table, error) {
	var out *Table
	err := change(ctx, db, func(tx *store.DB, st *state) error {
		t, ok := st.cat.Table(table)
		if !ok {
			return ErrTableNotFound
		}
		if in.Zotero.Set && !in.RefMgr.Set {
			in.RefMgr = in.Zotero
		}
		if err := checkTableConfig(st, t, &in); err != nil {
			return err
		}
		nt := *t
		in.Label.apply(&nt.Label)
		if strings.TrimSpace(nt.Label) == "" {
			nt.Label = nt.Name
		}
		if in.Order.Set && in.Order.Value.Position != nil {
			nt.Sort = *in.Order.Value.Position
		}
		if in.Order.Set && in.Order.Value.Field != nil {
			nt.SortField = *in.Order.Value.Field
		}
		in.Sort.apply(&nt.Sort)
		in.IDField.apply(&nt.IDField)
		in.Preview.apply(&nt.Preview)
		if in.RS.Set {
			nt.RS, nt.RSField = in.RS.Value.On, in.RS.Value.Field
		}
		in.RSStrict.apply(&nt.RSStrict)
		in.Geodata.apply(&nt.Geodata)
		in.RefMgr.apply(&nt.RefMgr)
		in.ChronoDensityPath.apply(&nt.ChronoDensityPath)
		in.Backlinks.apply(&nt.Backlinks)
		in.Links.apply(&nt.Links)
		nt.UpdatedAt = now
		_, err := tx.Exec(ctx, `UPDATE `+tx.Sys("tables")+` SET label = ?, sort = ?, rs = ?, rs_strict = ?, geodata = ?, refmgr = ?
			WHERE id = ?`, nt.Label, nt.Sort, nt.RS, nt.RSStrict, nt.Geodata, nt.RefMgr, nt.ID)
		if err != nil {
			return fmt.Errorf("update table %s: %w", table, err)
		}
		if err := saveTableSettings(ctx, tx, &nt, now); err != nil {
			return err
		}
		if in.Links.Set {
			if err := syncLinkRelations(ctx, tx, st, &nt, now); err != nil {
				return err
			}
		}
		if in.PluginOf.Set && strings.TrimSpace(in.PluginOf.Value) != "" && nt.IsPlugin && nt.PluginOf == "" {
			if err := attachPlugin(ctx, tx, st, &nt, strings.TrimSpace(in.PluginOf.Value), now); err != nil {
				return err
			}
		}
		if in.Plugin.Set {
			for _, name := range in.Plugin.Value {
				if c, ok := st.cat.Table(name); ok && c.IsPlugin && c.PluginOf == "" {
					if err := attachPlugin(ctx, tx, st, c, nt.Name, now); err != nil {
						return err
					}
				}
			}
		}
		out = &nt
		return nil
	})
	return out, err
}

// attachPlugin makes detached plugin table t a plugin table of parent.
func attachPlugin(ctx context.Context, tx *store.DB, st *state, t *Table, parent string, now time.Time) error {
	p, ok := st.cat.Table(parent)
	if !ok || p.IsPlugin || p.Name == t.Name {
		return ErrInvalidPluginOf
	}
	if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("tables")+` SET plugin_of = ?, updated_at = ? WHERE id = ?`, parent, now, t.ID); err != nil {
		return fmt.Errorf("attach plugin table %s: %w", t.Name, err)
	}
	t.PluginOf = parent
	return execAll(ctx, tx, "attach plugin table "+t.Name, attachPluginSQL(tx, t, p)...)
}

// badChronoPath refuses a chronology density path with BraDypUS's code.
func badChronoPath(detail string) error {
	return ErrInvalidChronoPath.With("parameter", "chrono_density_path").With("detail", detail)
}

func badConfig(param, detail string) error {
	return ErrInvalidTableConfig.With("parameter", param).With("detail", detail)
}

// checkTableConfig validates the keys of in that were sent.
func checkTableConfig(st *state, t *Table, in *TableConfig) error {
	if t.IsPlugin {
		// A plugin table is shown inside its parent's record: these
		// settings belong to the parent.
		for _, p := range []struct {
			name string
			on   bool
		}{{"rs", in.RS.Value.On}, {"geodata", in.Geodata.Value}, {"refmgr", in.RefMgr.Value},
			{"chrono_density_path", len(in.ChronoDensityPath.Value) > 0}, {"backlinks", len(in.Backlinks.Value) > 0}} {
			if p.on {
				return badConfig(p.name, "a plugin table takes no "+p.name)
			}
		}
	}
	if in.IDField.Set && in.IDField.Value != "" && in.IDField.Value != ColID {
		if _, ok := t.Field(in.IDField.Value); !ok {
			return badConfig("id_field", "id_field must name a field of the table")
		}
	}
	if in.Order.Set && in.Order.Value.Field != nil {
		if f := *in.Order.Value.Field; f != "" && f != ColID {
			if _, ok := t.Field(f); !ok {
				return badConfig("order", "order must name a field of the table (the records' default sort) or be the table's position")
			}
		}
	}
	if in.RS.Set && in.RS.Value.Field != "" {
		if _, ok := t.Field(in.RS.Value.Field); !ok && in.RS.Value.Field != ColID {
			return badConfig("rs", "rs is true, false, or the name of a field of the table")
		}
	}
	if in.Links.Set {
		for _, l := range in.Links.Value {
			other, ok := st.cat.Table(l.OtherTb)
			if !ok {
				return badConfig("link", fmt.Sprintf("%q names no table", l.OtherTb))
			}
			for _, p := range l.Fld {
				if _, ok := t.Field(p.My); !ok && p.My != ColID {
					return badConfig("link", fmt.Sprintf("%q is not a field of %q", p.My, t.Name))
				}
				if _, ok := other.Field(p.Other); !ok && p.Other != ColID {
					return badConfig("link", fmt.Sprintf("%q is not a field of %q", p.Other, other.Name))
				}
			}
		}
	}
	if in.PluginOf.Set {
		v := strings.TrimSpace(in.PluginOf.Value)
		switch {
		case v == "" || v == t.PluginOf:
		case !t.IsPlugin:
			return badConfig("plugin_of", "only a plugin table has a parent table")
		case t.PluginOf != "":
			return badConfig("plugin_of", "a plugin table's parent cannot change")
		}
	}
	if in.Plugin.Set {
		for _, name := range in.Plugin.Value {
			c, ok := st.cat.Table(name)
			if !ok || !c.IsPlugin || (c.PluginOf != "" && c.PluginOf != t.Name) {
				return badConfig("plugin", fmt.Sprintf("%q is not a plugin table of %q", name, t.Name))
			}
		}
	}
	if in.Preview.Set {
		for i, name := range in.Preview.Value {
			if _, ok := t.Field(name); !ok {
				return badConfig("preview", fmt.Sprintf("%q is not a field of the table", name))
			}
			if slices.Contains(in.Preview.Value[:i], name) {
				return badConfig("preview", fmt.Sprintf("%q is listed twice", name))
			}
		}
	}
	if in.ChronoDensityPath.Set {
		if err := checkChronoPath(st, t, in.ChronoDensityPath.Value); err != nil {
			return err
		}
	}
	if in.Backlinks.Set {
		for i, s := range in.Backlinks.Value {
			if err := checkBacklink(st, t, s); err != nil {
				return err
			}
			if slices.Contains(in.Backlinks.Value[:i], s) {
				return badConfig("backlinks", fmt.Sprintf("%q is listed twice", s))
			}
		}
	}
	return nil
}

// checkChronoPath validates a chronology density path of root: at most
// MaxChronoDensityPath tables, root itself absent, each a foreign-key child
// of the one before (the first of root), and the last one with the
// chronology feature active (SPEC §4.6; intermediates need not have it).
func checkChronoPath(st *state, root *Table, path []string) error {
	if len(path) > MaxChronoDensityPath {
		return badChronoPath(fmt.Sprintf("at most %d tables", MaxChronoDensityPath))
	}
	parent := root.Name
	for i, name := range path {
		if name == root.Name {
			return badChronoPath("the path starts after the table itself; leave it out")
		}
		if _, ok := st.cat.Table(name); !ok {
			return badChronoPath(fmt.Sprintf("%q names no table", name))
		}
		if slices.Contains(path[:i], name) {
			return badChronoPath(fmt.Sprintf("%q is listed twice", name))
		}
		if !isChildTable(st, name, parent) {
			return badChronoPath(fmt.Sprintf("%q is not a child of %q (no relation or plugin link to it)", name, parent))
		}
		parent = name
	}
	if n := len(path); n > 0 {
		if last, _ := st.cat.Table(path[n-1]); !last.Active(ChronologyFeature) {
			return badChronoPath(fmt.Sprintf("the last table, %q, must have chronology active", path[n-1]))
		}
	}
	return nil
}

// ChronologyFeature is the feature a chronology density path must end in.
const ChronologyFeature = "chronology"

// isChildTable reports whether child's rows point at parent's rows: a
// relation from child to parent, or child is a plugin table of parent.
func isChildTable(st *state, child, parent string) bool {
	if c, ok := st.cat.Table(child); ok && c.IsPlugin && c.PluginOf == parent {
		return true
	}
	for _, r := range st.relations {
		if r.FromTb == child && r.ToTb == parent {
			return true
		}
	}
	// So does a declared link (BraDypUS "link") from child to parent; a
	// lookup alone does not (BraDypUS draws density paths along relations
	// and links only).
	if c, ok := st.cat.Table(child); ok {
		for _, l := range c.Links {
			if l.OtherTb == parent {
				return true
			}
		}
	}
	return false
}

// checkBacklink validates "refTb:viaTb:fkCol" for table t: both tables
// exist and viaTb.fkCol references t, through a relation or a lookup.
func checkBacklink(st *state, t *Table, s string) error {
	b, ok := ParseBacklink(s)
	if !ok {
		return badConfig("backlinks", fmt.Sprintf("%q is not refTb:viaTb:fkCol", s))
	}
	if _, ok := st.cat.Table(b.RefTb); !ok {
		return badConfig("backlinks", fmt.Sprintf("%q: %q names no table", s, b.RefTb))
	}
	via, ok := st.cat.Table(b.ViaTb)
	if !ok {
		return badConfig("backlinks", fmt.Sprintf("%q: %q names no table", s, b.ViaTb))
	}
	f, ok := via.Field(b.FkCol)
	if !ok {
		return badConfig("backlinks", fmt.Sprintf("%q: %q is not a field of %q", s, b.FkCol, b.ViaTb))
	}
	if !referencesTable(st, via, f, t.Name) {
		return badConfig("backlinks", fmt.Sprintf("%q: %s.%s does not reference %q", s, b.ViaTb, b.FkCol, t.Name))
	}
	return nil
}

// referencesTable reports whether field f of table via points at target,
// by a lookup or a relation.
func referencesTable(st *state, via *Table, f *Field, target string) bool {
	if f.IDFromTb == target {
		return true
	}
	for _, r := range st.relations {
		if r.FromTb == via.Name && r.FromCol == f.Name && r.ToTb == target {
			return true
		}
	}
	return false
}

// SortTables sets the display order: names must list every table once.
func SortTables(ctx context.Context, db *store.DB, names []string, now time.Time) error {
	return change(ctx, db, func(tx *store.DB, st *state) error {
		all := make([]string, len(st.cat.Tables))
		for i, t := range st.cat.Tables {
			all[i] = t.Name
		}
		if err := checkPermutation(all, names); err != nil {
			return err
		}
		for i, name := range names {
			t, _ := st.cat.Table(name)
			if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("tables")+` SET sort = ?, updated_at = ? WHERE id = ?`, i, now, t.ID); err != nil {
				return fmt.Errorf("sort tables: %w", err)
			}
		}
		return nil
	})
}

// checkPermutation refuses a sort list that is not exactly all, reordered,
// naming what is missing, unknown or repeated.
func checkPermutation(all, names []string) error {
	var missing, unknown, twice []string
	for i, n := range names {
		if !slices.Contains(all, n) {
			unknown = append(unknown, n)
		} else if slices.Contains(names[:i], n) {
			twice = append(twice, n)
		}
	}
	for _, n := range all {
		if !slices.Contains(names, n) {
			missing = append(missing, n)
		}
	}
	if len(missing)+len(unknown)+len(twice) == 0 {
		return nil
	}
	err := ErrInvalidSort
	for _, p := range []struct {
		key  string
		list []string
	}{{"missing", missing}, {"unknown", unknown}, {"repeated", twice}} {
		if len(p.list) > 0 {
			err = err.With(p.key, p.list)
		}
	}
	return err
}

// RSOn is the Patch that turns RS on or off, for callers building a
// TableConfig in Go.
func RSOn(on bool) Patch[RSSetting] { return Set(RSSetting{On: on}) }

// Position is the Patch that moves a table to position n.
func Position(n int) Patch[OrderSetting] { return Set(OrderSetting{Position: &n}) }

// syncLinkRelations makes the relations recorded from t those its links
// declare, as BraDypUS does (its "link" is the list of relations from the
// table): a relation from a column the links no longer name, or to
// another target, is removed (its constraint with it; no data changes),
// and each declared pair not recorded yet is recorded, RESTRICT / CASCADE,
// checked and enforced as POST /config/relations would.
func syncLinkRelations(ctx context.Context, tx *store.DB, st *state, t *Table, now time.Time) error {
	type target struct{ tb, col string }
	want := map[string]target{}
	var order []string
	// A pair that mirrors a relation to this table (other_tb.other → my,
	// as LinksOf lists it) is that relation read back, not a new one.
	mirrors := map[[3]string]bool{}
	forward := map[[3]string]bool{}
	for _, r := range st.relations {
		if r.ToTb == t.Name && r.FromTb != t.Name {
			mirrors[[3]string{r.FromTb, r.ToCol, r.FromCol}] = true
		}
		if r.FromTb == t.Name {
			forward[[3]string{r.ToTb, r.FromCol, r.ToCol}] = true
		}
	}
	for _, l := range t.Links {
		for _, p := range l.Fld {
			my, other := strings.TrimSpace(p.My), strings.TrimSpace(p.Other)
			if my == "" {
				continue
			}
			if other == "" {
				other = ColID
			}
			if k := [3]string{l.OtherTb, my, other}; mirrors[k] && !forward[k] {
				continue
			}
			if _, dup := want[my]; !dup {
				order = append(order, my)
			}
			want[my] = target{l.OtherTb, other}
		}
	}
	kept := st.relations[:0:0]
	for _, r := range st.relations {
		if r.FromTb != t.Name {
			kept = append(kept, r)
			continue
		}
		if w, ok := want[r.FromCol]; ok && w == (target{r.ToTb, r.ToCol}) {
			delete(want, r.FromCol)
			kept = append(kept, r)
			continue
		}
		if err := removeRelation(ctx, tx, r); err != nil {
			return err
		}
	}
	st.relations = kept
	for _, col := range order {
		w, ok := want[col]
		if !ok {
			continue
		}
		r := &Relation{FromTb: t.Name, FromCol: col, ToTb: w.tb, ToCol: w.col, OnDelete: "RESTRICT", OnUpdate: "CASCADE"}
		if err := checkRelation(st, r, false); err != nil {
			if e, isErr := errs.As(err); isErr {
				return ErrInvalidTableConfig.With("parameter", "link").With("detail", fmt.Sprintf("%s → %s.%s: %s", col, w.tb, w.col, e.Message)).With("reason", e.Code)
			}
			return err
		}
		if err := saveRelation(ctx, tx, st, r, now); err != nil {
			return err
		}
		st.relations = append(st.relations, r)
	}
	return nil
}

// LinksOf lists the relations of table in BraDypUS's "link" form,
// [{other_tb, fld:[{my, other}]}], grouped by the other table as BraDypUS
// does: those from the table (my holds the key) and, after them, those to
// it from another table (my is the referenced column), as BraDypUS's
// clients read both as the table's links. Saving a link list back ignores
// the second kind (see syncLinkRelations).
func LinksOf(rels []*Relation, table string) []TableLink {
	out := []TableLink{}
	at := map[string]int{}
	add := func(other, my, otherCol string) {
		i, ok := at[other]
		if !ok {
			i = len(out)
			at[other] = i
			out = append(out, TableLink{OtherTb: other})
		}
		out[i].Fld = append(out[i].Fld, TableLinkPair{My: my, Other: otherCol})
	}
	for _, r := range rels {
		if r.FromTb == table {
			add(r.ToTb, r.FromCol, r.ToCol)
		}
	}
	for _, r := range rels {
		if r.ToTb == table && r.FromTb != table {
			add(r.FromTb, r.ToCol, r.FromCol)
		}
	}
	return out
}
