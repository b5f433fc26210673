package server

import (
	"context"
	"errors"
	"github.com/strata-archaeo/strata/core/geo"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
)

// attachment is the response as a file download. Its headers and status
// go out with the first byte, so until then a failure can still be
// answered with a JSON error.
type attachment struct {
	c           *gin.Context
	contentType string
	filename    string
	started     bool
}

func (a *attachment) Write(p []byte) (int, error) {
	if !a.started {
		a.started = true
		h := a.c.Writer.Header()
		h.Set("Content-Type", a.contentType)
		h.Set("Content-Disposition", `attachment; filename="`+a.filename+`"`)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		a.c.Status(http.StatusOK)
	}
	return a.c.Writer.Write(p)
}

// GET /records/{tb}/export?format=csv|json|xlsx plus the list's parameters
// (filter, search, sort_field, sort_dir, columns; paging is ignored) —
// every matching row the caller may see, streamed batch by batch.
func (s *Server) handleExport(c *gin.Context) {
	sc, err := s.recordScope(c, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	format, err := records.ExportFormatOf(c.Query("format"), geo.ExportFormats()...)
	if err != nil {
		s.fail(c, err)
		return
	}
	q, err := s.listParams(c, sc)
	if err != nil {
		s.fail(c, err)
		return
	}
	exp, err := records.NewExport(sc, records.ExportQuery{SortField: q.SortField, SortDir: q.SortDir, Columns: q.Columns, Where: q.Where})
	if err != nil {
		s.fail(c, err)
		return
	}
	// Table names are identifiers ([a-z0-9_]): safe in the header as is.
	out := &attachment{c: c, contentType: format.ContentType, filename: sc.Table.Name + "." + format.Ext}
	w, err := format.NewWriterFor(c.Request.Context(), sc, out)
	if err != nil {
		s.fail(c, err)
		return
	}
	defer func() {
		if err := w.Close(); err != nil {
			s.log.Warn("export: releasing the writer", "table", sc.Table.Name, "err", err)
		}
	}()
	n, err := exp.Run(c.Request.Context(), w)
	if err == nil {
		return
	}
	if !out.started {
		s.fail(c, err)
		return
	}
	// The status is gone with the first byte. Cut the connection rather
	// than end the body: a download that breaks off is noticed, a file
	// that merely stops early (CSV) would not be.
	if !errors.Is(err, context.Canceled) {
		s.log.Error("export failed while streaming", "table", sc.Table.Name, "format", format.Name, "rows", n, "err", err)
	}
	panic(http.ErrAbortHandler)
}

// POST /records/{tb}/export-link[?format=…&filter…] — {url, expires_in}:
// the export with the same query, signed for the caller (auth.SignLink),
// for a new tab or a download link that sends no Authorization header
// (CONTRACT §10). Only session tokens sign: an API key sends itself.
func (s *Server) handleExportLink(c *gin.Context) {
	// No link for a table the caller may not read (the records gate).
	if _, err := s.recordScope(c, c.Param("tb")); err != nil {
		s.fail(c, err)
		return
	}
	a := appOf(c)
	actor := actorOf(c)
	g, ok := c.Get(ctxGrants)
	if !ok || actor.UserID == 0 {
		s.fail(c, errs.New(errs.Invalid, "session_required", "export links are made for a signed-in user's session; an API key exports with GET /records/{tb}/export"))
		return
	}
	secret, err := a.JWTSecret(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	q := c.Request.URL.Query()
	q.Del("t")
	path := "/" + a.Name + "/api/records/" + c.Param("tb") + "/export"
	q.Set("t", auth.SignLink(secret, a.Name, path, actor.UserID, g.(*auth.Grants).User.TokenVersion, s.now()))
	success(c, http.StatusOK, gin.H{"url": path + "?" + q.Encode(), "expires_in": int(auth.LinkTTL.Seconds())})
}
