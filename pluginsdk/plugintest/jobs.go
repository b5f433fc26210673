package plugintest

import (
	"context"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// JobReport is one Host.JobProgress call.
type JobReport struct {
	Job         string
	Done, Total int64
}

// JobReports are the progress reports the plugin sent, in order.
func (h *FakeHost) JobReports() []JobReport {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.jobReports)
}

// CancelJob makes JobProgress answer cancelled for job from now on. Call
// a job route with the job's id in pluginsdk.JobHeader to test it
// (Harness.Do with a Header).
func (h *FakeHost) CancelJob(job string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cancelledJobs == nil {
		h.cancelledJobs = map[string]bool{}
	}
	h.cancelledJobs[job] = true
}

// JobProgress implements the Host service: it records the report. Any
// job id is accepted (the fake runs no jobs); an empty one is refused, as
// the server refuses ids of jobs it does not run for the plugin.
func (h *FakeHost) JobProgress(_ context.Context, req *pluginv1.JobProgressRequest) (*pluginv1.JobProgressResponse, error) {
	if req.GetJob() == "" {
		return nil, status.Error(codes.NotFound, "job_not_found: no job of this plugin with this id is running")
	}
	if req.GetDone() < 0 || req.GetTotal() < 0 {
		return nil, status.Error(codes.InvalidArgument, "done and total are not negative")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.jobReports = append(h.jobReports, JobReport{Job: req.GetJob(), Done: req.GetDone(), Total: req.GetTotal()})
	return &pluginv1.JobProgressResponse{Cancelled: h.cancelledJobs[req.GetJob()]}, nil
}
