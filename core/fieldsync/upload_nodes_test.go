package fieldsync_test

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

	"github.com/strata-archaeo/strata/core/files/s3store"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// fakeS3 starts a real S3 protocol server in process (gofakes3 on its
// memory backend, behind TLS) with one bucket, as core/server's S3 tests
// do, and returns its options.
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

// TestUploadAcrossNodesOnS3: two servers on one database and one S3
// bucket, as behind a load balancer (the second is also what a restart
// is: a new process with nothing in memory). An upload begun on one goes
// on and ends on the other, whose file the first serves byte for byte; the
// bucket holds the finished files only (the parts stay in the database),
// a photo with its thumbnail.
func TestUploadAcrossNodesOnS3(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		o := fakeS3(t, "strata")
		st, err := s3store.New(o)
		if err != nil {
			t.Fatal(err)
		}
		a := newDig(t, e, server.Deps{Files: st})
		find := a.create(t, a.writer, "finds", `{"label":"two nodes"}`)
		// 2.5 MiB: three rows of parts, and a multipart object on S3.
		doc := []byte("%PDF-1.7\n")
		for i := 0; len(doc) < 5<<19; i++ {
			doc = fmt.Appendf(doc, "line %d of the excavation report\n", i)
		}
		img := photo(t, 64, 48)
		a.start(t, a.writer, fmt.Sprintf(`{"upload_id":"report","device_id":"dev","filename":"report.pdf","size":%d,"sha256":%q,"table":"finds","id":%d}`, len(doc), sha(doc), find))
		a.start(t, a.writer, fmt.Sprintf(`{"upload_id":"photo","device_id":"dev","filename":"photo.png","size":%d,"table":"finds","temp_id":"t9"}`, len(img)))
		first := 3 << 19
		a.putOK(t, a.writer, "report", 0, doc[:first])
		a.putOK(t, a.writer, "photo", 0, img[:100])
		if objs := s3Objects(t, o); len(objs) != 0 {
			t.Fatalf("objects while receiving: %v", objs)
		}

		b := newDig(t, e, server.Deps{Files: st, Apps: a.inst.Apps})
		writerB := b.login(t, "writer")
		if st := b.state(t, writerB, "report"); num(st["offset"]) != int64(first) || st["status"] != "receiving" {
			t.Fatalf("the other node's state: %v", st)
		}
		done := b.putOK(t, writerB, "report", int64(first), doc[first:])
		if done["status"] != "linked" {
			t.Fatalf("ended on the other node: %v", done)
		}
		if got := a.download(t, a.reader, num(done["file_id"])); !bytes.Equal(got, doc) {
			t.Fatalf("the first node serves %d bytes, %d were sent", len(got), len(doc))
		}
		// The photo waits on B for its record, which a push on A makes.
		if u := b.putOK(t, writerB, "photo", 100, img[100:]); u["status"] != "waiting_for_record" {
			t.Fatalf("photo: %v", u)
		}
		made := a.create(t, a.writer, "finds", `{"label":"made offline"}`)
		a.remember(t, "writer", "dev", "t9", "finds", made)
		linked := a.state(t, a.writer, "photo")
		if linked["status"] != "linked" {
			t.Fatalf("photo after the push: %v", linked)
		}
		if got := b.download(t, writerB, num(linked["file_id"])); !bytes.Equal(got, img) {
			t.Fatal("the photo's bytes differ")
		}
		objs := s3Objects(t, o)
		if len(objs) != 3 { // the report, the photo and its thumbnail
			t.Fatalf("objects: %v", objs)
		}
		for _, k := range objs {
			if !strings.HasPrefix(k, "nodes/dig/") {
				t.Fatalf("object name %q", k)
			}
		}
		if n := a.count(t, "sync_upload_parts"); n != 0 {
			t.Fatalf("%d parts kept", n)
		}
	})
}
