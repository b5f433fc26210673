package pluginapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/records"
)

// revalidateWait is how long POST /plugins/{name}/revalidate waits for its
// job before answering 202 with the job to follow (?async=1: not at all).
const revalidateWait = 30 * time.Second

// GET /plugins/{name}/unchecked — the rows saved without the plugin's
// BeforeSave while it was down (PLUGINS.md, failure policy), oldest first,
// paged (page, per_page; optional tb), within the tables and rows the
// caller may read (the records gate).
func (s Deps) handleUnchecked(c *gin.Context) {
	page, err := api.PageParam("page", c.Query("page"))
	if err == nil {
		var per int
		if per, err = api.PageParam("per_page", c.Query("per_page")); err == nil {
			s.listUnchecked(c, page, per)
			return
		}
	}
	api.Fail(c, err)
}

func (s Deps) listUnchecked(c *gin.Context, page, per int) {
	a := api.AppOf(c)
	q := records.UncheckedQuery{Plugin: c.Param("name"), Table: c.Query("tb"), Page: page, PerPage: per}
	if s.Scopes != nil {
		q.Scope = func(table string) (*records.Scope, error) { return s.Scopes(c, table) }
	}
	data, total, err := records.ListUnchecked(c.Request.Context(), a.DB, q)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"plugin": q.Plugin, "total": total, "page": max(page, 1), "data": data})
}

// POST /plugins/{name}/revalidate — a job re-running the plugin's
// BeforeSave over its unchecked rows (pluginhost.RevalidateKind). The
// answer is the job's result when it ends within revalidateWait, else 202
// {code:"revalidation_started", job}.
func (s Deps) handleRevalidate(c *gin.Context) {
	ctx := c.Request.Context()
	a := api.AppOf(c)
	if s.Jobs == nil {
		api.Fail(c, jobs.ErrUnavailable)
		return
	}
	job, err := s.Plugins.StartRevalidate(ctx, s.Jobs, a.Name, api.ActorOf(c).UserID, c.Param("name"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	wait := revalidateWait
	if v := c.Query("async"); v == "1" || v == "true" {
		wait = 0
	}
	job = s.Jobs.Await(ctx, job, wait)
	if job.State != jobs.Done {
		jobs.AnswerUnfinished(c, job, "revalidation_started", "revalidation_failed")
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "revalidated", "job": jobs.Wire(job), "result": job.Result})
}
