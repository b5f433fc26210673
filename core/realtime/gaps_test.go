package realtime_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestRelationsLinksAndFilesRaiseUpdates: a stratigraphic relation, a
// manual link (added or removed) is an update of both its records; a
// file's upload, metadata edit and replacement an update of the record it
// is linked to. A subscriber of those records gets each, with the record
// as a read as that subscriber answers it (showing the new section).
func TestRelationsLinksAndFilesRaiseUpdates(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		h := newHarness(t, e, server.Deps{})
		if _, err := schema.PutTable(t.Context(), h.app.DB, "finds", schema.TableConfig{RS: schema.RSOn(true)}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		admin := h.login(t, "admin@example.org")
		testenv.NewUser(t, h.app, "Reader", "reader@example.org", auth.Reader)
		reader := h.login(t, "reader@example.org")
		a := h.save(t, admin, 0, `{"label":"A"}`)
		b := h.save(t, admin, 0, `{"label":"B"}`)
		other := h.save(t, admin, 0, `{"label":"other"}`)
		c := openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": reader})
		h.subscribe(t, reader, c.id, fmt.Sprintf(`[{"id":"a","table":"finds","record":%d},{"id":"b","table":"finds","record":%d},{"id":"o","table":"finds","record":%d}]`, a, b, other))

		// expect reads one update per id (one change each, in any order)
		// and checks each record against a read, and has what check wants.
		expect := func(what string, check func(rec map[string]any) bool, ids ...int64) {
			t.Helper()
			var got []int64
			last := int64(0)
			for range ids {
				ev := c.next(t, 10*time.Second)
				id, _ := ev.data["id"].(float64)
				if ev.name != "update" || ev.id <= last {
					t.Fatalf("%s: %s %d %s", what, ev.name, ev.id, ev.raw)
				}
				last = ev.id
				got = append(got, int64(id))
				_, read := h.do(t, http.MethodGet, "/dig/api/record/finds/"+strconv.FormatInt(int64(id), 10), reader, "")
				delete(read, "status")
				rec, _ := ev.data["record"].(map[string]any)
				g, r := recordJSON(rec), recordJSON(read)
				if g != r {
					t.Fatalf("%s: the event's record\n%s\na read\n%s", what, g, r)
				}
				if !check(rec) {
					t.Fatalf("%s: the record does not show the change: %s", what, g)
				}
			}
			sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
			want := append([]int64(nil), ids...)
			sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s: updates of %v, want %v", what, got, want)
			}
		}
		section := func(name string, n int) func(map[string]any) bool {
			return func(rec map[string]any) bool {
				m, _ := rec[name].(map[string]any)
				l, _ := rec[name].([]any)
				return len(m)+len(l) == n
			}
		}
		ok := func(code int, body map[string]any) map[string]any {
			t.Helper()
			if code != 200 {
				t.Fatalf("%d %v", code, body)
			}
			return body
		}

		// A stratigraphic relation, added then removed.
		m := ok(h.do(t, http.MethodPost, "/dig/api/record/finds/rs", admin, fmt.Sprintf(`{"first":%d,"relation":5,"second":%d}`, a, b)))
		expect("relation added", section("rs", 1), a, b)
		rel := int64(m["id"].(float64))
		ok(h.do(t, http.MethodDelete, "/dig/api/rs/"+strconv.FormatInt(rel, 10), admin, ""))
		expect("relation removed", section("rs", 0), a, b)

		// A manual link, added then removed.
		m = ok(h.do(t, http.MethodPost, "/dig/api/manual-link", admin, fmt.Sprintf(`{"tb_one":"finds","id_one":%d,"tb_two":"finds","id_two":%d}`, b, a)))
		expect("link added", section("manualLinks", 1), a, b)
		link := int64(m["link"].(map[string]any)["id"].(float64))
		ok(h.do(t, http.MethodDelete, "/dig/api/manual-link/"+strconv.FormatInt(link, 10), admin, ""))
		expect("link removed", section("manualLinks", 0), a, b)

		// A file: upload, metadata, replacement.
		up := h.multipart(t, admin, fmt.Sprintf("/dig/api/record/finds/%d/file", a), "note.txt", []byte("first"))
		file := int64(up["file"].(map[string]any)["id"].(float64))
		expect("file uploaded", section("files", 1), a)
		described := func(rec map[string]any) bool {
			fs, _ := rec["files"].([]any)
			if len(fs) != 1 {
				return false
			}
			f, _ := fs[0].(map[string]any)
			return f["description"] == "a sherd"
		}
		ok(h.do(t, http.MethodPatch, "/dig/api/file/"+strconv.FormatInt(file, 10), admin, `{"description":"a sherd"}`))
		expect("file described", described, a)
		h.multipart(t, admin, "/dig/api/file/"+strconv.FormatInt(file, 10)+"/replace", "other.txt", []byte("second"))
		expect("file replaced", func(rec map[string]any) bool {
			fs, _ := rec["files"].([]any)
			f, _ := fs[0].(map[string]any)
			return described(rec) && f["filename"] == "other"
		}, a)

		// Nothing else came: the next event is the next change of other.
		h.save(t, admin, other, `{"note":"end"}`)
		if ev := c.next(t, 10*time.Second); ev.name != "update" || int64(ev.data["id"].(float64)) != other {
			t.Fatalf("after the writes: %s %s", ev.name, ev.raw)
		}
	})
}

// multipart posts one file as the multipart field "file".
func (h *harness) multipart(t *testing.T, token, path, name string, content []byte) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part, err := w.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	part.Write(content)
	w.Close()
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+path, &buf)
	req.Header.Set("Authorization", token)
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := h.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
	return out
}

// TestAPIKeyStreamEndsWhenTheKeyGoes: an API key's stream ends with
// unauthorized when the key is revoked, or deleted; another key's stream
// and a user's whose id is the revoked key's id go on.
func TestAPIKeyStreamEndsWhenTheKeyGoes(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		h := newHarness(t, e, server.Deps{})
		admin := h.login(t, "admin@example.org")
		var keys []int64
		var tokens []string
		for range 3 {
			k, plain, err := auth.CreateAPIKey(t.Context(), h.app.DB, "key", auth.Reader, nil, time.Now().UTC())
			if err != nil {
				t.Fatal(err)
			}
			keys, tokens = append(keys, k.ID), append(tokens, "Bearer "+plain)
		}
		var admins *client
		streams := make([]*client, 3)
		for i, tok := range tokens {
			streams[i] = openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": tok})
			h.subscribe(t, tok, streams[i].id, `[{"id":"all","table":"finds"}]`)
		}
		// The admin's user id is the first key's id: a key's change must
		// not end a user's stream, nor the other way round.
		var me auth.User
		if err := h.app.DB.Gorm.WithContext(t.Context()).Where("email = ?", "admin@example.org").Take(&me).Error; err != nil {
			t.Fatal(err)
		}
		if me.ID != keys[0] {
			t.Fatalf("the admin is user %d, the first key %d: the test wants them equal", me.ID, keys[0])
		}
		admins = openStream(t, h.hc, h.streamURL(), map[string]string{"Authorization": admin})
		h.subscribe(t, admin, admins.id, `[{"id":"all","table":"finds"}]`)

		created := func(who []*client) {
			t.Helper()
			id := h.save(t, admin, 0, `{"label":"x"}`)
			for _, c := range who {
				if ev := c.next(t, 10*time.Second); ev.name != "create" || int64(ev.data["id"].(float64)) != id {
					t.Fatalf("create: %s %s", ev.name, ev.raw)
				}
			}
		}
		ended := func(c *client) {
			t.Helper()
			if ev := c.next(t, 10*time.Second); ev.name != "unauthorized" {
				t.Fatalf("after the key went: %s %s", ev.name, ev.raw)
			}
			if ev := c.next(t, 10*time.Second); !ev.isEOF {
				t.Fatalf("the stream went on: %+v", ev)
			}
		}
		created([]*client{streams[0], streams[1], streams[2], admins})
		if code, body := h.do(t, http.MethodPost, "/dig/api/api-key/"+strconv.FormatInt(keys[0], 10)+"/revoke", admin, ""); code != 200 {
			t.Fatalf("revoke: %d %v", code, body)
		}
		ended(streams[0])
		created([]*client{streams[1], streams[2], admins})
		if code, body := h.do(t, http.MethodDelete, "/dig/api/api-key/"+strconv.FormatInt(keys[1], 10), admin, ""); code != 200 {
			t.Fatalf("delete: %d %v", code, body)
		}
		ended(streams[1])
		created([]*client{streams[2], admins})
		// The revoked key opens no stream.
		if code, _ := h.do(t, http.MethodGet, "/dig/api/realtime", tokens[0], ""); code != http.StatusUnauthorized {
			t.Fatalf("a revoked key's stream: %d", code)
		}
	})
}

// signedToken matches a signed link's token. Its expiry counts from the
// second the record was rendered, so an event rendered at the save and a
// read made a moment later may carry tokens a second apart.
var signedToken = regexp.MustCompile(`\?t=[^"]*`)

// recordJSON is a record as JSON with its links' tokens blanked, to compare
// what an event carried with a read.
func recordJSON(rec map[string]any) string {
	b, _ := json.Marshal(rec)
	return signedToken.ReplaceAllString(string(b), "?t=")
}
