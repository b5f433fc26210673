package records

import (
	"context"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Grants are one caller's rights in an application: the global level and
// the per-table overrides (a level and an optional row subset). They are
// the one gate to user tables (DESIGN §10): every area gets its rows
// through a Scope opened by Grants.Scope, which refuses a table the
// caller may not read and carries the row subset into every query, so no
// area has a privilege check of its own to forget.
//
// Grants live for one request (or one job step): rendered subsets are
// kept, so they are not safe for concurrent use.
type Grants struct {
	Actor     *auth.Actor
	overrides map[string]auth.TablePrivilege
	rendered  map[string]*Cond // restriction per table, rendered once
}

// ErrSubsetBroken answers a stored subset that no longer validates (a
// field was renamed or dropped since): the caller sees nothing of the
// table until an administrator fixes it.
var ErrSubsetBroken = errs.New(errs.Forbidden, "subset_invalid",
	"your row subset on this table no longer matches its fields; ask an administrator to update it")

// NewGrants are actor's rights with its overrides (an API key has none).
func NewGrants(actor *auth.Actor, overrides []auth.TablePrivilege) *Grants {
	g := &Grants{Actor: actor, overrides: map[string]auth.TablePrivilege{}, rendered: map[string]*Cond{}}
	for _, tp := range overrides {
		g.overrides[tp.TableName] = tp
	}
	return g
}

// own is the level the caller's override on table gives, else the global
// level.
func (g *Grants) own(table string) int {
	if tp, ok := g.overrides[table]; ok {
		return tp.Privilege
	}
	return g.Actor.Privilege
}

// Level is the caller's effective level on table. A plugin table's rows
// are parts of its parent's records, so it is never more open than its
// parent: a user denied finds is denied finds_samples too. An account
// that may not enter the application has no level anywhere, whatever its
// overrides say.
func (g *Grants) Level(cat *schema.Catalog, table string) int {
	if !auth.Enter.Allows(g.Actor.Privilege) {
		return auth.Pending
	}
	lvl := g.own(table)
	if t, ok := cat.Table(table); ok && t.IsPlugin {
		lvl = max(lvl, g.own(t.PluginOf))
	}
	return lvl
}

// Readable reports whether the caller may read table at all.
func (g *Grants) Readable(cat *schema.Catalog, table string) bool {
	return auth.Read.Allows(g.Level(cat, table))
}

// subset is the caller's own row subset on t as a filter node (nil: all
// rows). A stored subset that no longer validates fails closed.
func (g *Grants) subset(cat *schema.Catalog, t *schema.Table) (filter.Node, error) {
	tp, ok := g.overrides[t.Name]
	if !ok || tp.Subset == nil {
		return nil, nil
	}
	n, _, err := filter.ParseSubset(cat, t.Name, []byte(*tp.Subset))
	if err != nil {
		return nil, ErrSubsetBroken.With("table", t.Name).Wrap(err)
	}
	return n, nil
}

// FilterOptions render filters for this caller: tables reached by a
// nested condition must be readable, and carry the caller's subset there.
func (g *Grants) FilterOptions(cat *schema.Catalog) filter.Options {
	return filter.Options{
		Readable: func(t *schema.Table, column string) bool {
			return column != "" || g.Readable(cat, t.Name)
		},
		Subset: func(t *schema.Table) (filter.Node, error) { return g.subset(cat, t) },
	}
}

// Restriction is the caller's row subset on t as a condition (nil: every
// row), rendered once per Grants and table. A plugin table's rows are
// further restricted to the parent records the caller may see.
func (g *Grants) Restriction(ctx context.Context, db *store.DB, cat *schema.Catalog, t *schema.Table) (*Cond, error) {
	if c, ok := g.rendered[t.Name]; ok {
		return c, nil
	}
	var parts []*Cond
	n, err := g.subset(cat, t)
	if err != nil {
		return nil, err
	}
	if n != nil {
		sql, args, err := filter.RenderWith(ctx, db, cat, t.Name, n, filter.Options{})
		if err != nil {
			return nil, ErrSubsetBroken.With("table", t.Name).Wrap(err)
		}
		c := &Cond{SQL: sql, Args: args}
		if filter.RowOnly(n) {
			// Judged on a record's past state by the sync pull (SeenAt).
			c.As = func(ctx context.Context, alias string) (*Cond, error) {
				sql, args, err := filter.RenderWith(ctx, db, cat, t.Name, n, filter.Options{RootAlias: alias})
				if err != nil {
					return nil, ErrSubsetBroken.With("table", t.Name).Wrap(err)
				}
				return &Cond{SQL: sql, Args: args}, nil
			}
		}
		parts = append(parts, c)
	}
	if t.IsPlugin {
		if parent, ok := cat.Table(t.PluginOf); ok {
			pr, err := g.Restriction(ctx, db, cat, parent)
			if err != nil {
				return nil, err
			}
			if pr != nil {
				q := db.Qualify(parent.Name)
				parts = append(parts, &Cond{SQL: db.Qualify(t.Name) + "." + db.Engine.Quote(schema.ColIDLink) + ` IN (SELECT ` + q +
					`."id" FROM ` + q + ` WHERE ` + pr.SQL + `)`, Args: pr.Args})
			}
		}
	}
	var c *Cond
	switch len(parts) {
	case 0:
	case 1:
		c = parts[0]
	default:
		c = &Cond{SQL: "(" + parts[0].SQL + ") AND (" + parts[1].SQL + ")", Args: append(append([]any{}, parts[0].Args...), parts[1].Args...)}
	}
	g.rendered[t.Name] = c
	return c, nil
}

// TableAccess gives a scope the caller's level and row subset on any
// table of cat (Scope.Access), from the overrides already loaded.
func (g *Grants) TableAccess(db *store.DB, cat *schema.Catalog) func(context.Context, *schema.Table) (TableAccess, error) {
	return func(ctx context.Context, t *schema.Table) (TableAccess, error) {
		ta := TableAccess{Level: g.Level(cat, t.Name)}
		if !ta.Readable() {
			return ta, nil
		}
		var err error
		ta.Restrict, err = g.Restriction(ctx, db, cat, t)
		return ta, err
	}
}

// Scope opens the caller's scope on table: table_not_found when cat has
// no such table, not_enough_privilege when the caller may not read it
// (global level or per-table override), else a scope whose level is the
// caller's effective level there and whose row subset every records
// operation ANDs into what it reads and changes.
func (g *Grants) Scope(ctx context.Context, db *store.DB, cat *schema.Catalog, table string) (*Scope, error) {
	t, ok := cat.Table(table)
	if !ok {
		return nil, schema.ErrTableNotFound.With("table", table)
	}
	lvl := g.Level(cat, t.Name)
	if !auth.Read.Allows(lvl) {
		return nil, ErrNotEnough.With("required", auth.Read.String()).With("table", t.Name)
	}
	r, err := g.Restriction(ctx, db, cat, t)
	if err != nil {
		return nil, err
	}
	return &Scope{DB: db, Catalog: cat, Table: t, Actor: g.Actor, Level: lvl, Restrict: r, Access: g.TableAccess(db, cat)}, nil
}
