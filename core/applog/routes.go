package applog

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/wire"
)

// Routes are the log's endpoints: admins read and purge it (SPEC §3: both
// /logs and /logs/purge are admin's; the purge is itself logged, so it
// never goes unseen).
func Routes(now func() time.Time) []api.Route {
	h := handlers{now: now}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/logs", Access: auth.AdminOnly, Handler: h.list},
		{Scope: api.App, Method: http.MethodPost, Path: "/logs/purge", Access: auth.AdminOnly, Handler: h.purge},
	}
}

type handlers struct{ now func() time.Time }

func badParam(name, detail string) error {
	return errs.New(errs.Invalid, "invalid_parameter", "a parameter is not valid").With("parameter", name).With("detail", detail)
}

// levelOf reads a level as a number (200, 300, 400) or a name.
func levelOf(v string) (int, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "":
		return 0, nil
	case "debug", "info":
		return Info, nil
	case "notice", "warning", "warn":
		return Warning, nil
	case "error", "critical", "alert", "emergency":
		return Error, nil
	}
	n, err := wire.Int(v)
	if err != nil || n < 0 {
		return 0, badParam("level", "a level: 200 (info), 300 (warning), 400 (error), or its name")
	}
	return int(n), nil
}

// timeOf reads a date (the whole day when end), an RFC 3339 time or unix
// seconds.
func timeOf(name, v string, end bool) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			return d.Add(24*time.Hour - time.Nanosecond), nil
		}
		return d, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	return time.Time{}, badParam(name, "a date (2026-11-24), an RFC 3339 time or unix seconds")
}

// GET /logs — {total, page, per_page, data:[entries]} newest first;
// page, per_page (alias limit), level, user, action, search, from, to.
func (h handlers) list(c *gin.Context) {
	q := Query{Page: 1, PerPage: 50}
	var err error
	for _, p := range []struct {
		name string
		dst  *int
		max  int
	}{{"page", &q.Page, 1 << 30}, {"per_page", &q.PerPage, MaxPerPage}, {"limit", &q.PerPage, MaxPerPage}} {
		if v := c.Query(p.name); v != "" {
			n, err := wire.Int(v)
			if err != nil || n < 1 {
				api.Fail(c, badParam(p.name, "a whole number from 1"))
				return
			}
			*p.dst = int(min(n, int64(p.max)))
		}
	}
	if q.MinLevel, err = levelOf(c.Query("level")); err == nil {
		if q.From, err = timeOf("from", c.Query("from"), false); err == nil {
			q.To, err = timeOf("to", c.Query("to"), true)
		}
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	q.User, q.Action, q.Search = strings.TrimSpace(c.Query("user")), strings.TrimSpace(c.Query("action")), strings.TrimSpace(c.Query("search"))
	entries, total, err := List(c.Request.Context(), api.AppOf(c).DB, q)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"total": total, "page": q.Page, "per_page": q.PerPage, "data": entries})
}

type purgeBody struct {
	Days any `json:"days"`
}

// POST /logs/purge {days} — entries older than days days (default 30).
func (h handlers) purge(c *gin.Context) {
	var b purgeBody
	if c.Request.ContentLength != 0 {
		if err := api.Bind(c, &b); err != nil {
			api.Fail(c, err)
			return
		}
	}
	days := int64(30)
	if b.Days != nil {
		n, err := wire.Int(b.Days)
		if err != nil || n < 0 || n > 100000 {
			api.Fail(c, badParam("days", "a whole number of days, 0 or more"))
			return
		}
		days = n
	}
	n, err := Purge(c.Request.Context(), api.AppOf(c).DB, int(days), h.now())
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "log_purge_success", "deleted": n, "days": days})
}
