package imports

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/records"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/wire"
)

// PreviewRows is how many rows a preview shows.
const PreviewRows = 20

var errNoFile = errs.New(errs.Invalid, "parameter_missing", "a file (multipart field \"file\") is required")

// ErrNoFile: the temp_id names no previewed file (BraDypUS's code).
var ErrNoFile = errs.New(errs.NotFound, "import_error_no_file", "no previewed file has this temp_id (previews expire)")

// errUnknownType: the preview's type is none the import reads.
var errUnknownType = errs.New(errs.Invalid, "import_error_unknown_type", "type must be csv, json, xlsx or geojson (photos: /import/preview-photos)")

// previewTypes are the preview's accepted type values ("" : sniffed).
var previewTypes = map[string]bool{"": true, "csv": true, "json": true, "tsv": true, "txt": true, "xlsx": true, "geojson": true}

// Routes are the import's: admins. Previews are kept in the file store
// (a blob no file row names: strata files check removes them after its
// grace period), so any node can import what another previewed.
//
// A ZIP of photos may be PhotoUploadFactor times the upload limit. It is
// spooled under tmpDir (a scratch folder's path; "": the system's).
func Routes(host api.Host, svc *files.Service, maxBytes int64, jobSys *jobs.System, tmpDir string) []api.Route {
	h := handlers{host: host, files: svc, store: svc.Storage, max: maxBytes, photoMax: PhotoUploadFactor * maxBytes, jobs: jobSys, wait: 20 * time.Second, tmpDir: tmpDir}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/import/:tb/fields", Access: auth.AdminOnly, Handler: h.fields},
		{Scope: api.App, Method: http.MethodPost, Path: "/import/preview-file", Access: auth.AdminOnly, Handler: h.preview, BodyLimit: maxBytes + 1<<20},
		{Scope: api.App, Method: http.MethodPost, Path: "/import/data", Access: auth.AdminOnly, Handler: h.data},
		{Scope: api.App, Method: http.MethodPost, Path: "/import/geojson", Access: auth.AdminOnly, Handler: h.geojson},
		{Scope: api.App, Method: http.MethodPost, Path: "/import/preview-photos", Access: auth.AdminOnly, Handler: h.previewPhotos,
			BodyLimit: h.photoMax + 1<<20, BodyTimeout: 30 * time.Minute},
		{Scope: api.App, Method: http.MethodPost, Path: "/import/photos", Access: auth.AdminOnly, Handler: h.importPhotos},
	}
}

// PhotoUploadFactor: a ZIP of photos may be this many times the upload
// limit (1 GiB with the default 64 MiB).
const PhotoUploadFactor = 16

type handlers struct {
	host     api.Host
	files    *files.Service
	store    files.Storage
	max      int64
	photoMax int64
	jobs     *jobs.System // nil: imports run in the request
	wait     time.Duration
	tmpDir   string
}

// GET /import/{tb}/fields — {fields: [{name, label, type}]}; none for an
// unknown table (as BraDypUS) or one the caller may not read (the records
// gate): the same either way.
func (h handlers) fields(c *gin.Context) {
	out := []gin.H{}
	sc, err := h.host.RecordScope(c, c.Param("tb"))
	if err != nil && !errors.Is(err, records.ErrNotEnough) && !errors.Is(err, records.ErrSubsetBroken) && !errors.Is(err, schema.ErrTableNotFound) {
		api.Fail(c, err)
		return
	}
	if err == nil {
		t := sc.Table
		for _, f := range t.Fields {
			if !f.Readonly {
				out = append(out, gin.H{"name": f.Name, "label": f.Label, "type": string(f.Type), "db_type": string(f.DBType), "required": f.Required})
			}
		}
	}
	api.Success(c, http.StatusOK, gin.H{"fields": out})
}

// POST /import/preview-file (multipart "file") — keeps the file and
// answers {temp_id, file_token, format, encoding, delimiter, columns,
// count, rows}.
func (h handlers) preview(c *gin.Context) {
	up, err := h.upload(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	data := up.data
	if up.typ == "geojson" || (up.typ == "" && isGeoJSON(data)) {
		h.previewGeoJSON(c, up)
		return
	}
	// Only the rows shown are kept; the others are read, checked and counted.
	t, count, err := Preview(data, PreviewRows)
	if err != nil {
		api.Fail(c, err)
		return
	}
	key, _, err := h.store.Put(c.Request.Context(), api.AppOf(c).Name, bytes.NewReader(data))
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"temp_id": key, "file_token": key, "format": t.Format, "encoding": t.Encoding,
		"delimiter": t.Delimiter, "columns": t.Columns, "count": count, "rows": t.Rows})
}

// uploaded is a previewed upload: the file and the form fields sent with
// it (before or after it: BraDypUS's client sends the file first).
type uploaded struct {
	data    []byte
	typ, tb string
}

// upload reads the multipart field "file", at most max bytes, and the
// "type" and "tb" fields.
func (h handlers) upload(c *gin.Context) (*uploaded, error) {
	mr, err := c.Request.MultipartReader()
	if err != nil {
		return nil, errNoFile
	}
	up := &uploaded{}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, api.BodyReadErr(err)
		}
		switch p.FormName() {
		case "type", "tb":
			v, _ := io.ReadAll(io.LimitReader(p, 128))
			p.Close()
			s := strings.TrimSpace(string(v))
			if p.FormName() == "tb" {
				up.tb = s
				continue
			}
			if !previewTypes[strings.ToLower(s)] {
				return nil, errUnknownType.With("type", s)
			}
			up.typ = strings.ToLower(s)
			continue
		case "file":
		default:
			p.Close()
			continue
		}
		data, err := io.ReadAll(files.CapReader(p, h.max))
		p.Close()
		if err != nil {
			return nil, api.BodyReadErr(err)
		}
		up.data = data
	}
	if up.data == nil {
		return nil, errNoFile
	}
	return up, nil
}

// previewRef names a preview (temp_id, or file_token as openapi calls it)
// and the table it goes to.
type previewRef struct {
	TempID    string `json:"temp_id"`
	FileToken string `json:"file_token"`
	Tb        string `json:"tb"`
}

// token is the preview's token; both it and tb are required.
func (r previewRef) token() (string, error) {
	token := strings.TrimSpace(r.TempID)
	if token == "" {
		token = strings.TrimSpace(r.FileToken)
	}
	if token == "" || strings.TrimSpace(r.Tb) == "" {
		return "", errs.New(errs.Invalid, "parameter_missing", "temp_id (or file_token) and tb are required")
	}
	return token, nil
}

// openPreview opens a kept preview by its token (ErrNoFile when none).
func openPreview(ctx context.Context, store files.Storage, app, token string) (files.Blob, error) {
	if !files.ValidBlobName(app, token) {
		return nil, ErrNoFile
	}
	blob, err := store.Get(ctx, app, token)
	if errors.Is(err, files.ErrBlobNotFound) {
		return nil, ErrNoFile
	}
	return blob, err
}

type dataBody struct {
	previewRef
	Mapping  map[string]string `json:"mapping"`
	KeyField string            `json:"key_field"`
	DryRun   any               `json:"dry_run"`
	Async    any               `json:"async"`
}

// POST /import/data {temp_id, tb, mapping, key_field?, dry_run?, async?}
// — every row or none: {code: ok_import_data, inserted, updated, total};
// a row that would not save → 400 import_rows_invalid with errors [{row,
// field, code}]; dry_run validates and writes nothing. A signed-in user's
// import runs as a job (import.data) the answer waits for (Wait), so a
// long one answers 202 with the job and goes on; async answers at once.
func (h handlers) data(c *gin.Context) {
	var b dataBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	token, err := b.token()
	if err != nil {
		api.Fail(c, err)
		return
	}
	dry, err := optBool(b.DryRun, "dry_run")
	if err != nil {
		api.Fail(c, err)
		return
	}
	async, err := optBool(b.Async, "async")
	if err != nil {
		api.Fail(c, err)
		return
	}
	a := api.AppOf(c)
	sc, err := h.host.RecordScope(c, b.Tb)
	if err != nil {
		api.Fail(c, err)
		return
	}
	args := dataArgs{Token: token, Tb: b.Tb, Mapping: b.Mapping, KeyField: b.KeyField, DryRun: dry}
	user := api.ActorOf(c).UserID
	if dry || h.jobs == nil || user == 0 {
		// Checks, and API keys (a job acts for a user), run in the request.
		scopeOf := func(table string) (*records.Scope, error) { return h.host.RecordScope(c, table) }
		out, err := importFile(c.Request.Context(), h.store, a.Name, sc, args, nil, scopeOf)
		if err != nil {
			api.Fail(c, err)
			return
		}
		answer(c, out, nil)
		return
	}
	if !files.ValidBlobName(a.Name, token) {
		api.Fail(c, ErrNoFile)
		return
	}
	if _, err := h.store.Stat(c.Request.Context(), a.Name, token); err != nil {
		if errors.Is(err, files.ErrBlobNotFound) {
			err = ErrNoFile
		}
		api.Fail(c, err)
		return
	}
	job, err := h.jobs.Enqueue(c.Request.Context(), a.Name, user, KindData, args)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if !async {
		job = h.jobs.Await(c.Request.Context(), job, h.wait)
	}
	if job.State != jobs.Done {
		jobs.AnswerUnfinished(c, job, "import_started", "import_failed")
		return
	}
	var out gin.H
	if err := json.Unmarshal(job.Result, &out); err != nil {
		api.Fail(c, err)
		return
	}
	answer(c, out, &job)
}

// answer writes an import's outcome (out from importFile) with its job.
func answer(c *gin.Context, out gin.H, job *jobs.Job) {
	if job != nil {
		out["job"] = jobs.Wire(*job)
	}
	empty := out["total"] == 0 || out["total"] == float64(0)
	if out["code"] == "ok_import_data" && empty {
		// As BraDypUS: a file without data rows is a warning, not a success.
		out["status"], out["detail"] = "warning", "the file has no data rows: nothing was imported"
		c.JSON(http.StatusOK, out)
		return
	}
	api.Success(c, http.StatusOK, out)
}

// maxImageSide is the app's maxImageSize setting (0: images kept as they come).
func (h handlers) maxImageSide(ctx context.Context, a *apps.App) int {
	v, ok, err := a.Setting(ctx, apps.SettingMaxImageSize)
	if err != nil || !ok {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func optBool(v any, name string) (bool, error) {
	if v == nil {
		return false, nil
	}
	b, err := wire.Bool(v)
	if err != nil {
		return false, errs.New(errs.Invalid, "invalid_parameter", name+" must be a boolean").With("parameter", name)
	}
	return b, nil
}
