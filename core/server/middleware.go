package server

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/bradypus"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// ctxApp is the gin context key of the resolved application.
const ctxApp = api.CtxApp

// recoverPanics turns a panic into a 500 internal_error JSON answer, logs
// the stack, and lets the server go on serving.
func (s *Server) recoverPanics(c *gin.Context) {
	defer func() {
		rec := recover()
		if rec == nil {
			return
		}
		if rec == http.ErrAbortHandler {
			panic(rec) // the client is gone; let net/http close the connection
		}
		s.log.Error("panic while serving request", "method", c.Request.Method,
			"path", c.Request.URL.Path, "panic", rec, "stack", string(debug.Stack()))
		if c.Writer.Written() {
			c.Abort()
			return
		}
		s.fail(c, errInternal)
	}()
	c.Next()
}

// logRequests writes one structured line per request. Query strings are not
// logged: they can carry tokens.
func (s *Server) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	attrs := []any{"method", c.Request.Method, "path", c.Request.URL.Path,
		"status", c.Writer.Status(), "duration_ms", float64(time.Since(start).Microseconds()) / 1000}
	if a, ok := c.Get(ctxApp); ok {
		attrs = append(attrs, "app", a.(*apps.App).Name)
	}
	level := slog.LevelInfo
	if api.IsQuiet(c.Request.Context()) {
		level = slog.LevelDebug
	}
	s.log.Log(c.Request.Context(), level, "request", attrs...)
	// Errors answered as internal_error (api.Fail) are logged here with
	// their cause, once.
	for _, e := range c.Errors {
		s.log.ErrorContext(c.Request.Context(), "request failed", "method", c.Request.Method,
			"path", c.Request.URL.Path, "err", e.Err)
	}
}

var errInvalidQuery = errs.New(errs.Invalid, "invalid_query", "the query string is malformed")

// checkQuery refuses a query string that Go's parser would silently cut: a
// raw ";" (the parameter holding it would vanish, and the request would
// run without it) or a malformed %-escape. Every route answers 400
// invalid_query rather than ignore part of its input.
func (s *Server) checkQuery(c *gin.Context) {
	raw := c.Request.URL.RawQuery
	if raw == "" {
		c.Next()
		return
	}
	values, err := url.ParseQuery(raw)
	if err != nil {
		detail := "a malformed %-escape: encode '%' as %25"
		if strings.Contains(raw, ";") {
			detail = "a raw ';': separate parameters with '&' and send ';' in a value as %3B"
		}
		s.fail(c, errInvalidQuery.With("detail", detail))
		return
	}
	// Text that an engine would refuse or alter (NUL, invalid UTF-8) is
	// refused here, the same on both engines, naming the parameter.
	for k, vs := range values {
		for _, v := range append([]string{k}, vs...) {
			if strings.IndexByte(v, 0) >= 0 || !utf8.ValidString(v) {
				s.fail(c, errInvalidQuery.With("parameter", clipParam(k)).With("detail", "a NUL character or invalid UTF-8"))
				return
			}
		}
	}
	c.Next()
}

// limitBody caps the request body: an announced length over the cap is
// refused before reading, and a body that turns out longer fails its read;
// a body not sent within timeout (0: the configured BodyTimeout) fails
// its read too.
func (s *Server) limitBody(limit int64, timeout time.Duration) gin.HandlerFunc {
	if limit <= 0 {
		limit = s.cfg.MaxBodyBytes
	}
	if timeout <= 0 {
		timeout = s.cfg.BodyTimeout
	}
	return func(c *gin.Context) {
		if c.Request.ContentLength > limit {
			s.fail(c, errTooLarge.With("limit", limit))
			return
		}
		if c.Request.Body != nil {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
			// A request that declares no body (a GET, an event stream) has
			// nothing to trickle: a read deadline would only end a long
			// answer, since the server's background read of the idle
			// connection fails at it and cancels the request (the live and
			// job event streams were cut off after STRATA_BODY_TIMEOUT).
			if timeout > 0 && c.Request.ContentLength != 0 {
				// A body trickling in a byte at a time fails its read
				// (body_timeout) instead of holding the connection.
				// Not every writer supports deadlines (tests' recorders).
				_ = http.NewResponseController(c.Writer).SetReadDeadline(time.Now().Add(timeout))
			}
		}
		c.Next()
	}
}

var errAppBusy = errs.New(errs.Unavailable, "app_busy", "this application has too many requests in progress: retry shortly")

// gateApp holds one of the app's slots (STRATA_APP_MAX_CONCURRENT) for
// the rest of the request; with none free within the queue timeout the
// answer is 503 app_busy with Retry-After.
func (s *Server) gateApp(c *gin.Context) {
	release, ok := s.gate.Enter(c.Request.Context(), appOf(c).Name)
	if !ok {
		c.Header("Retry-After", "1")
		s.fail(c, errAppBusy)
		return
	}
	defer release()
	c.Next()
}

// writeDeadline gives the request, once its body is in, WriteTimeout to be
// answered: past it the connection's writes fail, so a client that stops
// reading cannot hold it. bodyTimeout is the route's own time to send its
// body (0: the configured one), added because the clock starts now.
func (s *Server) writeDeadline(bodyTimeout time.Duration) gin.HandlerFunc {
	if bodyTimeout <= 0 {
		bodyTimeout = s.cfg.BodyTimeout
	}
	return func(c *gin.Context) {
		// Not every writer supports deadlines (tests' recorders).
		_ = http.NewResponseController(c.Writer).SetWriteDeadline(time.Now().Add(bodyTimeout + s.cfg.WriteTimeout))
		c.Next()
	}
}

// resolveApp loads the application named by the first path segment.
func (s *Server) resolveApp(r Route) gin.HandlerFunc {
	return func(c *gin.Context) {
		a, err := s.apps.Get(c.Request.Context(), c.Param("app"))
		if err != nil {
			if errors.Is(err, store.ErrAppNotFound) {
				err = apps.ErrNotFound
				// A BraDypUS folder of that name awaits its major upgrade.
				if f, ok := bradypus.Lookup(s.cfg.DataDir, c.Param("app")); ok {
					if !r.AwaitingUpgrade {
						s.fail(c, bradypus.ErrUpgradeRequired)
						return
					}
					c.Set(bradypus.CtxFolder, f)
					c.Next()
					return
				}
			}
			s.fail(c, err)
			return
		}
		c.Set(ctxApp, a)
		c.Next()
	}
}

// appOf returns the application resolved for this request.
func appOf(c *gin.Context) *apps.App { return c.MustGet(ctxApp).(*apps.App) }

// clipParam shortens a parameter name repeated in an answer.
func clipParam(k string) string {
	if r := []rune(k); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return k
}
