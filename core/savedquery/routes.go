package savedquery

import (
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
)

// Routes are the saved queries' (CONTRACT §10): any signed-in user keeps
// their own, shares them, and runs their own and the shared ones.
func Routes(host api.Host, now func() time.Time) []api.Route {
	h := handlers{host: host, now: now}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/saved-queries", Access: auth.Enter, Handler: h.list},
		{Scope: api.App, Method: http.MethodPost, Path: "/saved-queries", Access: auth.Enter, Handler: h.create},
		{Scope: api.App, Method: http.MethodPost, Path: "/saved-query/:id/share", Access: auth.Enter, Handler: api.OwnedAction(ErrNotFound, "ok_sharing_query", h.setShared(true))},
		{Scope: api.App, Method: http.MethodPost, Path: "/saved-query/:id/unshare", Access: auth.Enter, Handler: api.OwnedAction(ErrNotFound, "ok_unsharing_query", h.setShared(false))},
		{Scope: api.App, Method: http.MethodDelete, Path: "/saved-query/:id", Access: auth.Enter, Handler: api.OwnedAction(ErrNotFound, "ok_erasing_query", deleteQuery)},
		{Scope: api.App, Method: http.MethodGet, Path: "/saved-query/:id/run", Access: auth.Enter, Handler: h.run},
	}
}

type handlers struct {
	host api.Host
	now  func() time.Time
}

var errMissing = errs.New(errs.Invalid, "parameter_missing", "name, tb and query are required")

// GET /saved-queries — {queries: [...]}: the caller's and the shared ones.
func (h handlers) list(c *gin.Context) {
	qs, err := List(c.Request.Context(), api.AppOf(c).DB, api.ActorOf(c).UserID)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"queries": qs})
}

type createBody struct {
	Name       string         `json:"name"`
	Tb         string         `json:"tb"`
	Query      map[string]any `json:"query"`
	Definition map[string]any `json:"definition"`
}

// POST /saved-queries {name, tb, query} (or definition) — the definition
// is checked as a list of tb by the caller before it is kept.
func (h handlers) create(c *gin.Context) {
	var b createBody
	if err := api.BindExact(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	def := b.Query
	if def == nil {
		def = b.Definition
	}
	b.Name, b.Tb = strings.TrimSpace(b.Name), strings.TrimSpace(b.Tb)
	if b.Name == "" || b.Tb == "" || def == nil {
		api.Fail(c, errMissing)
		return
	}
	if utf8.RuneCountInString(b.Name) > 200 {
		api.Fail(c, errs.New(errs.Invalid, "invalid_parameter", "name is longer than 200 characters").With("parameter", "name"))
		return
	}
	if _, err := h.host.ListRecords(c, b.Tb, def, true); err != nil {
		api.Fail(c, err)
		return
	}
	q, err := Create(c.Request.Context(), api.AppOf(c).DB, b.Name, b.Tb, def, api.ActorOf(c).UserID, h.now())
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_saved_query", "query": q})
}

// setShared shares (or unshares) a query: its owner or an admin.
func (h handlers) setShared(on bool) func(c *gin.Context, id, user int64, admin bool) error {
	return func(c *gin.Context, id, user int64, admin bool) error {
		return SetShared(c.Request.Context(), api.AppOf(c).DB, id, user, admin, on, h.now())
	}
}

// deleteQuery deletes a query: its owner or an admin.
func deleteQuery(c *gin.Context, id, user int64, admin bool) error {
	return Delete(c.Request.Context(), api.AppOf(c).DB, id, user, admin)
}

// GET /saved-query/{id}/run[?page=&per_page=] — as GET /records/{tb}, as
// the runner, plus {query}.
func (h handlers) run(c *gin.Context) {
	id, ok := api.PathID(c, "id", ErrNotFound)
	if !ok {
		return
	}
	q, err := Get(c.Request.Context(), api.AppOf(c).DB, id, api.ActorOf(c).UserID)
	if err != nil {
		api.Fail(c, err)
		return
	}
	out, err := h.host.ListRecords(c, q.Table, q.Definition, false)
	if err != nil {
		api.Fail(c, err)
		return
	}
	out["query"] = q
	api.Success(c, http.StatusOK, out)
}
