package jobs

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/errs"
)

// Stream timing: how often a stream reads the job, and how often an idle
// one sends a comment so that proxies keep it open.
var (
	streamInterval  = 250 * time.Millisecond
	streamKeepAlive = 15 * time.Second
)

// GET /jobs/{id}/events — Server-Sent Events: an event "job" (data: the
// job's fields as GET /jobs/{id}) at once and at every change of state or
// progress; the stream ends after the event of a finished job (an
// EventSource client should close on it, or it reconnects and receives
// that last event again). It also ends when the client goes away or the
// server stops; a read that fails ends it with an event "error" (data:
// {code, message}).
func (h handlers) events(c *gin.Context) {
	j, ok := h.visible(c)
	if !ok {
		return
	}
	w := c.Writer
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	send := func(event string, v any) bool {
		data, err := json.Marshal(v)
		if err == nil {
			_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
		}
		w.Flush()
		return err == nil
	}
	if !send("job", Wire(j)) || j.State.Finished() {
		return
	}
	ctx := c.Request.Context()
	tick := time.NewTicker(streamInterval)
	defer tick.Stop()
	idle := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.sys.quit:
			return
		case <-tick.C:
		}
		next, err := h.sys.Get(ctx, j.ID)
		if err != nil {
			if ctx.Err() == nil {
				e, ok := errs.As(err)
				if !ok {
					_ = c.Error(err) // logged with the request
					e = api.ErrInternal
				}
				send("error", gin.H{"code": e.Code, "message": e.Message})
			}
			return
		}
		if changed(j, next) {
			j, idle = next, time.Now()
			if !send("job", Wire(j)) || j.State.Finished() {
				return
			}
		} else if time.Since(idle) >= streamKeepAlive {
			idle = time.Now()
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			w.Flush()
		}
	}
}

func changed(a, b Job) bool {
	return a.State != b.State || a.Done != b.Done || a.Total != b.Total || a.CancelRequested != b.CancelRequested
}
