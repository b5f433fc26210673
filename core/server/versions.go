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

// versionRoutes are record history and the caller's recent records.
func (s *Server) versionRoutes() []Route {
	return []Route{
		{Scope: App, Method: http.MethodGet, Path: "/record/:tb/:id/versions", Access: auth.Read, Handler: s.handleVersions},
		{Scope: App, Method: http.MethodGet, Path: "/record/:tb/deleted", Access: auth.Read, Handler: s.handleDeleted},
		{Scope: App, Method: http.MethodGet, Path: "/version/:id", Access: auth.Read, Handler: s.handleVersion},
		{Scope: App, Method: http.MethodPost, Path: "/version/:id/restore", Access: auth.AdminOnly, Handler: s.handleRestore},
		{Scope: App, Method: http.MethodGet, Path: "/history", Access: auth.Enter, Handler: s.handleHistory},
	}
}

// GET /record/{tb}/{id}/versions?page=&per_page= — one page, newest
// first, with the total.
func (s *Server) handleVersions(c *gin.Context) {
	sc, id, ok := s.recordTarget(c)
	if !ok {
		return
	}
	var err error
	var page [2]int
	for i, key := range []string{"page", "per_page"} {
		if page[i], err = pageParam(key, c.Query(key)); err != nil {
			s.fail(c, err)
			return
		}
	}
	vs, total, err := records.Versions(c.Request.Context(), sc, id, page[0], page[1])
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"versions": vs, "total": total})
}

// GET /record/{tb}/deleted — deleted records that can be restored.
func (s *Server) handleDeleted(c *gin.Context) {
	sc, err := s.recordScope(c, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	vs, err := records.Deleted(c.Request.Context(), sc)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"deleted": vs})
}

// versionScope finds the version's table and checks access there.
func (s *Server) versionScope(c *gin.Context, access auth.Access) (*records.Scope, int64, error) {
	id, err := parseIDString(c.Param("id"))
	if err != nil {
		return nil, 0, err
	}
	tb, err := records.VersionTable(c.Request.Context(), appOf(c).DB, id)
	if err != nil {
		return nil, 0, err
	}
	sc, err := s.scopeAt(c, tb, access)
	return sc, id, err
}

// GET /version/{id} — the snapshot and the record's current state.
func (s *Server) handleVersion(c *gin.Context) {
	sc, id, err := s.versionScope(c, auth.Read)
	if err != nil {
		s.fail(c, err)
		return
	}
	v, current, err := records.GetVersion(c.Request.Context(), sc, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	// A deleted record's current state is {core:null, plugins:null}:
	// the shape stays, as clients read current.core.
	var cur any = gin.H{"core": nil, "plugins": nil}
	if current != nil {
		cur = current
	}
	success(c, http.StatusOK, gin.H{"version": v, "current": cur, "changes": records.Diff(v.Content, current)})
}

type restoreBody struct {
	Fields         []string `json:"fields"`
	RestorePlugins []string `json:"restore_plugins"`
}

// POST /version/{id}/restore — whole record or chosen fields (admin).
func (s *Server) handleRestore(c *gin.Context) {
	sc, id, err := s.versionScope(c, auth.AdminOnly)
	if err != nil {
		s.fail(c, err)
		return
	}
	var body restoreBody
	if c.Request.ContentLength != 0 {
		if err := decodeBody(c, &body); err != nil {
			s.fail(c, err)
			return
		}
	}
	res, err := records.Restore(c.Request.Context(), sc, id, body.Fields, body.RestorePlugins)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "success_restored", "id": res.ID, "created": res.Created, "skipped": res.Skipped})
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
	readable := func(t *schema.Table) bool { return auth.Read.Allows(acc.level(t.Name)) }
	reader := func(t *schema.Table) (bool, *records.Cond, error) {
		if !readable(t) {
			return false, nil, nil
		}
		r, err := acc.restriction(ctx, &records.Scope{DB: a.DB, Catalog: cat, Table: t})
		if errors.Is(err, errSubsetBroken) {
			return false, nil, nil // fails closed, as the list does
		}
		return err == nil, r, err
	}
	data, total, err := records.EditHistory(ctx, a.DB, cat, q, reader)
	if err != nil {
		s.fail(c, err)
		return
	}
	h, err := records.History(ctx, a.DB, cat, acc.actor.UserID, acc.tableAccess(a.DB, cat))
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
