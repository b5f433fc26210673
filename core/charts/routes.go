package charts

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/wire"
)

// Routes are the charts' (CONTRACT §10): data for any reader of the
// table; saved charts per user, shared with everyone when global.
func Routes(host api.Host, now func() time.Time) []api.Route {
	h := handlers{host: host, now: now}
	return []api.Route{
		{Scope: api.App, Method: http.MethodPost, Path: "/chart/data", Access: auth.Enter, Handler: h.data},
		{Scope: api.App, Method: http.MethodGet, Path: "/charts", Access: auth.Enter, Handler: h.list},
		{Scope: api.App, Method: http.MethodPost, Path: "/charts", Access: auth.AddNew, Handler: h.save},
		{Scope: api.App, Method: http.MethodPost, Path: "/chart/:id/share", Access: auth.Enter, Handler: api.OwnedAction(ErrNotFound, "ok_sharing_chart", setGlobal(true))},
		{Scope: api.App, Method: http.MethodPost, Path: "/chart/:id/unshare", Access: auth.Enter, Handler: api.OwnedAction(ErrNotFound, "ok_unsharing_chart", setGlobal(false))},
		{Scope: api.App, Method: http.MethodDelete, Path: "/chart/:id", Access: auth.Enter, Handler: api.OwnedAction(ErrNotFound, "ok_chart_erase", deleteChart)},
	}
}

type handlers struct {
	host api.Host
	now  func() time.Time
}

type body struct {
	Name       string         `json:"name"`
	Definition map[string]any `json:"definition"`
}

// compute checks and runs a definition as the caller.
func (h handlers) compute(c *gin.Context, raw map[string]any) (*Data, error) {
	if raw == nil {
		return nil, errs.New(errs.Invalid, "parameter_missing", "definition is required")
	}
	var d Definition
	if err := wire.Assign(raw, &d, wire.Options{}); err != nil {
		return nil, api.DecodeErr(err)
	}
	if strings.TrimSpace(d.Table) == "" {
		return nil, errs.New(errs.Invalid, "parameter_missing", "definition.tb is required")
	}
	sc, err := h.host.RecordScope(c, d.Table)
	if err != nil {
		return nil, err
	}
	cond, err := h.host.Condition(c, sc, d.Filter, d.Search)
	if err != nil {
		return nil, err
	}
	return Compute(c.Request.Context(), sc, &d, cond)
}

// POST /chart/data {definition} — the chart's data, not saved.
func (h handlers) data(c *gin.Context) {
	var b body
	if err := api.BindExact(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	d, err := h.compute(c, b.Definition)
	if err != nil {
		api.Fail(c, err)
		return
	}
	out := gin.H{"type": d.Type}
	if d.Value != nil {
		out["value"], out["label"] = *d.Value, d.Label
	} else {
		out["labels"] = d.Labels
		if d.Series != nil {
			out["series"] = d.Series
		} else {
			out["data"] = d.Data
		}
		out["truncated"] = d.Truncated
	}
	api.Success(c, http.StatusOK, out)
}

// GET /charts — {charts}: the caller's and the global ones.
func (h handlers) list(c *gin.Context) {
	cs, err := ListCharts(c.Request.Context(), api.AppOf(c).DB, api.ActorOf(c).UserID)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"charts": cs})
}

// POST /charts {name, definition} — checked by computing it, then kept
// (with whatever else the client put in it: its style).
func (h handlers) save(c *gin.Context) {
	var b body
	if err := api.BindExact(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	b.Name = strings.TrimSpace(b.Name)
	if b.Name == "" {
		api.Fail(c, errs.New(errs.Invalid, "parameter_missing", "name is required"))
		return
	}
	if _, err := h.compute(c, b.Definition); err != nil {
		api.Fail(c, err)
		return
	}
	ch, err := SaveChart(c.Request.Context(), api.AppOf(c).DB, b.Name, b.Definition, api.ActorOf(c).UserID, h.now())
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_save_chart", "chart": ch})
}

// setGlobal shares (or unshares) a chart: its owner or an admin.
func setGlobal(on bool) func(c *gin.Context, id, user int64, admin bool) error {
	return func(c *gin.Context, id, user int64, admin bool) error {
		return SetGlobal(c.Request.Context(), api.AppOf(c).DB, id, user, admin, on)
	}
}

// deleteChart deletes a chart: its owner or an admin.
func deleteChart(c *gin.Context, id, user int64, admin bool) error {
	return DeleteChart(c.Request.Context(), api.AppOf(c).DB, id, user, admin)
}
