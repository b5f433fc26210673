package filesapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/wire"
)

// handlers serve the file routes for one server.
type handlers struct {
	host      api.Host
	files     *files.Service
	maxUpload int64
}

// Routes are the file endpoints (SPEC §4.4, CONTRACT §10). Upload and
// link name the record's table, so the gate applies the per-table level;
// the others find the records a file is linked to and ask files.Caller.
// maxUpload caps one uploaded file's bytes.
func Routes(host api.Host, svc *files.Service, maxUpload int64) []api.Route {
	s := &handlers{host: host, files: svc, maxUpload: maxUpload}
	upload := maxUpload + multipartSlack
	return []api.Route{
		{Scope: api.App, Method: http.MethodPost, Path: "/record/:tb/:id/file", Access: auth.Edit, Handler: s.handleFileUpload, BodyLimit: upload, BodyTimeout: uploadTimeout},
		{Scope: api.App, Method: http.MethodPost, Path: "/record/:tb/:id/link-file", Access: auth.Edit, Handler: s.handleFileLink},
		{Scope: api.App, Method: http.MethodDelete, Path: "/file-link/:id", Access: auth.Edit, Handler: s.handleFileUnlink},
		{Scope: api.App, Method: http.MethodPost, Path: "/files/sort", Access: auth.Edit, Handler: s.handleFileSort},
		{Scope: api.App, Method: http.MethodGet, Path: "/files", Access: auth.Read, Handler: s.handleFileList},
		{Scope: api.App, Method: http.MethodGet, Path: "/file/:id/download", Access: auth.Read, Handler: s.handleFileDownload, SignedLink: true, LongAnswer: true},
		{Scope: api.App, Method: http.MethodGet, Path: "/file/:id/thumb", Access: auth.Read, Handler: s.handleFileThumb, SignedLink: true},
		{Scope: api.App, Method: http.MethodPatch, Path: "/file/:id", Access: auth.Edit, Handler: s.handleFilePatch},
		{Scope: api.App, Method: http.MethodDelete, Path: "/file/:id", Access: auth.Edit, Handler: s.handleFileDelete},
		{Scope: api.App, Method: http.MethodPost, Path: "/file/:id/replace", Access: auth.Edit, Handler: s.handleFileReplace, BodyLimit: upload, BodyTimeout: uploadTimeout},
	}
}

// multipartSlack is what an upload body may carry beyond the file: the
// multipart framing and small fields.
const multipartSlack = 1 << 20

// uploadTimeout bounds the reading of an upload's body (the route's BodyTimeout; the ordinary
// body timeout is for JSON).
const uploadTimeout = 15 * time.Minute

var errBadMultipart = errs.New(errs.Invalid, "invalid_multipart", "the body is not a well-formed multipart form")

// fileCaller is the caller as the files rules see it.
func (s *handlers) fileCaller(c *gin.Context) (files.Caller, error) {
	return files.Caller{
		Admin: api.ActorOf(c).Privilege <= auth.Admin,
		Scope: func(_ context.Context, table string) (*records.Scope, error) { return s.host.RecordScope(c, table) },
		Tables: func(ctx context.Context) ([]*records.Scope, error) {
			cat, err := s.host.Catalog(ctx, api.AppOf(c))
			if err != nil {
				return nil, err
			}
			var out []*records.Scope
			for _, t := range cat.Tables {
				if t.IsPlugin {
					continue
				}
				sc, err := s.host.RecordScope(c, t.Name)
				if errors.Is(err, records.ErrNotEnough) || errors.Is(err, records.ErrSubsetBroken) {
					continue // the records gate: a table the caller may not read
				}
				if err != nil {
					return nil, err
				}
				out = append(out, sc)
			}
			return out, nil
		},
	}, nil
}

// fileTarget is the caller and the file named by the path.
func (s *handlers) fileTarget(c *gin.Context) (files.Caller, int64, bool) {
	fc, err := s.fileCaller(c)
	var id int64
	if err == nil {
		id, err = api.ParseIDString(c.Param("id"))
		if err == nil && id == 0 {
			err = files.ErrFileNotFound
		}
	}
	if err != nil {
		api.Fail(c, err)
		return fc, 0, false
	}
	return fc, id, true
}

// withUpload streams the multipart field "file" of the request to fn; no
// part is held in memory. Without one: 400 parameter_missing.
func (s *handlers) withUpload(c *gin.Context, fn func(name string, body io.Reader) error) error {
	mr, err := c.Request.MultipartReader()
	if err != nil {
		return files.ErrNoFile
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return files.ErrNoFile
		}
		if err != nil {
			if err = uploadErr(err); errors.Is(err, api.ErrTooLarge) || errors.Is(err, api.ErrBodyTimeout) {
				return err
			}
			return errBadMultipart.Wrap(err)
		}
		if p.FormName() != "file" || p.FileName() == "" && p.Header.Get("Content-Type") == "" {
			p.Close()
			continue
		}
		lr := files.CapReader(p, s.maxUpload)
		err = fn(p.FileName(), lr)
		p.Close()
		return uploadErr(err)
	}
}

// uploadErr names the body failures of an upload.
func uploadErr(err error) error {
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &tooBig):
		return api.ErrTooLarge.With("limit", tooBig.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return api.ErrBodyTimeout
	}
	if _, ok := errs.As(err); ok {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "multipart") {
		return files.ErrNoFile.Wrap(err)
	}
	return err
}

// fileEntry is a file with one of its links, as upload and link answer it.
func fileEntry(ctx context.Context, app string, f *files.File, linkID int64, sort any) gin.H {
	e := files.Entry(ctx, app, f)
	e["link_id"], e["link_sort"] = linkID, sort
	return e
}

// POST /record/{tb}/{id}/file — upload a file and link it to the record.
func (s *handlers) handleFileUpload(c *gin.Context) {
	sc, id, ok := api.RecordTarget(s.host, c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	if err := sc.Editable(ctx, id); err != nil {
		api.Fail(c, err)
		return
	}
	a := api.AppOf(c)
	var f *files.File
	var linkID int64
	err := s.withUpload(c, func(name string, body io.Reader) error {
		up, err := NewUpload(s.host, c, sc, name, body)
		if err == nil {
			f, linkID, err = s.files.Create(ctx, a.DB, a.Name, up, &files.Target{Table: sc.Table.Name, ID: id})
		}
		return err
	})
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_file_uploaded", "file": fileEntry(ctx, a.Name, f, linkID, nil), "id": f.ID, "link_id": linkID})
}

// NewUpload is body, a file named name arriving for a record of sc's
// table, as POST /record/{tb}/{id}/file stores it: the caller as its
// creator, the app's maxImageSize, and a version of the record written in
// the link's transaction. Whoever else turns bytes into a linked file
// (offline uploads, core/fieldsync) builds its upload here, so the same
// rules hold; it checks sc.Editable first, as the route does.
func NewUpload(host api.Host, c *gin.Context, sc *records.Scope, name string, body io.Reader) (files.Upload, error) {
	maxSide, err := maxImageSize(c.Request.Context(), api.AppOf(c))
	if err != nil {
		return files.Upload{}, err
	}
	return files.Upload{Name: name, Body: body, Creator: creatorOf(sc), MaxImageSize: maxSide, Before: versionsOf(host, c)}, nil
}

// versions writes, in the change's transaction, a version of each record
// whose files are about to change (records.SnapshotFiles), as the caller.
// A link to a record that no longer exists has nothing to version.
func (s *handlers) versions(c *gin.Context) files.Before { return versionsOf(s.host, c) }

func versionsOf(host api.Host, c *gin.Context) files.Before {
	return func(ctx context.Context, tx *store.DB, touched []files.Target) error {
		a := api.AppOf(c)
		cat, err := host.Catalog(ctx, a)
		if err != nil {
			return err
		}
		for _, t := range touched {
			tb, ok := cat.Table(t.Table)
			if !ok {
				continue // a link left by a dropped table
			}
			// A trace, not an access: every linked record gets its
			// version, whether the caller may see it or not.
			sc := &records.Scope{DB: tx, Catalog: cat, Table: tb, Actor: api.ActorOf(c), Level: api.ActorOf(c).Privilege,
				App: a.Name, Files: files.Section{}}
			if err := records.SnapshotFiles(ctx, sc, t.ID); err != nil && !errors.Is(err, records.ErrRecordNotFound) {
				return err
			}
		}
		return nil
	}
}

// maxImageSize is the app's maxImageSize setting (0 when unset).
func maxImageSize(ctx context.Context, a *apps.App) (int, error) {
	v, ok, err := a.Setting(ctx, apps.SettingMaxImageSize)
	if err != nil || !ok {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, nil
	}
	return n, nil
}

func creatorOf(sc *records.Scope) *int64 {
	if sc.Actor == nil || sc.Actor.UserID == 0 {
		return nil
	}
	id := sc.Actor.UserID
	return &id
}

type linkFileBody struct {
	FileID  any `json:"fileId"`
	FileID2 any `json:"file_id"`
	ID      any `json:"id"`
}

// POST /record/{tb}/{id}/link-file — link an uploaded file to the record.
func (s *handlers) handleFileLink(c *gin.Context) {
	sc, id, ok := api.RecordTarget(s.host, c)
	if !ok {
		return
	}
	var body linkFileBody
	if err := api.BindExact(c, &body); err != nil {
		api.Fail(c, err)
		return
	}
	raw := body.FileID
	if raw == nil {
		raw = body.FileID2
	}
	if raw == nil {
		raw = body.ID
	}
	fileID, err := api.ParseID(raw)
	if err != nil || fileID == 0 {
		api.Fail(c, errs.New(errs.Invalid, "parameter_missing", "fileId is required"))
		return
	}
	ctx, a := c.Request.Context(), api.AppOf(c)
	fc, err := s.fileCaller(c)
	if err == nil {
		err = sc.Editable(ctx, id)
	}
	if err == nil {
		err = fc.CheckRead(ctx, a.DB, fileID)
	}
	var linkID int64
	if err == nil {
		to := files.Target{Table: sc.Table.Name, ID: id}
		err = a.DB.Tx(ctx, func(tx *store.DB) error {
			if err := s.versions(c)(ctx, tx, []files.Target{to}); err != nil {
				return err
			}
			var err error
			linkID, err = files.AddLink(ctx, tx, fileID, to)
			return err
		})
	}
	var f *files.File
	if err == nil {
		f, err = files.Get(ctx, a.DB, fileID)
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_file_linked", "file": fileEntry(ctx, a.Name, f, linkID, nil)})
}

// DELETE /file-link/{linkId} — remove a link; the file stays.
func (s *handlers) handleFileUnlink(c *gin.Context) {
	fc, id, ok := s.fileTarget(c)
	if !ok {
		return
	}
	ctx, db := c.Request.Context(), api.AppOf(c).DB
	l, err := files.GetLink(ctx, db, id)
	if err == nil {
		err = fc.CheckEdit(ctx, files.Target{Table: l.Table, ID: l.RecordID})
	}
	if err == nil {
		err = db.Tx(ctx, func(tx *store.DB) error {
			if err := s.versions(c)(ctx, tx, []files.Target{{Table: l.Table, ID: l.RecordID}}); err != nil {
				return err
			}
			return files.DeleteLink(ctx, tx, id)
		})
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_file_unlinked"})
}

type fileSortBody struct {
	Order any `json:"order"`
	IDs   any `json:"ids"`
}

// POST /files/sort — set the display order of links ({"order":[link ids]}
// or {"ids":[...]}); ids naming no link are ignored.
func (s *handlers) handleFileSort(c *gin.Context) {
	var body fileSortBody
	if err := api.BindExact(c, &body); err != nil {
		api.Fail(c, err)
		return
	}
	raw := body.Order
	if raw == nil {
		raw = body.IDs
	}
	list, err := wire.ListOf(raw)
	if err != nil || len(list) == 0 {
		api.Fail(c, errs.New(errs.Invalid, "parameter_missing", "order (a list of file link ids) is required"))
		return
	}
	order := make([]int64, 0, len(list))
	for _, v := range list {
		id, err := wire.Int(v)
		if err != nil || id <= 0 {
			api.Fail(c, records.ErrInvalidID.With("detail", "order lists file link ids"))
			return
		}
		order = append(order, id)
	}
	ctx, db := c.Request.Context(), api.AppOf(c).DB
	fc, err := s.fileCaller(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	links, err := files.LinksByID(ctx, db, order)
	if err != nil {
		api.Fail(c, err)
		return
	}
	seen := map[files.Target]bool{}
	for _, l := range links {
		t := files.Target{Table: l.Table, ID: l.RecordID}
		if !seen[t] {
			if err := fc.CheckEdit(ctx, t); err != nil {
				api.Fail(c, err)
				return
			}
			seen[t] = true
		}
	}
	if err := files.Sort(ctx, db, order); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_file_sorting_update"})
}

// GET /files — a page of the files the caller may see.
func (s *handlers) handleFileList(c *gin.Context) {
	fc, err := s.fileCaller(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	q := files.ListQuery{Search: c.Query("search")}
	if q.Search == "" {
		q.Search = c.Query("q")
	}
	var page, perPage int64
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"page", &page}, {"per_page", &perPage}} {
		if v := c.Query(p.name); v != "" {
			if *p.dst, err = wire.Int(v); err != nil {
				api.Fail(c, records.ErrInvalidParameter.With("parameter", p.name))
				return
			}
		}
	}
	pg, err := records.PageOf(int(page), int(perPage), records.DefaultPerPage, records.MaxPerPage)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if v := c.Query("orphans_only"); v != "" {
		if q.OrphansOnly, err = wire.Bool(v); err != nil {
			api.Fail(c, records.ErrInvalidParameter.With("parameter", "orphans_only"))
			return
		}
	}
	q.PerPage, q.Page = int(pg.Limit), int(pg.Offset/pg.Limit)+1
	a := api.AppOf(c)
	res, err := files.List(c.Request.Context(), a.DB, a.Name, fc, q)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"total": res.Total, "page": q.Page, "per_page": q.PerPage, "files": res.Files})
}

// GET /file/{id}/download — the original bytes: ETag, Range, the name in
// Content-Disposition (RFC 6266), the sniffed type; anything a browser
// could run comes as an attachment in a sandbox.
func (s *handlers) handleFileDownload(c *gin.Context) { s.serveFile(c, false) }

// GET /file/{id}/thumb — a raster image's thumbnail (JPEG), under the
// download's rules and headers; 404 no_thumbnail for other files.
func (s *handlers) handleFileThumb(c *gin.Context) { s.serveFile(c, true) }

func (s *handlers) serveFile(c *gin.Context, thumb bool) {
	fc, id, ok := s.fileTarget(c)
	if !ok {
		return
	}
	ctx, a := c.Request.Context(), api.AppOf(c)
	err := fc.CheckRead(ctx, a.DB, id)
	var f *files.File
	if err == nil {
		f, err = files.Get(ctx, a.DB, id)
	}
	var b files.Blob
	if err == nil {
		if thumb {
			b, err = s.files.OpenThumb(ctx, a.Name, f)
		} else {
			b, err = s.files.Open(ctx, a.Name, f)
		}
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	defer b.Close()
	h := c.Writer.Header()
	mimeType, etag, name := f.Mime, f.SHA256, f.Name()
	if thumb {
		mimeType, etag, name = "image/jpeg", f.SHA256+"-thumb", f.Filename+"-thumb.jpg"
	}
	h.Set("Content-Type", mimeType)
	h.Set("ETag", `"`+etag+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, max-age=0, must-revalidate")
	disp := "inline"
	if !thumb && f.Active() {
		disp = "attachment"
		h.Set("Content-Security-Policy", "sandbox")
	}
	h.Set("Content-Disposition", files.ContentDisposition(disp, name))
	http.ServeContent(c.Writer, c.Request, "", f.CreatedAt, b)
}

type fileMetaBody struct {
	Description any `json:"description"`
	Keywords    any `json:"keywords"`
	Printable   any `json:"printable"`
}

// PATCH /file/{id} — change description, keywords, printable (null clears
// a text).
func (s *handlers) handleFilePatch(c *gin.Context) {
	fc, id, ok := s.fileTarget(c)
	if !ok {
		return
	}
	var raw map[string]any
	if err := api.BindExact(c, &raw); err != nil {
		api.Fail(c, err)
		return
	}
	var m files.Meta
	for _, k := range []string{"description", "keywords"} {
		v, present := raw[k]
		if !present {
			continue
		}
		if v == nil {
			m.Clear = append(m.Clear, k)
			continue
		}
		txt, err := wire.Text(v)
		if err != nil {
			api.Fail(c, records.ErrInvalidParameter.With("parameter", k))
			return
		}
		if k == "description" {
			m.Description = &txt
		} else {
			m.Keywords = &txt
		}
	}
	if v, present := raw["printable"]; present && v != nil {
		b, err := wire.Bool(v)
		if err != nil {
			api.Fail(c, records.ErrInvalidParameter.With("parameter", "printable"))
			return
		}
		m.Printable = &b
	}
	ctx, a := c.Request.Context(), api.AppOf(c)
	err := fc.CheckChange(ctx, a.DB, id, false)
	var f *files.File
	if err == nil {
		f, err = files.Update(ctx, a.DB, id, m)
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_file_updated", "file": files.Entry(c.Request.Context(), a.Name, f)})
}

// DELETE /file/{id} — delete a file, its links and its bytes.
func (s *handlers) handleFileDelete(c *gin.Context) {
	fc, id, ok := s.fileTarget(c)
	if !ok {
		return
	}
	ctx, a := c.Request.Context(), api.AppOf(c)
	err := fc.CheckChange(ctx, a.DB, id, true)
	if err == nil {
		err = s.files.Delete(ctx, a.DB, a.Name, id, s.versions(c))
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_file_deleted"})
}

// POST /file/{id}/replace — new bytes, same id, metadata and links.
func (s *handlers) handleFileReplace(c *gin.Context) {
	fc, id, ok := s.fileTarget(c)
	if !ok {
		return
	}
	ctx, a := c.Request.Context(), api.AppOf(c)
	if err := fc.CheckChange(ctx, a.DB, id, false); err != nil {
		api.Fail(c, err)
		return
	}
	maxSide, err := maxImageSize(ctx, a)
	if err != nil {
		api.Fail(c, err)
		return
	}
	var f *files.File
	err = s.withUpload(c, func(name string, body io.Reader) (err error) {
		f, err = s.files.Replace(ctx, a.DB, a.Name, id, files.Upload{Name: name, Body: body, MaxImageSize: maxSide, Before: s.versions(c)})
		return err
	})
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_file_replaced", "id": f.ID, "ext": f.Ext, "filename": f.Filename,
		"is_image": f.IsImage(), "file": files.Entry(c.Request.Context(), a.Name, f)})
}
