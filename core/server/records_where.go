package server

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/strata-archaeo/strata/core/geo"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
)

// listWhere turns the list's filter and quick search into one condition.
// The filter is the body's "filter" object when present, else the query
// string's bracket form or filter=<JSON>; nested conditions reach other
// tables only where the caller may read, within the caller's subsets.
func (s *Server) listWhere(c *gin.Context, sc *records.Scope, bodyFilter json.RawMessage, search string) (*records.Cond, error) {
	var node filter.Node
	var err error
	if b := bytes.TrimSpace(bodyFilter); len(b) > 0 && string(b) != "null" {
		node, err = filter.ParseJSON(b)
	} else {
		node, err = filter.ParseQuery(c.Request.URL.Query())
	}
	if err != nil {
		return nil, err
	}
	// BraDypUS clients' forms: qt/q and q_<field> in the query string.
	legacy, legacySearch, err := filter.ParseLegacyQuery(c.Request.URL.Query())
	if err != nil {
		return nil, err
	}
	node = filter.All(node, legacy)
	if search == "" {
		search = legacySearch
	}
	node = filter.All(node, filter.Search(sc.Table, search, func(*schema.Field) bool { return true }))
	if node == nil {
		return nil, nil
	}
	acc, err := s.callerAccess(c)
	if err != nil {
		return nil, err
	}
	return s.renderWhere(c.Request.Context(), acc, sc, node)
}

// renderWhere is a parsed filter as a condition on sc's table, within
// acc's reach: the one rendering of listWhere and ActorScope.
func (s *Server) renderWhere(ctx context.Context, acc *records.Grants, sc *records.Scope, node filter.Node) (*records.Cond, error) {
	// Plugin filter operators resolve through their plugin, as the caller.
	opt := acc.FilterOptions(sc.Catalog)
	opt.Operators = s.plugins.Operators()
	opt.Core = geo.Operators()
	ctx = pluginhost.WithActor(ctx, pluginActor(sc))
	sql, args, err := filter.RenderWith(ctx, sc.DB, sc.Catalog, sc.Table.Name, node, opt)
	if err != nil {
		return nil, err
	}
	c := &records.Cond{SQL: sql, Args: args}
	if filter.RowOnly(node) {
		// The same filter on a one-row stand-in for the table: the sync
		// pull judges a record's past state with it (records.SeenAt).
		c.As = func(ctx context.Context, alias string) (*records.Cond, error) {
			o := opt
			o.RootAlias = alias
			sql, args, err := filter.RenderWith(ctx, sc.DB, sc.Catalog, sc.Table.Name, node, o)
			if err != nil {
				return nil, err
			}
			return &records.Cond{SQL: sql, Args: args}, nil
		}
	}
	return c, nil
}
