package applog

import (
	"context"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
)

// CtxSubject is the gin key under which a public route names whom a
// request was about (the email of a sign-in), for its log entry.
const CtxSubject = "strata.log.subject"

// CtxDetail is the gin key under which a handler adds to its request's
// entry's detail (free SQL's statement). Never a secret.
const CtxDetail = "strata.log.detail"

// loginPath is the sign-in route, logged whether it succeeds or not.
const loginPath = "/auth/login"

// Logged reports whether a route's requests are logged: sign-ins, and
// every app route that changes something, except ordinary record saves,
// lists and relation edits (their trace is the record's versions) and
// checks that change nothing.
func Logged(r api.Route) bool {
	if r.Scope != api.App {
		return false
	}
	if r.Path == loginPath {
		return true
	}
	if r.Method == "GET" || r.Method == "HEAD" || r.Method == "OPTIONS" {
		return false
	}
	switch r.Method + " " + r.Path {
	case "POST /record/:tb", "POST /record/:tb/:id", "POST /batch", "POST /records/:tb",
		"POST /record/:tb/:id/duplicate", "POST /record/:tb/rs", "DELETE /rs/:id",
		"POST /manual-link", "DELETE /manual-link/:id",
		"POST /admin/check-password", "POST /auth/password-reset/request":
		return false
	}
	return true
}

// Middleware writes r's entry once the request is answered: a change
// that succeeded (status below 400), or a sign-in either way. onErr hears
// of an entry that could not be written (the answer is already sent).
func Middleware(r api.Route, now func() time.Time, onErr func(*gin.Context, error)) gin.HandlerFunc {
	action := r.Method + " " + braces(r.Path)
	channel := strings.SplitN(strings.TrimPrefix(r.Path, "/"), "/", 2)[0]
	return func(c *gin.Context) {
		c.Next()
		status := c.Writer.Status()
		e := &Entry{Time: now(), Level: Info, Channel: channel, Action: action}
		switch {
		case r.Path == loginPath && status < 400:
			e.Action = "auth.login"
		case r.Path == loginPath:
			e.Action, e.Level = "auth.login_failed", Warning
		case status >= 400:
			return
		}
		a, ok := c.Get(api.CtxApp)
		if !ok {
			return
		}
		who := ""
		if v, ok := c.Get(api.CtxActor); ok {
			actor := v.(*auth.Actor)
			if actor.UserID != 0 {
				id := actor.UserID
				e.UserID = &id
			}
			who = actor.Email
			if who == "" {
				who = actor.Name
			}
			if who == "" && actor.UserID == 0 {
				who = "API key"
			}
		}
		if who == "" {
			if s, ok := c.Get(CtxSubject); ok {
				who, _ = s.(string)
			}
		}
		if who != "" {
			e.User = &who
		}
		if tb := c.Param("tb"); tb != "" {
			e.Table = &tb
		}
		for _, p := range []string{"id", "ids", "fld", "name", "feature"} {
			if v := c.Param(p); v != "" {
				if p == "id" || p == "ids" {
					e.RecordID = &v
				} else {
					e.Detail = map[string]any{p: v}
				}
			}
		}
		if extra, ok := c.Get(CtxDetail); ok {
			if e.Detail == nil {
				e.Detail = map[string]any{}
			}
			for k, v := range extra.(map[string]any) {
				e.Detail[k] = v
			}
		}
		e.Status = &status
		e.Message = strings.TrimSpace(orDash(who) + " " + e.Action + " " + c.Request.URL.Path)
		// The answer is sent: a client gone by now must not lose the entry.
		if err := Write(context.WithoutCancel(c.Request.Context()), a.(*apps.App).DB, e); err != nil {
			onErr(c, err)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// braces writes gin's :param as {param}, as the docs name routes.
func braces(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}
