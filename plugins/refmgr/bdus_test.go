package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

// TestZoteroRoutesMirror: every /refmgr route has its /zotero twin with
// the same method, access, timeout and job flag, and nothing else.
func TestZoteroRoutesMirror(t *testing.T) {
	m := newPlugin(func(string) string { return "" }).Manifest()
	type shape struct {
		access string
		ms     int64
		job    bool
	}
	refmgr, zot := map[string]shape{}, map[string]shape{}
	for _, r := range m.Routes {
		s := shape{r.Access, r.Timeout.Milliseconds(), r.Job}
		switch {
		case strings.HasPrefix(r.Path, "/refmgr/"):
			refmgr[r.Method+" "+strings.TrimPrefix(r.Path, "/refmgr/")] = s
		case strings.HasPrefix(r.Path, "/zotero/"):
			zot[r.Method+" "+strings.TrimPrefix(r.Path, "/zotero/")] = s
		default:
			t.Errorf("route %s %s of neither family", r.Method, r.Path)
		}
	}
	if len(refmgr) != 10 || len(zot) != len(refmgr) {
		t.Fatalf("%d refmgr routes, %d zotero routes", len(refmgr), len(zot))
	}
	for k, s := range refmgr {
		if zot[k] != s {
			t.Errorf("%s: zotero %v, refmgr %v", k, zot[k], s)
		}
	}
}

// TestRenameAnswer: keys at any depth, codes at any depth, the body's
// names in messages; HTML and numbers as written; not JSON left alone.
func TestRenameAnswer(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"libs":[{"id":1,"refmgr_id":"42","name":"a"}],"status":"success"}`, `{"libs":[{"id":1,"name":"a","zotero_id":"42"}],"status":"success"}`},
		{`{"link":{"refmgr_key":"K","refmgr_url":null,"refmgr_version":12345678901234567890,"full_citation":"<i>T</i> & co"}}`,
			`{"link":{"full_citation":"<i>T</i> & co","zotero_key":"K","zotero_url":null,"zotero_version":12345678901234567890}}`},
		{`{"failed":[{"code":"refmgr_unavailable","refmgr_key":"K"}],"updated":0}`, `{"failed":[{"code":"zotero_unavailable","zotero_key":"K"}],"updated":0}`},
		{`{"status":"error","code":"invalid_refmgr_id","message":"refmgr_id is the library's numeric id"}`,
			`{"code":"invalid_zotero_id","message":"zotero_id is the library's numeric id","status":"error"}`},
		// A value is never renamed, only the keys and codes.
		{`{"notes":"refmgr_key refmgr_api_error","code":"lib_not_found"}`, `{"code":"lib_not_found","notes":"refmgr_key refmgr_api_error"}`},
		{`not json`, `not json`},
	} {
		if got := string(renameAnswer([]byte(c.in))); got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// TestRenameBody: BraDypUS's names become the handler's; the handler's
// sent to this family are not read; a body that is not an object is
// passed on for the handler to refuse.
func TestRenameBody(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"type":"group","zotero_id":"42","name":"x"}`, `{"name":"x","refmgr_id":"42","type":"group"}`},
		{`{"zotero_key":"K","record_id":7}`, `{"record_id":7,"refmgr_key":"K"}`},
		{`{"refmgr_key":"K","record_id":7}`, `{"record_id":7}`},
		{`[1]`, `[1]`},
		{``, ``},
	} {
		if got := string(renameBody([]byte(c.in))); got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// TestZoteroFamily: BraDypUS's client's calls on the fake host, each
// answer with the keys the client reads.
func TestZoteroFamily(t *testing.T) {
	e := newEnv(t)
	e.z.AddLibrary("group", "336647", "Rome", "")
	e.z.PutItem("group", "336647", "AAAA1111", "Andrea Carandini", "1985", "Settefinestre")
	e.z.PutItem("group", "336647", "BBBB2222", "Mary Beard", "2008", "Pompeii")

	// ZoteroLibsPanel: api_key and citation_style null when left empty.
	m := e.call("POST", "/zotero/lib", `{"type":"group","zotero_id":"336647","name":"Rome","api_key":null,"citation_style":null}`, plugintest.Admin, 200)
	if m["status"] != "success" || m["code"] != "ok_lib_added" {
		t.Fatalf("add lib: %v", m)
	}
	lib := int64(m["id"].(float64))
	libs := e.call("GET", "/zotero/libs", "", plugintest.Admin, 200)["libs"].([]any)
	if l := libs[0].(map[string]any); len(libs) != 1 || l["zotero_id"] != "336647" || l["refmgr_id"] != nil || l["has_api_key"] != false ||
		l["citation_style"] != "chicago-author-date" || l["type"] != "group" || l["name"] != "Rome" || num(l["id"]) != lib {
		t.Fatalf("libs: %v", libs)
	}
	if m := e.call("POST", "/zotero/lib", `{"type":"group","zotero_id":"abc","name":"x"}`, plugintest.Admin, 400); m["code"] != "invalid_zotero_id" ||
		!strings.Contains(str(m["message"]), "zotero_id") {
		t.Fatalf("bad zotero_id: %v", m)
	}
	// Only BraDypUS's names are read here.
	if m := e.call("POST", "/zotero/lib", `{"type":"group","refmgr_id":"1","name":"x"}`, plugintest.Admin, 400); m["code"] != "parameter_missing" {
		t.Fatalf("refmgr_id on /zotero/lib: %v", m)
	}

	// ZoteroSection: search, link, links, patch, sync, delete.
	res := e.call("GET", fmt.Sprintf("/zotero/search?lib_id=%d&q=pompeii&limit=20", lib), "", plugintest.Writer, 200)["results"].([]any)
	hit := res[0].(map[string]any)
	if len(res) != 1 || hit["key"] != "BBBB2222" || hit["zotero_url"] != "https://www.zotero.org/groups/336647/items/BBBB2222" ||
		num(hit["zotero_version"]) < 1 || hit["author_year"] != "Beard 2008" || !strings.Contains(str(hit["full_citation"]), "Pompeii") {
		t.Fatalf("search: %v", res)
	}
	m = e.call("POST", "/zotero/link", fmt.Sprintf(`{"tb":"demo_us","record_id":"1","lib_id":%d,"zotero_key":"BBBB2222","sort":0}`, lib), plugintest.Writer, 200)
	if m["status"] != "success" || m["code"] != "ok_link_added" || obj(m, "link")["zotero_key"] != "BBBB2222" {
		t.Fatalf("add link: %v", m)
	}
	id := int64(m["id"].(float64))
	if m := e.call("POST", "/zotero/link", fmt.Sprintf(`{"tb":"us","record_id":1,"lib_id":%d,"zotero_key":"not a key"}`, lib), plugintest.Writer, 400); m["code"] != "invalid_zotero_key" {
		t.Fatalf("bad key: %v", m)
	}
	e.call("PATCH", fmt.Sprintf("/zotero/link/%d", id), `{"pages":"12"}`, plugintest.Writer, 200)
	e.call("PATCH", fmt.Sprintf("/zotero/link/%d", id), `{"sort":3}`, plugintest.Writer, 200)
	links := e.call("GET", "/zotero/links/us/1", "", plugintest.Reader, 200)["links"].([]any)
	l := links[0].(map[string]any)
	if len(links) != 1 || l["zotero_key"] != "BBBB2222" || l["zotero_url"] != "https://www.zotero.org/groups/336647/items/BBBB2222" ||
		l["pages"] != "12" || num(l["sort"]) != 3 || num(l["zotero_version"]) != num(hit["zotero_version"]) || l["refmgr_key"] != nil {
		t.Fatalf("links: %v", links)
	}
	e.z.PutItem("group", "336647", "BBBB2222", "Mary Beard", "2010", "Pompeii (paperback)")
	if m := e.call("POST", "/zotero/sync/us/1", "", plugintest.Writer, 200); m["updated"] != 1.0 || m["detached"] != 0.0 {
		t.Fatalf("record sync: %v", m)
	}
	e.z.DeleteItem("group", "336647", "BBBB2222")
	if m := e.call("POST", "/zotero/sync", "", plugintest.Admin, 200); m["detached"] != 1.0 || m["errors"] != 0.0 || m["updated"] != 0.0 {
		t.Fatalf("sync all: %v", m)
	}
	if m := e.call("DELETE", fmt.Sprintf("/zotero/link/%d", id), "", plugintest.Writer, 200); m["code"] != "ok_link_deleted" {
		t.Fatalf("delete link: %v", m)
	}
	if m := e.call("DELETE", fmt.Sprintf("/zotero/lib/%d", lib), "", plugintest.Admin, 200); m["code"] != "ok_lib_deleted" {
		t.Fatalf("delete lib: %v", m)
	}

	// The record's bibliography carries BraDypUS's names too (its record
	// view reads zotero_key and zotero_url there).
	link := e.addLink(e.addLib(`{"type":"group","refmgr_id":"336647","name":"Rome"}`), 2, "AAAA1111")
	sec, err := e.h.Enrich(pluginsdk.EnrichCall{Section: "bibliography", Table: "us", IDs: []int64{2}, Actor: plugintest.Reader})
	if err != nil {
		t.Fatal(err)
	}
	b := obj(sec[2].(map[string]any), fmt.Sprint(link))
	if b["zotero_key"] != "AAAA1111" || b["zotero_url"] != "https://www.zotero.org/groups/336647/items/AAAA1111" ||
		b["refmgr_key"] != "AAAA1111" || b["refmgr_url"] != b["zotero_url"] || b["lib_name"] != "Rome" {
		t.Fatalf("bibliography: %v", sec)
	}
}

// obj reads an object member of m.
func obj(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}
