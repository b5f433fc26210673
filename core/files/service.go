package files

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// Service is the files area of an instance: metadata in each app's
// database, bytes in Storage.
type Service struct {
	Storage Storage
	Now     func() time.Time
	// MaxPixels caps the pixels of an image that is decoded (0:
	// DefaultMaxPixels); larger images are refused.
	MaxPixels int64
}

func (s *Service) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC()
	}
	return s.Now().UTC()
}

// Target is a record a file is linked to.
type Target struct {
	Table string
	ID    int64
}

// Upload is a file arriving from a client.
type Upload struct {
	Name    string    // the client's file name (metadata only)
	Body    io.Reader // streamed to storage, never held whole
	Creator *int64    // the uploading user (nil for an API key)
	// MaxImageSize is the app's maxImageSize: raster images whose longest
	// side is longer are scaled down to it (0: kept as they come).
	MaxImageSize int
	// Before, when set, runs in the change's transaction before the
	// records' files change, with those records (a version of each).
	Before Before
}

// Before is told, inside a file change's transaction, which records'
// files are about to change: the HTTP layer writes a version of each.
type Before func(ctx context.Context, tx *store.DB, touched []Target) error

// linkedTargets are the records file id is linked to.
func linkedTargets(ctx context.Context, tx *store.DB, id int64) ([]Target, error) {
	rows, err := tx.Query(ctx, `SELECT tb, record_id FROM `+tx.Sys("file_links")+` WHERE file_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("links of file %d: %w", id, err)
	}
	defer rows.Close()
	var out []Target
	for rows.Next() {
		var t Target
		if err := rows.Scan(&t.Table, &t.ID); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Create stores an upload and its metadata and, when to is given, links it
// to that record (after the record's other files). The blob is written
// first and the rows after it in one transaction; a failure of either
// removes the blob, so neither a row without a blob nor a blob without a
// row remains. Rights are the caller's to check before.
func (s *Service) Create(ctx context.Context, db *store.DB, app string, up Upload, to *Target) (*File, int64, error) {
	f, err := s.Stage(ctx, app, up)
	if err != nil {
		return nil, 0, err
	}
	linkID, err := s.Insert(ctx, db, f, to, up.Before)
	if err != nil {
		s.Discard(app, f)
		return nil, 0, err
	}
	return f, linkID, nil
}

// Stage stores an upload's bytes (and thumbnail) without any row: the
// first half of Create, for work that writes many files' rows in one
// transaction (a photo import). What is staged is inserted with Insert or
// removed with Discard.
func (s *Service) Stage(ctx context.Context, app string, up Upload) (*File, error) {
	f := &File{}
	f.Filename, f.Ext = SplitName(up.Name)
	f.Creator, f.CreatedAt = up.Creator, s.now()
	if err := s.store(ctx, app, f, up); err != nil {
		return nil, err
	}
	return f, nil
}

// Insert writes a staged file's row and, when to is given, its link (after
// the record's other files), in db's transaction (joined when db is one);
// before runs first with the record the link changes.
func (s *Service) Insert(ctx context.Context, db *store.DB, f *File, to *Target, before Before) (int64, error) {
	var linkID int64
	err := db.Tx(ctx, func(tx *store.DB) error {
		err := tx.QueryRow(ctx, `INSERT INTO `+tx.Sys("files")+` (filename, ext, mime, size, sha256, printable, blob_key, thumb_key, created_at, creator) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			f.Filename, f.Ext, f.Mime, f.Size, f.SHA256, false, f.BlobKey, nullKey(f.ThumbKey), f.CreatedAt, f.Creator).Scan(&f.ID)
		if err != nil {
			return fmt.Errorf("insert file: %w", err)
		}
		if to != nil {
			if before != nil {
				if err := before(ctx, tx, []Target{*to}); err != nil {
					return err
				}
			}
			linkID, err = addLink(ctx, tx, f.ID, *to)
		}
		return err
	})
	return linkID, err
}

// Discard removes a staged file's bytes (its rows were never written, or
// were rolled back).
func (s *Service) Discard(app string, f *File) { s.dropBlobs(app, f) }

// store puts an upload's bytes and applies the image rules (processImage):
// f gets its blob, size, SHA-256, type and thumbnail. On failure nothing
// of it stays stored.
func (s *Service) store(ctx context.Context, app string, f *File, up Upload) error {
	if err := s.put(ctx, app, f, up.Body); err != nil {
		return err
	}
	if err := s.processImage(ctx, app, f, up.MaxImageSize); err != nil {
		s.dropBlobs(app, f)
		return err
	}
	return nil
}

// dropBlobs removes a file's blob and thumbnail whose rows were not written.
func (s *Service) dropBlobs(app string, f *File) {
	s.dropBlob(app, f.BlobKey)
	s.dropBlob(app, f.ThumbKey)
}

// nullKey stores an absent key as NULL.
func nullKey(k string) any {
	if k == "" {
		return nil
	}
	return k
}

// put streams body to storage and fills the blob's key, size, SHA-256 and
// sniffed type into f. An empty body stores nothing.
func (s *Service) put(ctx context.Context, app string, f *File, body io.Reader) error {
	if body == nil {
		return ErrNoFile
	}
	m := &meter{h: sha256.New()}
	key, n, err := s.Storage.Put(ctx, app, io.TeeReader(body, m))
	if err != nil {
		return fmt.Errorf("store file: %w", err)
	}
	if n == 0 {
		s.dropBlob(app, key)
		return ErrEmptyFile
	}
	f.BlobKey, f.Size, f.SHA256 = key, n, hex.EncodeToString(m.h.Sum(nil))
	f.Mime = Sniff(m.head, f.Ext)
	return nil
}

// dropBlob removes a blob whose rows were not written; it runs even when
// the request's context is gone.
func (s *Service) dropBlob(app, key string) {
	if key == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = s.Storage.Delete(ctx, app, key)
}

// meter hashes what passes and keeps its first bytes for sniffing.
type meter struct {
	h    hash.Hash
	head []byte
}

func (m *meter) Write(p []byte) (int, error) {
	if len(m.head) < sniffLen {
		m.head = append(m.head, p[:min(len(p), sniffLen-len(m.head))]...)
	}
	return m.h.Write(p)
}

// addLink links a file to a record, after the record's other files.
func addLink(ctx context.Context, tx *store.DB, fileID int64, to Target) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO `+tx.Sys("file_links")+` (file_id, tb, record_id, sort) SELECT CAST(? AS bigint), CAST(? AS text), CAST(? AS bigint), COALESCE(MAX(sort), 0) + 1 FROM `+
		tx.Sys("file_links")+` WHERE tb = ? AND record_id = ? RETURNING id`, fileID, to.Table, to.ID, to.Table, to.ID).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("link file %d to %s %d: %w", fileID, to.Table, to.ID, err)
	}
	return id, recordChanged(ctx, tx, to.Table, to.ID)
}

const fileColumns = `id, filename, ext, mime, size, sha256, description, keywords, printable, blob_key, COALESCE(thumb_key, ''), created_at, creator`

func scanFile(sc interface{ Scan(...any) error }) (*File, error) {
	f := &File{}
	err := sc.Scan(&f.ID, &f.Filename, &f.Ext, &f.Mime, &f.Size, &f.SHA256, &f.Description, &f.Keywords, &f.Printable, &f.BlobKey, &f.ThumbKey, &f.CreatedAt, &f.Creator)
	return f, err
}

// Get reads a file's metadata.
func Get(ctx context.Context, db *store.DB, id int64) (*File, error) {
	if id <= 0 {
		return nil, ErrFileNotFound
	}
	f, err := scanFile(db.QueryRow(ctx, `SELECT `+fileColumns+` FROM `+db.Sys("files")+` WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrFileNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read file %d: %w", id, err)
	}
	return f, nil
}

// Open opens a file's stored bytes.
func (s *Service) Open(ctx context.Context, app string, f *File) (Blob, error) {
	b, err := s.Storage.Get(ctx, app, f.BlobKey)
	if err != nil {
		return nil, fmt.Errorf("open file %d: %w", f.ID, err)
	}
	return b, nil
}

// OpenThumb opens a file's thumbnail; ErrNoThumbnail when it has none.
func (s *Service) OpenThumb(ctx context.Context, app string, f *File) (Blob, error) {
	if f.ThumbKey == "" {
		return nil, ErrNoThumbnail
	}
	b, err := s.Storage.Get(ctx, app, f.ThumbKey)
	if errors.Is(err, ErrBlobNotFound) {
		return nil, ErrNoThumbnail
	}
	if err != nil {
		return nil, fmt.Errorf("open thumbnail of file %d: %w", f.ID, err)
	}
	return b, nil
}

// InsertKept writes the row of a staged file under the id and metadata f
// already has (description, keywords, printable, creator, date): for
// bringing a file archive over from elsewhere (the BraDypUS major
// upgrade), where records, links and versions name files by their ids.
func InsertKept(ctx context.Context, tx *store.DB, f *File) error {
	if f.ID <= 0 || f.BlobKey == "" {
		return fmt.Errorf("insert file: an id and a stored blob are needed")
	}
	_, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("files")+` (id, filename, ext, mime, size, sha256, description, keywords, printable, blob_key, thumb_key, created_at, creator)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		f.ID, f.Filename, f.Ext, f.Mime, f.Size, f.SHA256, f.Description, f.Keywords, f.Printable, f.BlobKey, nullKey(f.ThumbKey), f.CreatedAt, f.Creator)
	if err != nil {
		return fmt.Errorf("insert file %d: %w", f.ID, err)
	}
	return nil
}

// InsertLinkKept writes a link under its own id and sort (see InsertKept).
func InsertLinkKept(ctx context.Context, tx *store.DB, l Link) error {
	_, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("file_links")+` (id, file_id, tb, record_id, sort) VALUES (?, ?, ?, ?, ?)`,
		l.ID, l.FileID, l.Table, l.RecordID, l.Sort)
	if err != nil {
		return fmt.Errorf("link file %d to %s %d: %w", l.FileID, l.Table, l.RecordID, err)
	}
	return recordChanged(ctx, tx, l.Table, l.RecordID)
}
