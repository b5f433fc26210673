package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/records"
)

// versionRoutes are record history and the caller's recent records.
func (s *Server) versionRoutes() []Route {
	return []Route{
		{Scope: App, Method: http.MethodGet, Path: "/record/:tb/:id/versions", Access: auth.Read, Handler: s.handleVersions},
		{Scope: App, Method: http.MethodGet, Path: "/record/:tb/deleted", Access: auth.Read, Handler: s.handleDeleted},
		{Scope: App, Method: http.MethodGet, Path: "/version/:id", Access: auth.Read, Handler: s.handleVersion},
		{Scope: App, Method: http.MethodPost, Path: "/version/:id/restore", Access: auth.AdminOnly, Handler: s.handleRestore},
		{Scope: App, Method: http.MethodGet, Path: "/history", Access: auth.Enter, Handler: s.handleHistory},
	}
}

// GET /record/{tb}/{id}/versions?page=&per_page= — one page, newest
// first, with the total.
func (s *Server) handleVersions(c *gin.Context) {
	sc, id, ok := s.recordTarget(c)
	if !ok {
		return
	}
	var err error
	var page [2]int
	for i, key := range []string{"page", "per_page"} {
		if page[i], err = pageParam(key, c.Query(key)); err != nil {
			s.fail(c, err)
			return
		}
	}
	vs, total, err := records.Versions(c.Request.Context(), sc, id, page[0], page[1])
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"versions": vs, "total": total})
}

// GET /record/{tb}/deleted — deleted records that can be restored.
func (s *Server) handleDeleted(c *gin.Context) {
	sc, err := s.recordScope(c, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	vs, err := records.Deleted(c.Request.Context(), sc)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"deleted": vs})
}

// versionScope finds the version's table and checks access there.
func (s *Server) versionScope(c *gin.Context, access auth.Access) (*records.Scope, int64, error) {
	id, err := parseIDString(c.Param("id"))
	if err != nil {
		return nil, 0, err
	}
	tb, err := records.VersionTable(c.Request.Context(), appOf(c).DB, id)
	if err != nil {
		return nil, 0, err
	}
	sc, err := s.scopeAt(c, tb, access)
	return sc, id, err
}

// GET /version/{id} — the snapshot and the record's current state.
func (s *Server) handleVersion(c *gin.Context) {
	sc, id, err := s.versionScope(c, auth.Read)
	if err != nil {
		s.fail(c, err)
		return
	}
	v, current, err := records.GetVersion(c.Request.Context(), sc, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	// A deleted record's current state is {core:null, plugins:null}:
	// the shape stays, as clients read current.core.
	var cur any = gin.H{"core": nil, "plugins": nil}
	if current != nil {
		cur = current
	}
	success(c, http.StatusOK, gin.H{"version": v, "current": cur, "changes": records.Diff(v.Content, current)})
}

type restoreBody struct {
	Fields         []string `json:"fields"`
	RestorePlugins []string `json:"restore_plugins"`
}

// POST /version/{id}/restore — whole record or chosen fields (admin).
func (s *Server) handleRestore(c *gin.Context) {
	sc, id, err := s.versionScope(c, auth.AdminOnly)
	if err != nil {
		s.fail(c, err)
		return
	}
	var body restoreBody
	if c.Request.ContentLength != 0 {
		if err := decodeBody(c, &body); err != nil {
			s.fail(c, err)
			return
		}
	}
	res, err := records.Restore(c.Request.Context(), sc, id, body.Fields, body.RestorePlugins)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "success_restored", "id": res.ID, "created": res.Created, "skipped": res.Skipped})
}

// GET /history — the caller's recently created or changed records.
func (s *Server) handleHistory(c *gin.Context) {
	ctx := c.Request.Context()
	a := appOf(c)
	cat, err := s.recordCatalog(ctx, a)
	if err != nil {
		s.fail(c, err)
		return
	}
	acc, err := s.callerAccess(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	h, err := records.History(ctx, a.DB, cat, acc.actor.UserID, acc.tableAccess(a.DB, cat))
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"history": h})
}
