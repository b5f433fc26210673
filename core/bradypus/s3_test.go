package bradypus_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"

	"github.com/strata-archaeo/strata/core/files/s3store"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// pngBytes is a small real PNG image (a thumbnail can be made of it).
func pngBytes(t testing.TB) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	for x := range 4 {
		img.Set(x, 1, color.RGBA{R: 200, G: 60, B: 20, A: 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fakeS3 is a real S3 protocol server in process (gofakes3 on its memory
// backend, behind TLS, as core/server's S3 tests start it) with one
// bucket; it returns the store's options and a lister of the bucket.
func fakeS3(t *testing.T) (s3store.Options, func() []string) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("strata"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	t.Cleanup(srv.Close)
	o := s3store.Options{Endpoint: srv.URL, Bucket: "strata", Region: "us-east-1", AccessKey: "k", SecretKey: "s",
		Prefix: "node/", PathStyle: true, Transport: srv.Client().Transport}
	list := func() []string {
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
	return o, list
}

// TestMajorUpgradeOnS3: with the instance's files on S3, the upgrade
// stores the files' bytes (and the PNG's thumbnail) in the bucket, where
// they download from after it; an upgrade that fails after storing them
// leaves the bucket as it found it.
func TestMajorUpgradeOnS3(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		o, objects := fakeS3(t)
		st, err := s3store.New(o)
		if err != nil {
			t.Fatal(err)
		}
		v := newEnvFiles(t, e, false, st)
		// The failure comes from a record, after the files were stored.
		makeFolder(t, filepath.Join(v.data, "bradypus"), "broken", fixture{records: 4, noPlugins: true, png: true, badValue: "heavy"})
		code, body := v.do(t, "POST", "/broken/api/upgrade/major", upgradeBody(superEmail, superPwd), nil)
		if code != 400 || body["code"] != "upgrade_failed" || !strings.Contains(body["detail"].(string), "heavy") {
			t.Fatalf("broken: %d %v", code, body)
		}
		if objs := objects(); len(objs) != 0 {
			t.Fatalf("the failed upgrade left objects in the bucket: %v", objs)
		}

		makeFolder(t, filepath.Join(v.data, "bradypus"), "dig", fixture{records: 4, noPlugins: true, png: true})
		code, body = v.do(t, "POST", "/dig/api/upgrade/major", upgradeBody(superEmail, superPwd), nil)
		if code != 200 || body["code"] != "upgrade_complete" {
			t.Fatalf("upgrade: %d %v", code, body)
		}
		if got := counts(body); got["bdus_files"] != [2]float64{3, 3} || got["bdus_file_links"] != [2]float64{4, 4} {
			t.Errorf("counts: %v", got)
		}
		objs := objects()
		if len(objs) != 4 { // three files and the PNG's thumbnail
			t.Fatalf("objects: %v", objs)
		}
		for _, k := range objs {
			if !strings.HasPrefix(k, "node/dig/") {
				t.Errorf("object %q is not the application's", k)
			}
		}
		if n := storedBlobs(t, v.data, "dig"); n != 0 {
			t.Errorf("%d files went to the local store too", n)
		}
		boss := testenv.Bearer(testenv.Login(t, v.inst.Server, "dig", superEmail, superPwd))
		for id, want := range map[string][]byte{"1": pngBytes(t), "2": fileBytes(2), "3": fileBytes(3)} {
			dl := v.raw(t, "GET", "/dig/api/file/"+id+"/download", "", boss)
			if dl.Code != 200 || !bytes.Equal(dl.Body.Bytes(), want) {
				t.Errorf("download file %s: %d %q", id, dl.Code, dl.Body.String())
			}
		}
		if dl := v.raw(t, "GET", "/dig/api/file/1/download", "", boss); dl.Header().Get("Content-Type") != "image/png" {
			t.Errorf("file 1 type: %v", dl.Header())
		}
		th := v.raw(t, "GET", "/dig/api/file/1/thumb", "", boss)
		if _, format, err := image.Decode(bytes.NewReader(th.Body.Bytes())); th.Code != 200 || err != nil {
			t.Errorf("thumbnail of file 1: %d %s %v", th.Code, format, err)
		}
	})
}
