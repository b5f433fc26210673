package backup

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"sort"
	"time"

	"github.com/strata-archaeo/strata/core/files"
)

// NamedObjects is an object store with named objects (s3store.Store).
type NamedObjects interface {
	PutNamed(ctx context.Context, area, app, name string, r io.Reader) (int64, error)
	GetNamed(ctx context.Context, area, app, name string) (files.Blob, error)
	DeleteNamed(ctx context.Context, area, app, name string) error
	ListNamed(ctx context.Context, area, app string, fn func(files.BlobInfo) error) error
}

// objectArea is where backups live in the bucket: <prefix>backups/<app>/.
const objectArea = "backups"

// Objects keeps backups in the files' S3 bucket, so every node of a
// cluster lists, restores and serves the same ones.
type Objects struct{ S3 NamedObjects }

var _ Store = Objects{}

// List reads each backup's manifest (one ranged GET each).
func (o Objects) List(ctx context.Context, app, engine string) ([]Entry, error) {
	out := []Entry{}
	err := o.S3.ListNamed(ctx, objectArea, app, func(b files.BlobInfo) error {
		if !ValidName(b.Key) {
			return nil
		}
		en := Entry{File: b.Key, App: app, Engine: engine, Size: b.Size, SizeMB: sizeMB(b.Size), Date: b.ModTime.UTC()}
		if blob, err := o.S3.GetNamed(ctx, objectArea, app, b.Key); err == nil {
			if m, err := ReadManifest(blob); err == nil {
				en.SourceEngine, en.StrataVersion, en.Counts, en.Date = m.Engine, m.StrataVersion, m.Counts, m.CreatedAt
			}
			blob.Close()
		}
		en.FormattedTime = en.Date.Format("2006-01-02 15:04:05")
		out = append(out, en)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].File > out[j].File })
	return out, err
}

// Create streams the archive into a multipart upload, completed only when
// write succeeded (aborted otherwise: nothing half-written is visible).
func (o Objects) Create(ctx context.Context, app, name string, write func(w io.Writer) error) error {
	if !ValidName(name) {
		return ErrNotFound
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := o.S3.PutNamed(ctx, objectArea, app, name, pr)
		pr.CloseWithError(err)
		done <- err
	}()
	err := write(pw)
	pw.CloseWithError(err)
	if perr := <-done; err == nil {
		err = perr
	}
	return err
}

// Open opens a backup object.
func (o Objects) Open(ctx context.Context, app, name string) (Archive, error) {
	if !ValidName(name) {
		return nil, ErrNotFound
	}
	b, err := o.S3.GetNamed(ctx, objectArea, app, name)
	if errors.Is(err, files.ErrBlobNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return blobArchive{b}, nil
}

type blobArchive struct{ files.Blob }

func (b blobArchive) Size() int64        { return b.Info().Size }
func (b blobArchive) ModTime() time.Time { return b.Info().ModTime }

// Delete removes a backup object.
func (o Objects) Delete(ctx context.Context, app, name string) error {
	if !ValidName(name) {
		return ErrNotFound
	}
	err := o.S3.DeleteNamed(ctx, objectArea, app, name)
	if errors.Is(err, files.ErrBlobNotFound) {
		return ErrNotFound
	}
	return err
}

// Pending: an upload in progress is invisible in S3 until complete.
func (o Objects) Pending(context.Context, string, string) bool { return false }

// StoreFor is where backups live beside the files: the S3 bucket when the
// file store is one (every node sees them), else <dataDir>/backups.
func StoreFor(fileStore files.Storage, dataDir string) Store {
	if named, ok := fileStore.(NamedObjects); ok {
		return Objects{S3: named}
	}
	return Dir{Root: filepath.Join(dataDir, "backups")}
}
