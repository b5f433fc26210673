package fieldsync

import (
	"errors"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/wire"
)

// Resumable uploads of photos taken offline (docs/sync.md "Uploads"): a
// device starts an upload (POST), sends its bytes in parts at the offset
// the server holds (PUT, Upload-Offset), and asks where it stands (GET)
// after an interruption. The parts are kept in the app's database
// (sys_sync_upload_parts), which every node reads, so an upload goes on
// through another node or after a restart. Once whole, the upload becomes
// a file exactly as POST /record/{tb}/{id}/file makes one (filesapi.NewUpload:
// same checks, metadata, version and change of the record), linked to its
// record, named by id or by the temp_id the device's push gave it.

const (
	// partSize is the most bytes one row of parts holds (and one PUT
	// holds in memory at a time).
	partSize = 1 << 20
	// uploadRetention is how long an upload nobody touches is kept:
	// an abandoned one's parts, and a finished one's answer to a start
	// or a part sent again.
	uploadRetention = 7 * 24 * time.Hour
	// maxOpenUploads bounds the uploads one account has open at once.
	maxOpenUploads = 50
	// stagedUploadsFactor bounds the bytes one account's open uploads
	// declare, as a number of the largest file.
	stagedUploadsFactor = 16
	// maxDeviceID, maxTempID, maxFilename and maxDescription bound the
	// texts of a start.
	maxDeviceID, maxTempID, maxFilename, maxDescription = 100, 100, 1000, 10000
	// uploadTimeout bounds the sending of one part's body.
	uploadTimeout = 15 * time.Minute
)

// uploadIDPattern: a client's UUID, or any id safe in a path.
var uploadIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

// The upload area's refusals.
var (
	errOffsetMismatch = errs.New(errs.Conflict, "upload_offset_mismatch", "the part does not start where the upload stands; send from offset")
	errPastSize       = errs.New(errs.TooLarge, "upload_past_size", "the part goes past the size the upload declared")
	errBadOffset      = errs.New(errs.Invalid, "invalid_upload_offset", "the Upload-Offset header must be the number of bytes already sent")
	errUploadTooLarge = errs.New(errs.TooLarge, "upload_too_large", "the file is larger than allowed")
	errTooManyUploads = errs.New(errs.Conflict, "too_many_open_uploads", "too many uploads are open: finish some, or wait until abandoned ones expire")
	errUploadQuota    = errs.New(errs.TooLarge, "upload_quota_exceeded", "the open uploads of this account would hold more bytes than allowed")
	errUploadReused   = errs.New(errs.Conflict, "upload_id_reused", "this upload_id was started for another file")
	errChecksum       = errs.New(errs.Invalid, "upload_checksum_mismatch", "the bytes received do not have the sha256 the upload declared")
	errOtherTable     = errs.New(errs.Invalid, "temp_id_other_table", "the temp_id names a record of another table")
	errPartCut        = errs.New(errs.Invalid, "upload_part_interrupted", "the part's body stopped before its end; ask where the upload stands and go on from there")
)

// partReadErr names a failed read of a part's body: over the route's cap,
// past its deadline, or cut (what came before is kept either way).
func partReadErr(err error) error {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig), errors.Is(err, os.ErrDeadlineExceeded):
		return api.BodyReadErr(err)
	}
	return errPartCut.Wrap(err)
}

func (h *handlers) uploadRoutes() []api.Route {
	// Access is checked on the record's table by the records gate
	// (RecordScope, Editable), as the files area's upload does: the table
	// comes in the body, not the path.
	return []api.Route{
		{Scope: api.App, Method: http.MethodPost, Path: "/sync/uploads", Access: auth.Read, Handler: h.handleUploadStart},
		{Scope: api.App, Method: http.MethodPut, Path: "/sync/uploads/:upload_id", Access: auth.Read, Handler: h.handleUploadPart,
			BodyLimit: h.MaxUploadBytes + 1, BodyTimeout: uploadTimeout},
		{Scope: api.App, Method: http.MethodGet, Path: "/sync/uploads/:upload_id", Access: auth.Read, Handler: h.handleUploadState},
	}
}

// uploadAnswer is what the three routes answer: where the upload stands.
// (The envelope's "status" is the request's, so the upload's is inside
// "upload".)
func uploadAnswer(u *upload) gin.H {
	m := gin.H{"upload_id": u.UploadID, "device_id": u.DeviceID, "offset": u.Received, "size": u.Size, "status": u.Status, "table": u.Table}
	if u.RecordID > 0 {
		m["id"] = u.RecordID
	} else {
		m["temp_id"] = u.TempID
	}
	if u.FileID > 0 {
		m["file_id"] = u.FileID
	}
	if u.Code != "" {
		m["code"], m["message"] = u.Code, u.Message
	}
	return gin.H{"upload": m}
}

type uploadStartBody struct {
	UploadID    any `json:"upload_id"`
	DeviceID    any `json:"device_id"`
	Filename    any `json:"filename"`
	Size        any `json:"size"`
	SHA256      any `json:"sha256"`
	Table       any `json:"table"`
	ID          any `json:"id"`
	TempID      any `json:"temp_id"`
	Description any `json:"description"`
}

func missing(name string) error {
	return errs.New(errs.Invalid, "parameter_missing", name+" is required").With("parameter", name)
}

func invalid(name string) error { return records.ErrInvalidParameter.With("parameter", name) }

// text reads a required (or optional) text of at most max bytes, without
// control characters other than what a description may hold.
func text(v any, name string, max int, required bool) (string, error) {
	if v == nil {
		if required {
			return "", missing(name)
		}
		return "", nil
	}
	s, err := wire.Text(v)
	if err != nil || len(s) > max {
		return "", invalid(name)
	}
	s = strings.TrimSpace(s)
	if s == "" && required {
		return "", missing(name)
	}
	return s, nil
}

// parseStart reads a start's body into an upload of actor (no row yet).
func (h *handlers) parseStart(c *gin.Context, actor string) (*upload, error) {
	var b uploadStartBody
	if err := api.BindExact(c, &b); err != nil {
		return nil, err
	}
	u := &upload{Actor: actor}
	var err error
	if u.UploadID, err = text(b.UploadID, "upload_id", 100, true); err != nil {
		return nil, err
	}
	if !uploadIDPattern.MatchString(u.UploadID) {
		return nil, invalid("upload_id")
	}
	if u.DeviceID, err = text(b.DeviceID, "device_id", maxDeviceID, true); err != nil {
		return nil, err
	}
	if u.Filename, err = text(b.Filename, "filename", maxFilename, true); err != nil {
		return nil, err
	}
	if b.Size == nil {
		return nil, missing("size")
	}
	if u.Size, err = wire.Int(b.Size); err != nil || u.Size <= 0 {
		return nil, invalid("size").(*errs.Error).With("detail", "size is the file's length in bytes, at least 1")
	}
	if u.Size > h.MaxUploadBytes {
		return nil, errUploadTooLarge.With("limit", h.MaxUploadBytes)
	}
	if u.SHA256, err = text(b.SHA256, "sha256", 64, false); err != nil {
		return nil, err
	}
	u.SHA256 = strings.ToLower(u.SHA256)
	if u.SHA256 != "" && !isHex64(u.SHA256) {
		return nil, invalid("sha256")
	}
	if u.Table, err = text(b.Table, "table", 200, true); err != nil {
		return nil, err
	}
	if u.RecordID, err = api.ParseID(b.ID); err != nil {
		return nil, err
	}
	if u.TempID, err = text(b.TempID, "temp_id", maxTempID, false); err != nil {
		return nil, err
	}
	if (u.RecordID > 0) == (u.TempID != "") {
		return nil, missing("id or temp_id").(*errs.Error).With("detail", "name the record by exactly one of id and temp_id")
	}
	if b.Description != nil {
		d, err := text(b.Description, "description", maxDescription, false)
		if err != nil {
			return nil, err
		}
		u.Description = &d
	}
	return u, nil
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// POST /sync/uploads — start an upload, or learn where one stands.
func (h *handlers) handleUploadStart(c *gin.Context) {
	ctx, a := c.Request.Context(), api.AppOf(c)
	actor := actorKey(api.ActorOf(c))
	u, err := h.parseStart(c, actor)
	if err != nil {
		api.Fail(c, err)
		return
	}
	// A start sent again (a lost answer) answers where the upload stands.
	if had, err := loadUpload(ctx, a.DB, actor, u.UploadID, false); err == nil {
		if !had.sameRequest(u) {
			api.Fail(c, errUploadReused)
			return
		}
		h.answer(c, had)
		return
	} else if !errors.Is(err, errUploadNotFound) {
		api.Fail(c, err)
		return
	}
	// The records gate, as the files area's upload asks it: edit on the
	// record (within the caller's rows), or on the table for a record the
	// device created offline, checked again when it is linked.
	sc, err := h.Host.RecordScope(c, u.Table)
	if err == nil {
		u.Table = sc.Table.Name
		if u.RecordID > 0 {
			err = sc.Editable(ctx, u.RecordID)
		} else if !auth.Edit.Allows(sc.Level) {
			err = records.ErrNotEnough.With("required", auth.Edit.String())
		}
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	now := h.Now()
	if err := trimUploads(ctx, a.DB, now.Add(-uploadRetention).UnixMilli()); err != nil {
		api.Fail(c, err)
		return
	}
	var row *upload
	err = a.DB.Tx(ctx, func(tx *store.DB) error {
		if err := lockActor(ctx, tx, actor); err != nil {
			return err
		}
		n, staged, err := openUploads(ctx, tx, actor)
		if err != nil {
			return err
		}
		if n >= maxOpenUploads {
			return errTooManyUploads.With("limit", maxOpenUploads)
		}
		if limit := stagedUploadsFactor * h.MaxUploadBytes; staged+u.Size > limit {
			return errUploadQuota.With("limit", limit).With("staged", staged)
		}
		row, err = insertUpload(ctx, tx, u, now.UnixMilli())
		return err
	})
	if err != nil {
		api.Fail(c, err)
		return
	}
	if !row.sameRequest(u) {
		api.Fail(c, errUploadReused) // another start of the same id won the race
		return
	}
	h.answer(c, row)
}

// answer tries, for a whole upload, to make its file and link it (its
// record may have arrived since), then answers where it stands.
func (h *handlers) answer(c *gin.Context, u *upload) {
	if u.whole() {
		var err error
		if u, err = h.finish(c, u); err != nil {
			api.Fail(c, err)
			return
		}
	}
	api.Success(c, http.StatusOK, uploadAnswer(u))
}

// GET /sync/uploads/{upload_id} — where the upload stands.
func (h *handlers) handleUploadState(c *gin.Context) {
	u, err := loadUpload(c.Request.Context(), api.AppOf(c).DB, actorKey(api.ActorOf(c)), c.Param("upload_id"), false)
	if err != nil {
		api.Fail(c, err)
		return
	}
	h.answer(c, u)
}

// PUT /sync/uploads/{upload_id} — the next bytes, from Upload-Offset.
func (h *handlers) handleUploadPart(c *gin.Context) {
	ctx, db := c.Request.Context(), api.AppOf(c).DB
	u, err := loadUpload(ctx, db, actorKey(api.ActorOf(c)), c.Param("upload_id"), false)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if u.Status != statusReceiving || u.Received == u.Size {
		h.answer(c, u) // done already: a part sent again changes nothing
		return
	}
	at, err := strconv.ParseInt(strings.TrimSpace(c.GetHeader("Upload-Offset")), 10, 64)
	if err != nil || at < 0 {
		api.Fail(c, errBadOffset)
		return
	}
	if at != u.Received {
		api.Fail(c, errOffsetMismatch.With("offset", u.Received))
		return
	}
	if cl := c.Request.ContentLength; cl > u.Size-at {
		api.Fail(c, errPastSize.With("offset", u.Received).With("size", u.Size))
		return
	}
	if u, err = h.receive(c, u, at); err != nil {
		api.Fail(c, err)
		return
	}
	h.answer(c, u)
}

// receive keeps the body's bytes from offset at, a piece (at most
// partSize) per transaction, so what came before an interruption stays,
// the bytes of a body cut short included. Bytes past the declared size
// are refused and the piece that would carry them is not kept.
func (h *handlers) receive(c *gin.Context, u *upload, at int64) (*upload, error) {
	ctx, db := c.Request.Context(), api.AppOf(c).DB
	buf := make([]byte, min(partSize, u.Size-at))
	for at < u.Size {
		want := min(int64(len(buf)), u.Size-at)
		n, err := io.ReadFull(c.Request.Body, buf[:want])
		end := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		var failed error
		if err != nil && !end {
			failed = partReadErr(err)
		}
		if failed == nil && !end && at+want == u.Size {
			// The upload is full with this piece: anything more is past
			// its size.
			var probe [1]byte
			if m, _ := io.ReadFull(c.Request.Body, probe[:]); m > 0 {
				return nil, errPastSize.With("offset", at).With("size", u.Size)
			}
		}
		if n > 0 {
			if u, err = appendPart(ctx, db, u, at, buf[:n], h.Now().UnixMilli()); err != nil {
				return nil, err
			}
			at += int64(n)
		}
		if failed != nil {
			return nil, failed
		}
		if end {
			break
		}
	}
	return u, nil
}
