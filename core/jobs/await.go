package jobs

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/errs"
)

// Await waits up to d for job to end and returns it as last seen: a
// request that started a job answers with its outcome when it is quick,
// with the job to follow when it is not.
func (s *System) Await(ctx context.Context, job Job, d time.Duration) Job {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if j, err := s.Wait(ctx, job.ID); err == nil || j.ID != 0 {
		return j
	}
	return job
}

// AnswerUnfinished answers for a job that did not end done: 202 with code
// started while it runs; for a failed or cancelled one its coded refusal
// (Err), else 500 with code failed and the job's message. The job goes
// with every answer.
func AnswerUnfinished(c *gin.Context, job Job, started, failed string) {
	switch job.State {
	case Failed, Cancelled:
		if e, ok := errs.As(job.Err()); ok {
			api.Fail(c, e.With("job", Wire(job)))
			return
		}
		c.JSON(http.StatusInternalServerError, gin.H{"status": "error", "code": failed, "message": job.Error, "job": Wire(job)})
	default:
		api.Success(c, http.StatusAccepted, gin.H{"code": started, "job": Wire(job)})
	}
}
