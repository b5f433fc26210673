package imports

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/wire"
)

// PreviewRows is how many rows a preview shows.
const PreviewRows = 20

var errNoFile = errs.New(errs.Invalid, "parameter_missing", "a file (multipart field \"file\") is required")

// Routes are the import's: admins. Previews are kept in the file store
// (a blob no file row names: strata files check removes them after its
// grace period), so any node can import what another previewed.
func Routes(host api.Host, store files.Storage, maxBytes int64) []api.Route {
	h := handlers{host: host, store: store, max: maxBytes}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/import/:tb/fields", Access: auth.AdminOnly, Handler: h.fields},
		{Scope: api.App, Method: http.MethodPost, Path: "/import/preview-file", Access: auth.AdminOnly, Handler: h.preview, BodyLimit: maxBytes + 1<<20},
		{Scope: api.App, Method: http.MethodPost, Path: "/import/data", Access: auth.AdminOnly, Handler: h.data},
	}
}

type handlers struct {
	host  api.Host
	store files.Storage
	max   int64
}

// GET /import/{tb}/fields — {fields: [{name, label, type}]}; none for an
// unknown table (as BraDypUS).
func (h handlers) fields(c *gin.Context) {
	cat, err := h.host.Catalog(c.Request.Context(), api.AppOf(c))
	if err != nil {
		api.Fail(c, err)
		return
	}
	out := []gin.H{}
	if t, ok := cat.Table(c.Param("tb")); ok {
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
	data, err := h.upload(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	t, err := Parse(data)
	if err != nil {
		api.Fail(c, err)
		return
	}
	key, _, err := h.store.Put(c.Request.Context(), api.AppOf(c).Name, bytes.NewReader(data))
	if err != nil {
		api.Fail(c, err)
		return
	}
	rows := t.Rows
	if len(rows) > PreviewRows {
		rows = rows[:PreviewRows]
	}
	api.Success(c, http.StatusOK, gin.H{"temp_id": key, "file_token": key, "format": t.Format, "encoding": t.Encoding,
		"delimiter": t.Delimiter, "columns": t.Columns, "count": len(t.Rows), "rows": rows})
}

// upload reads the multipart field "file", at most max bytes.
func (h handlers) upload(c *gin.Context) ([]byte, error) {
	mr, err := c.Request.MultipartReader()
	if err != nil {
		return nil, errNoFile
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return nil, errNoFile
		}
		if err != nil {
			return nil, api.BodyReadErr(err)
		}
		if p.FormName() != "file" {
			p.Close()
			continue
		}
		data, err := io.ReadAll(files.CapReader(p, h.max))
		p.Close()
		if err != nil {
			return nil, api.BodyReadErr(err)
		}
		return data, nil
	}
}

type dataBody struct {
	TempID    string            `json:"temp_id"`
	FileToken string            `json:"file_token"`
	Tb        string            `json:"tb"`
	Mapping   map[string]string `json:"mapping"`
	KeyField  string            `json:"key_field"`
	DryRun    any               `json:"dry_run"`
}

// POST /import/data {temp_id, tb, mapping, key_field?, dry_run?} — every
// row or none: {code: ok_import_data, inserted, updated, total}; a row
// that would not save → 400 import_rows_invalid with errors [{row, field,
// code}]; dry_run validates and writes nothing.
func (h handlers) data(c *gin.Context) {
	var b dataBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	token := strings.TrimSpace(b.TempID)
	if token == "" {
		token = strings.TrimSpace(b.FileToken)
	}
	if token == "" || strings.TrimSpace(b.Tb) == "" {
		api.Fail(c, errs.New(errs.Invalid, "parameter_missing", "temp_id (or file_token) and tb are required"))
		return
	}
	dry := false
	if b.DryRun != nil {
		v, err := wire.Bool(b.DryRun)
		if err != nil {
			api.Fail(c, errs.New(errs.Invalid, "invalid_parameter", "dry_run must be a boolean").With("parameter", "dry_run"))
			return
		}
		dry = v
	}
	a := api.AppOf(c)
	var blob files.Blob
	var err error
	if files.ValidBlobName(a.Name, token) {
		blob, err = h.store.Get(c.Request.Context(), a.Name, token)
	} else {
		err = files.ErrBlobNotFound
	}
	if errors.Is(err, files.ErrBlobNotFound) {
		api.Fail(c, errs.New(errs.NotFound, "import_file_not_found", "no previewed file has this temp_id (previews expire)"))
		return
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	data, err := io.ReadAll(io.LimitReader(blob, h.max+1))
	blob.Close()
	if err != nil {
		api.Fail(c, err)
		return
	}
	t, err := Parse(data)
	if err != nil {
		api.Fail(c, err)
		return
	}
	sc, err := h.host.RecordScope(c, b.Tb)
	if err != nil {
		api.Fail(c, err)
		return
	}
	res, err := Run(c.Request.Context(), sc, t, Options{Mapping: b.Mapping, KeyField: b.KeyField, DryRun: dry})
	if err != nil {
		api.Fail(c, err)
		return
	}
	if dry {
		api.Success(c, http.StatusOK, gin.H{"code": "ok_import_checked", "inserted": res.Inserted, "updated": res.Updated, "total": res.Total, "dry_run": true})
		return
	}
	_ = h.store.Delete(c.Request.Context(), a.Name, token) // imported: the preview is done
	api.Success(c, http.StatusOK, gin.H{"code": "ok_import_data", "inserted": res.Inserted, "updated": res.Updated, "total": res.Total})
}
