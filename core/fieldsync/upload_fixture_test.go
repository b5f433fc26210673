package fieldsync_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/fieldsync"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// dig is an instance with an app "dig" (a table finds) and its accounts,
// for the upload tests.
type dig struct {
	inst    *testenv.Instance
	app     *apps.App
	h       http.Handler
	admin   string // super admin's Authorization
	writer  string
	writer2 string
	self    string // a self_writer: only their own records
	reader  string
	ids     map[string]int64 // user ids by the name above
}

func newDig(t *testing.T, e store.Engine, deps server.Deps, opts ...func(*config.Config)) *dig {
	t.Helper()
	inst := testenv.NewInstanceWith(t, e, deps, opts...)
	d := &dig{inst: inst, h: inst.Server, ids: map[string]int64{}}
	if deps.Apps != nil {
		a, err := deps.Apps.Get(context.Background(), "dig")
		if err != nil {
			t.Fatal(err)
		}
		d.app = a
		return d
	}
	d.app = testenv.NewApp(t, inst.Apps, "dig")
	ctx, now := context.Background(), time.Now().UTC()
	if _, err := schema.CreateTable(ctx, d.app.DB, schema.TableDef{Name: "finds", Label: "Finds"}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.CreateTable(ctx, d.app.DB, schema.TableDef{Name: "sites", Label: "Sites"}, now); err != nil {
		t.Fatal(err)
	}
	for _, tf := range []struct{ tb, name string }{{"finds", "label"}, {"finds", "keep"}, {"sites", "name"}} {
		if _, err := schema.AddField(ctx, d.app.DB, tf.tb, schema.FieldDef{Name: tf.name, Label: tf.name}, now); err != nil {
			t.Fatal(err)
		}
	}
	d.admin = testenv.Login(t, d.h, "dig", "admin@example.org", testenv.Password)
	for _, u := range []struct {
		dst   *string
		name  string
		level int
	}{{&d.writer, "writer", auth.Writer}, {&d.writer2, "writer2", auth.Writer}, {&d.self, "self", auth.SelfWriter}, {&d.reader, "reader", auth.Reader}} {
		d.ids[u.name] = testenv.NewUser(t, d.app, u.name, u.name+"@example.org", u.level).ID
		*u.dst = testenv.Login(t, d.h, "dig", u.name+"@example.org", testenv.Password)
	}
	return d
}

// login signs in on this instance (another node shares the accounts).
func (d *dig) login(t *testing.T, name string) string {
	t.Helper()
	email := name + "@example.org"
	if name == "admin" {
		email = "admin@example.org"
	}
	return testenv.Login(t, d.h, "dig", email, testenv.Password)
}

// send makes one request and returns the recorder.
func (d *dig) send(who, method, path string, body []byte, headers map[string]string) *httptest.ResponseRecorder {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	if body == nil {
		req.ContentLength = 0
	}
	req.Header.Set("Authorization", who)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	d.h.ServeHTTP(rec, req)
	return rec
}

// do sends JSON (or nothing) and decodes the answer.
func (d *dig) do(t *testing.T, who, method, path, body string) (int, map[string]any) {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	rec := d.send(who, method, path, b, map[string]string{"Content-Type": "application/json"})
	return rec.Code, decode(t, rec)
}

func decode(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("not JSON: %d %q", rec.Code, rec.Body.String())
	}
	return m
}

// must is do that expects status.
func (d *dig) must(t *testing.T, status int, who, method, path, body string) map[string]any {
	t.Helper()
	code, m := d.do(t, who, method, path, body)
	if code != status {
		t.Fatalf("%s %s: %d %v, want %d", method, path, code, m, status)
	}
	return m
}

// create makes a record of tb as who.
func (d *dig) create(t *testing.T, who, tb, core string) int64 {
	t.Helper()
	m := d.must(t, 200, who, "POST", "/dig/api/record/"+tb, `{"core":`+core+`}`)
	return int64(m["id"].(float64))
}

const uploads = "/dig/api/sync/uploads"

// start begins an upload and returns the answer's upload object.
func (d *dig) start(t *testing.T, who, body string) map[string]any {
	t.Helper()
	m := d.must(t, 200, who, "POST", uploads, body)
	return m["upload"].(map[string]any)
}

// put sends part at offset.
func (d *dig) put(who, uploadID string, offset int64, part []byte) *httptest.ResponseRecorder {
	return d.send(who, "PUT", uploads+"/"+uploadID, part, map[string]string{"Upload-Offset": strconv.FormatInt(offset, 10),
		"Content-Type": "application/offset+octet-stream"})
}

// putOK sends part at offset and expects 200; it returns the upload.
func (d *dig) putOK(t *testing.T, who, uploadID string, offset int64, part []byte) map[string]any {
	t.Helper()
	rec := d.put(who, uploadID, offset, part)
	m := decode(t, rec)
	if rec.Code != 200 {
		t.Fatalf("PUT %s at %d: %d %v", uploadID, offset, rec.Code, m)
	}
	return m["upload"].(map[string]any)
}

// state is GET's upload object.
func (d *dig) state(t *testing.T, who, uploadID string) map[string]any {
	t.Helper()
	return d.must(t, 200, who, "GET", uploads+"/"+uploadID, "")["upload"].(map[string]any)
}

// download reads a file's bytes through the files API.
func (d *dig) download(t *testing.T, who string, fileID int64) []byte {
	t.Helper()
	rec := d.send(who, "GET", fmt.Sprintf("/dig/api/file/%d/download", fileID), nil, nil)
	if rec.Code != 200 {
		t.Fatalf("download %d: %d %s", fileID, rec.Code, rec.Body.String())
	}
	return rec.Body.Bytes()
}

// recordFiles are the files section of a record as who reads it.
func (d *dig) recordFiles(t *testing.T, who, tb string, id int64) []map[string]any {
	t.Helper()
	m := d.must(t, 200, who, "GET", fmt.Sprintf("/dig/api/record/%s/%d", tb, id), "")
	var out []map[string]any
	for _, f := range m["files"].([]any) {
		out = append(out, f.(map[string]any))
	}
	return out
}

// postFile uploads content through the files area's own route.
func (d *dig) postFile(t *testing.T, who, tb string, id int64, name string, content []byte) (int, map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part, _ := w.CreateFormFile("file", name)
	part.Write(content)
	w.Close()
	rec := d.send(who, "POST", fmt.Sprintf("/dig/api/record/%s/%d/file", tb, id), buf.Bytes(), map[string]string{"Content-Type": w.FormDataContentType()})
	return rec.Code, decode(t, rec)
}

// changesOf counts the change log's rows of a record.
func (d *dig) changesOf(t *testing.T, tb string, id int64) int {
	t.Helper()
	var n int
	if err := d.app.DB.QueryRow(context.Background(), `SELECT COUNT(*) FROM `+d.app.DB.Sys("changes")+` WHERE tb = ? AND record_id = ?`, tb, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// count counts the rows of a system table.
func (d *dig) count(t *testing.T, sys string) int {
	t.Helper()
	var n int
	if err := d.app.DB.QueryRow(context.Background(), `SELECT COUNT(*) FROM `+d.app.DB.Sys(sys)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// remember stands for the push that created record id as who's device's
// tempID.
func (d *dig) remember(t *testing.T, user, device, tempID, tb string, id int64) {
	t.Helper()
	if err := fieldsync.RememberTempID(context.Background(), d.app.DB, "user:"+strconv.FormatInt(d.ids[user], 10), device, tempID, tb, id, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
}

// photo is a PNG of w×h pixels that no two calls with other sizes share.
func photo(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 7), uint8(y * 13), uint8(x ^ y), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}
