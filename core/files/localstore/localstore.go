// Package localstore is the local-disk backend of files.Storage: blobs
// live under <root>/<app>/<xx>/<key>, written to a temporary file in the
// same folder and renamed into place, so a blob is whole or absent.
package localstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/scratch"
)

// Store keeps blobs under Root, one folder per application.
type Store struct {
	Root string
}

// New returns a store rooted at root (created on first write).
func New(root string) *Store { return &Store{Root: root} }

// errBadName refuses an app name or key that could leave the root.
var errBadName = errors.New("localstore: invalid app or key")

// path is the blob's file; app and key are checked so no name reaches
// outside the app's folder.
func (s *Store) path(app, key string) (string, error) {
	if !files.ValidBlobName(app, key) {
		return "", errBadName
	}
	return filepath.Join(s.Root, app, key[:2], key), nil
}

// Put streams r to a temporary file beside the final one, syncs it and
// renames it into place.
func (s *Store) Put(ctx context.Context, app string, r io.Reader) (string, int64, error) {
	key, err := files.NewBlobKey()
	if err != nil {
		return "", 0, err
	}
	dst, err := s.path(app, key)
	if err != nil {
		return "", 0, err
	}
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", 0, fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := scratch.CreateTemp(dir, ".upload-*")
	if err != nil {
		return "", 0, fmt.Errorf("create temporary file: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	n, err := io.Copy(tmp, ctxReader{ctx, r})
	if err != nil {
		return "", 0, err
	}
	if err := tmp.Sync(); err != nil {
		return "", 0, fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return "", 0, fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", 0, fmt.Errorf("rename into place: %w", err)
	}
	done = true
	return key, n, nil
}

// Get opens the blob.
func (s *Store) Get(_ context.Context, app, key string) (files.Blob, error) {
	p, err := s.path(app, key)
	if err != nil {
		return nil, files.ErrBlobNotFound
	}
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, files.ErrBlobNotFound
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &blob{File: f, info: files.BlobInfo{Key: key, Size: st.Size(), ModTime: st.ModTime()}}, nil
}

// Delete removes the blob (a missing one is no error).
func (s *Store) Delete(_ context.Context, app, key string) error {
	p, err := s.path(app, key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Stat describes the blob.
func (s *Store) Stat(_ context.Context, app, key string) (files.BlobInfo, error) {
	p, err := s.path(app, key)
	if err != nil {
		return files.BlobInfo{}, files.ErrBlobNotFound
	}
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return files.BlobInfo{}, files.ErrBlobNotFound
		}
		return files.BlobInfo{}, err
	}
	return files.BlobInfo{Key: key, Size: st.Size(), ModTime: st.ModTime()}, nil
}

type blob struct {
	*os.File
	info files.BlobInfo
}

func (b *blob) Info() files.BlobInfo { return b.info }

// ctxReader stops a copy when the request is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// List walks <root>/<app>/<xx>/<key>; temporary files of uploads are not
// blobs (SweepPartial).
func (s *Store) List(ctx context.Context, app string, fn func(files.BlobInfo) error) error {
	if !files.ValidBlobName(app, strings.Repeat("0", 32)) {
		return errors.New("localstore: invalid app name")
	}
	return s.walk(ctx, app, func(_, name string, info fs.FileInfo) error {
		if !files.ValidBlobName(app, name) {
			return nil
		}
		return fn(files.BlobInfo{Key: name, Size: info.Size(), ModTime: info.ModTime()})
	})
}

// SweepPartial counts (and removes) temporary files of uploads that a
// crash left behind, older than before.
func (s *Store) SweepPartial(ctx context.Context, app string, before time.Time, remove bool) (int, error) {
	n := 0
	err := s.walk(ctx, app, func(path, name string, info fs.FileInfo) error {
		if !strings.HasPrefix(name, ".upload-") || !info.ModTime().Before(before) {
			return nil
		}
		n++
		if remove {
			return os.Remove(path)
		}
		return nil
	})
	return n, err
}

// walk calls fn for every regular file under the app's folder (a missing
// folder is an empty store).
func (s *Store) walk(ctx context.Context, app string, fn func(path, name string, info fs.FileInfo) error) error {
	dir := filepath.Join(s.Root, app)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return fn(p, d.Name(), info)
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
