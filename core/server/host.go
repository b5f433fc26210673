package server

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/files"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/wire"
)

// The server is the areas' api.Host: what they need from its caches and
// the caller's grants, through two methods rather than its internals.

// RecordScope is the caller's scope on table (recordScope).
func (s *Server) RecordScope(c *gin.Context, table string) (*records.Scope, error) {
	return s.recordScope(c, table)
}

// Catalog is the app's catalog as the API shows it (recordCatalog).
func (s *Server) Catalog(ctx context.Context, a *apps.App) (*schema.Catalog, error) {
	return s.recordCatalog(ctx, a)
}

// ListRecords is a page of table's records as GET /records/{tb} answers
// it, with the parameters of def (a saved query's definition: filter,
// search, sort_field, sort_dir, columns, per_page) and the request's query
// string for what def leaves out (page, per_page). With check, the list is
// only validated (one row, no total) and nil is answered.
func (s *Server) ListRecords(c *gin.Context, table string, def map[string]any, check bool) (gin.H, error) {
	sc, err := s.recordScope(c, table)
	if err != nil {
		return nil, err
	}
	var body listBody
	if err := wire.Assign(def, &body, wire.Options{ExactNumbers: true}); err != nil {
		return nil, decodeErr(err)
	}
	qv := c.Request.URL.Query()
	// The run's paging wins over the definition's.
	if qv.Has("page") {
		body.Page = nil
	}
	if qv.Has("per_page") {
		body.PerPage = nil
	}
	if check {
		qv = url.Values{"per_page": {"1"}, "total": {"false"}}
		body.Page, body.PerPage, body.Total = nil, nil, nil
	}
	q, err := s.listParamsFrom(c, sc, body, qv)
	if err != nil {
		return nil, err
	}
	res, err := records.List(c.Request.Context(), sc, q)
	if err != nil || check {
		return nil, err
	}
	if q.IDsOnly {
		return gin.H{"total": totalOf(res), "ids": res.IDs}, nil
	}
	return gin.H{"total": totalOf(res), "fields": res.Fields, "data": res.Data, "can_add": sc.CanAdd()}, nil
}

// Condition is a list's filter (the filter language, JSON) and quick
// search as a condition on the scope's table, validated against its
// catalog with the plugin operators, as GET /records/{tb} reads them.
func (s *Server) Condition(c *gin.Context, sc *records.Scope, filter json.RawMessage, search string) (*records.Cond, error) {
	return s.listWhere(c, sc, filter, search)
}

// ScopeFor is user's scope on table outside any request (a job working
// for them, possibly on another node): their account and overrides read
// afresh, so a user demoted or removed since they started the work no
// longer has its rights.
func (s *Server) ScopeFor(ctx context.Context, a *apps.App, userID int64, table string) (*records.Scope, error) {
	u, err := auth.FindUser(ctx, a.DB, userID)
	if err != nil {
		return nil, err
	}
	cat, err := s.recordCatalog(ctx, a)
	if err != nil {
		return nil, err
	}
	list, err := auth.ListTablePrivileges(ctx, a.DB, u.ID)
	if err != nil {
		return nil, err
	}
	acc := records.NewGrants(&auth.Actor{UserID: u.ID, Name: u.Name, Email: u.Email, Privilege: u.Privilege}, list)
	sc, err := acc.Scope(ctx, a.DB, cat, table)
	if err != nil {
		return nil, err
	}
	sc.Now, sc.App = s.now, a.Name
	s.addPluginScope(sc, a.Name)
	sc.Files = files.Section{}
	return sc, nil
}

// ActorScope is actor's scope on table, and filter (the filter language,
// JSON; empty: none) as a condition on it, outside a request: a realtime
// stream applying on its own node a subscription set that another node
// validated for the same actor, or building its subscriber's view of a
// presence event. It is the request's gate (Grants.Scope, the plugin
// scope, renderWhere) on the actor the stream authenticated, its
// overrides read afresh; the catalog is the app's, without a request's
// Accept-Language relabelling.
func (s *Server) ActorScope(ctx context.Context, a *apps.App, actor *auth.Actor, table string, filterJSON json.RawMessage) (*records.Scope, *records.Cond, error) {
	cat, err := s.recordCatalog(ctx, a)
	if err != nil {
		return nil, nil, err
	}
	var list []auth.TablePrivilege
	if actor.UserID != 0 {
		if list, err = auth.ListTablePrivileges(ctx, a.DB, actor.UserID); err != nil {
			return nil, nil, err
		}
	}
	acc := records.NewGrants(actor, list)
	sc, err := acc.Scope(ctx, a.DB, cat, table)
	if err != nil {
		return nil, nil, err
	}
	sc.Now = s.now
	s.addPluginScope(sc, a.Name)
	sc.Files = files.Section{}
	if b := bytes.TrimSpace(filterJSON); len(b) == 0 || string(b) == "null" {
		return sc, nil, nil
	}
	node, err := filter.ParseJSON(filterJSON)
	if err != nil {
		return nil, nil, err
	}
	cond, err := s.renderWhere(ctx, acc, sc, node)
	if err != nil {
		return nil, nil, err
	}
	return sc, cond, nil
}

// EndStreams ends the open live streams (the process is shutting down:
// http.Server.RegisterOnShutdown), so that they do not hold it.
func (s *Server) EndStreams() { s.realtime.EndStreams() }
