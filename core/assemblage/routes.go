package assemblage

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/wire"
)

// Routes are the assemblage analyses' (BraDypUS 5.4.2 /assemblage*): any
// signed-in user runs pivots over the tables they may read and keeps
// analyses of their own, shared or not.
func Routes(host api.Host, now func() time.Time) []api.Route {
	h := handlers{host: host, now: now}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/assemblage/sources", Access: auth.Enter, Handler: h.sources},
		{Scope: api.App, Method: http.MethodGet, Path: "/assemblage/table-meta", Access: auth.Enter, Handler: h.tableMeta},
		{Scope: api.App, Method: http.MethodPost, Path: "/assemblage/data", Access: auth.Enter, Handler: h.data},
		{Scope: api.App, Method: http.MethodGet, Path: "/assemblages", Access: auth.Enter, Handler: h.list},
		{Scope: api.App, Method: http.MethodPost, Path: "/assemblages", Access: auth.Enter, Handler: h.save},
		{Scope: api.App, Method: http.MethodPost, Path: "/assemblage/:id", Access: auth.Enter, Handler: h.update},
		{Scope: api.App, Method: http.MethodPost, Path: "/assemblage/:id/share", Access: auth.Enter, Handler: api.OwnedAction(ErrNotFound, "ok_share_analysis", h.setShared(true))},
		{Scope: api.App, Method: http.MethodPost, Path: "/assemblage/:id/unshare", Access: auth.Enter, Handler: api.OwnedAction(ErrNotFound, "ok_unshare_analysis", h.setShared(false))},
		{Scope: api.App, Method: http.MethodDelete, Path: "/assemblage/:id", Access: auth.Enter, Handler: api.OwnedAction(ErrNotFound, "ok_delete_analysis", deleteAnalysis)},
	}
}

type handlers struct {
	host api.Host
	now  func() time.Time
}

type body struct {
	Name       string         `json:"name"`
	Definition map[string]any `json:"definition"`
}

// readable is the caller's scope on table: the records gate refuses a
// table they may not read (records.Grants.Scope).
func (h handlers) readable(c *gin.Context, table string) (*records.Scope, error) {
	return h.host.RecordScope(c, table)
}

// compute checks and runs a definition as the caller.
func (h handlers) compute(c *gin.Context, raw map[string]any) (*Result, error) {
	if raw == nil {
		return nil, errs.New(errs.Invalid, "parameter_missing", "definition is required")
	}
	var d Definition
	if err := wire.Assign(raw, &d, wire.Options{}); err != nil {
		return nil, api.DecodeErr(err)
	}
	d.SourceTb = strings.TrimSpace(d.SourceTb)
	if d.SourceTb == "" {
		return nil, ErrMissing.With("parameter", "source_tb")
	}
	sc, err := h.readable(c, d.SourceTb)
	if err != nil {
		return nil, err
	}
	fj, err := FilterJSON(d.Filters)
	if err != nil {
		return nil, err
	}
	cond, err := h.host.Condition(c, sc, fj, "")
	if err != nil {
		return nil, err
	}
	return Compute(c.Request.Context(), sc, func(t string) (*records.Scope, error) { return h.readable(c, t) }, &d, cond)
}

// POST /assemblage/data {definition} — the pivot, not saved.
func (h handlers) data(c *gin.Context) {
	var b body
	if err := api.BindExact(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	res, err := h.compute(c, b.Definition)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"groups": res.Groups, "chars": res.Chars, "data": res.Data, "group_labels": res.GroupLabels,
		"group_tb": res.GroupTb, "group_field": res.GroupField, "measure": res.Measure, "truncated": res.Truncated})
}

// GET /assemblage/sources — {tables, plugins}: what the caller may read,
// plugin tables with their parent.
func (h handlers) sources(c *gin.Context) {
	cat, err := h.host.Catalog(c.Request.Context(), api.AppOf(c))
	if err != nil {
		api.Fail(c, err)
		return
	}
	tables, plugins := []gin.H{}, []gin.H{}
	for _, t := range cat.Tables {
		if _, err := h.readable(c, t.Name); err != nil {
			continue
		}
		if !t.IsPlugin {
			tables = append(tables, gin.H{"name": t.Name, "label": labelOf(t)})
			continue
		}
		var parentLabel any
		if p, ok := cat.Table(t.PluginOf); ok {
			parentLabel = labelOf(p)
		}
		var parent any
		if t.PluginOf != "" {
			parent = t.PluginOf
		}
		plugins = append(plugins, gin.H{"name": t.Name, "label": labelOf(t), "parent_tb": parent, "parent_label": parentLabel})
	}
	api.Success(c, http.StatusOK, gin.H{"tables": tables, "plugins": plugins})
}

func labelOf(t *schema.Table) string {
	if t.Label != "" {
		return t.Label
	}
	return t.Name
}

// GET /assemblage/table-meta?tb= — {tb, label, fields, relations}: the
// columns a pivot may use, lookups marked with the table they lead to (a
// plugin table's id_link leads to its parent), and the tables they reach.
func (h handlers) tableMeta(c *gin.Context) {
	tb := strings.TrimSpace(c.Query("tb"))
	if tb == "" {
		api.Fail(c, errs.New(errs.Invalid, "parameter_missing", "tb is required"))
		return
	}
	sc, err := h.readable(c, tb)
	if err != nil {
		api.Fail(c, err)
		return
	}
	t, cat := sc.Table, sc.Catalog
	fields := []gin.H{}
	relations := []gin.H{}
	seen := map[string]bool{}
	add := func(name, label string, numeric bool, fk string) {
		f := gin.H{"name": name, "label": label, "is_numeric": numeric, "is_fk": fk != "", "id_from_tb": nil,
			"fk_tb": nil, "fk_pk": nil, "fk_label": nil}
		if fk != "" {
			fkLabel := fk
			if ft, ok := cat.Table(fk); ok {
				fkLabel = labelOf(ft)
			}
			f["id_from_tb"], f["fk_tb"], f["fk_pk"], f["fk_label"] = fk, fk, schema.ColID, fkLabel
			if !seen[fk] {
				seen[fk] = true
				relations = append(relations, gin.H{"tb": fk, "label": fkLabel})
			}
		}
		fields = append(fields, f)
	}
	add(schema.ColID, "ID", true, "")
	if t.IsPlugin && t.PluginOf != "" {
		add(schema.ColIDLink, labelOfName(cat, t.PluginOf), true, t.PluginOf)
	}
	for _, f := range t.Fields {
		label := f.Label
		if label == "" {
			label = f.Name
		}
		add(f.Name, label, f.DBType == schema.DBInt || f.DBType == schema.DBFloat, f.IDFromTb)
	}
	api.Success(c, http.StatusOK, gin.H{"tb": t.Name, "label": labelOf(t), "fields": fields, "relations": relations})
}

func labelOfName(cat *schema.Catalog, name string) string {
	if t, ok := cat.Table(name); ok {
		return labelOf(t)
	}
	return name
}

// GET /assemblages — {analyses}: the caller's and the shared ones.
func (h handlers) list(c *gin.Context) {
	as, err := List(c.Request.Context(), api.AppOf(c).DB, api.ActorOf(c).UserID)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"analyses": as})
}

// checked reads {name, definition} and computes the definition once, so
// a bad one is refused, not kept.
func (h handlers) checked(c *gin.Context) (*body, bool) {
	var b body
	if err := api.BindExact(c, &b); err != nil {
		api.Fail(c, err)
		return nil, false
	}
	b.Name = strings.TrimSpace(b.Name)
	if b.Name == "" {
		api.Fail(c, errs.New(errs.Invalid, "parameter_missing", "name is required"))
		return nil, false
	}
	if _, err := h.compute(c, b.Definition); err != nil {
		api.Fail(c, err)
		return nil, false
	}
	return &b, true
}

// POST /assemblages {name, definition} — {code, analysis}.
func (h handlers) save(c *gin.Context) {
	b, ok := h.checked(c)
	if !ok {
		return
	}
	a, err := Create(c.Request.Context(), api.AppOf(c).DB, b.Name, b.Definition, api.ActorOf(c).UserID, h.now())
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_save_analysis", "analysis": a})
}

// POST /assemblage/{id} {name, definition} — its owner or an admin.
func (h handlers) update(c *gin.Context) {
	id, ok := api.PathID(c, "id", ErrNotFound)
	if !ok {
		return
	}
	actor := api.ActorOf(c)
	// Ownership first: another's analysis is not theirs to check either.
	if err := editable(c.Request.Context(), api.AppOf(c).DB, id, actor.UserID, actor.Privilege <= auth.Admin); err != nil {
		api.Fail(c, err)
		return
	}
	b, ok := h.checked(c)
	if !ok {
		return
	}
	a, err := Update(c.Request.Context(), api.AppOf(c).DB, id, b.Name, b.Definition, actor.UserID, actor.Privilege <= auth.Admin, h.now())
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_save_analysis", "analysis": a})
}

func (h handlers) setShared(on bool) func(c *gin.Context, id, user int64, admin bool) error {
	return func(c *gin.Context, id, user int64, admin bool) error {
		return SetShared(c.Request.Context(), api.AppOf(c).DB, id, user, admin, on, h.now())
	}
}

func deleteAnalysis(c *gin.Context, id, user int64, admin bool) error {
	return Delete(c.Request.Context(), api.AppOf(c).DB, id, user, admin)
}
