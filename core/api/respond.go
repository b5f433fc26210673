package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/jsonout"
)

// StatusOf maps an error kind to its HTTP status (CONTRACT §1).
func StatusOf(k errs.Kind) int {
	switch k {
	case errs.Invalid:
		return http.StatusBadRequest
	case errs.Unauthenticated:
		return http.StatusUnauthorized
	case errs.Forbidden:
		return http.StatusForbidden
	case errs.NotFound:
		return http.StatusNotFound
	case errs.MethodNotAllowed:
		return http.StatusMethodNotAllowed
	case errs.Conflict:
		return http.StatusConflict
	case errs.TooLarge:
		return http.StatusRequestEntityTooLarge
	case errs.Locked:
		return http.StatusLocked
	case errs.BadGateway:
		return http.StatusBadGateway
	case errs.Unavailable:
		return http.StatusServiceUnavailable
	case errs.Gone:
		return http.StatusGone
	case errs.Timeout:
		return http.StatusGatewayTimeout
	case errs.ClientTimeout:
		return http.StatusRequestTimeout
	case errs.PreconditionFailed:
		return http.StatusPreconditionFailed
	case errs.TooManyRequests:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

// ErrInternal is what a client sees of an error without a code.
var ErrInternal = errs.New(errs.Internal, "internal_error", "an internal error occurred; it has been logged")

// Success writes {"status":"success", ...body}.
func Success(c *gin.Context, status int, body gin.H) {
	if body == nil {
		body = gin.H{}
	}
	body["status"] = "success"
	// What gin's PureJSON writes (no \u003c escapes: this is an API, not
	// HTML), encoded without encoding/json's reflection (jsonout).
	buf := answerBuffers.Get().(*[]byte)
	b, err := jsonout.Append((*buf)[:0], map[string]any(body))
	if err != nil {
		panic(err) // as gin's renderer does with an encoding error
	}
	c.Data(status, jsonContentType, append(b, '\n'))
	if cap(b) <= maxPooledAnswer {
		*buf = b
		answerBuffers.Put(buf)
	}
}

// jsonContentType is gin's for JSON.
const jsonContentType = "application/json; charset=utf-8"

// answerBuffers keep the encoding buffers of answers up to maxPooledAnswer.
var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

const maxPooledAnswer = 1 << 20

// Fail writes the error envelope for err and aborts the chain. An error
// without a code is answered as a generic internal_error and attached to
// the request (c.Error), where the server's request log writes it with
// its cause: no internal detail reaches the client.
func Fail(c *gin.Context, err error) {
	e, ok := errs.As(err)
	if !ok || e.Kind == errs.Internal {
		if errors.Is(err, context.Canceled) && c.Request.Context().Err() != nil {
			// The client went away: nothing is logged, but an answer is
			// still written (it is dropped if the connection is gone), so
			// that no request can ever end as an empty 200.
			c.Abort()
			c.PureJSON(http.StatusServiceUnavailable, gin.H{"status": "error", "code": "request_cancelled", "message": "the request was cancelled before it was answered"})
			return
		}
		_ = c.Error(err)
		e = ErrInternal
	}
	body := gin.H{"status": "error", "code": e.Code, "message": e.Message}
	for k, v := range e.Extra {
		body[k] = v
	}
	if secs, ok := e.Extra["retry_after"].(int); ok && e.Kind == errs.TooManyRequests {
		c.Header("Retry-After", strconv.Itoa(secs))
	}
	c.Abort()
	c.PureJSON(StatusOf(e.Kind), body)
}
