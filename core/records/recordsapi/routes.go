package recordsapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
)

// Routes are the records' stratigraphic relations, manual links and
// versions (SPEC §4.4, CONTRACT §5). Routes naming a table get the
// per-table level at the gate; the others check it in the handler for the
// tables they touch (scopeAt).
func Routes(host api.Host) []api.Route {
	s := handlers{host: host}
	return []api.Route{
		{Scope: api.App, Method: http.MethodPost, Path: "/record/:tb/rs", Access: auth.Edit, Handler: s.handleAddRelation},
		{Scope: api.App, Method: http.MethodDelete, Path: "/rs/:id", Access: auth.Edit, Handler: s.handleDeleteRelation},
		{Scope: api.App, Method: http.MethodGet, Path: "/rs/matrix", Access: auth.Read, Handler: s.handleMatrix},
		{Scope: api.App, Method: http.MethodPost, Path: "/manual-link", Access: auth.Edit, Handler: s.handleAddManualLink},
		{Scope: api.App, Method: http.MethodDelete, Path: "/manual-link/:id", Access: auth.Edit, Handler: s.handleDeleteManualLink},
		{Scope: api.App, Method: http.MethodGet, Path: "/record/:tb/:id/versions", Access: auth.Read, Handler: s.handleVersions},
		{Scope: api.App, Method: http.MethodGet, Path: "/record/:tb/deleted", Access: auth.Read, Handler: s.handleDeleted},
		{Scope: api.App, Method: http.MethodGet, Path: "/version/:id", Access: auth.Read, Handler: s.handleVersion},
		{Scope: api.App, Method: http.MethodPost, Path: "/version/:id/restore", Access: auth.AdminOnly, Handler: s.handleRestore},
		{Scope: api.App, Method: http.MethodGet, Path: "/search/:tb/config", Access: auth.Read, Handler: s.handleSearchConfig},
		{Scope: api.App, Method: http.MethodGet, Path: "/search/:tb/values", Access: auth.Read, Handler: s.handleSearchValues},
		{Scope: api.App, Method: http.MethodGet, Path: "/record/:tb/field-options", Access: auth.Read, Handler: s.handleFieldOptions},
		{Scope: api.App, Method: http.MethodGet, Path: "/record/:tb/check-unique", Access: auth.Read, Handler: s.handleCheckUnique},
		{Scope: api.App, Method: http.MethodGet, Path: "/record/:tb/link-candidates", Access: auth.Read, Handler: s.handleLinkCandidates},
	}
}

type handlers struct{ host api.Host }

// scopeAt is the caller's scope on table with the privilege check the
// gate could not make (the table is not in the path).
func (s handlers) scopeAt(c *gin.Context, table string, access auth.Access) (*records.Scope, error) {
	sc, err := s.host.RecordScope(c, table)
	if err != nil {
		return nil, err
	}
	if !access.Allows(sc.Level) {
		return nil, auth.ErrNotEnoughPrivilege.With("required", access.String())
	}
	return sc, nil
}

type relationBody struct {
	First    any `json:"first"`
	Relation any `json:"relation"`
	Second   any `json:"second"`
	// BraDypUS's seed scripts name the ends id_first and id_second.
	IDFirst  any `json:"id_first"`
	IDSecond any `json:"id_second"`
}

// POST /record/{tb}/rs — add a stratigraphic relation.
func (s handlers) handleAddRelation(c *gin.Context) {
	sc, err := s.host.RecordScope(c, c.Param("tb"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	var body relationBody
	if err := api.BindExact(c, &body); err != nil {
		api.Fail(c, err)
		return
	}
	if body.First == nil {
		body.First = body.IDFirst
	}
	if body.Second == nil {
		body.Second = body.IDSecond
	}
	var ids [3]int64
	for i, v := range []any{body.First, body.Relation, body.Second} {
		if ids[i], err = api.ParseID(v); err != nil || ids[i] == 0 {
			api.Fail(c, records.ErrInvalidParameter.With("detail", "first, relation and second are required integers"))
			return
		}
	}
	id, err := records.AddRelation(c.Request.Context(), sc, ids[0], ids[1], ids[2])
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_relation_add", "id": id})
}

// DELETE /rs/{id} — remove a stratigraphic relation.
func (s handlers) handleDeleteRelation(c *gin.Context) {
	id, err := api.ParseIDString(c.Param("id"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	tb, err := records.RelationTable(c.Request.Context(), api.AppOf(c).DB, id)
	if err != nil {
		api.Fail(c, err)
		return
	}
	sc, err := s.scopeAt(c, tb, auth.Edit)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if err := records.DeleteRelation(c.Request.Context(), sc, id); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_relation_deleted"})
}

// GET /rs/matrix?tb= — nodes and relations of a table's stratigraphy.
func (s handlers) handleMatrix(c *gin.Context) {
	tb := c.Query("tb")
	if tb == "" {
		api.Fail(c, records.ErrInvalidParameter.With("parameter", "tb"))
		return
	}
	sc, err := s.scopeAt(c, tb, auth.Read)
	if err != nil {
		api.Fail(c, err)
		return
	}
	m, err := records.Matrix(c.Request.Context(), sc)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, m)
}

type manualLinkBody struct {
	TbOne string `json:"tb_one"`
	IDOne any    `json:"id_one"`
	TbTwo string `json:"tb_two"`
	IDTwo any    `json:"id_two"`
	Label string `json:"label"`
}

// POST /manual-link — link two records of any tables.
func (s handlers) handleAddManualLink(c *gin.Context) {
	var body manualLinkBody
	if err := api.BindExact(c, &body); err != nil {
		api.Fail(c, err)
		return
	}
	for _, p := range []struct {
		name    string
		missing bool
	}{{"tb_one", body.TbOne == ""}, {"id_one", body.IDOne == nil}, {"tb_two", body.TbTwo == ""}, {"id_two", body.IDTwo == nil}} {
		if p.missing {
			api.Fail(c, errs.New(errs.Invalid, "parameter_missing", "tb_one, id_one, tb_two and id_two are required").With("parameter", p.name))
			return
		}
	}
	one, err := s.scopeAt(c, body.TbOne, auth.Edit)
	if err != nil {
		api.Fail(c, err)
		return
	}
	two, err := s.scopeAt(c, body.TbTwo, auth.Read)
	if err != nil {
		api.Fail(c, err)
		return
	}
	idOne, err1 := api.ParseID(body.IDOne)
	idTwo, err2 := api.ParseID(body.IDTwo)
	if err1 != nil || err2 != nil || idOne == 0 || idTwo == 0 {
		api.Fail(c, records.ErrInvalidID)
		return
	}
	id, err := records.AddManualLink(c.Request.Context(), api.AppOf(c).DB,
		records.Endpoint{Scope: one, ID: idOne}, records.Endpoint{Scope: two, ID: idTwo}, body.Label)
	if err != nil {
		api.Fail(c, err)
		return
	}
	// The link as the full record lists it among the first record's
	// manualLinks (key is the id DELETE /manual-link/{id} takes).
	api.Success(c, http.StatusOK, gin.H{"code": "all_links_saved", "link": gin.H{"id": id, "key": id,
		"tb_id": two.Table.Name, "tb_label": two.Table.Label, "ref_id": idTwo, "label": body.Label}})
}

// DELETE /manual-link/{id}
func (s handlers) handleDeleteManualLink(c *gin.Context) {
	id, err := api.ParseIDString(c.Param("id"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	ctx := c.Request.Context()
	tbOne, _, _, _, err := records.ManualLinkEnds(ctx, api.AppOf(c).DB, id)
	if err != nil {
		api.Fail(c, err)
		return
	}
	sc, err := s.scopeAt(c, tbOne, auth.Edit)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if err := records.DeleteManualLink(ctx, sc, id); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_userlink_erased"})
}

// GET /record/{tb}/{id}/versions?page=&per_page= — one page, newest
// first, with the total.
func (s handlers) handleVersions(c *gin.Context) {
	sc, id, ok := api.RecordTarget(s.host, c)
	if !ok {
		return
	}
	var err error
	var page [2]int
	for i, key := range []string{"page", "per_page"} {
		if page[i], err = api.PageParam(key, c.Query(key)); err != nil {
			api.Fail(c, err)
			return
		}
	}
	vs, total, err := records.Versions(c.Request.Context(), sc, id, page[0], page[1])
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"versions": vs, "total": total})
}

// GET /record/{tb}/deleted — deleted records that can be restored.
func (s handlers) handleDeleted(c *gin.Context) {
	sc, err := s.host.RecordScope(c, c.Param("tb"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	vs, err := records.Deleted(c.Request.Context(), sc)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"deleted": vs})
}

// versionScope finds the version's table and checks access there.
func (s handlers) versionScope(c *gin.Context, access auth.Access) (*records.Scope, int64, error) {
	id, err := api.ParseIDString(c.Param("id"))
	if err != nil {
		return nil, 0, err
	}
	tb, err := records.VersionTable(c.Request.Context(), api.AppOf(c).DB, id)
	if err != nil {
		return nil, 0, err
	}
	sc, err := s.scopeAt(c, tb, access)
	return sc, id, err
}

// GET /version/{id} — the snapshot and the record's current state.
func (s handlers) handleVersion(c *gin.Context) {
	sc, id, err := s.versionScope(c, auth.Read)
	if err != nil {
		api.Fail(c, err)
		return
	}
	v, current, err := records.GetVersion(c.Request.Context(), sc, id)
	if err != nil {
		api.Fail(c, err)
		return
	}
	// A deleted record's current state is {core:null, plugins:null}:
	// the shape stays, as clients read current.core.
	var cur any = gin.H{"core": nil, "plugins": nil}
	if current != nil {
		cur = current
	}
	api.Success(c, http.StatusOK, gin.H{"version": v, "current": cur, "changes": records.Diff(v.Content, current)})
}

type restoreBody struct {
	Fields         []string `json:"fields"`
	RestorePlugins []string `json:"restore_plugins"`
}

// POST /version/{id}/restore — whole record or chosen fields (admin).
func (s handlers) handleRestore(c *gin.Context) {
	sc, id, err := s.versionScope(c, auth.AdminOnly)
	if err != nil {
		api.Fail(c, err)
		return
	}
	var body restoreBody
	if c.Request.ContentLength != 0 {
		if err := api.BindExact(c, &body); err != nil {
			api.Fail(c, err)
			return
		}
	}
	res, err := records.Restore(c.Request.Context(), sc, id, body.Fields, body.RestorePlugins)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "success_restored", "id": res.ID, "created": res.Created, "skipped": res.Skipped})
}
