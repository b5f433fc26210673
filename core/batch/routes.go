package batch

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/records"
)

// Routes are the batch endpoint's. Its requests name their tables, so the
// gate only asks for a signed-in caller; each request is checked with the
// caller's level on its own table (host.RecordScope). maxRequests caps the
// requests of one batch.
func Routes(host api.Host, maxRequests int) []api.Route {
	h := handlers{host: host, max: maxRequests}
	return []api.Route{
		{Scope: api.App, Method: http.MethodPost, Path: "/batch", Access: auth.Enter, Handler: h.run},
	}
}

type handlers struct {
	host api.Host
	max  int
}

// POST /batch — record creations, updates and deletions in one
// transaction: {"requests":[{method,url,body}]} or {"create"|"update"|"delete":{<tb>:[...]}}.
func (h handlers) run(c *gin.Context) {
	var raw map[string]any
	if err := api.BindExact(c, &raw); err != nil {
		api.Fail(c, err)
		return
	}
	a := api.AppOf(c)
	ops, err := Parse(raw, a.Name, h.max)
	if err != nil {
		api.Fail(c, err)
		return
	}
	scope := func(table string) (*records.Scope, error) { return h.host.RecordScope(c, table) }
	results, err := Run(c.Request.Context(), a.DB, scope, ops)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "batch_saved", "results": results})
}
