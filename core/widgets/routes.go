package widgets

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
)

// bodyLimit lets a 256 KiB module through with a multipart envelope
// around it; the module itself is checked against MaxSize.
const bodyLimit = MaxSize + 64<<10

// Routes: readers of the app list and load widgets; the super admin
// uploads, replaces and deletes them.
func Routes(now func() time.Time) []api.Route {
	h := handlers{now: now}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/widgets", Access: auth.Read, Handler: h.list},
		{Scope: api.App, Method: http.MethodGet, Path: "/widget/:name", Access: auth.Read, Handler: h.serve},
		{Scope: api.App, Method: http.MethodPut, Path: "/widget/:name", Access: auth.SuperAdminOnly, Handler: h.put, BodyLimit: bodyLimit},
		{Scope: api.App, Method: http.MethodDelete, Path: "/widget/:name", Access: auth.SuperAdminOnly, Handler: h.delete},
	}
}

type handlers struct {
	now func() time.Time
}

// GET /widgets — {widgets: [names]}.
func (h handlers) list(c *gin.Context) {
	ns, err := Names(c.Request.Context(), api.AppOf(c).DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"widgets": ns})
}

// GET /widget/{name} — the module as text/javascript; 304 when the
// client's If-None-Match holds its ETag.
func (h handlers) serve(c *gin.Context) {
	name := c.Param("name")
	if err := CheckName(name); err != nil {
		api.Fail(c, err)
		return
	}
	w, err := Get(c.Request.Context(), api.AppOf(c).DB, name)
	if err != nil {
		api.Fail(c, err)
		return
	}
	hd := c.Writer.Header()
	hd.Set("ETag", w.ETag)
	// Revalidated on every use: a super admin may replace it at any time,
	// and the ETag makes the check cheap.
	hd.Set("Cache-Control", "private, no-cache")
	hd.Set("X-Content-Type-Options", "nosniff")
	if etagMatches(c.GetHeader("If-None-Match"), w.ETag) {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, "text/javascript; charset=utf-8", w.Content)
}

// etagMatches applies If-None-Match (RFC 9110 §13.1.2): a list of tags
// compared weakly, or *.
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || (t != "" && t == etag) {
			return true
		}
	}
	return false
}

// PUT /widget/{name} — the module as the body, or as the multipart part
// "file"; creates or replaces it.
func (h handlers) put(c *gin.Context) {
	name := c.Param("name")
	if err := CheckName(name); err != nil {
		api.Fail(c, err)
		return
	}
	src, err := readModule(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	w, created, err := Save(c.Request.Context(), api.AppOf(c).DB, name, src, h.now())
	if err != nil {
		api.Fail(c, err)
		return
	}
	status, code := http.StatusOK, "widget_replaced"
	if created {
		status, code = http.StatusCreated, "widget_created"
	}
	c.Header("ETag", w.ETag)
	api.Success(c, status, gin.H{"code": code, "name": w.Name, "etag": w.ETag, "size": len(w.Content)})
}

// readModule reads the module from the body or its multipart part "file",
// never more than MaxSize+1 bytes of it.
func readModule(c *gin.Context) ([]byte, error) {
	var r io.Reader = c.Request.Body
	if mt, _, _ := mime.ParseMediaType(c.GetHeader("Content-Type")); mt == "multipart/form-data" {
		fh, err := c.FormFile("file")
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return nil, api.BodyReadErr(err)
			}
			return nil, ErrEmpty
		}
		f, err := fh.Open()
		if err != nil {
			return nil, ErrEmpty
		}
		defer f.Close()
		r = f
	}
	src, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, api.BodyReadErr(err)
	}
	return src, nil
}

// DELETE /widget/{name}.
func (h handlers) delete(c *gin.Context) {
	name := c.Param("name")
	if err := CheckName(name); err != nil {
		api.Fail(c, err)
		return
	}
	if err := Delete(c.Request.Context(), api.AppOf(c).DB, name); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "widget_deleted", "name": name})
}
