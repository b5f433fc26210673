package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestSignedFileLinks: the url and thumb_url of a file entry work without
// an Authorization header (an <img>, a new tab), for that path, app and
// user only, and stop when the user's sessions end (CONTRACT §10).
func TestSignedFileLinks(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		site := f.create(t, f.writer, "sites", `{"name":"Links"}`)
		id1, _ := f.uploadOK(t, f.writer, "sites", site, "a.png", pngPixel)
		id2, _ := f.uploadOK(t, f.writer, "sites", site, "b.txt", []byte("hello"))
		entries := f.recordFiles(t, f.reader, "sites", site)
		var png, txt map[string]any
		for _, x := range entries {
			m := x.(map[string]any)
			switch m["id"] {
			case float64(id1):
				png = m
			case float64(id2):
				txt = m
			}
		}
		url := png["url"].(string)
		thumb := png["thumb_url"].(string)
		tOf := func(u string) string { return u[strings.Index(u, "?t=")+3:] }
		cases := []struct {
			name, url, auth string
			status          int
			code            string
		}{
			{"download by its link", url, "", 200, ""},
			{"thumbnail by its link", thumb, "", 200, ""},
			{"another file's path with this t", fmt.Sprintf("/dig/api/file/%d/download?t=%s", id2, tOf(url)), "", 401, "invalid_link_token"},
			{"the thumbnail's t on the download", fmt.Sprintf("/dig/api/file/%d/download?t=%s", id1, tOf(thumb)), "", 401, "invalid_link_token"},
			{"tampered", url[:len(url)-3] + "xyz", "", 401, "invalid_link_token"},
			{"no t and no header", fmt.Sprintf("/dig/api/file/%d/download", id1), "", 401, "unauthenticated"},
			{"a t on a route that takes none", fmt.Sprintf("/dig/api/files?t=%s", tOf(url)), "", 401, "unauthenticated"},
			{"the header wins over a bad t", fmt.Sprintf("/dig/api/file/%d/download?t=bad", id2), f.reader, 200, ""},
		}
		for _, tc := range cases {
			rec := f.send(t, tc.auth, "GET", tc.url, nil, nil)
			if rec.Code != tc.status || (tc.code != "" && !strings.Contains(rec.Body.String(), `"code":"`+tc.code+`"`)) {
				t.Fatalf("%s: %d %s", tc.name, rec.Code, rec.Body.String())
			}
		}
		if u := txt["url"].(string); !strings.Contains(u, "?t=") || txt["thumb_url"] != nil {
			t.Fatalf("text file entry: %v", txt)
		}
		// An API key's answers carry plain paths: a script sends its key.
		code, m := f.do(t, f.readerKey, "GET", fmt.Sprintf("/dig/api/record/sites/%d", site), "")
		if code != 200 || strings.Contains(fmt.Sprint(m["files"]), "?t=") {
			t.Fatalf("API key entries: %d %v", code, m["files"])
		}
		// Ending the reader's sessions ends their links.
		if _, err := f.app.DB.Exec(t.Context(), `UPDATE `+f.app.DB.Sys("users")+` SET token_version = token_version + 1 WHERE email = ?`, "reader@example.org"); err != nil {
			t.Fatal(err)
		}
		if rec := f.send(t, "", "GET", url, nil, nil); rec.Code != 401 || !strings.Contains(rec.Body.String(), `"token_invalidated"`) {
			t.Fatalf("after sessions ended: %d %s", rec.Code, rec.Body.String())
		}
	})
}

// TestExportLink: POST /records/{tb}/export-link signs the export with its
// query for the caller; the link works without a header, for that table.
func TestExportLink(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		f.create(t, f.writer, "sites", `{"name":"Linked export"}`)
		code, m := f.do(t, f.reader, "POST", "/dig/api/records/sites/export-link?format=csv", "")
		if code != 200 {
			t.Fatalf("export-link: %d %v", code, m)
		}
		url := m["url"].(string)
		rec := f.send(t, "", "GET", url, nil, nil)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Linked export") {
			t.Fatalf("export by link: %d %s", rec.Code, rec.Body.String())
		}
		other := strings.Replace(url, "/records/sites/", "/records/units/", 1)
		if rec := f.send(t, "", "GET", other, nil, nil); rec.Code != 401 {
			t.Fatalf("another table's export with this t: %d", rec.Code)
		}
		if code, m := f.do(t, f.readerKey, "POST", "/dig/api/records/sites/export-link", ""); code != 400 || m["code"] != "session_required" {
			t.Fatalf("API key: %d %v", code, m)
		}
		// BraDypUS's client opens the bare export and backup download in a
		// new tab with no credential (its server has a cookie session,
		// Strata none): refused, the signed link being the way (docs/api.md,
		// BraDypUS clients).
		for _, u := range []string{"/dig/api/records/sites/export?format=csv", "/dig/api/backup/dig_20260101_000000_abcdef.tar.gz/download"} {
			if code, m := f.do(t, "", "GET", u, ""); code != 401 || m["code"] != "unauthenticated" || m["reason"] != "missing" {
				t.Fatalf("%s without a credential: %d %v", u, code, m)
			}
		}
	})
}
