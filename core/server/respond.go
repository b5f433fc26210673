package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/errs"
)

// statusOf maps an error kind to its HTTP status (CONTRACT §1).
func statusOf(k errs.Kind) int {
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

var errInternal = errs.New(errs.Internal, "internal_error", "an internal error occurred; it has been logged")

// success writes {"status":"success", ...body}.
func success(c *gin.Context, status int, body gin.H) {
	if body == nil {
		body = gin.H{}
	}
	body["status"] = "success"
	c.PureJSON(status, body) // no \u003c escapes: this is an API, not HTML
}

// fail writes the error envelope for err and aborts the chain. Errors
// without a code are logged with their cause and answered as a generic
// internal_error: no internal detail reaches the client.
func (s *Server) fail(c *gin.Context, err error) {
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
		s.log.ErrorContext(c.Request.Context(), "request failed", "method", c.Request.Method,
			"path", c.Request.URL.Path, "err", err)
		e = errInternal
	}
	body := gin.H{"status": "error", "code": e.Code, "message": e.Message}
	for k, v := range e.Extra {
		body[k] = v
	}
	if secs, ok := e.Extra["retry_after"].(int); ok && e.Kind == errs.TooManyRequests {
		c.Header("Retry-After", strconv.Itoa(secs))
	}
	c.Abort()
	c.PureJSON(statusOf(e.Kind), body)
}
