package server

import (
	"errors"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/wire"
)

// versionRoutes are the edit history and the caller's recent records
// (record versions and restores are recordsapi's).
func (s *Server) versionRoutes() []Route {
	return []Route{
		{Scope: App, Method: http.MethodGet, Path: "/history", Access: auth.Enter, Handler: s.handleHistory},
	}
}

// GET /history — the edit history (BraDypUS's {total, data}: one row per
// stored version, newest first, paged and filtered by tb, user, rowid,
// from and to) within the tables and rows the caller may read, and, as
// before, the caller's recently created or changed records (history).
func (s *Server) handleHistory(c *gin.Context) {
	ctx := c.Request.Context()
	a := appOf(c)
	q, err := historyParams(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	cat, err := s.recordCatalog(ctx, a)
	if err != nil {
		s.fail(c, err)
		return
	}
	acc, err := s.callerAccess(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	reader := func(t *schema.Table) (bool, *records.Cond, error) {
		if !acc.Readable(cat, t.Name) {
			return false, nil, nil
		}
		r, err := acc.Restriction(ctx, a.DB, cat, t)
		if errors.Is(err, records.ErrSubsetBroken) {
			return false, nil, nil // fails closed, as the list does
		}
		return err == nil, r, err
	}
	data, total, err := records.EditHistory(ctx, a.DB, cat, q, reader)
	if err != nil {
		s.fail(c, err)
		return
	}
	h, err := records.History(ctx, a.DB, cat, acc.Actor.UserID, acc.TableAccess(a.DB, cat))
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"total": total, "data": data, "page": max(q.Page, 1), "history": h})
}

// historyParams reads GET /history's query: page, per_page, tb (or
// table), user, rowid (or record_id), from and to (a date, an RFC 3339
// time or unix seconds; to is inclusive of its whole day when a date).
func historyParams(c *gin.Context) (records.EditQuery, error) {
	qv := c.Request.URL.Query()
	first := func(keys ...string) (string, string) {
		for _, k := range keys {
			if v := strings.TrimSpace(qv.Get(k)); v != "" {
				return k, v
			}
		}
		return keys[0], ""
	}
	var q records.EditQuery
	for _, p := range []struct {
		keys []string
		dst  func(int64)
	}{
		{[]string{"page"}, func(n int64) { q.Page = int(n) }},
		{[]string{"per_page"}, func(n int64) { q.PerPage = int(n) }},
		{[]string{"rowid", "record_id"}, func(n int64) { q.RecordID = n }},
	} {
		k, v := first(p.keys...)
		if v == "" {
			continue
		}
		n, err := wire.Int(v)
		if err != nil || n < 0 || n > math.MaxInt32 {
			return q, records.ErrInvalidParameter.With("parameter", k).With("detail", "a positive integer")
		}
		p.dst(n)
	}
	_, q.Table = first("tb", "table")
	_, q.User = first("user")
	for _, p := range []struct {
		key string
		dst *time.Time
		end bool
	}{{"from", &q.From, false}, {"to", &q.To, true}} {
		v := strings.TrimSpace(qv.Get(p.key))
		if v == "" {
			continue
		}
		t, err := timeParam(v, p.end)
		if err != nil {
			return q, records.ErrInvalidParameter.With("parameter", p.key).With("detail", "a date (yyyy-mm-dd), an RFC 3339 time or unix seconds")
		}
		*p.dst = t
	}
	return q, nil
}

// timeParam reads a date, an RFC 3339 time or unix seconds; a date that
// ends a range stands for the end of its day (the next midnight, UTC).
func timeParam(v string, end bool) (time.Time, error) {
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			d = d.AddDate(0, 0, 1)
		}
		return d, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		if end {
			t = t.Add(time.Nanosecond)
		}
		return t, nil
	}
	n, err := wire.Int(v)
	if err != nil {
		return time.Time{}, err
	}
	t := time.Unix(n, 0).UTC()
	if end {
		t = t.Add(time.Second)
	}
	return t, nil
}
