package fieldsync_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestUploadGate: an upload is linked only where the files area's upload
// would link it, with the same codes: a reader, a self_writer on another's
// record, a record outside the caller's row subset and a record that does
// not exist are refused at the start; a temp_id that turns out to name
// such a record fails the upload with that code and links nothing.
func TestUploadGate(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		d := newDig(t, e, server.Deps{})
		others := d.create(t, d.writer, "finds", `{"label":"writer's","keep":"no"}`)
		kept := d.create(t, d.writer, "finds", `{"label":"kept","keep":"yes"}`)
		subset := `{"keep":{"_eq":"yes"}}`
		if err := auth.SaveTablePrivilege(context.Background(), d.app.DB, &auth.TablePrivilege{UserID: d.ids["writer2"], TableName: "finds",
			Privilege: auth.Writer, Subset: &subset}, time.Now()); err != nil {
			t.Fatal(err)
		}
		d.writer2 = d.login(t, "writer2")
		content := []byte("plain text")
		for _, c := range []struct {
			name, who string
			id        int64
		}{
			{"a reader", d.reader, others},
			{"a self_writer on another's record", d.self, others},
			{"a record outside the caller's rows", d.writer2, others},
			{"a record that does not exist", d.writer, 987654},
		} {
			wantCode, want := d.postFile(t, c.who, "finds", c.id, "x.txt", content)
			code, got := d.do(t, c.who, "POST", uploads, fmt.Sprintf(`{"upload_id":"g1","device_id":"d","filename":"x.txt","size":%d,"table":"finds","id":%d}`, len(content), c.id))
			if wantCode < 400 || code != wantCode || got["code"] != want["code"] {
				t.Errorf("%s: %d %v, the files area answers %d %v", c.name, code, got, wantCode, want)
			}
		}
		if n := d.count(t, "sync_uploads"); n != 0 {
			t.Fatalf("%d uploads started by refused requests", n)
		}
		// The subset writer may link to a record within their rows.
		d.start(t, d.writer2, fmt.Sprintf(`{"upload_id":"g2","device_id":"d","filename":"x.txt","size":%d,"table":"finds","id":%d}`, len(content), kept))
		if u := d.putOK(t, d.writer2, "g2", 0, content); u["status"] != "linked" {
			t.Fatalf("within the subset: %v", u)
		}
		// Temp ids mapped (by a push) to records the caller may not change.
		for _, c := range []struct {
			name, user, who, code string
		}{
			{"self_writer", "self", d.self, "not_enough_privilege"},
			{"subset writer", "writer2", d.writer2, "record_not_found"},
		} {
			_, want := d.postFile(t, c.who, "finds", others, "x.txt", content)
			if want["code"] != c.code {
				t.Fatalf("%s: the files area answers %v", c.name, want)
			}
			d.start(t, c.who, fmt.Sprintf(`{"upload_id":"t-%s","device_id":"d","filename":"x.txt","size":%d,"table":"finds","temp_id":"t1"}`, c.user, len(content)))
			d.putOK(t, c.who, "t-"+c.user, 0, content)
			d.remember(t, c.user, "d", "t1", "finds", others)
			st := d.state(t, c.who, "t-"+c.user)
			if st["status"] != "failed" || st["code"] != c.code || st["file_id"] != nil {
				t.Fatalf("%s: %v, want failed %s", c.name, st, c.code)
			}
		}
		if files := d.recordFiles(t, d.admin, "finds", others); len(files) != 0 {
			t.Fatalf("the record got %d files", len(files))
		}
		if n := d.count(t, "files"); n != 1 {
			t.Fatalf("%d files stored, want the subset writer's only", n)
		}
		if n := d.count(t, "sync_upload_parts"); n != 0 {
			t.Fatalf("%d parts kept by finished uploads", n)
		}
	})
}

// TestUploadHostileInputs: starts and parts a careless or hostile client
// sends are refused with a code and keep nothing; a file name with a path
// keeps its last element only, and bytes that are not an image keep the
// type the files area gives them, whatever their name says.
func TestUploadHostileInputs(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		d := newDig(t, e, server.Deps{})
		find := d.create(t, d.writer, "finds", `{"label":"target"}`)
		max := d.inst.Config.MaxUploadBytes
		startBody := func(fields string) string {
			return fmt.Sprintf(`{"upload_id":"h1","device_id":"dev","filename":"a.jpg","size":10,"table":"finds","id":%d%s}`, find, fields)
		}
		for _, c := range []struct {
			name, body string
			status     int
			code       string
		}{
			{"negative size", startBody(`,"size":-10`), 400, "invalid_parameter"},
			{"zero size", startBody(`,"size":0`), 400, "invalid_parameter"},
			{"a size too large", startBody(fmt.Sprintf(`,"size":%d`, max+1)), 413, "upload_too_large"},
			{"a size beyond int64", startBody(`,"size":99999999999999999999999`), 400, "invalid_parameter"},
			{"a size as text", startBody(`,"size":"ten"`), 400, "invalid_parameter"},
			{"no size", `{"upload_id":"h1","device_id":"dev","filename":"a.jpg","table":"finds","id":1}`, 400, "parameter_missing"},
			{"no upload_id", `{"device_id":"dev","filename":"a.jpg","size":10,"table":"finds","id":1}`, 400, "parameter_missing"},
			{"an upload_id with a path", startBody(`,"upload_id":"../x"`), 400, "invalid_parameter"},
			{"an upload_id too long", startBody(`,"upload_id":"` + strings.Repeat("a", 101) + `"`), 400, "invalid_parameter"},
			{"a device_id too long", startBody(`,"device_id":"` + strings.Repeat("d", 101) + `"`), 400, "invalid_parameter"},
			{"no filename", startBody(`,"filename":"  "`), 400, "parameter_missing"},
			{"a filename as an object", startBody(`,"filename":{"a":1}`), 400, "invalid_parameter"},
			{"a bad sha256", startBody(`,"sha256":"xyz"`), 400, "invalid_parameter"},
			{"both id and temp_id", startBody(`,"temp_id":"t1"`), 400, "parameter_missing"},
			{"neither id nor temp_id", `{"upload_id":"h1","device_id":"dev","filename":"a.jpg","size":10,"table":"finds"}`, 400, "parameter_missing"},
			{"a negative id", startBody(`,"id":-1`), 400, "invalid_id"},
			{"an unknown table", startBody(`,"table":"nope"`), 404, "table_not_found"},
			{"a system table", startBody(`,"table":"sys_users"`), 404, "table_not_found"},
			{"a list", `[1,2]`, 400, "invalid_json"},
			{"not JSON", `{`, 400, "invalid_json"},
		} {
			code, m := d.do(t, d.writer, "POST", uploads, c.body)
			if code != c.status || m["code"] != c.code {
				t.Errorf("%s: %d %v, want %d %s", c.name, code, m, c.status, c.code)
			}
		}
		if n := d.count(t, "sync_uploads"); n != 0 {
			t.Fatalf("%d uploads started by refused starts", n)
		}

		// A part past the size, at a wrong or malformed offset.
		text := []byte("not an image at all, whatever its name says")
		d.start(t, d.writer, fmt.Sprintf(`{"upload_id":"h2","device_id":"dev","filename":"../../x.jpg","size":%d,"table":"finds","id":%d}`, len(text), find))
		d.putOK(t, d.writer, "h2", 0, text[:5])
		chunked := func(at string, body []byte) *httptest.ResponseRecorder {
			// No Content-Length: the server finds the excess as it reads.
			req := httptest.NewRequest("PUT", uploads+"/h2", io.MultiReader(bytes.NewReader(body)))
			req.ContentLength = -1
			req.Header.Set("Authorization", d.writer)
			req.Header.Set("Upload-Offset", at)
			rec := httptest.NewRecorder()
			d.h.ServeHTTP(rec, req)
			return rec
		}
		for _, c := range []struct {
			name   string
			rec    *httptest.ResponseRecorder
			status int
			code   string
		}{
			{"no offset", d.send(d.writer, "PUT", uploads+"/h2", text[5:], nil), 400, "invalid_upload_offset"},
			{"a negative offset", d.put(d.writer, "h2", -5, text[5:]), 400, "invalid_upload_offset"},
			{"an offset as text", chunked("five", text[5:]), 400, "invalid_upload_offset"},
			{"an offset past the size", d.put(d.writer, "h2", int64(len(text)+10), text[5:]), 409, "upload_offset_mismatch"},
			{"an offset beyond int64", chunked("99999999999999999999999", text[5:]), 400, "invalid_upload_offset"},
			{"bytes past the size", d.put(d.writer, "h2", 5, append(append([]byte{}, text[5:]...), "overflow"...)), 413, "upload_past_size"},
			{"bytes past the size, chunked", chunked("5", append(append([]byte{}, text[5:]...), "overflow"...)), 413, "upload_past_size"},
			{"another upload", d.put(d.writer, "no-such", 0, text), 404, "upload_not_found"},
		} {
			m := decode(t, c.rec)
			if c.rec.Code != c.status || m["code"] != c.code {
				t.Errorf("%s: %d %v, want %d %s", c.name, c.rec.Code, m, c.status, c.code)
			}
		}
		if st := d.state(t, d.writer, "h2"); num(st["offset"]) != 5 || st["status"] != "receiving" {
			t.Fatalf("after the refused parts: %v", st)
		}
		// The rest, sent chunked, ends it: the name keeps its last
		// element, the type is what the bytes are.
		if rec := chunked("5", text[5:]); rec.Code != 200 {
			t.Fatalf("last part: %d %s", rec.Code, rec.Body.String())
		}
		st := d.state(t, d.writer, "h2")
		if st["status"] != "linked" {
			t.Fatalf("state: %v", st)
		}
		_, direct := d.postFile(t, d.writer, "finds", find, "../../x.jpg", text)
		files := d.recordFiles(t, d.writer, "finds", find)
		if len(files) != 2 || direct["file"] == nil {
			t.Fatalf("files: %v (the files area answered %v)", files, direct)
		}
		for _, k := range []string{"filename", "ext", "mime", "is_image", "size", "thumb_url"} {
			if fmt.Sprint(files[0][k]) != fmt.Sprint(files[1][k]) {
				t.Errorf("%s: the synced file has %v, the files area's %v", k, files[0][k], files[1][k])
			}
		}
		if files[0]["filename"] != "x" || files[0]["ext"] != "jpg" || files[0]["is_image"] != false {
			t.Errorf("synced file: %v", files[0])
		}
		if got := d.download(t, d.writer, num(st["file_id"])); !bytes.Equal(got, text) {
			t.Fatalf("downloaded %q", got)
		}

		// A checksum that does not match: failed, nothing linked, no parts.
		d.start(t, d.writer, fmt.Sprintf(`{"upload_id":"h3","device_id":"dev","filename":"y.txt","size":%d,"sha256":%q,"table":"finds","id":%d}`,
			len(text), strings.ToUpper(sha([]byte("other bytes"))), find))
		if u := d.putOK(t, d.writer, "h3", 0, text); u["status"] != "failed" || u["code"] != "upload_checksum_mismatch" || u["file_id"] != nil {
			t.Fatalf("checksum mismatch: %v", u)
		}
		if u := d.putOK(t, d.writer, "h3", 0, text); u["status"] != "failed" {
			t.Fatalf("a part after the failure: %v", u)
		}
		if files := d.recordFiles(t, d.writer, "finds", find); len(files) != 2 {
			t.Fatalf("%d files after the failed upload", len(files))
		}
		if n := d.count(t, "sync_upload_parts"); n != 0 {
			t.Fatalf("%d parts kept", n)
		}
		// The same upload_id for another file.
		code, m := d.do(t, d.writer, "POST", uploads, fmt.Sprintf(`{"upload_id":"h3","device_id":"dev","filename":"z.txt","size":3,"table":"finds","id":%d}`, find))
		if code != 409 || m["code"] != "upload_id_reused" {
			t.Fatalf("upload_id reused: %d %v", code, m)
		}
		// An image too large to decode is the files area's refusal.
		bomb := photo(t, 8, 8)
		copy(bomb[16:24], []byte{0, 0, 0xff, 0xff, 0, 0, 0xff, 0xff}) // IHDR: 65535×65535
		binary.BigEndian.PutUint32(bomb[29:33], crc32.ChecksumIEEE(bomb[12:29]))
		_, want := d.postFile(t, d.writer, "finds", find, "bomb.png", bomb)
		d.start(t, d.writer, fmt.Sprintf(`{"upload_id":"h4","device_id":"dev","filename":"bomb.png","size":%d,"table":"finds","id":%d}`, len(bomb), find))
		if u := d.putOK(t, d.writer, "h4", 0, bomb); u["status"] != "failed" || u["code"] != want["code"] || want["code"] != "image_too_large" {
			t.Fatalf("image bomb: %v (the files area: %v)", u, want)
		}
	})
}
