package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"mime/multipart"
	"net/http/httptest"
	"net/textproto"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// pngPixel is a 1×1 PNG.
var pngPixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde\x00\x00\x00\x0cIDATx\x9cc\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef\x00\x00\x00\x00IEND\xaeB`\x82")

// send sends a request and returns the raw answer.
func (f *digFixture) send(t *testing.T, who, method, url string, body []byte, h map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, url, bytes.NewReader(body))
	if who != "" {
		req.Header.Set("Authorization", who)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	f.inst.Server.ServeHTTP(rec, req)
	return rec
}

// upload posts content as the multipart field to url.
func (f *digFixture) upload(t *testing.T, who, url, field, name string, content []byte) (int, map[string]any) {
	t.Helper()
	return f.uploadWith(t, who, url, map[string]string{"note": "ignored"}, field, name, content)
}

// uploadWith sends form fields (before the file) and one file.
func (f *digFixture) uploadWith(t *testing.T, who, url string, fields map[string]string, field, name string, content []byte) (int, map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	part, err := w.CreateFormFile(field, name)
	if err != nil {
		t.Fatal(err)
	}
	part.Write(content)
	w.Close()
	rec := f.send(t, who, "POST", url, buf.Bytes(), map[string]string{"Content-Type": w.FormDataContentType()})
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("%s: not JSON: %d %s", url, rec.Code, rec.Body.String())
	}
	return rec.Code, m
}

// uploadOK uploads and returns the file id and link id.
func (f *digFixture) uploadOK(t *testing.T, who, tb string, id int64, name string, content []byte) (int64, int64) {
	t.Helper()
	code, m := f.upload(t, who, fmt.Sprintf("/dig/api/record/%s/%d/file", tb, id), "file", name, content)
	if code != 200 || m["code"] != "ok_file_uploaded" {
		t.Fatalf("upload %s: %d %v", name, code, m)
	}
	file := m["file"].(map[string]any)
	return int64(file["id"].(float64)), int64(file["link_id"].(float64))
}

// recordFiles reads the files of a full record.
func (f *digFixture) recordFiles(t *testing.T, who, tb string, id int64) []any {
	t.Helper()
	m := f.must(t, 200, who, "GET", fmt.Sprintf("/dig/api/record/%s/%d", tb, id), "")
	return m["files"].([]any)
}

// blobs lists the stored blobs of the instance.
func (f *digFixture) blobs(t *testing.T) []string {
	t.Helper()
	var out []string
	root := filepath.Join(f.inst.Config.DataDir, "files")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestFileLifecycle(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		site := f.create(t, f.writer, "sites", `{"name":"Pompeii"}`)
		if got := f.recordFiles(t, f.writer, "sites", site); len(got) != 0 {
			t.Fatalf("files at start: %v", got)
		}
		id1, link1 := f.uploadOK(t, f.writer, "sites", site, "pianta.png", pngPixel)
		id2, link2 := f.uploadOK(t, f.writer, "sites", site, "relazione.pdf", []byte("%PDF-1.7\nbody"))
		got := f.recordFiles(t, f.reader, "sites", site)
		if len(got) != 2 {
			t.Fatalf("files: %v", got)
		}
		first := got[0].(map[string]any)
		if first["id"] != float64(id1) || first["link_id"] != float64(link1) || first["ext"] != "png" || first["filename"] != "pianta" ||
			first["is_image"] != true || !strings.HasPrefix(first["url"].(string), fmt.Sprintf("/dig/api/file/%d/download?t=", id1)) {
			t.Fatalf("first entry: %v", first)
		}
		for _, k := range []string{"description", "keywords", "printable", "link_sort", "thumb_url"} {
			if _, ok := first[k]; !ok {
				t.Fatalf("entry lacks %s: %v", k, first)
			}
		}
		// Sort reverses the order; unknown ids are ignored.
		f.must(t, 200, f.writer, "POST", "/dig/api/files/sort", fmt.Sprintf(`{"order":[%d,%d,9999]}`, link2, link1))
		got = f.recordFiles(t, f.writer, "sites", site)
		if got[0].(map[string]any)["link_id"] != float64(link2) {
			t.Fatalf("sort not applied: %v", got)
		}
		f.must(t, 200, f.writer, "POST", "/dig/api/files/sort", fmt.Sprintf(`{"ids":["%d","%d"]}`, link1, link2))
		for _, s := range []testenv.Scenario{
			{Name: "sort without order", Method: "POST", URL: "/dig/api/files/sort", Body: `{}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`}},
			{Name: "sort with an empty order", Method: "POST", URL: "/dig/api/files/sort", Body: `{"order":[]}`, ExpectedStatus: 400, ExpectedContent: []string{`"code":"parameter_missing"`}},
			{Name: "reader may not sort", Method: "POST", URL: "/dig/api/files/sort", Body: fmt.Sprintf(`{"order":[%d]}`, link1), Headers: testenv.Bearer(f.reader), ExpectedStatus: 403},
			{Name: "list", URL: "/dig/api/files?per_page=1", ExpectedStatus: 200, ExpectedContent: []string{`"total":2`, `"page":1`, `"per_page":1`, `"links":[{`}},
			{Name: "search", URL: "/dig/api/files?search=RELAZ", ExpectedStatus: 200, ExpectedContent: []string{`"total":1`, `"filename":"relazione"`}},
			{Name: "no orphans", URL: "/dig/api/files?orphans_only=1", ExpectedStatus: 200, ExpectedContent: []string{`"total":0`}},
			{Name: "patch", Method: "PATCH", URL: fmt.Sprintf("/dig/api/file/%d", id1), Body: `{"description":"Pianta di fase","keywords":"pianta fase","printable":true}`,
				ExpectedStatus: 200, ExpectedContent: []string{`"code":"ok_file_updated"`, `"description":"Pianta di fase"`, `"printable":true`}},
			{Name: "patch unknown", Method: "PATCH", URL: "/dig/api/file/9999999", Body: `{"description":"x"}`, ExpectedStatus: 404, ExpectedContent: []string{`"code":"record_not_found"`}},
			{Name: "reader may not patch", Method: "PATCH", URL: fmt.Sprintf("/dig/api/file/%d", id1), Body: `{"description":"x"}`, Headers: testenv.Bearer(f.reader), ExpectedStatus: 403},
			{Name: "link again", Method: "POST", URL: fmt.Sprintf("/dig/api/record/sites/%d/link-file", site), Body: fmt.Sprintf(`{"fileId":%d}`, id1),
				ExpectedStatus: 200, ExpectedContent: []string{`"code":"ok_file_linked"`, `"link_id":`, `"is_image":true`}},
			{Name: "link unknown file", Method: "POST", URL: fmt.Sprintf("/dig/api/record/sites/%d/link-file", site), Body: `{"fileId":9999999}`, ExpectedStatus: 404, ExpectedContent: []string{`"code":"record_not_found"`}},
			{Name: "unlink unknown", Method: "DELETE", URL: "/dig/api/file-link/9999999", ExpectedStatus: 404, ExpectedContent: []string{`"code":"record_not_found"`}},
			{Name: "no thumb for a PDF", URL: fmt.Sprintf("/dig/api/file/%d/thumb", id2), ExpectedStatus: 404, ExpectedContent: []string{`"code":"no_thumbnail"`}},
			{Name: "delete unknown", Method: "DELETE", URL: "/dig/api/file/9999999", ExpectedStatus: 404},
		} {
			if s.Headers == nil {
				s.Headers = testenv.Bearer(f.writer)
			}
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
		// Download: type, ETag, Range, conditional.
		url := fmt.Sprintf("/dig/api/file/%d/download", id1)
		rec := f.send(t, f.reader, "GET", url, nil, nil)
		etag := rec.Header().Get("ETag")
		if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), pngPixel) || rec.Header().Get("Content-Type") != "image/png" || len(etag) != 66 ||
			rec.Header().Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(rec.Header().Get("Content-Disposition"), `inline; filename="pianta.png"`) {
			t.Fatalf("download: %d %v", rec.Code, rec.Header())
		}
		rec = f.send(t, f.reader, "GET", url, nil, map[string]string{"Range": "bytes=1-3"})
		if rec.Code != 206 || rec.Body.String() != "PNG" || rec.Header().Get("Content-Range") != fmt.Sprintf("bytes 1-3/%d", len(pngPixel)) {
			t.Fatalf("range: %d %q %v", rec.Code, rec.Body.String(), rec.Header())
		}
		if rec = f.send(t, f.reader, "GET", url, nil, map[string]string{"If-None-Match": etag}); rec.Code != 304 {
			t.Fatalf("if-none-match: %d", rec.Code)
		}
		// Replace keeps id, metadata and links.
		code, m := f.upload(t, f.writer, fmt.Sprintf("/dig/api/file/%d/replace", id1), "file", "nuova.jpg", []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"))
		if code != 200 || m["code"] != "ok_file_replaced" || m["ext"] != "jpg" || m["filename"] != "nuova" || m["is_image"] != true {
			t.Fatalf("replace: %d %v", code, m)
		}
		got = f.recordFiles(t, f.writer, "sites", site)
		if len(got) != 3 || got[0].(map[string]any)["description"] != "Pianta di fase" || got[0].(map[string]any)["ext"] != "jpg" {
			t.Fatalf("after replace: %v", got)
		}
		if n := len(f.blobs(t)); n != 2 {
			t.Fatalf("blobs after replace: %d", n)
		}
		// Unlink keeps the file; deleting it removes links and blob.
		f.must(t, 200, f.writer, "DELETE", fmt.Sprintf("/dig/api/file-link/%d", link2), "")
		if rec := f.send(t, f.super, "GET", fmt.Sprintf("/dig/api/file/%d/download", id2), nil, nil); rec.Code != 200 {
			t.Fatalf("orphan downloaded by an admin: %d", rec.Code)
		}
		m = f.must(t, 200, f.super, "GET", "/dig/api/files?orphans_only=1", "")
		if m["total"] != 1.0 {
			t.Fatalf("orphans: %v", m)
		}
		if m = f.must(t, 200, f.writer, "GET", "/dig/api/files?orphans_only=1", ""); m["total"] != 0.0 {
			t.Fatalf("orphans are for admins: %v", m)
		}
		if code, _ := f.do(t, f.writer, "GET", fmt.Sprintf("/dig/api/file/%d/download", id2), ""); code != 404 {
			t.Fatalf("orphan downloaded by a writer: %d", code)
		}
		f.must(t, 200, f.writer, "DELETE", fmt.Sprintf("/dig/api/file/%d", id1), "")
		f.must(t, 200, f.super, "DELETE", fmt.Sprintf("/dig/api/file/%d", id2), "")
		if got := f.recordFiles(t, f.writer, "sites", site); len(got) != 0 {
			t.Fatalf("files after delete: %v", got)
		}
		if b := f.blobs(t); len(b) != 0 {
			t.Fatalf("blobs after delete: %v", b)
		}
		// Deleting a record drops its links, not its files.
		id3, _ := f.uploadOK(t, f.writer, "sites", site, "c.pdf", []byte("%PDF-1.4"))
		f.must(t, 200, f.writer, "DELETE", fmt.Sprintf("/dig/api/record/sites/%d", site), "")
		m = f.must(t, 200, f.super, "GET", "/dig/api/files?orphans_only=1", "")
		if m["total"] != 1.0 || m["files"].([]any)[0].(map[string]any)["id"] != float64(id3) {
			t.Fatalf("orphan after record delete: %v", m)
		}
	})
}

func TestFileUploadBadInputs(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDigWith(t, e, func(c *config.Config) { c.MaxUploadBytes = 4096 })
		site := f.create(t, f.writer, "sites", `{"name":"Pompeii"}`)
		url := fmt.Sprintf("/dig/api/record/sites/%d/file", site)
		for _, c := range []struct {
			name, who, url, field, file string
			content                     []byte
			status                      int
			code                        string
		}{
			{"zero bytes", f.writer, url, "file", "empty.txt", nil, 400, "empty_file"},
			{"wrong form field", f.writer, url, "upload", "a.png", pngPixel, 400, "parameter_missing"},
			{"over the limit", f.writer, url, "file", "big.bin", bytes.Repeat([]byte("x"), 5000), 413, "too_large"},
			{"far over the limit", f.writer, url, "file", "big.bin", bytes.Repeat([]byte("x"), 2<<20), 413, "too_large"},
			{"reader", f.reader, url, "file", "a.png", pngPixel, 403, "not_enough_privilege"},
			{"unknown record", f.writer, "/dig/api/record/sites/99999/file", "file", "a.png", pngPixel, 404, "record_not_found"},
			{"unknown table", f.writer, "/dig/api/record/nope/1/file", "file", "a.png", pngPixel, 404, ""},
			{"self_writer on another's record", f.self, url, "file", "a.png", pngPixel, 403, "not_enough_privilege"},
		} {
			t.Run(c.name, func(t *testing.T) {
				code, m := f.upload(t, c.who, c.url, c.field, c.file, c.content)
				if code != c.status || (c.code != "" && m["code"] != c.code) || m["status"] != "error" {
					t.Fatalf("%d %v", code, m)
				}
			})
		}
		code, m := f.do(t, f.writer, "POST", url, `{"file":"x"}`)
		if code != 400 || m["code"] != "parameter_missing" {
			t.Fatalf("JSON body: %d %v", code, m)
		}
		if m = f.must(t, 200, f.super, "GET", "/dig/api/files", ""); m["total"] != 0.0 {
			t.Fatalf("rows after failed uploads: %v", m)
		}
		if b := f.blobs(t); len(b) != 0 {
			t.Fatalf("blobs after failed uploads: %v", b)
		}
		// A raw NUL breaks the multipart header: 400. Encoded (RFC 7578's
		// filename*), it arrives and is dropped from the name.
		if code, m := f.upload(t, f.writer, url, "file", "pass\x00wd.png", pngPixel); code != 400 || m["code"] != "invalid_multipart" {
			t.Fatalf("raw NUL: %d %v", code, m)
		}
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		part, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Disposition": {`form-data; name="file"; filename*=UTF-8''..%2F..%2Fetc%2Fpass%00wd.png`},
			"Content-Type": {"image/png"}})
		part.Write(pngPixel)
		mw.Close()
		if rec := f.send(t, f.writer, "POST", url, buf.Bytes(), map[string]string{"Content-Type": mw.FormDataContentType()}); rec.Code != 200 {
			t.Fatalf("encoded hostile name: %d %s", rec.Code, rec.Body.String())
		}
		id, _ := f.uploadOK(t, f.writer, "sites", site, "../../etc/passwd.png", pngPixel)
		for _, g := range f.recordFiles(t, f.writer, "sites", site) {
			if got := g.(map[string]any); got["filename"] != "passwd" || got["ext"] != "png" {
				t.Fatalf("hostile name: %v", got)
			}
		}
		for _, b := range f.blobs(t) {
			if strings.Contains(b, "passwd") || !strings.HasPrefix(b, filepath.Join(f.inst.Config.DataDir, "files", "dig")) {
				t.Fatalf("blob path %s", b)
			}
		}
		// A "PNG" that is HTML is served as HTML, as an attachment, in a sandbox.
		evil, _ := f.uploadOK(t, f.writer, "sites", site, "photo.png", []byte("<html><script>alert(document.cookie)</script></html>"))
		rec := f.send(t, f.writer, "GET", fmt.Sprintf("/dig/api/file/%d/download", evil), nil, nil)
		h := rec.Header()
		if rec.Code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || h.Get("Content-Security-Policy") != "sandbox" ||
			!strings.HasPrefix(h.Get("Content-Disposition"), "attachment;") || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("html as png: %d %v", rec.Code, h)
		}
		if m := f.recordFiles(t, f.writer, "sites", site)[2].(map[string]any); m["is_image"] != false {
			t.Fatalf("html as png is an image: %v", m)
		}
		// A non-ASCII name travels as filename* (RFC 6266).
		uni, _ := f.uploadOK(t, f.writer, "sites", site, "scavo “2024”.pdf", []byte("%PDF-1.4"))
		rec = f.send(t, f.writer, "GET", fmt.Sprintf("/dig/api/file/%d/download", uni), nil, nil)
		if d := rec.Header().Get("Content-Disposition"); d != `inline; filename="scavo _2024_.pdf"; filename*=UTF-8''scavo%20%E2%80%9C2024%E2%80%9D.pdf` {
			t.Fatalf("disposition %q", d)
		}
		_ = id
	})
}

// Reading a file needs read on a record it is linked to, within the row
// subset; a self_writer uploads to its own records only.
func TestFilePrivileges(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		pompeii := f.create(t, f.super, "sites", `{"name":"Pompeii"}`)
		herc := f.create(t, f.super, "sites", `{"name":"Herculaneum"}`)
		own := f.create(t, f.self, "sites", `{"name":"Paestum"}`)
		pFile, _ := f.uploadOK(t, f.writer, "sites", pompeii, "p.png", pngPixel)
		hFile, hLink := f.uploadOK(t, f.writer, "sites", herc, "h.png", pngPixel)
		f.uploadOK(t, f.self, "sites", own, "own.png", pngPixel)
		if code, m := f.upload(t, f.self2, fmt.Sprintf("/dig/api/record/sites/%d/file", own), "file", "x.png", pngPixel); code != 403 {
			t.Fatalf("self_writer on another's record: %d %v", code, m)
		}
		body := `{"table_name":"sites","privilege":30,"subset":{"name":{"_starts_with":"P"}}}`
		f.must(t, 200, f.super, "POST", fmt.Sprintf("/dig/api/user/%d/privileges", f.userID(t, "reader@example.org")), body)
		for _, s := range []testenv.Scenario{
			{Name: "hidden record's file", URL: fmt.Sprintf("/dig/api/file/%d/download", hFile), ExpectedStatus: 404, ExpectedContent: []string{`"code":"record_not_found"`}},
			{Name: "list within the subset", URL: "/dig/api/files", ExpectedStatus: 200, ExpectedContent: []string{`"total":2`, `"filename":"p"`}, NotExpectedContent: []string{`"filename":"h"`}},
			{Name: "search within the subset", URL: "/dig/api/files?q=h", ExpectedStatus: 200, ExpectedContent: []string{`"total":0`}},
			{Name: "reader may not unlink", Method: "DELETE", URL: fmt.Sprintf("/dig/api/file-link/%d", hLink), ExpectedStatus: 403},
			{Name: "reader may not delete", Method: "DELETE", URL: fmt.Sprintf("/dig/api/file/%d", pFile), ExpectedStatus: 403},
			{Name: "no credential", URL: fmt.Sprintf("/dig/api/file/%d/download", pFile), Headers: map[string]string{}, ExpectedStatus: 401},
		} {
			if s.Headers == nil {
				s.Headers = testenv.Bearer(f.reader)
			}
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
		if rec := f.send(t, f.reader, "GET", fmt.Sprintf("/dig/api/file/%d/download", pFile), nil, nil); rec.Code != 200 {
			t.Fatalf("visible record's file: %d", rec.Code)
		}
		// Linking a file the caller cannot see is refused as not found.
		f.must(t, 404, f.self, "POST", fmt.Sprintf("/dig/api/record/sites/%d/link-file", own), fmt.Sprintf(`{"fileId":%d}`, 999999))
		// A self_writer may not delete a file linked to records of others.
		f.must(t, 200, f.writer, "POST", fmt.Sprintf("/dig/api/record/sites/%d/link-file", own), fmt.Sprintf(`{"fileId":%d}`, pFile))
		f.must(t, 403, f.self, "DELETE", fmt.Sprintf("/dig/api/file/%d", pFile), "")
		f.must(t, 200, f.self, "PATCH", fmt.Sprintf("/dig/api/file/%d", pFile), `{"keywords":"ok"}`)
	})
}
