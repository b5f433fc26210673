package jobs

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/wire"
)

// MaxPerPage bounds a page of GET /jobs.
const MaxPerPage = 100

// Routes are the jobs' (CONTRACT §10). A job is the app's: another app's
// job is not found. Its user reads and cancels it, and so does an admin;
// to anyone else it is not found either, so ids reveal nothing. With sys
// nil (a server built without a job system) every route answers 503
// jobs_unavailable.
func Routes(sys *System) []api.Route {
	h := handlers{sys: sys}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/jobs", Access: auth.AdminOnly, Handler: h.list},
		{Scope: api.App, Method: http.MethodGet, Path: "/jobs/:id", Access: auth.Enter, Handler: h.get},
		{Scope: api.App, Method: http.MethodDelete, Path: "/jobs/:id", Access: auth.Enter, Handler: h.cancel},
		{Scope: api.App, Method: http.MethodGet, Path: "/jobs/:id/events", Access: auth.Enter, Handler: h.events, Stream: true},
	}
}

type handlers struct{ sys *System }

// Wire is a job as the API answers it (CONTRACT §10): error and result are
// null when there is none.
func Wire(j Job) gin.H {
	h := gin.H{
		"id": j.ID, "kind": j.Kind, "state": j.State, "done": j.Done, "total": j.Total,
		"error": nil, "result": j.Result, "user": j.User, "cancel_requested": j.CancelRequested,
		"created_at": j.CreatedAt, "started_at": j.StartedAt, "finished_at": j.FinishedAt,
	}
	if j.Error != "" {
		h["error"] = j.Error
	}
	if j.ErrorCode != "" {
		h["error_code"], h["error_extra"] = j.ErrorCode, j.ErrorExtra
	}
	return h
}

// visible reads the path's job if the caller may see it; otherwise it has
// answered and ok is false.
func (h handlers) visible(c *gin.Context) (Job, bool) {
	if h.sys == nil {
		api.Fail(c, ErrUnavailable)
		return Job{}, false
	}
	id, ok := api.PathID(c, "id", ErrNotFound)
	if !ok {
		return Job{}, false
	}
	j, err := h.sys.Get(c.Request.Context(), id)
	if err == nil && !mayRead(c, j) {
		err = ErrNotFound.With("id", id)
	}
	if err != nil {
		api.Fail(c, err)
		return Job{}, false
	}
	return j, true
}

// mayRead: the job is the request's app's, and the caller enqueued it or
// is an admin.
func mayRead(c *gin.Context, j Job) bool {
	if j.App != api.AppOf(c).Name {
		return false
	}
	a := api.ActorOf(c)
	return a.Privilege <= auth.Admin || (a.UserID != 0 && a.UserID == j.User)
}

// GET /jobs/{id} — the job's fields.
func (h handlers) get(c *gin.Context) {
	if j, ok := h.visible(c); ok {
		api.Success(c, http.StatusOK, Wire(j))
	}
}

// DELETE /jobs/{id} — cancels the job and answers it: cancelled when it
// was queued; still running with cancel_requested while its function
// stops. A finished job → 409 job_finished.
func (h handlers) cancel(c *gin.Context) {
	j, ok := h.visible(c)
	if !ok {
		return
	}
	j, err := h.sys.Cancel(c.Request.Context(), j.ID)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, Wire(j))
}

// GET /jobs — {total, page, per_page, data} the app's jobs newest first
// (admins); page, per_page (alias limit; default 20, at most 100).
func (h handlers) list(c *gin.Context) {
	if h.sys == nil {
		api.Fail(c, ErrUnavailable)
		return
	}
	page, per := 1, 20
	for _, p := range []struct {
		name string
		dst  *int
		max  int
	}{{"page", &page, 1 << 30}, {"per_page", &per, MaxPerPage}, {"limit", &per, MaxPerPage}} {
		if v := c.Query(p.name); v != "" {
			n, err := wire.Int(v)
			if err != nil || n < 1 {
				api.Fail(c, errs.New(errs.Invalid, "invalid_parameter", p.name+" must be a whole number from 1").With("parameter", p.name))
				return
			}
			*p.dst = int(min(n, int64(p.max)))
		}
	}
	list, total, err := h.sys.List(c.Request.Context(), api.AppOf(c).Name, page, per)
	if err != nil {
		api.Fail(c, err)
		return
	}
	data := make([]gin.H, len(list))
	for i, j := range list {
		data[i] = Wire(j)
	}
	api.Success(c, http.StatusOK, gin.H{"total": total, "page": page, "per_page": per, "data": data})
}
