package filter

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Options adjust rendering to one caller and one query.
type Options struct {
	// Operators are the plugin operators; nil allows built-ins only.
	Operators *Registry
	// Core are the operators of core areas (geo's _intersects), looked up
	// before the plugins'.
	Core *Registry
	// RootAlias is how the query names the root table; by default columns
	// are qualified with its schema-qualified name (db.Qualify).
	RootAlias string
	// Readable, when set, is asked about every column a filter compares
	// and every table a subquery reaches (column ""). false answers
	// invalid_field, exactly as if the name did not exist.
	Readable func(t *schema.Table, column string) bool
	// Subset, when set, gives the caller's row subset of a table that a
	// subquery reaches (nil: every row); it is ANDed into that subquery so
	// a nested condition cannot probe rows the caller may not see. The
	// root table's subset is the caller's to add. A subset has its own hop
	// budget, and no subsets apply inside it.
	Subset func(t *schema.Table) (Node, error)
}

// Render validates n against the catalog for the root table and returns a
// WHERE fragment (without "WHERE") with '?' markers, and the values to
// bind, for db's engine; pass both to db.Query, which rebinds the markers
// for PostgreSQL. A nil node gives "1 = 1". Only built-in operators.
func Render(db *store.DB, cat *schema.Catalog, table string, n Node) (string, []any, error) {
	return RenderWith(context.Background(), db, cat, table, n, Options{})
}

// RenderWith is Render with plugin operators, a root alias, a readability
// check and subsets of subquery tables.
func RenderWith(ctx context.Context, db *store.DB, cat *schema.Catalog, table string, n Node, opt Options) (string, []any, error) {
	r := &renderer{ctx: ctx, db: db, cat: cat, opt: opt, resolve: true}
	sql, err := r.root(table, n)
	if err != nil {
		return "", nil, err
	}
	return sql, r.args, nil
}

// Validate checks n against the catalog for table as Render does, without
// a database and without calling plugin operators (it only checks that
// they exist and apply to their field).
func Validate(cat *schema.Catalog, table string, n Node, opt Options) error {
	r := &renderer{ctx: context.Background(), db: &store.DB{Engine: store.SQLite}, cat: cat, opt: opt}
	_, err := r.root(table, n)
	return err
}

type renderer struct {
	ctx     context.Context
	db      *store.DB
	cat     *schema.Catalog
	opt     Options
	args    []any
	aliases int
	resolve bool // call plugin operators (false in Validate)
	expand  int  // plugin operators being expanded
}

// backlink is a parsed Table.Backlinks entry "refTb:viaTb:fkCol": rows of
// viaTb point at the current table through fkCol; refTb is viaTb's parent.
type backlink struct{ ref, via, fk string }

// scope is the table conditions are about, and how its columns are named.
type scope struct {
	t       *schema.Table
	ref     string    // qualifier of the table's columns
	hops    int       // subqueries crossed to get here
	via     *backlink // set when t was reached as a backlink's via-table
	noSubst bool      // inside a subset: no further subsets
}

func (r *renderer) root(table string, n Node) (string, error) {
	t, ok := r.cat.Table(table)
	if !ok {
		return "", schema.ErrTableNotFound
	}
	ref := r.opt.RootAlias
	switch {
	case ref == "":
		ref = r.db.Qualify(t.Name)
	case store.ValidIdent(ref):
		ref = r.db.Engine.Quote(ref)
	default:
		return "", fmt.Errorf("filter: invalid root alias %q", ref)
	}
	return r.node(scope{t: t, ref: ref}, n)
}

func (r *renderer) node(s scope, n Node) (string, error) {
	switch n := n.(type) {
	case nil:
		return "1 = 1", nil
	case And:
		return r.group(s, n.Nodes, " AND ")
	case Or:
		return r.group(s, n.Nodes, " OR ")
	case Cond:
		return r.cond(s, n)
	case Nested:
		return r.nested(s, n)
	}
	return "", invalidf("this kind of filter condition cannot be used here")
}

func (r *renderer) group(s scope, nodes []Node, sep string) (string, error) {
	if len(nodes) == 0 {
		return "1 = 1", nil // an empty group gives no condition
	}
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		p, err := r.node(s, n)
		if err != nil {
			return "", err
		}
		parts[i] = p
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return "(" + strings.Join(parts, sep) + ")", nil
}

func (r *renderer) readable(t *schema.Table, column string) bool {
	return r.opt.Readable == nil || r.opt.Readable(t, column)
}

// column resolves name to a field or system column of the scope's table.
func (r *renderer) column(s scope, name string) (string, schema.DBType, error) {
	var typ schema.DBType
	if f, ok := s.t.Field(name); ok {
		typ = f.DBType
	} else if s.t.IsSystemColumn(name) {
		typ = schema.DBInt
	} else {
		if _, isTable := r.cat.Table(name); isTable {
			return "", "", invalidf("%s is a table, not a field of %s: give conditions on its fields, as {%q:{\"<field>\":{...}}}", name, s.t.Name, name)
		}
		return "", "", unknownField(s.t.Name, name)
	}
	if !r.readable(s.t, name) {
		return "", "", unknownField(s.t.Name, name)
	}
	switch typ {
	case schema.DBInt, schema.DBFloat, schema.DBBool, schema.DBDate:
	default:
		typ = schema.DBText
	}
	return s.ref + "." + r.db.Engine.Quote(name), typ, nil
}

// nested resolves a key with a nested condition, in the order of SPEC
// §4.4: lookup field, plugin table, backlink via-table, and inside a
// via-table condition the via-table's parent.
func (r *renderer) nested(s scope, n Nested) (string, error) {
	key := n.Key
	if f, ok := s.t.Field(key); ok {
		if f.IDFromTb == "" {
			return "", invalidf("%s.%s is not a lookup field (id_from_tb): give operators, not nested conditions", s.t.Name, key)
		}
		ref, ok := r.cat.Table(f.IDFromTb)
		if !ok {
			return "", invalidf("%s.%s refers to a table that does not exist", s.t.Name, key)
		}
		col, _, err := r.column(s, key)
		if err != nil {
			return "", err
		}
		sub, err := r.subquery(s, ref, schema.ColID, n.Node, nil)
		if err != nil {
			return "", err
		}
		return col + " IN (" + sub + ")", nil
	}
	if s.t.IsSystemColumn(key) {
		return "", invalidf("%s takes operators, not nested conditions", key)
	}
	for _, p := range r.cat.PluginTables(s.t.Name) {
		if p.Name == key {
			return r.through(s, schema.ColID, p, schema.ColIDLink, n.Node, nil)
		}
	}
	for _, raw := range s.t.Backlinks {
		b, ok := parseBacklink(raw)
		if !ok || b.via != key {
			continue
		}
		via, ok := r.cat.Table(b.via)
		if !ok {
			return "", invalidf("backlink %q of %s names a table that does not exist", raw, s.t.Name)
		}
		if _, isField := via.Field(b.fk); !isField && !via.IsSystemColumn(b.fk) {
			return "", invalidf("backlink %q of %s names a column that does not exist", raw, s.t.Name)
		}
		return r.through(s, schema.ColID, via, b.fk, n.Node, &b)
	}
	if s.via != nil && key == s.via.ref {
		parent, ok := r.cat.Table(key)
		if !ok {
			return "", invalidf("backlink parent %s does not exist", key)
		}
		if s.t.IsPlugin && s.t.PluginOf == parent.Name {
			return r.through(s, schema.ColIDLink, parent, schema.ColID, n.Node, nil)
		}
		// A via-table that is not a plugin of its parent links to it
		// through a lookup field; it must be unambiguous.
		var link *schema.Field
		for _, f := range s.t.Fields {
			if f.IDFromTb == parent.Name {
				if link != nil {
					return "", invalidf("%s refers to %s through several lookup fields: name the field instead", s.t.Name, key)
				}
				link = f
			}
		}
		if link == nil {
			return "", invalidf("%s is not linked to %s", s.t.Name, key)
		}
		return r.nested(s, Nested{Key: link.Name, Node: n.Node})
	}
	if _, isTable := r.cat.Table(key); isTable {
		return "", invalidf("%s cannot be reached from %s", key, s.t.Name)
	}
	return "", unknownField(s.t.Name, key)
}

func parseBacklink(s string) (backlink, bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 || !namePattern.MatchString(parts[0]) || !namePattern.MatchString(parts[1]) || !namePattern.MatchString(parts[2]) {
		return backlink{}, false
	}
	return backlink{ref: parts[0], via: parts[1], fk: parts[2]}, true
}

// through renders "<own column> IN (SELECT <their column> FROM t WHERE n)".
func (r *renderer) through(s scope, own string, t *schema.Table, theirs string, n Node, via *backlink) (string, error) {
	if !r.readable(s.t, own) {
		return "", unknownField(s.t.Name, own)
	}
	sub, err := r.subquery(s, t, theirs, n, via)
	if err != nil {
		return "", err
	}
	return s.ref + "." + r.db.Engine.Quote(own) + " IN (" + sub + ")", nil
}

// subquery renders "SELECT a.<col> FROM t AS a WHERE n", one hop further.
func (r *renderer) subquery(s scope, t *schema.Table, col string, n Node, via *backlink) (string, error) {
	if s.hops+1 > MaxHops {
		return "", invalidf("a condition may cross at most %d tables (SPEC §8); reaching %s from %s is one too many", MaxHops, t.Name, s.t.Name)
	}
	if !r.readable(t, "") {
		return "", unknownField(s.t.Name, t.Name)
	}
	r.aliases++
	alias := r.db.Engine.Quote("s" + strconv.Itoa(r.aliases))
	inner := scope{t: t, ref: alias, hops: s.hops + 1, via: via, noSubst: s.noSubst}
	where, err := r.node(inner, n)
	if err != nil {
		return "", err
	}
	if r.opt.Subset != nil && !s.noSubst {
		sn, err := r.opt.Subset(t)
		if err != nil {
			return "", err
		}
		if sn != nil {
			sw, err := r.node(scope{t: t, ref: alias, noSubst: true}, sn)
			if err != nil {
				return "", fmt.Errorf("row subset of %s: %w", t.Name, err)
			}
			where = "(" + where + " AND " + sw + ")"
		}
	}
	return "SELECT " + alias + "." + r.db.Engine.Quote(col) + " FROM " + r.db.Qualify(t.Name) + " AS " + alias + " WHERE " + where, nil
}
