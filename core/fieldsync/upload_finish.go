package fieldsync

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/files/filesapi"
	"github.com/strata-archaeo/strata/core/store"
)

// finish turns a whole upload into a file linked to its record, as the
// caller (the upload's own account: uploads are keyed by it):
//
//   - a record named by temp_id that the device's push has not created
//     yet leaves the upload waiting_for_record (tried again on every GET
//     and PUT);
//   - the records gate decides the link as for the files area's upload
//     (RecordScope, Editable): a refusal fails the upload with its code,
//     and nothing is linked;
//   - the bytes go through filesapi.NewUpload and files.Service.Stage
//     (size, type sniffing, image rules), the declared sha256 is checked
//     on the bytes as they came, and the file's row, its link, the
//     record's version and change, the description and the upload's end
//     are written in one transaction.
//
// An error it returns is the server's (the upload stays as it was, to be
// tried again); a refusal is the upload's state.
func (h *handlers) finish(c *gin.Context, u *upload) (*upload, error) {
	ctx, a := c.Request.Context(), api.AppOf(c)
	now := h.Now().UnixMilli()
	id := u.RecordID
	if id == 0 {
		table, rid, ok, err := lookupTempID(ctx, a.DB, u.Actor, u.DeviceID, u.TempID)
		if err != nil {
			return nil, err
		}
		if !ok {
			if u.Status != statusWaiting {
				if err := setStatus(ctx, a.DB, u, statusWaiting, "", "", 0, now); err != nil {
					return nil, err
				}
			}
			return reload(c, u)
		}
		if table != u.Table {
			return h.refuse(c, u, errOtherTable)
		}
		id = rid
	}
	sc, err := h.Host.RecordScope(c, u.Table)
	if err == nil {
		err = sc.Editable(ctx, id)
	}
	if err != nil {
		return h.refuse(c, u, err)
	}
	sum := sha256.New()
	counted := &countingHash{h: sum}
	body := io.TeeReader(&partsReader{ctx: ctx, db: a.DB, pk: u.pk, size: u.Size}, counted)
	up, err := filesapi.NewUpload(h.Host, c, sc, u.Filename, body)
	if err != nil {
		return nil, err
	}
	f, err := h.Files.Stage(ctx, a.Name, up)
	if err != nil {
		if cur, rerr := reload(c, u); rerr == nil && !cur.whole() {
			return cur, nil // another request finished it and dropped the parts meanwhile
		}
		return h.refuse(c, u, err)
	}
	if counted.n != u.Size {
		h.Files.Discard(a.Name, f)
		return nil, fmt.Errorf("upload %s: %d bytes kept, %d declared", u.UploadID, counted.n, u.Size)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); u.SHA256 != "" && got != u.SHA256 {
		h.Files.Discard(a.Name, f)
		return h.refuse(c, u, errChecksum.With("sha256", got))
	}
	linked := false
	err = a.DB.Tx(ctx, func(tx *store.DB) error {
		cur, err := loadUpload(ctx, tx, u.Actor, u.UploadID, true)
		if err != nil || !cur.whole() {
			return err // finished by another request meanwhile
		}
		if _, err := h.Files.Insert(ctx, tx, f, &files.Target{Table: sc.Table.Name, ID: id}, up.Before); err != nil {
			return err
		}
		if u.Description != nil && *u.Description != "" {
			if _, err := files.Update(ctx, tx, f.ID, files.Meta{Description: u.Description}); err != nil {
				return err
			}
		}
		linked = true
		return setStatus(ctx, tx, cur, statusLinked, "", "", f.ID, now)
	})
	if err != nil || !linked {
		h.Files.Discard(a.Name, f)
	}
	if err != nil {
		return nil, err
	}
	return reload(c, u)
}

// refuse ends an upload that cannot become a linked file with err's code
// (a refusal of the gate, of the files rules, of the checksum); the
// server's own failures are returned, the upload left to be tried again.
func (h *handlers) refuse(c *gin.Context, u *upload, err error) (*upload, error) {
	e, ok := errs.As(err)
	if !ok || !final(e.Kind) {
		return nil, err
	}
	if err := setStatus(c.Request.Context(), api.AppOf(c).DB, u, statusFailed, e.Code, e.Message, 0, h.Now().UnixMilli()); err != nil {
		return nil, err
	}
	return reload(c, u)
}

// final are the kinds of refusal that another try would meet again.
func final(k errs.Kind) bool {
	switch k {
	case errs.Invalid, errs.Forbidden, errs.NotFound, errs.TooLarge:
		return true
	}
	return false
}

func reload(c *gin.Context, u *upload) (*upload, error) {
	return loadUpload(c.Request.Context(), api.AppOf(c).DB, u.Actor, u.UploadID, false)
}

// countingHash hashes and counts what passes.
type countingHash struct {
	h hash.Hash
	n int64
}

func (w *countingHash) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return w.h.Write(p)
}
