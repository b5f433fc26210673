package fieldsync_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestUploadResumesAndLinks: a photo sent in three parts with an
// interruption (a part sent twice, a part at a wrong offset, the rest
// resumed from GET's offset) ends linked to its record with its exact
// bytes, as the file the files area's own upload makes of the same bytes
// (same checks and metadata, one change of the record each).
func TestUploadResumesAndLinks(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		d := newDig(t, e, server.Deps{})
		find := d.create(t, d.writer, "finds", `{"label":"bowl"}`)
		img := photo(t, 120, 90)
		p1, p2, p3 := img[:len(img)/3], img[len(img)/3:2*len(img)/3], img[2*len(img)/3:]
		before := d.changesOf(t, "finds", find)
		u := d.start(t, d.writer, fmt.Sprintf(`{"upload_id":"0b6f0c7e-1","device_id":"tablet-1","filename":"bowl north.png","size":%d,"sha256":%q,"table":"finds","id":%d,"description":"north face"}`,
			len(img), sha(img), find))
		if u["status"] != "receiving" || num(u["offset"]) != 0 || num(u["size"]) != int64(len(img)) {
			t.Fatalf("start: %v", u)
		}
		// The same start again (its answer was lost) is the same upload.
		if again := d.start(t, d.writer, fmt.Sprintf(`{"upload_id":"0b6f0c7e-1","device_id":"tablet-1","filename":"bowl north.png","size":%d,"sha256":%q,"table":"finds","id":%d,"description":"north face"}`,
			len(img), sha(img), find)); num(again["offset"]) != 0 || again["status"] != "receiving" {
			t.Fatalf("start again: %v", again)
		}
		if got := d.putOK(t, d.writer, "0b6f0c7e-1", 0, p1); num(got["offset"]) != int64(len(p1)) || got["status"] != "receiving" {
			t.Fatalf("part 1: %v", got)
		}
		// The answer was lost: part 1 again, then part 3 at the offset the
		// device wrongly believed.
		for _, c := range []struct {
			at   int64
			part []byte
		}{{0, p1}, {int64(len(p1) + len(p2)), p3}} {
			rec := d.put(d.writer, "0b6f0c7e-1", c.at, c.part)
			m := decode(t, rec)
			if rec.Code != 409 || m["code"] != "upload_offset_mismatch" || num(m["offset"]) != int64(len(p1)) {
				t.Fatalf("part at %d: %d %v, want 409 upload_offset_mismatch at %d", c.at, rec.Code, m, len(p1))
			}
		}
		st := d.state(t, d.writer, "0b6f0c7e-1")
		if st["status"] != "receiving" || num(st["offset"]) != int64(len(p1)) {
			t.Fatalf("state: %v", st)
		}
		at := num(st["offset"])
		d.putOK(t, d.writer, "0b6f0c7e-1", at, p2)
		done := d.putOK(t, d.writer, "0b6f0c7e-1", at+int64(len(p2)), p3)
		fileID := num(done["file_id"])
		if done["status"] != "linked" || fileID == 0 || num(done["offset"]) != int64(len(img)) {
			t.Fatalf("last part: %v", done)
		}
		// Sent again after the end: the same answer, nothing changes.
		for _, at := range []int64{at + int64(len(p2)), 0} {
			if again := d.putOK(t, d.writer, "0b6f0c7e-1", at, p3); again["status"] != "linked" || num(again["file_id"]) != fileID {
				t.Fatalf("part after the end: %v", again)
			}
		}
		if got := d.download(t, d.reader, fileID); !bytes.Equal(got, img) {
			t.Fatalf("downloaded %d bytes, sent %d", len(got), len(img))
		}
		if n := d.count(t, "sync_upload_parts"); n != 0 {
			t.Fatalf("%d parts kept after the link", n)
		}
		if n := d.changesOf(t, "finds", find) - before; n != 1 {
			t.Fatalf("the link made %d changes of the record, want 1", n)
		}
		// The same bytes through the files area's upload: the same file.
		code, m := d.postFile(t, d.writer, "finds", find, "bowl north.png", img)
		if code != 200 {
			t.Fatalf("files area upload: %d %v", code, m)
		}
		if n := d.changesOf(t, "finds", find) - before; n != 2 {
			t.Fatalf("the files area's upload made %d changes of the record, want 1", n-1)
		}
		files := d.recordFiles(t, d.reader, "finds", find)
		if len(files) != 2 || num(files[0]["id"]) != fileID {
			t.Fatalf("record files: %v", files)
		}
		synced, direct := files[0], files[1]
		if synced["description"] != "north face" || direct["description"] != nil {
			t.Fatalf("descriptions: %v / %v", synced["description"], direct["description"])
		}
		for _, k := range []string{"filename", "ext", "mime", "size", "sha256", "is_image", "creator", "printable", "keywords"} {
			if fmt.Sprint(synced[k]) != fmt.Sprint(direct[k]) {
				t.Errorf("%s: the synced file has %v, the files area's %v", k, synced[k], direct[k])
			}
		}
		if synced["thumb_url"] == nil || synced["is_image"] != true || synced["filename"] != "bowl north" {
			t.Errorf("synced file: %v", synced)
		}
	})
}

// TestUploadLinksByTempID: an upload naming a record the device created
// offline waits for it; once the push has made it (rememberTempID stands
// for the push), the next GET links it. Another device's temp_id of the
// same name, and one naming a record of another table, do not link.
func TestUploadLinksByTempID(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		d := newDig(t, e, server.Deps{})
		img := photo(t, 40, 30)
		start := func(uploadID, device, tempID string) {
			u := d.start(t, d.writer, fmt.Sprintf(`{"upload_id":%q,"device_id":%q,"filename":"f.png","size":%d,"table":"finds","temp_id":%q}`, uploadID, device, len(img), tempID))
			if u["temp_id"] != tempID || u["id"] != nil {
				t.Fatalf("start: %v", u)
			}
			if got := d.putOK(t, d.writer, uploadID, 0, img); got["status"] != "waiting_for_record" || num(got["offset"]) != int64(len(img)) {
				t.Fatalf("whole before its record: %v", got)
			}
		}
		start("u-a", "dev-a", "t1")
		start("u-b", "dev-b", "t1")
		start("u-c", "dev-a", "t2")
		if st := d.state(t, d.writer, "u-a"); st["status"] != "waiting_for_record" {
			t.Fatalf("still waiting: %v", st)
		}
		find := d.create(t, d.writer, "finds", `{"label":"made offline"}`)
		site := d.create(t, d.writer, "sites", `{"name":"made offline"}`)
		d.remember(t, "writer", "dev-a", "t1", "finds", find)
		d.remember(t, "writer", "dev-a", "t2", "sites", site)
		// Another account's device of the same name is not the writer's.
		d.remember(t, "writer2", "dev-b", "t1", "finds", find)
		st := d.state(t, d.writer, "u-a")
		if st["status"] != "linked" || num(st["file_id"]) == 0 {
			t.Fatalf("after the push: %v", st)
		}
		if got := d.download(t, d.writer, num(st["file_id"])); !bytes.Equal(got, img) {
			t.Fatal("the linked file's bytes differ")
		}
		if st := d.state(t, d.writer, "u-b"); st["status"] != "waiting_for_record" {
			t.Fatalf("another device's temp_id: %v", st)
		}
		if st := d.state(t, d.writer, "u-c"); st["status"] != "failed" || st["code"] != "temp_id_other_table" {
			t.Fatalf("a temp_id of another table: %v", st)
		}
		files := d.recordFiles(t, d.writer, "finds", find)
		if len(files) != 1 || num(files[0]["id"]) != num(st["file_id"]) {
			t.Fatalf("record files: %v", files)
		}
		if len(d.recordFiles(t, d.writer, "sites", site)) != 0 {
			t.Fatal("the site got a file")
		}
	})
}

// TestUploadBelongsToItsAccount: another account cannot see, resume or
// take over an upload (the answers are those of an upload that does not
// exist), and its own upload of the same id is its own.
func TestUploadBelongsToItsAccount(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		d := newDig(t, e, server.Deps{})
		find := d.create(t, d.writer, "finds", `{"label":"mine"}`)
		body := fmt.Sprintf(`{"upload_id":"shared-id","device_id":"dev","filename":"a.txt","size":10,"table":"finds","id":%d}`, find)
		d.start(t, d.writer, body)
		d.putOK(t, d.writer, "shared-id", 0, []byte("01234"))
		for _, who := range []string{d.writer2, d.admin} {
			code, m := d.do(t, who, "GET", uploads+"/shared-id", "")
			missing, _ := d.do(t, who, "GET", uploads+"/no-such-id", "")
			if code != 404 || m["code"] != "upload_not_found" || missing != 404 {
				t.Fatalf("GET another's upload: %d %v", code, m)
			}
			rec := d.put(who, "shared-id", 5, []byte("56789"))
			if m := decode(t, rec); rec.Code != 404 || m["code"] != "upload_not_found" {
				t.Fatalf("PUT to another's upload: %d %v", rec.Code, m)
			}
		}
		// writer2's own upload of that id is a new one, at 0.
		if u := d.start(t, d.writer2, body); num(u["offset"]) != 0 {
			t.Fatalf("writer2's upload: %v", u)
		}
		d.putOK(t, d.writer2, "shared-id", 0, []byte("abcdefghij"))
		st := d.state(t, d.writer, "shared-id")
		if num(st["offset"]) != 5 || st["status"] != "receiving" {
			t.Fatalf("the writer's upload after writer2's: %v", st)
		}
		done := d.putOK(t, d.writer, "shared-id", 5, []byte("56789"))
		if got := d.download(t, d.writer, num(done["file_id"])); string(got) != "0123456789" {
			t.Fatalf("the writer's file: %q", got)
		}
	})
}

// TestUploadConcurrentSamePart: the same part sent four times at once is
// kept once: one request takes it, the others learn the offset (or, for
// the last part, the upload's end).
func TestUploadConcurrentSamePart(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		d := newDig(t, e, server.Deps{})
		find := d.create(t, d.writer, "finds", `{"label":"twice"}`)
		// Three parts of the server's size each (more than one row), sent
		// in two requests.
		content := bytes.Repeat([]byte("strata part "), 3<<20/12)
		half := len(content) / 2
		d.start(t, d.writer, fmt.Sprintf(`{"upload_id":"race","device_id":"dev","filename":"race.bin","size":%d,"sha256":%q,"table":"finds","id":%d}`, len(content), sha(content), find))
		for round, part := range [][]byte{content[:half], content[half:]} {
			at := int64(round * half)
			answers := make([]map[string]any, 4)
			codes := make([]int, len(answers))
			var wg sync.WaitGroup
			for i := range answers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rec := d.put(d.writer, "race", at, part)
					codes[i], answers[i] = rec.Code, decode(t, rec)
				}()
			}
			wg.Wait()
			took := 0
			for i, c := range codes {
				switch {
				case c == 409 && num(answers[i]["offset"]) > at && num(answers[i]["offset"]) <= at+int64(len(part)):
					// The offset as it stood: the winner may still be
					// sending the part.
				case c == 200 && round == 0:
					took++
				case c == 200 && round == 1:
					// After the last part, a part sent again answers the
					// upload's end: the same file for every request.
					if u := answers[i]["upload"].(map[string]any); u["status"] != "linked" {
						t.Fatalf("round 1: %v", answers[i])
					}
				default:
					t.Fatalf("round %d: %d %v", round, c, answers[i])
				}
			}
			if round == 0 && took != 1 {
				t.Fatalf("%d requests took the first part (codes %v), want 1", took, codes)
			}
		}
		st := d.state(t, d.writer, "race")
		if st["status"] != "linked" {
			t.Fatalf("state: %v", st)
		}
		if got := d.download(t, d.writer, num(st["file_id"])); !bytes.Equal(got, content) {
			t.Fatalf("downloaded %d bytes, sent %d", len(got), len(content))
		}
		if files := d.recordFiles(t, d.writer, "finds", find); len(files) != 1 {
			t.Fatalf("%d files linked", len(files))
		}
	})
}

// TestUploadLinkedAfterARealPush: the photo of a find created offline,
// uploaded before the device's push reached the server, is linked once
// POST /sync/push has created the find under its temp_id; the same
// temp_id pushed by another account's device of the same name links
// nothing of this one.
func TestUploadLinkedAfterARealPush(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		d := newDig(t, e, server.Deps{})
		img := photo(t, 50, 40)
		d.start(t, d.writer, fmt.Sprintf(`{"upload_id":"p1","device_id":"tablet-a","filename":"find.png","size":%d,"sha256":%q,"table":"finds","temp_id":"f1"}`, len(img), sha(img)))
		if u := d.putOK(t, d.writer, "p1", 0, img); u["status"] != "waiting_for_record" {
			t.Fatalf("before the push: %v", u)
		}
		push := func(who string) int64 {
			m := d.must(t, 200, who, "POST", "/dig/api/sync/push",
				`{"mutations":[{"mutation_id":"tablet-a-1","device_id":"tablet-a","seq":1,"table":"finds","temp_id":"f1","set":{"label":"found offline"}}]}`)
			ids := m["temp_ids"].(map[string]any)
			return num(ids["f1"])
		}
		other := push(d.writer2)
		if st := d.state(t, d.writer, "p1"); st["status"] != "waiting_for_record" {
			t.Fatalf("after another account's push: %v", st)
		}
		find := push(d.writer)
		if find == 0 || find == other {
			t.Fatalf("pushed finds %d and %d", find, other)
		}
		st := d.state(t, d.writer, "p1")
		if st["status"] != "linked" {
			t.Fatalf("after the push: %v", st)
		}
		files := d.recordFiles(t, d.writer, "finds", find)
		if len(files) != 1 || num(files[0]["id"]) != num(st["file_id"]) || files[0]["sha256"] != sha(img) {
			t.Fatalf("the pushed find's files: %v", files)
		}
		if len(d.recordFiles(t, d.writer2, "finds", other)) != 0 {
			t.Fatal("the other account's find got the photo")
		}
	})
}

// cutReader yields its bytes, then fails with err as a dropped
// connection does.
type cutReader struct {
	r   io.Reader
	err error
}

func (c *cutReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		return n, c.err
	}
	return n, err
}

// TestUploadCutPartKeepsWhatCame: a part whose connection drops after
// 1.5 MiB (a body shorter than its Content-Length, or a read error) keeps
// what came, GET says so, and the device resumes from there.
func TestUploadCutPartKeepsWhatCame(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		d := newDig(t, e, server.Deps{})
		find := d.create(t, d.writer, "finds", `{"label":"cut"}`)
		content := bytes.Repeat([]byte("0123456789abcdef"), 2<<20/16)
		for i, c := range []struct {
			err    error
			status int // what the cut request is answered (if anyone still listens)
		}{
			{io.ErrUnexpectedEOF, 200},
			{errors.New("connection reset by peer"), 400},
		} {
			id := fmt.Sprintf("cut-%d", i)
			d.start(t, d.writer, fmt.Sprintf(`{"upload_id":%q,"device_id":"dev","filename":"cut.bin","size":%d,"sha256":%q,"table":"finds","id":%d}`, id, len(content), sha(content), find))
			req := httptest.NewRequest("PUT", uploads+"/"+id, &cutReader{bytes.NewReader(content[:3<<19]), c.err})
			req.ContentLength = int64(len(content))
			req.Header.Set("Authorization", d.writer)
			req.Header.Set("Upload-Offset", "0")
			rec := httptest.NewRecorder()
			d.h.ServeHTTP(rec, req)
			if m := decode(t, rec); rec.Code != c.status || (c.status == 400 && m["code"] != "upload_part_interrupted") {
				t.Fatalf("%v: %d %v", c.err, rec.Code, m)
			}
			st := d.state(t, d.writer, id)
			if num(st["offset"]) != 3<<19 || st["status"] != "receiving" {
				t.Fatalf("%v: after the cut: %v", c.err, st)
			}
			done := d.putOK(t, d.writer, id, 3<<19, content[3<<19:])
			if done["status"] != "linked" {
				t.Fatalf("%v: resumed: %v", c.err, done)
			}
			if got := d.download(t, d.writer, num(done["file_id"])); !bytes.Equal(got, content) {
				t.Fatalf("%v: downloaded %d bytes, sent %d", c.err, len(got), len(content))
			}
		}
	})
}
