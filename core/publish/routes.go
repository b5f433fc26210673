package publish

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/oauth"
	"github.com/strata-archaeo/strata/core/store"
)

// Routes are publishing's: the setting and the snapshots for admins
// (under /<app>/api), and what the world reads (under /<app>, no
// sign-in): the landing pages, the downloads and OAI-PMH.
func Routes(d Deps) []api.Route {
	h := handlers{d: d}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/publish/config", Access: auth.AdminOnly, Handler: h.getConfig},
		{Scope: api.App, Method: http.MethodPut, Path: "/publish/config", Access: auth.AdminOnly, Handler: h.putConfig},
		{Scope: api.App, Method: http.MethodGet, Path: "/publish/snapshots", Access: auth.AdminOnly, Handler: h.list},
		{Scope: api.App, Method: http.MethodPost, Path: "/publish/snapshots", Access: auth.AdminOnly, Handler: h.start},
		{Scope: api.App, Method: http.MethodGet, Path: "/publish/snapshots/:id", Access: auth.AdminOnly, Handler: h.get},
		{Scope: api.App, Method: http.MethodPost, Path: "/publish/snapshots/:id/doi", Access: auth.AdminOnly, Handler: h.startDOI},
		{Scope: api.App, Method: http.MethodGet, Path: "/publish/snapshots/:id/download", Access: auth.AdminOnly, SignedLink: true, LongAnswer: true, Handler: h.download},

		{Scope: api.Site, Method: http.MethodGet, Path: "/data", Access: auth.Public, Handler: h.siteHome},
		{Scope: api.Site, Method: http.MethodGet, Path: "/data/snapshot/:version", Access: auth.Public, Handler: h.siteSnapshot},
		{Scope: api.Site, Method: http.MethodGet, Path: "/data/snapshot/:version/download", Access: auth.Public, LongAnswer: true, Handler: h.siteDownload},
		{Scope: api.Site, Method: http.MethodGet, Path: "/data/snapshot/:version/files/*path", Access: auth.Public, LongAnswer: true, Handler: h.siteFile},
		{Scope: api.Site, Method: http.MethodGet, Path: "/data/iiif/*path", Access: auth.Public, Handler: h.siteIIIF},
		{Scope: api.Site, Method: http.MethodGet, Path: "/data/record/:tb/:id", Access: auth.Public, Handler: h.siteRecord},
		{Scope: api.Site, Method: http.MethodGet, Path: "/oai", Access: auth.Public, Handler: h.oai},
		{Scope: api.Site, Method: http.MethodPost, Path: "/oai", Access: auth.Public, Handler: h.oai},
	}
}

type handlers struct{ d Deps }

// configBody is PUT /publish/config's body: the setting, and optionally
// the DOI credential (write-only; "" removes it).
type configBody struct {
	Config
	DOISecret *string `json:"doi_secret"`
}

// GET /publish/config — {config, doi_secret_set, licences, kinds,
// configured}. An application never configured gets an empty setting
// titled after it.
func (h handlers) getConfig(c *gin.Context) {
	app := api.AppOf(c)
	st, ok, err := LoadConfig(c.Request.Context(), app.DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if !ok {
		st.Config = Config{Title: app.Name, Licence: "CC-BY-4.0", Authors: []Author{}, Keywords: []string{}, Tables: []Table{}}
	}
	api.Success(c, http.StatusOK, gin.H{"config": st.Config, "configured": ok, "doi_secret_set": st.SecretSet,
		"licences": Licences, "kinds": Kinds})
}

// PUT /publish/config {…setting, doi_secret?} — checked against the
// catalog, then saved: {code: ok_publish_config, config}.
func (h handlers) putConfig(c *gin.Context) {
	var b configBody
	if err := api.BindExact(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	cfg := b.Config
	cfg.Normalize()
	app := api.AppOf(c)
	cat, err := h.d.Host.Catalog(c.Request.Context(), app)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if err := cfg.Validate(c.Request.Context(), app.DB, cat); err != nil {
		api.Fail(c, err)
		return
	}
	if b.DOISecret != nil && len(*b.DOISecret) > 4096 {
		api.Fail(c, invalid("doi_secret", "at most 4096 characters"))
		return
	}
	if err := SaveConfig(c.Request.Context(), app.DB, h.d.Apps.Keyring(), app.Name, cfg, b.DOISecret, api.ActorOf(c).UserID, h.d.now()); err != nil {
		api.Fail(c, err)
		return
	}
	st, _, err := LoadConfig(c.Request.Context(), app.DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_publish_config", "config": st.Config, "doi_secret_set": st.SecretSet})
}

// GET /publish/snapshots — {snapshots}, newest first (at most 500).
func (h handlers) list(c *gin.Context) {
	ss, err := listSnapshots(c.Request.Context(), api.AppOf(c).DB, false)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"snapshots": ss})
}

// POST /publish/snapshots — starts a snapshot of the saved setting:
// 202 {code: publish_started, snapshot, job}. 409 publish_running while
// one runs, publish_not_configured before a setting is saved.
func (h handlers) start(c *gin.Context) {
	if h.d.Jobs == nil {
		api.Fail(c, jobs.ErrUnavailable)
		return
	}
	// No body is needed; one sent must be empty or an empty object.
	if raw, err := io.ReadAll(io.LimitReader(c.Request.Body, 1024)); err != nil {
		api.Fail(c, api.BodyReadErr(err))
		return
	} else if s := strings.TrimSpace(string(raw)); s != "" && s != "{}" {
		var probe map[string]json.RawMessage
		if json.Unmarshal(raw, &probe) != nil || len(probe) > 0 {
			api.Fail(c, errs.New(errs.Invalid, "invalid_body", "this route takes no parameters"))
			return
		}
	}
	ctx := c.Request.Context()
	app := api.AppOf(c)
	st, ok, err := LoadConfig(ctx, app.DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if !ok || len(st.Config.Tables) == 0 {
		api.Fail(c, ErrNotConfigured)
		return
	}
	cat, err := h.d.Host.Catalog(ctx, app)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if err := st.Config.Validate(ctx, app.DB, cat); err != nil {
		api.Fail(c, err)
		return
	}
	base := h.d.PublicURL
	if base == "" {
		base = oauth.ServiceBase(c.Request, "")
	}
	fr := Frozen{Config: st.Config, BaseURL: strings.TrimRight(base, "/") + "/" + app.Name}
	user := api.ActorOf(c).UserID
	if err := h.releaseStale(ctx, app.DB); err != nil {
		api.Fail(c, err)
		return
	}
	s, err := startSnapshot(ctx, app.DB, fr, user, h.d.now())
	if err != nil {
		api.Fail(c, err)
		return
	}
	job, err := h.d.Jobs.Enqueue(ctx, app.Name, user, KindSnapshot, snapshotArgs{Snapshot: s.ID})
	if err != nil {
		_ = failSnapshot(ctx, app.DB, s.ID, err)
		api.Fail(c, err)
		return
	}
	if err := setJob(ctx, app.DB, s.ID, job.ID); err == nil {
		s.JobID = &job.ID
	}
	api.Success(c, http.StatusAccepted, gin.H{"code": "publish_started", "snapshot": s, "job": jobs.Wire(job)})
}

// snapshotParam reads :id.
func snapshotParam(c *gin.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, ErrSnapshotNotFound.With("id", c.Param("id"))
	}
	return id, nil
}

// GET /publish/snapshots/{id} — {snapshot}.
func (h handlers) get(c *gin.Context) {
	if s, ok := snapshotOf(c); ok {
		api.Success(c, http.StatusOK, gin.H{"snapshot": s})
	}
}

// snapshotOf reads the snapshot :id names, or answers the error.
func snapshotOf(c *gin.Context) (*Snapshot, bool) {
	id, err := snapshotParam(c)
	if err == nil {
		var s *Snapshot
		if s, err = getSnapshot(c.Request.Context(), api.AppOf(c).DB, id); err == nil {
			return s, true
		}
	}
	api.Fail(c, err)
	return nil, false
}

// GET /publish/snapshots/{id}/download — the crate (a done snapshot).
func (h handlers) download(c *gin.Context) {
	if s, ok := snapshotOf(c); ok {
		h.sendCrate(c, s)
	}
}

// sendCrate answers the zip of a done snapshot, with Range support.
func (h handlers) sendCrate(c *gin.Context, s *Snapshot) {
	if s.Status != StatusDone || s.blobKey == nil {
		api.Fail(c, ErrNotDone.With("snapshot_status", s.Status))
		return
	}
	app := api.AppOf(c)
	blob, err := h.d.Files.Get(c.Request.Context(), app.Name, *s.blobKey)
	if err != nil {
		api.Fail(c, err)
		return
	}
	defer blob.Close()
	name := app.Name + "-v" + strconv.FormatInt(*s.Version, 10) + ".zip"
	c.Header("Content-Type", "application/zip")
	c.Header("Content-Disposition", `attachment; filename="`+name+`"`)
	if s.SHA256 != nil {
		c.Header("ETag", `"`+*s.SHA256+`"`)
	}
	http.ServeContent(c.Writer, c.Request, name, *s.PublishedAt, blob)
}

// staleAfter is how long a running snapshot without a job may be left
// before a new start takes it for dead (its start failed half-way).
const staleAfter = time.Minute

// releaseStale marks failed a running snapshot whose job has ended
// without finishing it (its node stopped and the job system gave it up,
// or it was cancelled), so that it does not block every later snapshot.
func (h handlers) releaseStale(ctx context.Context, db *store.DB) error {
	var id int64
	var job *int64
	var created int64
	err := db.QueryRow(ctx, `SELECT id, job_id, created_at FROM `+db.Sys("publish_snapshots")+` WHERE status = 'running'`).Scan(&id, &job, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if job == nil {
		if h.d.now().Sub(time.UnixMilli(created)) < staleAfter {
			return nil
		}
		return failSnapshot(ctx, db, id, errors.New("the snapshot's job was never queued"))
	}
	j, err := h.d.Jobs.Get(ctx, *job)
	if err != nil {
		if errs.CodeOf(err) == "job_not_found" {
			return failSnapshot(ctx, db, id, errors.New("the snapshot's job is gone"))
		}
		return err
	}
	if j.State.Finished() {
		return failSnapshot(ctx, db, id, fmt.Errorf("the snapshot's job ended (%s) without finishing it", j.State))
	}
	return nil
}
