package pluginhost

import (
	"context"
	"encoding/json"
	"net/textproto"
	"strconv"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/pluginsdk"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// JobKind is the job kind of a job route's call (pluginsdk.Route.Job): the
// server's job system runs the call, so it has the system's progress,
// cancel, and a result any node can read, and the plugin reports progress
// through Host.JobProgress.
const JobKind = "plugin_route"

var (
	errJobRoute    = errs.New(errs.Unavailable, "plugin_unavailable", "the plugin no longer offers this job route")
	errJobNotFound = errs.New(errs.NotFound, "job_not_found", "no job of this plugin with this id is running here")
)

// jobArgs are a job route's call as its job stores it: everything
// HandleRequest needs, the actor as it was when the call was made.
type jobArgs struct {
	Plugin   string            `json:"plugin"`
	Method   string            `json:"method"`
	Route    string            `json:"route"`
	Path     string            `json:"path"`
	Params   map[string]string `json:"params,omitempty"`
	RawQuery string            `json:"raw_query,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	Body     []byte            `json:"body,omitempty"`
	Actor    records.Actor     `json:"actor"`
}

// JobResult is a job route's answer as its job keeps it: the plugin's
// status and body (JSON kept as JSON, anything else as text) and its
// content type.
type JobResult struct {
	Status      int             `json:"status"`
	ContentType string          `json:"content_type,omitempty"`
	Body        json.RawMessage `json:"body"`
}

// jobCall is a job route's call running on this node.
type jobCall struct {
	plugin string
	run    *jobs.Run
	ctx    context.Context
}

// RegisterJobs makes sys run the calls of job routes and the
// revalidations of unchecked rows (unchecked.go), before sys.Start, on
// every node.
func (m *Manager) RegisterJobs(sys *jobs.System) {
	sys.Register(JobKind, m.runJobRoute)
	sys.Register(RevalidateKind, m.runRevalidate)
}

// StartJob enqueues req, a call of a job route, as a job of the caller's
// application and user.
func (m *Manager) StartJob(ctx context.Context, sys *jobs.System, req Request) (jobs.Job, error) {
	a := jobArgs{Plugin: req.Route.Plugin, Method: req.Route.Method, Route: req.Route.Path, Path: req.Path,
		Params: req.Params, RawQuery: req.RawQuery, Headers: req.Headers, Body: req.Body}
	if req.Actor != nil {
		a.Actor = *req.Actor
	}
	return sys.Enqueue(ctx, a.Actor.App, a.Actor.UserID, JobKind, a)
}

// runJobRoute calls the plugin's route within the route's deadline, with
// the job's id in pluginsdk.JobHeader, and keeps its answer as the job's
// result. An answer of 4xx or 5xx is still a result (the client reads it
// as it would have the route's); only a call that did not happen fails
// the job.
func (m *Manager) runJobRoute(ctx context.Context, run *jobs.Run) (any, error) {
	var a jobArgs
	if err := run.Bind(&a); err != nil {
		return nil, err
	}
	var rt *Route
	for _, r := range m.Routes() {
		if r.Plugin == a.Plugin && r.Method == a.Method && r.Path == a.Route && r.Job {
			rt = &r
			break
		}
	}
	if rt == nil {
		return nil, errJobRoute.With("plugin", a.Plugin).With("route", a.Method+" "+a.Route)
	}
	id := strconv.FormatInt(run.ID(), 10)
	headers := map[string]string{}
	for k, v := range a.Headers {
		headers[k] = v
	}
	headers[pluginsdk.JobHeader] = id
	m.jobRuns.Store(id, &jobCall{plugin: a.Plugin, run: run, ctx: ctx})
	defer m.jobRuns.Delete(id)
	actor := a.Actor
	resp, err := m.HandleRequest(ctx, Request{Route: *rt, Path: a.Path, Params: a.Params, RawQuery: a.RawQuery,
		Headers: headers, Body: a.Body, Actor: &actor})
	if err != nil {
		return nil, err
	}
	out := JobResult{Status: resp.Status}
	for k, v := range resp.Headers {
		if textproto.CanonicalMIMEHeaderKey(k) == "Content-Type" {
			out.ContentType = v
		}
	}
	if json.Valid(resp.Body) && len(resp.Body) > 0 {
		out.Body = resp.Body
	} else {
		out.Body, _ = json.Marshal(string(resp.Body))
	}
	return out, nil
}

// JobProgress records a job route's progress for the job's system; only
// the plugin whose call the job runs may report on it.
func (h *hostServer) JobProgress(_ context.Context, req *pluginv1.JobProgressRequest) (*pluginv1.JobProgressResponse, error) {
	v, ok := h.m.jobRuns.Load(req.GetJob())
	if !ok || v.(*jobCall).plugin != h.p.name {
		return nil, h.hostError("JobProgress", errJobNotFound.With("job", req.GetJob()))
	}
	if req.GetDone() < 0 || req.GetTotal() < 0 {
		return nil, h.hostError("JobProgress", errs.New(errs.Invalid, "invalid_progress", "done and total are not negative"))
	}
	jc := v.(*jobCall)
	jc.run.Progress(req.GetDone(), req.GetTotal())
	return &pluginv1.JobProgressResponse{Cancelled: jc.ctx.Err() != nil}, nil
}
