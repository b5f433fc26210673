package backup

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/wire"
)

// Job kinds of the job system.
const (
	KindCreate  = "backup.create"
	KindRestore = "backup.restore"
)

// Deps are what the backup area works with.
type Deps struct {
	Apps   *apps.Registry
	Files  files.Storage
	Store  Store // Dir or Objects
	Jobs   *jobs.System
	TmpDir string // "" : the system's
	Now    func() time.Time
	// Wait is how long POST /backups and a restore wait for their job
	// before answering 202 with it (a small app is done by then, and
	// BraDypUS clients list the backup right after creating it).
	Wait time.Duration
	// MaxUpload caps POST /backups/upload.
	MaxUpload int64
}

var errNoFile = errs.New(errs.Invalid, "parameter_missing", "an archive (multipart field \"file\") is required")

var errAccountsSuperAdmin = errs.New(errs.Forbidden, "restore_accounts_super_admin",
	"only a super admin may restore the archive's accounts (they can raise privileges)")

// jobArgs name the backup a job makes or restores.
type jobArgs struct {
	File            string `json:"file"`
	RestoreAccounts bool   `json:"restore_accounts,omitempty"`
}

// restoreBody is what POST /backup/{file}/restore may send (JSON or a
// form); no body restores the data and keeps the live accounts.
type restoreBody struct {
	RestoreAccounts bool `json:"restore_accounts"`
}

func readRestoreBody(c *gin.Context) (restoreBody, error) {
	var b restoreBody
	ct, _, _ := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data" {
		v := strings.TrimSpace(c.PostForm("restore_accounts"))
		switch strings.ToLower(v) {
		case "", "0", "false", "no", "off":
		case "1", "true", "yes", "on":
			b.RestoreAccounts = true
		default:
			return b, api.ErrInvalidJSON.With("field", "restore_accounts").With("detail", "restore_accounts is true or false")
		}
		return b, nil
	}
	raw, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return b, api.BodyReadErr(err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return b, nil
	}
	return b, api.DecodeErr(wire.Decode(raw, &b, wire.Options{}))
}

// Register adds the backup job kinds to the job system (before it starts).
func Register(d Deps) {
	d.Jobs.Register(KindCreate, func(ctx context.Context, run *jobs.Run) (any, error) {
		var a jobArgs
		if err := run.Bind(&a); err != nil {
			return nil, err
		}
		app, err := d.Apps.Get(ctx, run.App())
		if err != nil {
			return nil, err
		}
		var m *Manifest
		err = d.Store.Create(ctx, app.Name, a.File, func(w io.Writer) error {
			var err error
			m, err = Write(ctx, app, d.Files, w, d.TmpDir, run.Progress)
			return err
		})
		if err != nil {
			return nil, err
		}
		return gin.H{"file": a.File, "counts": m.Counts}, nil
	}, jobs.Timeout(6*time.Hour))
	d.Jobs.Register(KindRestore, func(ctx context.Context, run *jobs.Run) (any, error) {
		var a jobArgs
		if err := run.Bind(&a); err != nil {
			return nil, err
		}
		f, err := d.Store.Open(ctx, run.App(), a.File)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return Restore(ctx, d.Apps, d.Files, run.App(), f, RestoreOptions{TmpDir: d.TmpDir, Progress: run.Progress, Now: d.Now,
			RestoreAccounts: a.RestoreAccounts})
	}, jobs.Timeout(6*time.Hour))
}

// Routes are the backup area's (admins; an upload is super_admin's).
func Routes(d Deps) []api.Route {
	if d.Wait == 0 {
		d.Wait = 20 * time.Second
	}
	h := handlers{d}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/backups", Access: auth.AdminOnly, Handler: h.list},
		{Scope: api.App, Method: http.MethodPost, Path: "/backups", Access: auth.AdminOnly, Handler: h.create},
		{Scope: api.App, Method: http.MethodPost, Path: "/backups/upload", Access: auth.SuperAdminOnly, Handler: h.upload, BodyLimit: d.MaxUpload, BodyTimeout: time.Hour},
		{Scope: api.App, Method: http.MethodGet, Path: "/backup/:file/download", Access: auth.AdminOnly, Handler: h.download, SignedLink: true, LongAnswer: true},
		{Scope: api.App, Method: http.MethodPost, Path: "/backup/:file/restore", Access: auth.AdminOnly, Handler: h.restore},
		{Scope: api.App, Method: http.MethodDelete, Path: "/backup/:file", Access: auth.AdminOnly, Handler: h.delete},
	}
}

type handlers struct{ d Deps }

// GET /backups — {backups: [...], engine, can_delete, can_restore}; each
// backup carries a signed download url for browsers.
func (h handlers) list(c *gin.Context) {
	a := api.AppOf(c)
	list, err := h.d.Store.List(c.Request.Context(), a.Name, string(a.DB.Engine))
	if err != nil {
		api.Fail(c, err)
		return
	}
	for i := range list {
		list[i].URL = auth.SignedURL(c.Request.Context(), "/"+a.Name+"/api/backup/"+list[i].File+"/download")
	}
	api.Success(c, http.StatusOK, gin.H{"backups": list, "engine": string(a.DB.Engine), "can_delete": true, "can_restore": true})
}

// POST /backups — starts a backup job and waits for it a moment:
// {code: ok_backup, file, job} when done, 202 {code: backup_started, ...}
// while it runs on.
func (h handlers) create(c *gin.Context) {
	if h.d.Jobs == nil {
		api.Fail(c, jobs.ErrUnavailable)
		return
	}
	a := api.AppOf(c)
	name := NewName(a.Name, h.now())
	job, err := h.d.Jobs.Enqueue(c.Request.Context(), a.Name, api.ActorOf(c).UserID, KindCreate, jobArgs{File: name})
	if err != nil {
		api.Fail(c, err)
		return
	}
	h.answer(c, job, "ok_backup", "backup_started", "backup_failed", gin.H{"file": name})
}

// POST /backup/{file}/restore — replaces the app with the backup (a job);
// the archive is checked whole before anything changes. The live accounts
// are kept unless the body asks restore_accounts (super_admin only).
func (h handlers) restore(c *gin.Context) {
	if h.d.Jobs == nil {
		api.Fail(c, jobs.ErrUnavailable)
		return
	}
	a := api.AppOf(c)
	body, err := readRestoreBody(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	// The archive's accounts may hold a super admin demoted since: only
	// one who could grant that privilege today may bring them back.
	if body.RestoreAccounts && api.ActorOf(c).Privilege != auth.SuperAdmin {
		api.Fail(c, errAccountsSuperAdmin)
		return
	}
	f, err := h.d.Store.Open(c.Request.Context(), a.Name, c.Param("file"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	m, err := ReadManifest(f)
	f.Close()
	if err == nil {
		err = CheckRestorable(m)
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	job, err := h.d.Jobs.Enqueue(c.Request.Context(), a.Name, api.ActorOf(c).UserID, KindRestore, jobArgs{File: c.Param("file"), RestoreAccounts: body.RestoreAccounts})
	if err != nil {
		api.Fail(c, err)
		return
	}
	h.answer(c, job, "ok_backup_restored", "restore_started", "restore_failed", gin.H{"file": c.Param("file")})
	// What runs after the handler (the application log) writes into the
	// app as it is now.
	if fresh, err := h.d.Apps.Get(c.Request.Context(), a.Name); err == nil {
		c.Set(api.CtxApp, fresh)
	}
}

// answer waits up to Wait for job and answers with its outcome: code done
// (and the job's result) when it ended well.
func (h handlers) answer(c *gin.Context, job jobs.Job, done, started, failed string, extra gin.H) {
	job = h.d.Jobs.Await(c.Request.Context(), job, h.d.Wait)
	if job.State != jobs.Done {
		jobs.AnswerUnfinished(c, job, started, failed)
		return
	}
	body := gin.H{"code": done, "job": jobs.Wire(job)}
	if len(job.Result) > 0 {
		body["result"] = job.Result
	}
	for k, v := range extra {
		body[k] = v
	}
	api.Success(c, http.StatusOK, body)
}

// GET /backup/{file}/download — the archive (application/gzip).
func (h handlers) download(c *gin.Context) {
	a := api.AppOf(c)
	f, err := h.d.Store.Open(c.Request.Context(), a.Name, c.Param("file"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	defer f.Close()
	name := c.Param("file")
	c.Header("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	c.Header("X-Content-Type-Options", "nosniff")
	http.ServeContent(withType(c.Writer, "application/gzip"), c.Request, name, f.ModTime(), f)
}

func withType(w http.ResponseWriter, ct string) http.ResponseWriter {
	w.Header().Set("Content-Type", ct)
	return w
}

// DELETE /backup/{file}
func (h handlers) delete(c *gin.Context) {
	a := api.AppOf(c)
	if h.d.Store.Pending(c.Request.Context(), a.Name, c.Param("file")) {
		api.Fail(c, errs.New(errs.Conflict, "backup_in_progress", "this backup is still being written"))
		return
	}
	if err := h.d.Store.Delete(c.Request.Context(), a.Name, c.Param("file")); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_backup_deleted", "file": c.Param("file")})
}

// POST /backups/upload (multipart "file") — keeps an archive made
// elsewhere once every part matched its checksum; it is then restorable
// by its new name.
func (h handlers) upload(c *gin.Context) {
	a := api.AppOf(c)
	// The archive is read from the request as it comes (a parsed form
	// would first spool it whole to the system's temp folder).
	mr, err := c.Request.MultipartReader()
	if err != nil {
		api.Fail(c, errNoFile)
		return
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			api.Fail(c, errNoFile)
			return
		}
		if err != nil {
			api.Fail(c, api.BodyReadErr(err))
			return
		}
		if p.FormName() != "file" {
			p.Close()
			continue
		}
		name, m, err := Upload(c.Request.Context(), h.d.Store, a.Name, p, h.d.MaxUpload, h.now())
		p.Close()
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				err = api.BodyReadErr(err)
			}
			api.Fail(c, err)
			return
		}
		api.Success(c, http.StatusOK, gin.H{"code": "ok_backup_uploaded", "file": name, "from_app": m.App, "source_engine": m.Engine, "counts": m.Counts})
		return
	}
}

func (h handlers) now() time.Time {
	if h.d.Now != nil {
		return h.d.Now()
	}
	return time.Now()
}
