package server

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// ctxAccess caches the caller's per-table overrides for one request.
const ctxAccess = "strata.access"

// access is what the caller may do per table: the global level unless an
// override replaces it, and the override's row subset.
type access struct {
	actor     *auth.Actor
	overrides map[string]auth.TablePrivilege
	rendered  map[string]*records.Cond // restriction per table, rendered once
}

// callerAccess loads the caller's overrides once per request (one query).
func (s *Server) callerAccess(c *gin.Context) (*access, error) {
	if v, ok := c.Get(ctxAccess); ok {
		return v.(*access), nil
	}
	actor := actorOf(c)
	acc := &access{actor: actor, overrides: map[string]auth.TablePrivilege{}, rendered: map[string]*records.Cond{}}
	if actor.UserID != 0 {
		var list []auth.TablePrivilege
		if g, ok := c.Get(ctxGrants); ok && g.(*auth.Grants).User.ID == actor.UserID {
			list = g.(*auth.Grants).Overrides // read with the account (authenticate)
		} else {
			var err error
			if list, err = auth.ListTablePrivileges(c.Request.Context(), appOf(c).DB, actor.UserID); err != nil {
				return nil, err
			}
		}
		for _, tp := range list {
			acc.overrides[tp.TableName] = tp
		}
	}
	c.Set(ctxAccess, acc)
	return acc, nil
}

// level is the caller's effective level on table.
func (a *access) level(table string) int {
	if tp, ok := a.overrides[table]; ok {
		return tp.Privilege
	}
	return a.actor.Privilege
}

var errSubsetBroken = errs.New(errs.Forbidden, "subset_invalid",
	"your row subset on this table no longer matches its fields; ask an administrator to update it")

// subset is the caller's row subset on t as a filter node (nil: all rows).
// A stored subset that no longer validates (a field was renamed or
// dropped since) fails closed: the caller sees nothing until it is fixed.
func (a *access) subset(cat *schema.Catalog, t *schema.Table) (filter.Node, error) {
	tp, ok := a.overrides[t.Name]
	if !ok || tp.Subset == nil {
		return nil, nil
	}
	n, _, err := filter.ParseSubset(cat, t.Name, []byte(*tp.Subset))
	if err != nil {
		return nil, errSubsetBroken.With("table", t.Name).Wrap(err)
	}
	return n, nil
}

// options renders filters for this caller: tables reached by a nested
// condition must be readable, and carry the caller's subset there.
func (a *access) options(cat *schema.Catalog) filter.Options {
	return filter.Options{
		Readable: func(t *schema.Table, column string) bool {
			return column != "" || auth.Read.Allows(a.level(t.Name))
		},
		Subset: func(t *schema.Table) (filter.Node, error) { return a.subset(cat, t) },
	}
}

// restriction renders the caller's subset of the root table.
func (a *access) restriction(ctx context.Context, sc *records.Scope) (*records.Cond, error) {
	return a.restrictionOn(ctx, sc.DB, sc.Catalog, sc.Table)
}

// restrictionOn renders the caller's subset of table t (nil: every row),
// once per request and table.
func (a *access) restrictionOn(ctx context.Context, db *store.DB, cat *schema.Catalog, t *schema.Table) (*records.Cond, error) {
	if c, ok := a.rendered[t.Name]; ok {
		return c, nil
	}
	n, err := a.subset(cat, t)
	if err != nil || n == nil {
		return nil, err
	}
	sql, args, err := filter.RenderWith(ctx, db, cat, t.Name, n, filter.Options{})
	if err != nil {
		return nil, errSubsetBroken.With("table", t.Name).Wrap(err)
	}
	c := &records.Cond{SQL: sql, Args: args}
	a.rendered[t.Name] = c
	return c, nil
}

// tableAccess gives records the caller's level and row subset on any
// table of cat, from the overrides loaded once for the request.
func (a *access) tableAccess(db *store.DB, cat *schema.Catalog) func(context.Context, *schema.Table) (records.TableAccess, error) {
	return func(ctx context.Context, t *schema.Table) (records.TableAccess, error) {
		ta := records.TableAccess{Level: a.level(t.Name)}
		if !auth.Read.Allows(ta.Level) {
			return ta, nil
		}
		var err error
		ta.Restrict, err = a.restrictionOn(ctx, db, cat, t)
		return ta, err
	}
}

// recordCatalog is the catalog as records see it: the columns and child
// tables of plugin features that are inactive on their table are left out
// (kept in the database, shown again on reactivation).
func (s *Server) recordCatalog(ctx context.Context, a *apps.App) (*schema.Catalog, error) {
	cat, err := s.catalogs.Get(ctx, a.Name, a.DB)
	if err != nil {
		return nil, err
	}
	return cat.Visible(), nil
}
