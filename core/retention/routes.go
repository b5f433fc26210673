package retention

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/jobs"
)

// ErrNoJobs answers POST /retention/apply on a server built without a job
// system.
var ErrNoJobs = errs.New(errs.Unavailable, "jobs_unavailable", "this server runs no jobs")

// Routes are the retention routes, for the application's admins.
func Routes(sys *jobs.System) []api.Route {
	h := handlers{jobs: sys}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/retention", Access: auth.AdminOnly, Handler: h.get},
		{Scope: api.App, Method: http.MethodPut, Path: "/retention", Access: auth.AdminOnly, Handler: h.put},
		{Scope: api.App, Method: http.MethodPost, Path: "/retention/apply", Access: auth.AdminOnly, Handler: h.apply},
	}
}

type handlers struct {
	jobs *jobs.System // nil: no job runs here
}

// answer is the answer's form of s.
func answer(s Settings) map[string]any {
	return map[string]any{"versions_keep": s.VersionsKeep, "versions_days": s.VersionsDays, "history_days": s.HistoryDays, "log_days": s.LogDays}
}

// GET /retention — {retention: {versions_keep, versions_days, history_days,
// log_days}}.
func (h handlers) get(c *gin.Context) {
	s, err := Read(c.Request.Context(), api.AppOf(c))
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"retention": answer(s)})
}

// PUT /retention {versions_keep?, versions_days?, history_days?, log_days?} — only
// the keys sent change, all checked before any is stored:
// {code: retention_saved, retention}.
func (h handlers) put(c *gin.Context) {
	var body map[string]any
	if err := api.BindExact(c, &body); err != nil {
		api.Fail(c, err)
		return
	}
	// The shape GET answers is accepted too.
	if inner, ok := body["retention"].(map[string]any); ok && len(body) == 1 {
		body = inner
	}
	ctx, a := c.Request.Context(), api.AppOf(c)
	s, err := Read(ctx, a)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if s, err = Patch(s, body); err != nil {
		api.Fail(c, err)
		return
	}
	if err := Write(ctx, a, s); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "retention_saved", "retention": answer(s)})
}

// POST /retention/apply — queues the job now: 202 {code:
// retention_started, job}. Its result is a Result.
func (h handlers) apply(c *gin.Context) {
	if h.jobs == nil {
		api.Fail(c, ErrNoJobs)
		return
	}
	job, err := h.jobs.Enqueue(c.Request.Context(), api.AppOf(c).Name, api.ActorOf(c).UserID, Kind, struct{}{})
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusAccepted, gin.H{"code": "retention_started", "job": jobs.Wire(job)})
}
