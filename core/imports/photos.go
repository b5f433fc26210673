package imports

import (
	"archive/zip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/scratch"
	"github.com/strata-archaeo/strata/core/store"
)

// Photo imports: a ZIP of photos matched to records by an index (CSV:
// filename, record_id) or by a file-name pattern (US_{code}_*.jpg), shown
// first, then linked as files in one transaction: all or none.

var (
	errNoPhotos = errs.New(errs.Invalid, "import_error_no_file", "a ZIP of photos (multipart field \"zip\" or \"file\") is required")
	errNoMatch  = errs.New(errs.Invalid, "parameter_missing", "an index (multipart field \"index\": CSV with filename and record_id) or a pattern (e.g. US_{code}_*.jpg) is required")
	errBadZip   = errs.New(errs.Invalid, "import_file_invalid", "the file is not a readable ZIP archive")
	errBadIndex = errs.New(errs.Invalid, "import_error_mapping_mismatch", "the index must have the columns filename and record_id")
	errPlanTb   = errs.New(errs.Invalid, "invalid_parameter", "tb is not the table the photos were previewed for").With("parameter", "tb")
)

// photoRow is one photo of a plan and the record it goes to (0: none).
type photoRow struct {
	Filename string `json:"filename"`
	RecordID int64  `json:"record_id,omitempty"`
	Value    string `json:"value,omitempty"` // the pattern's field value
	Found    bool   `json:"found"`           // the record exists and is the caller's to see
	InZip    bool   `json:"in_zip"`
}

// photoPlan is what a preview keeps (as a blob; its key is the temp_id).
type photoPlan struct {
	Zip  string     `json:"zip"`
	Tb   string     `json:"tb"`
	Rows []photoRow `json:"rows"`
}

// POST /import/preview-photos (multipart: zip, index or pattern, tb) —
// {temp_id, tb, total, count, index_rows, missing_files, unmatched_files,
// not_found}: nothing is linked yet.
func (h handlers) previewPhotos(c *gin.Context) {
	ctx := c.Request.Context()
	in, err := h.readPhotoForm(c)
	if in != nil && in.zipPath != "" {
		defer os.Remove(in.zipPath)
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	sc, err := h.host.RecordScope(c, in.tb)
	if err != nil {
		api.Fail(c, err)
		return
	}
	zr, err := openPhotoZip(in.zipPath, h.zipLimits())
	if err != nil {
		api.Fail(c, err)
		return
	}
	defer zr.Close()
	names := photoNames(zr.Reader)
	// Every photo is inflated once here, counted, so a ZIP bomb is refused
	// before it is kept; the import counts again as it stores.
	if err := zr.check(names); err != nil {
		api.Fail(c, err)
		return
	}
	var rows []photoRow
	var unmatched []string
	switch {
	case in.index != nil:
		rows, err = indexRows(ctx, sc, in.index, names)
	default:
		rows, unmatched, err = patternRows(ctx, sc, in.pattern, names)
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	a := api.AppOf(c)
	f, err := os.Open(in.zipPath)
	if err != nil {
		api.Fail(c, err)
		return
	}
	zipKey, _, err := h.store.Put(ctx, a.Name, f)
	f.Close()
	if err != nil {
		api.Fail(c, err)
		return
	}
	plan, _ := json.Marshal(photoPlan{Zip: zipKey, Tb: sc.Table.Name, Rows: rows})
	key, _, err := h.store.Put(ctx, a.Name, strings.NewReader(string(plan)))
	if err != nil {
		_ = h.store.Delete(ctx, a.Name, zipKey)
		api.Fail(c, err)
		return
	}
	missing, notFound := []string{}, 0
	for _, r := range rows {
		if !r.InZip {
			missing = append(missing, r.Filename)
		}
		if !r.Found {
			notFound++
		}
	}
	if unmatched == nil {
		unmatched = []string{}
	}
	api.Success(c, http.StatusOK, gin.H{"temp_id": key, "file_token": key, "tb": sc.Table.Name, "total": len(rows), "count": len(names),
		"index_rows": rows, "missing_files": missing, "unmatched_files": unmatched, "not_found": notFound})
}

type photoForm struct {
	zipPath, tb string
	index       *Table
	pattern     *Pattern
}

// readPhotoForm reads the preview's multipart form: the ZIP spooled to a
// temporary file (it is read by its central directory), the index parsed.
func (h handlers) readPhotoForm(c *gin.Context) (*photoForm, error) {
	mr, err := c.Request.MultipartReader()
	if err != nil {
		return nil, errNoPhotos
	}
	in := &photoForm{}
	var patternText string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return in, api.BodyReadErr(err)
		}
		switch p.FormName() {
		case "zip", "file":
			if in.zipPath != "" {
				// One ZIP a preview: a second part replaces the first,
				// whose spooled copy goes now (the caller removes the last).
				_ = os.Remove(in.zipPath)
				in.zipPath = ""
			}
			f, err := scratch.CreateTemp(h.tmpDir, "strata-photos-*.zip")
			if err != nil {
				p.Close()
				return in, err
			}
			in.zipPath = f.Name()
			_, err = io.Copy(f, files.CapReader(p, h.photoMax))
			f.Close()
			p.Close()
			if err != nil {
				return in, api.BodyReadErr(err)
			}
		case "index":
			data, err := io.ReadAll(files.CapReader(p, 8<<20))
			p.Close()
			if err != nil {
				return in, api.BodyReadErr(err)
			}
			if in.index, err = Parse(data); err != nil {
				return in, err
			}
		case "tb", "pattern":
			v, _ := io.ReadAll(io.LimitReader(p, 512))
			p.Close()
			if p.FormName() == "tb" {
				in.tb = strings.TrimSpace(string(v))
			} else {
				patternText = strings.TrimSpace(string(v))
			}
		default:
			p.Close()
		}
	}
	if in.zipPath == "" {
		return in, errNoPhotos
	}
	if in.tb == "" {
		return in, errs.New(errs.Invalid, "parameter_missing", "tb is required").With("parameter", "tb")
	}
	if in.index == nil {
		if patternText == "" {
			return in, errNoMatch
		}
		if in.pattern, err = ParsePattern(patternText); err != nil {
			return in, err
		}
	}
	return in, nil
}

// photoNames are the ZIP's files by base name (folders, dot files and
// macOS resource forks left out; the first of two equal names wins).
func photoNames(zr *zip.Reader) map[string]*zip.File {
	out := map[string]*zip.File{}
	for _, f := range zr.File {
		base := path.Base(f.Name)
		if f.FileInfo().IsDir() || strings.HasPrefix(base, ".") || strings.HasPrefix(f.Name, "__MACOSX/") {
			continue
		}
		if _, dup := out[base]; !dup {
			out[base] = f
		}
	}
	return out
}

// indexRows reads an index: a filename and a record_id column (file/id
// accepted), each record looked up within the caller's rows.
func indexRows(ctx context.Context, sc *records.Scope, t *Table, names map[string]*zip.File) ([]photoRow, error) {
	col := func(want ...string) string {
		for _, c := range t.Columns {
			if slices.Contains(want, strings.ToLower(strings.TrimSpace(c))) {
				return c
			}
		}
		return ""
	}
	fc, ic := col("filename", "file", "file_name"), col("record_id", "id", "record")
	if fc == "" || ic == "" {
		return nil, errBadIndex.With("detail", "columns found: "+strings.Join(t.Columns, ", "))
	}
	rows := []photoRow{}
	for i, r := range t.Rows {
		name := strings.TrimSpace(fmt.Sprint(r[fc]))
		idText := strings.TrimSpace(fmt.Sprint(r[ic]))
		id, err := strconv.ParseInt(idText, 10, 64)
		if name == "" || err != nil || id <= 0 {
			return nil, errs.New(errs.Invalid, "import_rows_invalid", "an index row needs a file name and a record id").
				With("errors", []RowError{{Row: i + 1, Code: "invalid_value", Message: "filename " + strconv.Quote(name) + ", record_id " + strconv.Quote(idText)}})
		}
		found, err := visible(ctx, sc, id)
		if err != nil {
			return nil, err
		}
		_, inZip := names[path.Base(name)]
		rows = append(rows, photoRow{Filename: path.Base(name), RecordID: id, Found: found, InZip: inZip})
	}
	return rows, nil
}

// patternRows matches every photo's name with the pattern and looks the
// value up in the pattern's field, within the caller's rows.
func patternRows(ctx context.Context, sc *records.Scope, p *Pattern, names map[string]*zip.File) ([]photoRow, []string, error) {
	field, ok := sc.Table.Field(p.Field)
	if !ok {
		return nil, nil, ErrInvalidField.With("field", p.Field).With("detail", p.Field+" is no field of "+sc.Table.Name)
	}
	sorted := slices.Sorted(func(yield func(string) bool) {
		for n := range names {
			if !yield(n) {
				return
			}
		}
	})
	rows, unmatched := []photoRow{}, []string{}
	for _, n := range sorted {
		v, ok := p.Match(n)
		if !ok {
			unmatched = append(unmatched, n)
			continue
		}
		id, err := match(ctx, sc, field, v)
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, photoRow{Filename: n, RecordID: id, Value: v, Found: id != 0, InZip: true})
	}
	return rows, unmatched, nil
}

// zipLimits: a photo may be as large as an upload, all of a ZIP's photos
// as large as the ZIP may be.
func (h handlers) zipLimits() zipLimits {
	return zipLimits{entry: h.max, total: h.photoMax}
}

// visible reports whether record id exists within the caller's rows.
func visible(ctx context.Context, sc *records.Scope, id int64) (bool, error) {
	q := sc.DB.Qualify(sc.Table.Name)
	where, args := sc.Where(&records.Cond{SQL: q + `."id" = ?`, Args: []any{id}})
	var got int64
	err := sc.DB.QueryRow(ctx, `SELECT `+q+`."id" FROM `+q+` WHERE `+where, args...).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// POST /import/photos {temp_id, tb} — links every previewed photo that has
// its record, in one transaction (a version of each record): {code:
// ok_import_photos, total, linked, not_found}. A record the caller may
// not edit, or a photo that cannot be stored, links nothing.
func (h handlers) importPhotos(c *gin.Context) {
	var b previewRef
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	token, err := b.token()
	if err != nil {
		api.Fail(c, err)
		return
	}
	ctx := c.Request.Context()
	a := api.AppOf(c)
	plan, err := h.readPlan(ctx, a.Name, token)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if plan.Tb != strings.TrimSpace(b.Tb) {
		api.Fail(c, errPlanTb)
		return
	}
	sc, err := h.host.RecordScope(c, plan.Tb)
	if err != nil {
		api.Fail(c, err)
		return
	}
	linked, err := h.linkPhotos(c, sc, plan)
	if err != nil {
		api.Fail(c, err)
		return
	}
	_ = h.store.Delete(ctx, a.Name, plan.Zip)
	_ = h.store.Delete(ctx, a.Name, token)
	api.Success(c, http.StatusOK, gin.H{"code": "ok_import_photos", "total": len(plan.Rows), "linked": linked, "not_found": len(plan.Rows) - linked})
}

func (h handlers) readPlan(ctx context.Context, app, token string) (*photoPlan, error) {
	blob, err := openPreview(ctx, h.store, app, token)
	if err != nil {
		return nil, err
	}
	defer blob.Close()
	var p photoPlan
	if err := json.NewDecoder(io.LimitReader(blob, 16<<20)).Decode(&p); err != nil || !files.ValidBlobName(app, p.Zip) {
		return nil, ErrNoFile // a data preview's token, or not a plan at all
	}
	return &p, nil
}

// linkPhotos stores the photos first (no rows), then writes every file row,
// link and record version in one transaction; on any failure the stored
// bytes are removed and nothing is linked.
func (h handlers) linkPhotos(c *gin.Context, sc *records.Scope, plan *photoPlan) (int, error) {
	ctx := c.Request.Context()
	a := api.AppOf(c)
	var todo []photoRow
	for _, r := range plan.Rows {
		if r.Found && r.InZip && r.RecordID > 0 {
			if err := sc.Editable(ctx, r.RecordID); err != nil {
				return 0, err
			}
			todo = append(todo, r)
		}
	}
	if len(todo) == 0 {
		return 0, nil
	}
	blob, err := h.store.Get(ctx, a.Name, plan.Zip)
	if err != nil {
		return 0, ErrNoFile
	}
	tmp, err := scratch.CreateTemp(h.tmpDir, "strata-photos-*.zip")
	if err != nil {
		blob.Close()
		return 0, err
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, blob)
	blob.Close()
	tmp.Close()
	if err != nil {
		return 0, err
	}
	zr, err := openPhotoZip(tmp.Name(), h.zipLimits())
	if err != nil {
		return 0, err
	}
	defer zr.Close()
	names := photoNames(zr.Reader)
	maxSide := h.maxImageSide(ctx, a)
	var creator *int64
	if sc.Actor != nil && sc.Actor.UserID != 0 {
		id := sc.Actor.UserID
		creator = &id
	}
	staged := make([]*files.File, 0, len(todo))
	discard := func() {
		for _, f := range staged {
			h.files.Discard(a.Name, f)
		}
	}
	for _, r := range todo {
		zf, ok := names[r.Filename]
		if !ok {
			discard()
			return 0, ErrNoFile.With("file", r.Filename)
		}
		rc, err := zr.open(zf)
		if err != nil {
			discard()
			return 0, err
		}
		f, err := h.files.Stage(ctx, a.Name, files.Upload{Name: r.Filename, Body: rc, Creator: creator, MaxImageSize: maxSide})
		rc.Close()
		if err != nil {
			discard()
			if e, ok := errs.As(err); ok {
				return 0, e.With("file", r.Filename)
			}
			return 0, err
		}
		staged = append(staged, f)
	}
	err = sc.DB.Tx(ctx, func(tx *store.DB) error {
		ts := *sc
		ts.DB = tx
		versioned := map[int64]bool{}
		for i, r := range todo {
			if !versioned[r.RecordID] {
				versioned[r.RecordID] = true
				if err := records.SnapshotFiles(ctx, &ts, r.RecordID); err != nil {
					return err
				}
			}
			if _, err := h.files.Insert(ctx, tx, staged[i], &files.Target{Table: plan.Tb, ID: r.RecordID}, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		discard()
		return 0, err
	}
	return len(todo), nil
}
