package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/records"
)

// searchRoutes are the helpers of search forms and record editors, the
// table list and the export (SPEC §4.4, CONTRACT §5). gin matches the
// static segments (field-options, check-unique, link-candidates) before
// the :id of /record/:tb/:id.
func (s *Server) searchRoutes() []Route {
	return []Route{
		{Scope: App, Method: http.MethodGet, Path: "/tables", Access: auth.Enter, Handler: s.handleTables},
		{Scope: App, Method: http.MethodGet, Path: "/records/:tb/export", Access: auth.Read, Handler: s.handleExport, SignedLink: true, LongAnswer: true},
		{Scope: App, Method: http.MethodPost, Path: "/records/:tb/export-link", Access: auth.Read, Handler: s.handleExportLink},
	}
}

// GET /tables — the tables the caller may read, in display order.
func (s *Server) handleTables(c *gin.Context) {
	ctx := c.Request.Context()
	a := appOf(c)
	cat, err := s.recordCatalog(ctx, a)
	if err != nil {
		s.fail(c, err)
		return
	}
	cat = s.relabel(c, cat)
	acc, err := s.callerAccess(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"tables": records.ReadableTables(cat, func(t string) int { return acc.Level(cat, t) })})
}
