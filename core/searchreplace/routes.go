package searchreplace

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/wire"
)

// Routes are search-replace's: admins (10) and above.
func Routes(host api.Host) []api.Route {
	h := handlers{host: host}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/search-replace/tables", Access: auth.AdminOnly, Handler: h.tables},
		{Scope: api.App, Method: http.MethodGet, Path: "/search-replace/:tb/fields", Access: auth.AdminOnly, Handler: h.fields},
		{Scope: api.App, Method: http.MethodPost, Path: "/search-replace", Access: auth.AdminOnly, Handler: h.run},
	}
}

type handlers struct{ host api.Host }

type named struct {
	Name  string `json:"name"`
	Label string `json:"label"`
}

// editableFields are t's fields search-replace may change.
func editableFields(t *schema.Table) []named {
	out := []named{}
	for _, f := range t.Fields {
		if Editable(f) {
			out = append(out, named{f.Name, f.Label})
		}
	}
	return out
}

// GET /search-replace/tables — {tables: [{name, label}]}: the tables the
// caller may read (the records gate) with a field it may change.
func (h handlers) tables(c *gin.Context) {
	cat, err := h.host.Catalog(c.Request.Context(), api.AppOf(c))
	if err != nil {
		api.Fail(c, err)
		return
	}
	out := []named{}
	for _, t := range cat.Tables {
		sc, err := h.host.RecordScope(c, t.Name)
		if errors.Is(err, auth.ErrNotEnoughPrivilege) || errors.Is(err, records.ErrSubsetBroken) {
			continue
		}
		if err != nil {
			api.Fail(c, err)
			return
		}
		if len(editableFields(sc.Table)) > 0 {
			out = append(out, named{t.Name, t.Label})
		}
	}
	api.Success(c, http.StatusOK, gin.H{"tables": out})
}

// GET /search-replace/{tb}/fields — {fields: [{name, label}]}; none for a
// table that does not exist (as BraDypUS answers) or that the caller may
// not read: the same either way, so nothing is learnt about what exists.
func (h handlers) fields(c *gin.Context) {
	out := []named{}
	sc, err := h.host.RecordScope(c, c.Param("tb"))
	switch {
	case err == nil:
		out = editableFields(sc.Table)
	case errors.Is(err, auth.ErrNotEnoughPrivilege), errors.Is(err, records.ErrSubsetBroken), errs.CodeOf(err) == schema.ErrTableNotFound.Code:
	default:
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"fields": out})
}

type runBody struct {
	Tb      string  `json:"tb"`
	Fld     string  `json:"fld"`
	Field   string  `json:"field"`
	Search  *string `json:"search"`
	Replace string  `json:"replace"`
	Preview any     `json:"preview"`
	DryRun  any     `json:"dry_run"`
}

// errOutOfReach is BraDypUS's answer for a table or field the caller may
// not change (or that does not exist): the same either way, so nothing is
// learnt about what exists.
var errOutOfReach = auth.ErrNotEnoughPrivilege

// POST /search-replace {tb, fld, search, replace, preview?} — with preview
// (alias dry_run): {code: ok_search_replace_preview, count, samples}; else
// {code: ok_search_replace, affected, count}.
func (h handlers) run(c *gin.Context) {
	var b runBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	if b.Fld == "" {
		b.Fld = b.Field
	}
	if b.Search == nil || *b.Search == "" || strings.TrimSpace(b.Tb) == "" || strings.TrimSpace(b.Fld) == "" {
		api.Fail(c, errs.New(errs.Invalid, "parameter_missing", "tb, fld and a non-empty search are required"))
		return
	}
	preview := false
	for _, v := range []any{b.Preview, b.DryRun} {
		if v != nil {
			p, err := wire.Bool(v)
			if err != nil {
				api.Fail(c, errs.New(errs.Invalid, "invalid_parameter", "preview must be a boolean").With("parameter", "preview"))
				return
			}
			preview = preview || p
		}
	}
	sc, err := h.host.RecordScope(c, b.Tb)
	if err != nil {
		if errs.CodeOf(err) == schema.ErrTableNotFound.Code {
			err = errOutOfReach.With("detail", "no table "+b.Tb+" search-replace may change")
		}
		api.Fail(c, err)
		return
	}
	f, ok := sc.Table.Field(b.Fld)
	if !ok || !Editable(f) {
		api.Fail(c, errOutOfReach.With("detail", "no text field "+b.Fld+" of "+b.Tb+" search-replace may change"))
		return
	}
	res, err := Run(c.Request.Context(), sc, f, *b.Search, b.Replace, preview)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if preview {
		api.Success(c, http.StatusOK, gin.H{"code": "ok_search_replace_preview", "count": res.Count, "samples": res.Samples})
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_search_replace", "affected": res.Count, "count": res.Count})
}
