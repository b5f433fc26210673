package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/api"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/records/recordsapi"
	"github.com/strata-archaeo/strata/core/wire"
)

// recordRoutes are the record endpoints (SPEC §4.4, CONTRACT §5). Routes
// naming a table get the per-table level at the gate; the others compute
// it in the handler for the table they touch.
func (s *Server) recordRoutes() []Route {
	return append([]Route{
		{Scope: App, Method: http.MethodGet, Path: "/records/:tb", Access: auth.Read, Handler: s.handleList, ReadOnly: true},
		{Scope: App, Method: http.MethodPost, Path: "/records/:tb", Access: auth.Read, Handler: s.handleList},
		{Scope: App, Method: http.MethodGet, Path: "/record/:tb/:id", Access: auth.Read, Handler: s.handleRead, ReadOnly: true},
		{Scope: App, Method: http.MethodPost, Path: "/record/:tb", Access: auth.AddNew, Handler: s.handleSave, Replayable: true},
		{Scope: App, Method: http.MethodPost, Path: "/record/:tb/:id", Access: auth.Edit, Handler: s.handleSave, Replayable: true},
		{Scope: App, Method: http.MethodDelete, Path: "/record/:tb/:id", Access: auth.Edit, Handler: s.handleDelete},
		{Scope: App, Method: http.MethodPost, Path: "/record/:tb/:id/duplicate", Access: auth.AddNew, Handler: s.handleDuplicate},
		{Scope: App, Method: http.MethodDelete, Path: "/record/:tb/:id/plugins", Access: auth.Edit, Handler: s.handleDeletePlugins},
		{Scope: App, Method: http.MethodGet, Path: "/record/:tb/check-plugins-before-delete", Access: auth.Edit, Handler: s.handleCheckPluginsBeforeDelete},
		{Scope: App, Method: http.MethodGet, Path: "/record/:tb/templates", Access: auth.Read, Handler: s.handleRecordTemplates},
	}, append(append(s.versionRoutes(), s.searchRoutes()...), recordsapi.Routes(s)...)...)
}

// recordScope builds the caller's scope on table through the records
// gate (records.Grants.Scope): the current catalog, the caller's
// effective level there and its row subset, which every records
// operation ANDs into what it reads and changes. A table the caller may
// not read answers not_enough_privilege, whichever area asks.
func (s *Server) recordScope(c *gin.Context, table string) (*records.Scope, error) {
	if s.scopeWatch != nil {
		s.scopeWatch(c.Request, table)
	}
	ctx := c.Request.Context()
	a := appOf(c)
	cat, err := s.requestCatalog(c)
	if err != nil {
		return nil, err
	}
	acc, err := s.callerAccess(c)
	if err != nil {
		return nil, err
	}
	// The one gate: a table the caller may not read has no scope.
	sc, err := acc.Scope(ctx, a.DB, cat, table)
	if err != nil {
		return nil, err
	}
	sc.Now = s.now
	s.addPluginScope(sc, a.Name) // plugin features, sections, schema flags (plugins.go)
	sc.Files = files.Section{}
	return sc, nil
}

// parseID and parseIDString read ids (the kit's api.ParseID).
func parseID(v any) (int64, error) { return api.ParseID(v) }

func parseIDString(s string) (int64, error) { return api.ParseIDString(s) }

type listBody struct {
	Page      any             `json:"page"`
	PerPage   any             `json:"per_page"`
	SortField *string         `json:"sort_field"`
	SortDir   *string         `json:"sort_dir"`
	Columns   any             `json:"columns"`
	Search    *string         `json:"search"`
	IDsOnly   any             `json:"ids_only"`
	Total     any             `json:"total"`
	Filter    json.RawMessage `json:"filter"`
}

// GET|POST /records/{tb} — a page of records. POST takes the parameters
// in the body or the query string; the body wins.
func (s *Server) handleList(c *gin.Context) {
	sc, err := s.recordScope(c, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	q, err := s.listParams(c, sc)
	if err != nil {
		s.fail(c, err)
		return
	}
	res, err := records.List(c.Request.Context(), sc, q)
	if err != nil {
		s.fail(c, err)
		return
	}
	if q.IDsOnly {
		success(c, http.StatusOK, gin.H{"total": totalOf(res), "ids": res.IDs})
		return
	}
	success(c, http.StatusOK, gin.H{"total": totalOf(res), "fields": res.Fields, "data": res.Data, "can_add": sc.CanAdd()})
}

// columnsParam accepts columns as a JSON list, a CSV string, or repeated
// query parameters.
func columnsParam(fromBody any, fromQuery []string) []string {
	var raw []string
	switch x := fromBody.(type) {
	case []any:
		for _, v := range x {
			if s, ok := v.(string); ok {
				raw = append(raw, s)
			}
		}
	case string:
		raw = []string{x}
	default:
		raw = fromQuery
	}
	var out []string
	for _, r := range raw {
		for _, p := range strings.Split(r, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// GET /record/{tb}/{id} — the full record; /record/{tb}/new gives the
// empty shape with defaults.
func (s *Server) handleRead(c *gin.Context) {
	sc, err := s.recordScope(c, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	var rec map[string]any
	if c.Param("id") == "new" {
		if !sc.CanAdd() {
			s.fail(c, auth.ErrNotEnoughPrivilege.With("required", auth.AddNew.String()))
			return
		}
		rec, err = records.ReadNew(c.Request.Context(), sc)
	} else {
		var id int64
		if id, err = parseIDString(c.Param("id")); err == nil {
			rec, err = records.Read(c.Request.Context(), sc, id)
		}
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	if meta, ok := rec["metadata"].(map[string]any); ok {
		if v, ok := meta["version"].(int64); ok {
			c.Header("ETag", etag(v))
		}
	}
	success(c, http.StatusOK, rec)
}

// etag is the ETag of a record at version v (records.RecordVersion).
func etag(v int64) string { return `"` + strconv.FormatInt(v, 10) + `"` }

var errBadIfMatch = records.ErrInvalidParameter.With("parameter", "If-Match").
	With("detail", `the record's ETag as GET /record/{tb}/{id} gives it ("12"), a list of them, or *`)

// ifMatch reads the If-Match header of an update: the versions the client
// read the record at (nil: no condition, also for "*", as the record must
// exist for an update anyway). Weak tags (W/"12") and unquoted numbers
// are taken as the same version.
func ifMatch(c *gin.Context) ([]int64, error) {
	var out []int64
	for _, h := range c.Request.Header.Values("If-Match") {
		for _, part := range strings.Split(h, ",") {
			tag := strings.TrimSpace(part)
			if tag == "" {
				continue
			}
			if tag == "*" {
				return nil, nil
			}
			tag = strings.TrimPrefix(tag, "W/")
			if len(tag) >= 2 && tag[0] == '"' && tag[len(tag)-1] == '"' {
				tag = tag[1 : len(tag)-1]
			}
			n, err := strconv.ParseInt(tag, 10, 64)
			if err != nil || n < 0 {
				return nil, errBadIfMatch
			}
			out = append(out, n)
		}
	}
	return out, nil
}

// POST /record/{tb}[/{id}] — create (no id) or update the fields sent.
func (s *Server) handleSave(c *gin.Context) {
	sc, err := s.recordScope(c, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	var raw map[string]any
	if err := decodeBody(c, &raw); err != nil {
		s.fail(c, err)
		return
	}
	var pathID int64
	if p := c.Param("id"); p != "" {
		if pathID, err = parseIDString(p); err != nil {
			s.fail(c, err)
			return
		}
	}
	in, err := records.SaveInputOf(raw, pathID)
	if err != nil {
		s.fail(c, decodeErr(err))
		return
	}
	if in.ID != 0 {
		// If-Match guards updates (a create has no version to match).
		if in.IfVersion, err = ifMatch(c); err != nil {
			s.fail(c, err)
			return
		}
	}
	var res records.SaveResult
	if sc.Table.IsPlugin {
		// One plugin row on its own: a save of its parent record.
		var parent *records.Scope
		if parent, err = s.recordScope(c, sc.Table.PluginOf); err == nil {
			res, err = records.SavePluginRow(c.Request.Context(), parent, sc.Table, in)
		}
	} else {
		res, err = records.SaveVersioned(c.Request.Context(), sc, in)
	}
	if err != nil {
		if e, ok := errs.As(err); ok && e.Code == records.ErrStale.Code {
			if v, ok := e.Extra["version"].(int64); ok {
				c.Header("ETag", etag(v))
			}
		}
		s.fail(c, err)
		return
	}
	c.Header("ETag", etag(res.Version))
	if res.Created {
		success(c, http.StatusOK, gin.H{"code": "success_created", "id": res.ID, "version": res.Version})
		return
	}
	success(c, http.StatusOK, gin.H{"code": "success_saved", "id": res.ID, "version": res.Version})
}

var errNoRecordDeleted = errs.New(errs.NotFound, "no_record_deleted", "no record was deleted")

// DELETE /record/{tb}/{ids} — one id or a comma-separated list.
func (s *Server) handleDelete(c *gin.Context) {
	sc, err := s.recordScope(c, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	var ids []int64
	seen := map[int64]bool{}
	for _, part := range strings.Split(c.Param("id"), ",") {
		id, err := parseIDString(part)
		if err != nil || id == 0 {
			s.fail(c, records.ErrInvalidID.With("detail", part))
			return
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	res, err := records.Delete(c.Request.Context(), sc, ids)
	if err != nil {
		s.fail(c, err)
		return
	}
	body := gin.H{"deleted": len(res.Deleted), "requested": res.Requested, "deleted_ids": res.Deleted,
		"denied_ids": res.Denied, "not_found_ids": res.NotFound}
	switch {
	case len(res.Deleted) == res.Requested:
		body["code"] = "all_record_deleted"
		success(c, http.StatusOK, body)
	case len(res.Deleted) > 0:
		body["code"], body["status"] = "partially_deleted_with_count", "warning"
		c.PureJSON(http.StatusOK, body)
	case len(res.Denied) > 0:
		s.fail(c, auth.ErrNotEnoughPrivilege.With("reason", "not_your_record").With("denied_ids", res.Denied))
	default:
		s.fail(c, errNoRecordDeleted.With("not_found_ids", res.NotFound))
	}
}

// POST /record/{tb}/{id}/duplicate — copy into a new record of the caller.
func (s *Server) handleDuplicate(c *gin.Context) {
	sc, id, ok := api.RecordTarget(s, c)
	if !ok {
		return
	}
	// Optional {core:{field: value}}: values for the copy (a unique field
	// is otherwise left empty).
	var body struct {
		Core map[string]any `json:"core"`
	}
	if c.Request.ContentLength != 0 {
		if err := decodeBody(c, &body); err != nil {
			s.fail(c, err)
			return
		}
	}
	newID, err := records.Duplicate(c.Request.Context(), sc, id, body.Core)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "success_duplicated", "id": newID})
}

// DELETE /record/{tb}/{id}/plugins — every plugin row of the record.
func (s *Server) handleDeletePlugins(c *gin.Context) {
	sc, id, ok := api.RecordTarget(s, c)
	if !ok {
		return
	}
	n, err := records.DeletePlugins(c.Request.Context(), sc, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"deleted": n})
}

var errIDMissing = errs.New(errs.Invalid, "parameter_missing", "id is required").With("parameter", "id")

// GET /record/{tb}/check-plugins-before-delete?id=N — the plugin rows a
// delete of record N would take with it: {plugins:[{tb,label,count}]},
// only tables that hold rows.
func (s *Server) handleCheckPluginsBeforeDelete(c *gin.Context) {
	raw := strings.TrimSpace(c.Query("id"))
	if raw == "" {
		s.fail(c, errIDMissing)
		return
	}
	id, err := wire.Int(raw)
	if err != nil || id <= 0 {
		s.fail(c, records.ErrInvalidID)
		return
	}
	sc, err := s.recordScope(c, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	counts, err := records.PluginCounts(c.Request.Context(), sc, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"plugins": counts})
}

// GET /record/{tb}/templates — the names of the table's record-view
// templates: {templates:[...]}.
func (s *Server) handleRecordTemplates(c *gin.Context) {
	sc, err := s.recordScope(c, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	names, err := records.TemplateNames(c.Request.Context(), sc)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"templates": names})
}

// totalOf is a list's total, or null when total=false skipped the count.
func totalOf(res *records.ListResult) any {
	if res.NoTotal {
		return nil
	}
	return res.Total
}
