package vocab

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/wire"
)

// Routes are the vocabulary endpoints (CONTRACT §10): everyone who may
// read the app reads them; admins change them.
func Routes(host api.Host) []api.Route {
	h := handlers{host: host}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/vocabularies", Access: auth.Read, Handler: h.list},
		{Scope: api.App, Method: http.MethodGet, Path: "/vocabularies/usages", Access: auth.Read, Handler: h.usages},
		{Scope: api.App, Method: http.MethodPost, Path: "/vocabularies", Access: auth.AdminOnly, Handler: h.add},
		{Scope: api.App, Method: http.MethodPost, Path: "/vocabularies/sort", Access: auth.AdminOnly, Handler: h.sort},
		{Scope: api.App, Method: http.MethodPatch, Path: "/vocabulary/:id", Access: auth.AdminOnly, Handler: h.edit},
		{Scope: api.App, Method: http.MethodDelete, Path: "/vocabulary/:id", Access: auth.AdminOnly, Handler: h.delete},
	}
}

type handlers struct{ host api.Host }

// setOfField is the vocabulary a select field (tb, field) uses: the form
// of BraDypUS's openapi ({tb, field}) names a set through its field.
func (h handlers) setOfField(c *gin.Context, tb, field string) (string, error) {
	cat, err := h.host.Catalog(c.Request.Context(), api.AppOf(c))
	if err != nil {
		return "", err
	}
	t, ok := cat.Table(tb)
	if !ok {
		return "", schema.ErrTableNotFound.With("table", tb)
	}
	f, ok := t.Field(field)
	if !ok {
		return "", records.ErrInvalidField.With("field", field)
	}
	if f.VocabularySet == "" {
		return "", ErrInvalid.With("detail", tb+"."+field+" takes no values from a vocabulary (vocabulary_set)")
	}
	return f.VocabularySet, nil
}

// GET /vocabularies — every set with its items ({vocs}); with ?tb=&field=
// (or ?voc=) only that set, its items also flat as {vocabularies}.
func (h handlers) list(c *gin.Context) {
	only := strings.TrimSpace(c.Query("voc"))
	if tb, field := c.Query("tb"), c.Query("field"); tb != "" || field != "" {
		set, err := h.setOfField(c, tb, field)
		if err != nil {
			api.Fail(c, err)
			return
		}
		only = set
	}
	a := api.AppOf(c)
	sets, err := List(c.Request.Context(), a.DB, only)
	if err != nil {
		api.Fail(c, err)
		return
	}
	body := gin.H{"vocs": sets}
	if only != "" {
		items := []Item{}
		if len(sets) == 1 {
			items = sets[0].Items
		}
		body["vocabularies"] = items
	}
	api.Success(c, http.StatusOK, body)
}

// GET /vocabularies/usages — {usages: {set: [{tb, tb_label, field, field_label}]}}.
func (h handlers) usages(c *gin.Context) {
	cat, err := h.host.Catalog(c.Request.Context(), api.AppOf(c))
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"usages": Usages(cat)})
}

type itemBody struct {
	Voc   *string `json:"voc"`
	Def   *string `json:"def"`
	Tb    *string `json:"tb"`
	Field *string `json:"field"`
	Value *string `json:"value"`
	Val   *string `json:"val"`
}

// text is the first of the forms given (they are aliases).
func text(vs ...*string) string {
	for _, v := range vs {
		if v != nil {
			return *v
		}
	}
	return ""
}

// POST /vocabularies — {voc, def}, or {tb, field, value} naming the set
// through a field that uses it.
func (h handlers) add(c *gin.Context) {
	var b itemBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	voc := text(b.Voc)
	if voc == "" && (b.Tb != nil || b.Field != nil) {
		set, err := h.setOfField(c, text(b.Tb), text(b.Field))
		if err != nil {
			api.Fail(c, err)
			return
		}
		voc = set
	}
	id, err := Add(c.Request.Context(), api.AppOf(c).DB, voc, text(b.Def, b.Value, b.Val))
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_def_added", "id": id})
}

type sortBody struct {
	IDs []any `json:"ids"`
}

// POST /vocabularies/sort — {ids: [...]}: the items in their new order.
func (h handlers) sort(c *gin.Context) {
	var b sortBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	ids := make([]int64, 0, len(b.IDs))
	for _, raw := range b.IDs {
		id, err := api.ParseID(raw)
		if err != nil || id == 0 {
			api.Fail(c, ErrInvalid.With("detail", "ids must be item ids"))
			return
		}
		ids = append(ids, id)
	}
	if err := Sort(c.Request.Context(), api.AppOf(c).DB, ids); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_sort_update"})
}

// editor opens, through the one gate (records.Grants via the host), the
// caller's scope on every table that stores item id's set, and on the
// parent of each plugin table among them: renaming an item rewrites rows
// of each, deleting one counts them. The caller must be able to edit all
// their rows, so a table the caller may not read, may not edit, or sees
// only a subset of refuses the change (403 not_enough_privilege naming the
// table) before anything is read or written.
func (h handlers) editor(c *gin.Context, id int64) (Editor, error) {
	ctx, a := c.Request.Context(), api.AppOf(c)
	cat, err := h.host.Catalog(ctx, a)
	if err != nil {
		return Editor{}, err
	}
	voc, _, err := item(ctx, a.DB, id)
	if err != nil {
		return Editor{}, err
	}
	scopes := map[string]*records.Scope{}
	for _, tf := range fieldsOf(cat, voc) {
		tables := []*schema.Table{tf[0]}
		if tf[0].IsPlugin {
			if p, ok := cat.Table(tf[0].PluginOf); ok {
				tables = append(tables, p)
			}
		}
		for _, t := range tables {
			if scopes[t.Name] != nil {
				continue
			}
			sc, err := h.host.RecordScope(c, t.Name)
			if t.IsPlugin && errs.CodeOf(err) == errs.CodeOf(schema.ErrTableNotFound) {
				// The table of a plugin feature inactive on its parent is
				// out of the records' catalog; its parent's gate holds.
				continue
			}
			if err != nil {
				return Editor{}, err
			}
			if !auth.Edit.Allows(sc.Level) || sc.Restrict != nil {
				return Editor{}, records.ErrNotEnough.With("required", auth.Edit.String()).With("table", t.Name).
					With("reason", "the item's set is stored in a table you may not change in full")
			}
			scopes[t.Name] = sc
		}
	}
	return Editor{Catalog: cat, Scope: func(tx *store.DB, t *schema.Table) *records.Scope {
		sc := *scopes[t.Name]
		sc.DB = tx
		return &sc
	}}, nil
}

func itemID(c *gin.Context) (int64, bool) { return api.PathID(c, "id", ErrItemNotFound) }

// PATCH /vocabulary/{id} — {val} (or {value}, {def}): renames the item and
// the stored values of the records that use it.
func (h handlers) edit(c *gin.Context) {
	id, ok := itemID(c)
	if !ok {
		return
	}
	var b itemBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	ed, err := h.editor(c, id)
	if err == nil {
		var n int
		if n, err = Rename(c.Request.Context(), api.AppOf(c).DB, ed, id, text(b.Val, b.Value, b.Def)); err == nil {
			api.Success(c, http.StatusOK, gin.H{"code": "ok_def_update", "records": n})
			return
		}
	}
	api.Fail(c, err)
}

// DELETE /vocabulary/{id}[?keep_values=1] — refused while records use the
// item (409 vocabulary_item_in_use with count), unless keep_values.
func (h handlers) delete(c *gin.Context) {
	id, ok := itemID(c)
	if !ok {
		return
	}
	keep := false
	if v := c.Query("keep_values"); v != "" {
		var err error
		if keep, err = wire.Bool(v); err != nil {
			api.Fail(c, errs.New(errs.Invalid, "invalid_parameter", "keep_values must be a boolean").With("parameter", "keep_values"))
			return
		}
	}
	ed, err := h.editor(c, id)
	if err == nil {
		if err = Delete(c.Request.Context(), api.AppOf(c).DB, ed, id, keep); err == nil {
			api.Success(c, http.StatusOK, gin.H{"code": "ok_def_erase"})
			return
		}
	}
	api.Fail(c, err)
}
