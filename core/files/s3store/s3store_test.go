package s3store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"

	"github.com/strata-archaeo/strata/core/files"
)

// fakeS3 is a real S3 protocol server in process (gofakes3 over its memory
// backend) behind TLS, as production endpoints are; parts counts the
// UploadPart requests it answered.
type fakeS3 struct {
	srv   *httptest.Server
	parts atomic.Int64
}

func startS3(t *testing.T, bucket string) *fakeS3 {
	t.Helper()
	backend := s3mem.New()
	if bucket != "" {
		if err := backend.CreateBucket(bucket); err != nil {
			t.Fatal(err)
		}
	}
	fake := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog()))
	f := &fakeS3{}
	h := fake.Server()
	f.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Query().Has("partNumber") {
			f.parts.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeS3) store(t *testing.T, bucket, prefix string) *Store {
	t.Helper()
	s, err := New(Options{
		Endpoint:  f.srv.URL,
		Bucket:    bucket,
		Region:    "us-east-1",
		AccessKey: "test",
		SecretKey: "test-secret",
		Prefix:    prefix,
		PathStyle: true,
		Transport: f.srv.Client().Transport,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// objects lists every object name and every unfinished multipart upload
// in the bucket.
func objects(t *testing.T, s *Store) (names []string, uploads int) {
	t.Helper()
	ctx := context.Background()
	for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		names = append(names, o.Key)
	}
	res, err := minio.Core{Client: s.client}.ListMultipartUploads(ctx, s.bucket, "", "", "", "", 1000)
	if minio.ToErrorResponse(err).Code == "NoSuchUpload" {
		// gofakes3's answer for a bucket that never had an upload.
		return names, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return names, len(res.Uploads)
}

func TestLifecycle(t *testing.T) {
	f := startS3(t, "strata")
	s := f.store(t, "strata", "node/")
	ctx := context.Background()
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	body := []byte("0123456789abcdefghij")
	key, n, err := s.Put(ctx, "demo", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(body)) || !files.ValidBlobName("demo", key) {
		t.Fatalf("put: key %q size %d", key, n)
	}
	if names, _ := objects(t, s); len(names) != 1 || names[0] != "node/demo/"+key {
		t.Fatalf("objects %v, want node/demo/%s", names, key)
	}
	info, err := s.Stat(ctx, "demo", key)
	if err != nil || info.Size != int64(len(body)) || info.Key != key || info.ModTime.IsZero() {
		t.Fatalf("stat %+v %v", info, err)
	}
	b, err := s.Get(ctx, "demo", key)
	if err != nil {
		t.Fatal(err)
	}
	if b.Info().Size != int64(len(body)) {
		t.Fatalf("blob info %+v", b.Info())
	}
	all, err := io.ReadAll(b)
	if err != nil || !bytes.Equal(all, body) {
		t.Fatalf("read %q %v", all, err)
	}
	// Seek back and forth as http.ServeContent does for a Range answer.
	if end, err := b.Seek(0, io.SeekEnd); err != nil || end != int64(len(body)) {
		t.Fatalf("seek end %d %v", end, err)
	}
	if _, err := b.Seek(10, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	part := make([]byte, 5)
	if _, err := io.ReadFull(b, part); err != nil || string(part) != "abcde" {
		t.Fatalf("range read %q %v", part, err)
	}
	if _, err := b.Seek(2, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(b, part); err != nil || string(part) != "23456" {
		t.Fatalf("seek back read %q %v", part, err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// A ranged download through net/http, as the file routes answer.
	b, err = s.Get(ctx, "demo", key)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Range", "bytes=15-")
	http.ServeContent(rec, req, "x.bin", b.Info().ModTime, b)
	b.Close()
	if rec.Code != http.StatusPartialContent || rec.Body.String() != "fghij" {
		t.Fatalf("range answer %d %q", rec.Code, rec.Body.String())
	}

	// Another app's namespace does not see the blob.
	if _, err := s.Stat(ctx, "other", key); !errors.Is(err, files.ErrBlobNotFound) {
		t.Fatalf("other app stat: %v", err)
	}
	if err := s.Delete(ctx, "demo", key); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "demo", key); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := s.Stat(ctx, "demo", key); !errors.Is(err, files.ErrBlobNotFound) {
		t.Fatalf("stat after delete: %v", err)
	}
	if _, err := s.Get(ctx, "demo", key); !errors.Is(err, files.ErrBlobNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	if names, uploads := objects(t, s); len(names) != 0 || uploads != 0 {
		t.Fatalf("left behind: %v, %d uploads", names, uploads)
	}
	// Zero bytes is a blob too.
	key, n, err = s.Put(ctx, "demo", strings.NewReader(""))
	if err != nil || n != 0 {
		t.Fatalf("empty put %d %v", n, err)
	}
	if info, err := s.Stat(ctx, "demo", key); err != nil || info.Size != 0 {
		t.Fatalf("empty stat %+v %v", info, err)
	}
}

func TestBadNames(t *testing.T) {
	f := startS3(t, "strata")
	s := f.store(t, "strata", "")
	ctx := context.Background()
	if _, _, err := s.Put(ctx, "../x", strings.NewReader("a")); err == nil {
		t.Fatal("put under ../x accepted")
	}
	for _, k := range []string{"../etc", "", "ABCDEF0123456789ABCDEF0123456789", "0123456789abcdef0123456789abcdef/x"} {
		if _, err := s.Stat(ctx, "demo", k); !errors.Is(err, files.ErrBlobNotFound) {
			t.Fatalf("stat %q: %v", k, err)
		}
		if _, err := s.Get(ctx, "demo", k); !errors.Is(err, files.ErrBlobNotFound) {
			t.Fatalf("get %q: %v", k, err)
		}
	}
}

// failingReader yields n bytes, then fails with err.
type failingReader struct {
	n   int
	err error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, r.err
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

func TestAbortedPutLeavesNothing(t *testing.T) {
	f := startS3(t, "strata")
	s := f.store(t, "strata", "")
	cases := map[string]io.Reader{
		"fails in the first part":   &failingReader{n: 1000, err: errors.New("client went away")},
		"fails after two parts":     &failingReader{n: 2*PartSize + 10, err: errors.New("client went away")},
		"fails at a part's end":     &failingReader{n: PartSize, err: errors.New("client went away")},
		"truncated (unexpectedEOF)": &failingReader{n: PartSize + 10, err: io.ErrUnexpectedEOF},
		"truncated at once":         &failingReader{n: 10, err: io.ErrUnexpectedEOF},
	}
	for name, r := range cases {
		t.Run(name, func(t *testing.T) {
			if _, _, err := s.Put(context.Background(), "demo", r); err == nil {
				t.Fatal("put succeeded")
			}
			if names, uploads := objects(t, s); len(names) != 0 || uploads != 0 {
				t.Fatalf("left behind: %v, %d uploads", names, uploads)
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		r := &cancelAfter{n: PartSize + 100, cancel: cancel}
		if _, _, err := s.Put(ctx, "demo", r); err == nil {
			t.Fatal("put succeeded")
		}
		if names, uploads := objects(t, s); len(names) != 0 || uploads != 0 {
			t.Fatalf("left behind: %v, %d uploads", names, uploads)
		}
	})
}

// cancelAfter cancels its context once n bytes have been read.
type cancelAfter struct {
	n      int
	cancel func()
}

func (r *cancelAfter) Read(p []byte) (int, error) {
	if r.n <= 0 {
		r.cancel()
		return len(p), nil
	}
	k := min(len(p), r.n)
	r.n -= k
	return k, nil
}

// genReader yields n deterministic pseudo-random bytes without holding
// them.
type genReader struct {
	n, off int64
	state  uint64
}

func (g *genReader) Read(p []byte) (int, error) {
	if g.off >= g.n {
		return 0, io.EOF
	}
	k := int64(len(p))
	if rest := g.n - g.off; k > rest {
		k = rest
	}
	for i := range p[:k] {
		g.state = g.state*6364136223846793005 + 1442695040888963407
		p[i] = byte(g.state >> 56)
	}
	g.off += k
	return int(k), nil
}

func TestLargeStreamedPut(t *testing.T) {
	f := startS3(t, "strata")
	s := f.store(t, "strata", "p/")
	ctx := context.Background()
	const size = 20 << 20
	want := sha256.New()
	if _, err := io.Copy(want, &genReader{n: size}); err != nil {
		t.Fatal(err)
	}
	key, n, err := s.Put(ctx, "demo", &genReader{n: size})
	if err != nil {
		t.Fatal(err)
	}
	if n != size {
		t.Fatalf("size %d", n)
	}
	// Sent as it was read: one part per PartSize bytes, never the whole.
	if got, min := f.parts.Load(), int64(size/PartSize); got < min {
		t.Fatalf("%d parts uploaded, want at least %d", got, min)
	}
	b, err := s.Get(ctx, "demo", key)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got := sha256.New()
	if _, err := io.Copy(got, b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Fatal("stored bytes differ")
	}
	// A range across a part boundary.
	off := int64(PartSize - 3)
	if _, err := b.Seek(off, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	part := make([]byte, 6)
	if _, err := io.ReadFull(b, part); err != nil {
		t.Fatal(err)
	}
	ref := make([]byte, off+6)
	if _, err := io.ReadFull(&genReader{n: size}, ref); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(part, ref[off:]) {
		t.Fatalf("range across parts %x, want %x", part, ref[off:])
	}
}

func TestCheck(t *testing.T) {
	f := startS3(t, "strata")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.store(t, "missing", "").Check(ctx); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing bucket: %v", err)
	}
	f.srv.Close()
	if err := f.store(t, "strata", "").Check(ctx); err == nil || !strings.Contains(err.Error(), "not reachable") {
		t.Fatalf("closed server: %v", err)
	}
}

func TestNewRefusesBadEndpoint(t *testing.T) {
	for _, e := range []string{"ftp://x", "s3.example.org:9000", "https://x/some/path"} {
		if _, err := New(Options{Endpoint: e, Bucket: "b"}); err == nil {
			t.Fatalf("endpoint %q accepted", e)
		}
	}
}

// TestHelperSeesUnfinishedUploads guards the other tests: an upload left
// open is seen.
func TestHelperSeesUnfinishedUploads(t *testing.T) {
	f := startS3(t, "strata")
	s := f.store(t, "strata", "")
	ctx := context.Background()
	if _, err := (minio.Core{Client: s.client}).NewMultipartUpload(ctx, s.bucket, "demo/x", minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, uploads := objects(t, s); uploads != 1 {
		t.Fatalf("%d uploads seen, want 1", uploads)
	}
}
