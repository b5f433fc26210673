package fieldsync

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// The states of an upload (sys_sync_uploads.status).
const (
	statusReceiving = "receiving"
	statusWaiting   = "waiting_for_record"
	statusLinked    = "linked"
	statusFailed    = "failed"
)

// upload is a row of sys_sync_uploads: one resumable upload of one
// account.
type upload struct {
	pk          int64 // the row's id, the parts' key
	Actor       string
	UploadID    string
	DeviceID    string
	Filename    string
	Size        int64
	SHA256      string // "" when the client gave none
	Table       string
	RecordID    int64  // 0 when named by TempID
	TempID      string // "" when named by RecordID
	Description *string
	Received    int64
	Status      string
	Code        string
	Message     string
	FileID      int64
}

// open reports whether the upload may still get bytes or a link.
func (u *upload) open() bool { return u.Status == statusReceiving || u.Status == statusWaiting }

// whole reports whether every byte has come and the upload is still to
// become a file (a link tried again on every GET and PUT).
func (u *upload) whole() bool { return u.open() && u.Received == u.Size }

// sameRequest reports whether a POST naming u's upload_id asks for u (a
// start sent again) rather than for another file under the same name.
func (u *upload) sameRequest(o *upload) bool {
	return u.DeviceID == o.DeviceID && u.Filename == o.Filename && u.Size == o.Size && u.SHA256 == o.SHA256 &&
		u.Table == o.Table && u.RecordID == o.RecordID && u.TempID == o.TempID
}

const uploadColumns = `id, actor, upload_id, device_id, filename, size, COALESCE(sha256, ''), tb, COALESCE(record_id, 0), COALESCE(temp_id, ''), description, received, status, COALESCE(code, ''), COALESCE(message, ''), COALESCE(file_id, 0)`

func scanUpload(sc interface{ Scan(...any) error }) (*upload, error) {
	u := &upload{}
	var desc sql.NullString
	err := sc.Scan(&u.pk, &u.Actor, &u.UploadID, &u.DeviceID, &u.Filename, &u.Size, &u.SHA256, &u.Table, &u.RecordID, &u.TempID,
		&desc, &u.Received, &u.Status, &u.Code, &u.Message, &u.FileID)
	if desc.Valid {
		u.Description = &desc.String
	}
	return u, err
}

// errUploadNotFound answers an upload_id the caller has not started: one
// that does not exist and one of another account look the same.
var errUploadNotFound = errs.New(errs.NotFound, "upload_not_found", "no such upload")

// forUpdate locks the rows a query reads until the transaction ends
// (PostgreSQL; SQLite's write transactions already run one at a time).
func forUpdate(db *store.DB) string {
	if db.Engine == store.Postgres {
		return ` FOR UPDATE`
	}
	return ""
}

// loadUpload reads actor's upload uploadID; with lock, in db's
// transaction, it holds the row until the transaction ends.
func loadUpload(ctx context.Context, db *store.DB, actor, uploadID string, lock bool) (*upload, error) {
	q := `SELECT ` + uploadColumns + ` FROM ` + db.Sys("sync_uploads") + ` WHERE actor = ? AND upload_id = ?`
	if lock {
		q += forUpdate(db)
	}
	u, err := scanUpload(db.QueryRow(ctx, q, actor, uploadID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errUploadNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read upload: %w", err)
	}
	return u, nil
}

// insertUpload starts u unless actor already has an upload of that id
// (two starts sent at once): either way the row is read back.
func insertUpload(ctx context.Context, tx *store.DB, u *upload, nowMilli int64) (*upload, error) {
	var recordID, tempID, sha any
	if u.RecordID > 0 {
		recordID = u.RecordID
	} else {
		tempID = u.TempID
	}
	if u.SHA256 != "" {
		sha = u.SHA256
	}
	_, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("sync_uploads")+
		` (actor, upload_id, device_id, filename, size, sha256, tb, record_id, temp_id, description, received, status, created_at, touched_at)`+
		` VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?) ON CONFLICT (actor, upload_id) DO NOTHING`,
		u.Actor, u.UploadID, u.DeviceID, u.Filename, u.Size, sha, u.Table, recordID, tempID, u.Description, statusReceiving, nowMilli, nowMilli)
	if err != nil {
		return nil, fmt.Errorf("start upload: %w", err)
	}
	return loadUpload(ctx, tx, u.Actor, u.UploadID, false)
}

// appendPart keeps b as the bytes of u from offset at, in its own
// transaction, if u has received exactly at bytes: a part sent twice at
// once lands once (the row lock, and the parts' key), and the other
// sender learns the offset now current.
func appendPart(ctx context.Context, db *store.DB, u *upload, at int64, b []byte, nowMilli int64) (*upload, error) {
	var out *upload
	err := db.Tx(ctx, func(tx *store.DB) error {
		cur, err := loadUpload(ctx, tx, u.Actor, u.UploadID, true)
		if err != nil {
			return err
		}
		out = cur
		if cur.Status != statusReceiving || cur.Received != at {
			return errOffsetMismatch.With("offset", cur.Received)
		}
		if at+int64(len(b)) > cur.Size {
			return errPastSize.With("offset", cur.Received).With("size", cur.Size)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("sync_upload_parts")+` (upload, start, bytes) VALUES (?, ?, ?)`, cur.pk, at, b); err != nil {
			return fmt.Errorf("keep upload part: %w", err)
		}
		cur.Received = at + int64(len(b))
		_, err = tx.Exec(ctx, `UPDATE `+tx.Sys("sync_uploads")+` SET received = ?, touched_at = ? WHERE id = ?`, cur.Received, nowMilli, cur.pk)
		if err != nil {
			return fmt.Errorf("upload offset: %w", err)
		}
		return nil
	})
	return out, err
}

// dropParts removes the bytes an upload kept (it is linked, failed or
// expired).
func dropParts(ctx context.Context, tx *store.DB, pk int64) error {
	if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Sys("sync_upload_parts")+` WHERE upload = ?`, pk); err != nil {
		return fmt.Errorf("drop upload parts: %w", err)
	}
	return nil
}

// setStatus moves an open upload to status (with its code, message and
// file), in db's transaction or its own; an upload no longer open (another
// node finished it meanwhile) is left as it is. A final status drops the
// parts.
func setStatus(ctx context.Context, db *store.DB, u *upload, status, code, message string, fileID int64, nowMilli int64) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		var file any
		if fileID > 0 {
			file = fileID
		}
		r, err := tx.Exec(ctx, `UPDATE `+tx.Sys("sync_uploads")+` SET status = ?, code = ?, message = ?, file_id = ?, touched_at = ?`+
			` WHERE id = ? AND status IN (?, ?)`, status, nullText(code), nullText(message), file, nowMilli, u.pk, statusReceiving, statusWaiting)
		if err != nil {
			return fmt.Errorf("upload status: %w", err)
		}
		if n, _ := r.RowsAffected(); n == 0 || status == statusWaiting {
			return nil
		}
		return dropParts(ctx, tx, u.pk)
	})
}

func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// partsReader yields an upload's kept bytes in order, one part (at most
// partSize) in memory at a time; a gap or a part missing is an error, never
// a file with holes.
type partsReader struct {
	ctx  context.Context
	db   *store.DB
	pk   int64
	size int64
	next int64  // the offset of the next part
	buf  []byte // what is left of the current part
}

func (r *partsReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.next >= r.size {
			return 0, io.EOF
		}
		var start int64
		var b []byte
		err := r.db.QueryRow(r.ctx, `SELECT start, bytes FROM `+r.db.Sys("sync_upload_parts")+` WHERE upload = ? AND start >= ? ORDER BY start LIMIT 1`,
			r.pk, r.next).Scan(&start, &b)
		if err != nil || start != r.next || len(b) == 0 {
			return 0, fmt.Errorf("upload parts: the part at %d is missing (%v)", r.next, err)
		}
		r.buf, r.next = b, r.next+int64(len(b))
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// trimUploads removes the uploads of the app not touched since before
// (Unix milliseconds) with their parts: abandoned ones, and the answers
// kept for finished ones.
func trimUploads(ctx context.Context, db *store.DB, before int64) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		_, err := tx.Exec(ctx, `DELETE FROM `+tx.Sys("sync_upload_parts")+` WHERE upload IN (SELECT id FROM `+tx.Sys("sync_uploads")+` WHERE touched_at < ?)`, before)
		if err == nil {
			_, err = tx.Exec(ctx, `DELETE FROM `+tx.Sys("sync_uploads")+` WHERE touched_at < ?`, before)
		}
		if err != nil {
			return fmt.Errorf("trim uploads: %w", err)
		}
		return nil
	})
}

// lockActor makes the starts of one account's uploads take turns (in the
// transaction, on PostgreSQL; SQLite's write transactions already do), so
// that its bounds cannot be passed by starting many at once.
func lockActor(ctx context.Context, tx *store.DB, actor string) error {
	if tx.Engine != store.Postgres {
		return nil
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(?))`, "strata sync uploads "+tx.Key()+" "+actor); err != nil {
		return fmt.Errorf("lock uploads of %s: %w", actor, err)
	}
	return nil
}

// openUploads counts actor's open uploads and the bytes they declared.
func openUploads(ctx context.Context, tx *store.DB, actor string) (n, bytes int64, err error) {
	err = tx.QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(size), 0) FROM `+tx.Sys("sync_uploads")+` WHERE actor = ? AND status IN (?, ?)`,
		actor, statusReceiving, statusWaiting).Scan(&n, &bytes)
	if err != nil {
		return 0, 0, fmt.Errorf("count uploads: %w", err)
	}
	return n, bytes, nil
}
