package server_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/files/localstore"
	"github.com/strata-archaeo/strata/core/files/s3store"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestFilesCheck: files.Check (strata files check) finds orphan blobs,
// partial uploads and rows whose bytes or thumbnail are gone, on the
// local disk and on S3, on both engines; --fix removes only old orphans
// and partial uploads, never a row, and leaves a young orphan (an upload
// in flight) alone.
func TestFilesCheck(t *testing.T) {
	stores := map[string]func(t *testing.T) (files.Storage, string){
		"local": func(t *testing.T) (files.Storage, string) {
			dir := t.TempDir()
			return localstore.New(dir), dir
		},
		"s3": func(t *testing.T) (files.Storage, string) {
			st, err := s3store.New(fakeS3(t, "strata"))
			if err != nil {
				t.Fatal(err)
			}
			return st, ""
		},
	}
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		for name, mk := range stores {
			t.Run(name, func(t *testing.T) {
				st, dir := mk(t)
				f := newDigDeps(t, e, server.Deps{Files: st})
				ctx := t.Context()
				site := f.create(t, f.writer, "sites", `{"name":"Check"}`)
				img, _ := f.uploadOK(t, f.writer, "sites", site, "a.png", pngPixel) // a blob and a thumbnail
				doc, _ := f.uploadOK(t, f.writer, "sites", site, "b.txt", []byte("hello"))
				check := func(fix bool, now time.Time) *files.CheckReport {
					t.Helper()
					rep, err := files.Check(ctx, f.app.DB, st, "dig", files.CheckOptions{Fix: fix, Now: now})
					if err != nil {
						t.Fatal(err)
					}
					return rep
				}
				if rep := check(false, time.Now()); !rep.OK() || rep.Files != 2 || rep.Blobs != 3 {
					t.Fatalf("clean store: %+v", rep)
				}
				// An orphan (a crash between blob and row), a partial upload,
				// a file whose bytes are gone, a thumbnail gone.
				if _, _, err := st.Put(ctx, "dig", bytes.NewReader([]byte("orphan"))); err != nil {
					t.Fatal(err)
				}
				if dir != "" {
					if err := os.WriteFile(filepath.Join(dir, "dig", ".upload-crashed"), []byte("half"), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				var blobKey, thumbKey string
				if err := f.app.DB.QueryRow(ctx, `SELECT blob_key FROM `+f.app.DB.Sys("files")+` WHERE id = ?`, doc).Scan(&blobKey); err != nil {
					t.Fatal(err)
				}
				if err := f.app.DB.QueryRow(ctx, `SELECT thumb_key FROM `+f.app.DB.Sys("files")+` WHERE id = ?`, img).Scan(&thumbKey); err != nil {
					t.Fatal(err)
				}
				for _, k := range []string{blobKey, thumbKey} {
					if err := st.Delete(ctx, "dig", k); err != nil {
						t.Fatal(err)
					}
				}
				later := time.Now().Add(2 * time.Hour)
				rep := check(false, time.Now())
				if len(rep.Orphans) != 0 || rep.Young != 1 || len(rep.Problems) != 2 ||
					rep.Problems[0].What != "missing_thumbnail" || rep.Problems[0].FileID != img ||
					rep.Problems[1].What != "missing_blob" || rep.Problems[1].FileID != doc {
					t.Fatalf("now: %+v", rep)
				}
				// A fix now leaves the young orphan alone.
				if rep := check(true, time.Now()); rep.Removed != 0 {
					t.Fatalf("fix within the grace period removed %d", rep.Removed)
				}
				wantPartial := 0
				if dir != "" {
					wantPartial = 1
				}
				rep = check(true, later)
				if len(rep.Orphans) != 1 || rep.Partial != wantPartial || rep.Removed != 1+wantPartial || len(rep.Problems) != 2 {
					t.Fatalf("fix later: %+v", rep)
				}
				rep = check(false, later)
				if len(rep.Orphans) != 0 || rep.Partial != 0 || rep.Files != 2 || len(rep.Problems) != 2 {
					t.Fatalf("after the fix: %+v", rep)
				}
			})
		}
	})
}

// cancelAfterPut is the real store, with the request given up the moment
// its bytes are stored: the row's transaction then fails, as when a client
// disconnects or the database goes away between blob and row.
type cancelAfterPut struct {
	files.Storage
	cancel func()
}

func (c cancelAfterPut) Put(ctx context.Context, app string, r io.Reader) (string, int64, error) {
	key, n, err := c.Storage.Put(ctx, app, r)
	c.cancel()
	return key, n, err
}

// TestRowFailureLeavesNoBlob: when the rows of an upload cannot be
// written after its bytes were, the bytes are removed: files check finds
// nothing (no orphan, young or old), on both engines.
func TestRowFailureLeavesNoBlob(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		f := newDig(t, e)
		st := localstore.New(t.TempDir())
		ctx, cancel := context.WithCancel(t.Context())
		svc := &files.Service{Storage: cancelAfterPut{Storage: st, cancel: cancel}}
		_, _, err := svc.Create(ctx, f.app.DB, "dig", files.Upload{Name: "a.txt", Body: strings.NewReader("bytes")}, nil)
		if err == nil {
			t.Fatal("the upload succeeded with its request gone")
		}
		rep, err := files.Check(t.Context(), f.app.DB, st, "dig", files.CheckOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() || rep.Files != 0 || rep.Blobs != 0 {
			t.Fatalf("after a failed row: %+v", rep)
		}
	})
}
