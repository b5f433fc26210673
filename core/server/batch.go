package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/batch"
	"github.com/strata-archaeo/strata/core/records"
)

// batchRoutes are the batch endpoint's (core/batch). Its requests name
// their tables, so the gate only asks for a signed-in caller; each request
// is checked with the caller's level on its own table.
func (s *Server) batchRoutes() []Route {
	return []Route{
		{Scope: App, Method: http.MethodPost, Path: "/batch", Access: auth.Enter, Handler: s.handleBatch},
	}
}

// POST /batch — record creations, updates and deletions in one
// transaction: {"requests":[{method,url,body}]} or {"create"|"update"|"delete":{<tb>:[...]}}.
func (s *Server) handleBatch(c *gin.Context) {
	var raw map[string]any
	if err := decodeBody(c, &raw); err != nil {
		s.fail(c, err)
		return
	}
	ops, err := batch.Parse(raw, appOf(c).Name, s.cfg.MaxBatchRequests)
	if err != nil {
		s.fail(c, err)
		return
	}
	scope := func(table string) (*records.Scope, error) { return s.recordScope(c, table) }
	results, err := batch.Run(c.Request.Context(), appOf(c).DB, scope, ops)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "batch_saved", "results": results})
}
