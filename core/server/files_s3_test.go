package server_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/files/s3store"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// fakeS3 starts a real S3 protocol server in process (gofakes3 on its
// memory backend, behind TLS) with one bucket, and returns its options.
func fakeS3(t *testing.T, bucket string) s3store.Options {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	t.Cleanup(srv.Close)
	return s3store.Options{Endpoint: srv.URL, Bucket: bucket, Region: "us-east-1", AccessKey: "k", SecretKey: "s",
		Prefix: "nodes/", PathStyle: true, Transport: srv.Client().Transport}
}

// s3Objects lists the bucket's object names.
func s3Objects(t *testing.T, o s3store.Options) []string {
	t.Helper()
	c, err := minio.New(strings.TrimPrefix(o.Endpoint, "https://"), &minio.Options{Secure: true, Transport: o.Transport,
		BucketLookup: minio.BucketLookupPath, Region: o.Region})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for obj := range c.ListObjects(context.Background(), o.Bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		out = append(out, obj.Key)
	}
	return out
}

// TestFilesOnS3 runs upload, ranged download, replace and delete through
// the router with the S3 store, on both engines.
func TestFilesOnS3(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		o := fakeS3(t, "strata")
		st, err := s3store.New(o)
		if err != nil {
			t.Fatal(err)
		}
		f := newDigDeps(t, e, server.Deps{Files: st})
		site := f.create(t, f.writer, "sites", `{"name":"Pompeii"}`)
		id1, _ := f.uploadOK(t, f.writer, "sites", site, "pianta.png", pngPixel)
		// 6 MiB: more than one part, so a multipart upload.
		big := bytes.Repeat([]byte("%PDF-1.7 strata "), 6<<20/16)
		id2, _ := f.uploadOK(t, f.writer, "sites", site, "relazione.pdf", big)
		objs := s3Objects(t, o)
		if len(objs) != 3 { // the two files and the PNG's thumbnail
			t.Fatalf("objects: %v", objs)
		}
		for _, k := range objs {
			if !strings.HasPrefix(k, "nodes/dig/") || strings.Contains(k, "pianta") || strings.Contains(k, "relazione") {
				t.Fatalf("object name %q", k)
			}
		}
		url := fmt.Sprintf("/dig/api/file/%d/download", id1)
		rec := f.send(t, f.reader, "GET", url, nil, nil)
		if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), pngPixel) || rec.Header().Get("Content-Type") != "image/png" {
			t.Fatalf("download: %d %v", rec.Code, rec.Header())
		}
		rec = f.send(t, f.reader, "GET", url, nil, map[string]string{"Range": "bytes=1-3"})
		if rec.Code != 206 || rec.Body.String() != "PNG" || rec.Header().Get("Content-Range") != fmt.Sprintf("bytes 1-3/%d", len(pngPixel)) {
			t.Fatalf("range: %d %q %v", rec.Code, rec.Body.String(), rec.Header())
		}
		url2 := fmt.Sprintf("/dig/api/file/%d/download", id2)
		rec = f.send(t, f.reader, "GET", url2, nil, nil)
		if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), big) {
			t.Fatalf("big download: %d, %d bytes", rec.Code, rec.Body.Len())
		}
		from := 5<<20 - 4
		rec = f.send(t, f.reader, "GET", url2, nil, map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", from, from+9)})
		if rec.Code != 206 || !bytes.Equal(rec.Body.Bytes(), big[from:from+10]) {
			t.Fatalf("big range: %d %q", rec.Code, rec.Body.String())
		}
		code, m := f.upload(t, f.writer, fmt.Sprintf("/dig/api/file/%d/replace", id1), "file", "nuova.jpg", []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"))
		if code != 200 || m["code"] != "ok_file_replaced" {
			t.Fatalf("replace: %d %v", code, m)
		}
		if objs := s3Objects(t, o); len(objs) != 2 {
			t.Fatalf("objects after replace: %v", objs)
		}
		f.must(t, 200, f.writer, "DELETE", fmt.Sprintf("/dig/api/file/%d", id1), "")
		f.must(t, 200, f.writer, "DELETE", fmt.Sprintf("/dig/api/file/%d", id2), "")
		if objs := s3Objects(t, o); len(objs) != 0 {
			t.Fatalf("objects after delete: %v", objs)
		}
		if rec := f.send(t, f.reader, "GET", url, nil, nil); rec.Code != 404 {
			t.Fatalf("deleted file: %d", rec.Code)
		}
	})
}

// TestS3BucketCheckedAtStart: a configured bucket that cannot be reached
// stops the server from starting, with a message naming it.
func TestS3BucketCheckedAtStart(t *testing.T) {
	o := fakeS3(t, "strata")
	for name, s3 := range map[string]config.S3{
		"untrusted certificate": {Endpoint: o.Endpoint, Bucket: "nope", AccessKey: "k", SecretKey: "s", PathStyle: true},
		"nothing there":         {Endpoint: "http://127.0.0.1:1", Bucket: "strata", AccessKey: "k", SecretKey: "s", PathStyle: true},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			cfg.DataDir = t.TempDir()
			cfg.S3 = s3
			_, err := server.New(server.Deps{Config: cfg, Apps: testenv.NewRegistry(t, store.SQLite), Logger: testenv.Logger()})
			if err == nil || !strings.Contains(err.Error(), "STRATA_S3_") || !strings.Contains(err.Error(), s3.Bucket) {
				t.Fatalf("server.New: %v", err)
			}
		})
	}
}
