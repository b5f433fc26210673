package templates

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
)

// Routes: readers of a table read and render its templates; admins keep
// them.
// fs reads the record's images for the PDF.
func Routes(host api.Host, fs *files.Service, now func() time.Time) []api.Route {
	h := handlers{host: host, files: fs, now: now}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/templates", Access: auth.Enter, Handler: h.tables},
		{Scope: api.App, Method: http.MethodGet, Path: "/templates/:tb", Access: auth.Read, Handler: h.names},
		{Scope: api.App, Method: http.MethodGet, Path: "/template/:tb/:name", Access: auth.Read, Handler: h.get},
		{Scope: api.App, Method: http.MethodPost, Path: "/template/:tb/:name", Access: auth.AdminOnly, Handler: h.save},
		{Scope: api.App, Method: http.MethodPost, Path: "/template/:tb/:name/rename", Access: auth.AdminOnly, Handler: h.rename},
		{Scope: api.App, Method: http.MethodDelete, Path: "/template/:tb/:name", Access: auth.AdminOnly, Handler: h.delete},
		{Scope: api.App, Method: http.MethodGet, Path: "/template/:tb/:name/render/:id", Access: auth.Read, Handler: h.render},
	}
}

type handlers struct {
	host  api.Host
	files *files.Service
	now   func() time.Time
}

// table is the path's table, as the records gate opens it: a table the
// caller may not read (or that does not exist) has no templates for
// them, to read or to keep.
func (h handlers) table(c *gin.Context) (*schema.Catalog, *schema.Table, bool) {
	sc, err := h.host.RecordScope(c, c.Param("tb"))
	if err != nil {
		api.Fail(c, err)
		return nil, nil, false
	}
	return sc.Catalog, sc.Table, true
}

// GET /templates — {tables}: the tables with a template.
func (h handlers) tables(c *gin.Context) {
	ts, err := Tables(c.Request.Context(), api.AppOf(c).DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"tables": ts})
}

// GET /templates/{tb} — {templates}: its names.
func (h handlers) names(c *gin.Context) {
	if _, _, ok := h.table(c); !ok {
		return
	}
	ns, err := Names(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"templates": ns})
}

// GET /template/{tb}/{name} — {template: sections, content: sections}.
func (h handlers) get(c *gin.Context) {
	if _, _, ok := h.table(c); !ok {
		return
	}
	s, err := Get(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"), c.Param("name"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"template": s, "content": gin.H{"sections": s}})
}

type saveBody struct {
	Sections []any `json:"sections"`
}

// POST /template/{tb}/{name} {sections} — creates or replaces it.
func (h handlers) save(c *gin.Context) {
	cat, t, ok := h.table(c)
	if !ok {
		return
	}
	if err := CheckName(c.Param("name")); err != nil {
		api.Fail(c, err)
		return
	}
	var b saveBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	if b.Sections == nil {
		api.Fail(c, errs.New(errs.Invalid, "parameter_missing", "sections is required"))
		return
	}
	sections, err := Parse(cat, t, b.Sections)
	if err == nil {
		err = Save(c.Request.Context(), api.AppOf(c).DB, t.Name, c.Param("name"), sections, h.now())
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "template_saved"})
}

type renameBody struct {
	NewName string `json:"new_name"`
	Name    string `json:"name"`
}

// POST /template/{tb}/{name}/rename {new_name}.
func (h handlers) rename(c *gin.Context) {
	if _, _, ok := h.table(c); !ok {
		return
	}
	var b renameBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	to := strings.TrimSpace(b.NewName)
	if to == "" {
		to = strings.TrimSpace(b.Name)
	}
	if err := CheckName(to); err != nil {
		api.Fail(c, err)
		return
	}
	if err := Rename(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"), c.Param("name"), to); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "template_renamed"})
}

// DELETE /template/{tb}/{name}.
func (h handlers) delete(c *gin.Context) {
	if _, _, ok := h.table(c); !ok {
		return
	}
	if err := Delete(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"), c.Param("name")); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "template_deleted"})
}

// GET /template/{tb}/{name}/render/{id} — the record laid out by the
// template as standalone, printable HTML, or with format=pdf as an A4
// PDF, read as the caller.
func (h handlers) render(c *gin.Context) {
	sc, err := h.host.RecordScope(c, c.Param("tb"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	id, ok := api.PathID(c, "id", records.ErrRecordNotFound)
	if !ok {
		return
	}
	format := strings.ToLower(strings.TrimSpace(c.Query("format")))
	if format != "" && format != "html" && format != "pdf" {
		api.Fail(c, errs.New(errs.Invalid, "invalid_parameter", "format is html or pdf").With("parameter", "format"))
		return
	}
	sections, err := Get(c.Request.Context(), sc.DB, sc.Table.Name, c.Param("name"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	rec, err := records.Read(c.Request.Context(), sc, id)
	if err != nil {
		api.Fail(c, err)
		return
	}
	title := sc.Table.Label
	if meta, ok := rec["metadata"].(map[string]any); ok {
		title = fmt.Sprint(sc.Table.Label, " ", meta["rec_id"])
	}
	if format == "pdf" {
		ctx := c.Request.Context()
		app := api.AppOf(c)
		out, err := RenderPDF(ctx, title, sections, rec, func(ctx context.Context, id int64) (io.ReadCloser, error) {
			f, err := files.Get(ctx, sc.DB, id)
			if err != nil {
				return nil, err
			}
			return h.files.Open(ctx, app.Name, f)
		})
		if err != nil {
			api.Fail(c, err)
			return
		}
		c.Header("Content-Disposition", files.ContentDisposition("inline", fmt.Sprintf("%s-%d.pdf", sc.Table.Name, id)))
		c.Header("X-Content-Type-Options", "nosniff")
		c.Data(http.StatusOK, "application/pdf", out)
		return
	}
	out, err := Render(title, sections, rec)
	if err != nil {
		api.Fail(c, err)
		return
	}
	c.Header("Content-Security-Policy", "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'")
	c.Header("X-Content-Type-Options", "nosniff")
	c.Data(http.StatusOK, "text/html; charset=utf-8", out)
}
