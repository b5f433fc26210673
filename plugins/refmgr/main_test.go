package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/plugins/refmgr/zotero/zoterotest"
	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

func TestConformance(t *testing.T) {
	plugintest.Conformance(t, newPlugin(func(string) string { return "" }))
}

// env is a plugin on a fake host, its Zotero base URL the fake
// provider's (through the settings, as the server passes them).
type env struct {
	t    *testing.T
	h    *plugintest.Harness
	host *plugintest.FakeHost
	z    *zoterotest.Fake
}

func newEnv(t *testing.T) *env {
	t.Helper()
	z := zoterotest.New(t)
	host := plugintest.NewFakeHost()
	host.SetRecords("demo", "us", map[string]any{"id": 1}, map[string]any{"id": 2})
	host.SetCatalog("demo", pluginsdk.Catalog{Tables: []pluginsdk.CatalogTable{{Name: "us", Label: "US"}}})
	settings, _ := json.Marshal(map[string]string{"zotero_url": z.URL})
	h := plugintest.New(t, newPlugin(func(string) string { return "" }), plugintest.WithHost(host), plugintest.WithSettings(settings))
	return &env{t: t, h: h, host: host, z: z}
}

// call sends a request and decodes the answer, failing on another status.
func (e *env) call(method, target, body string, actor pluginsdk.Actor, want int) map[string]any {
	e.t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	resp, err := e.h.CallRoute(method, target, b, actor)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, target, err)
	}
	var m map[string]any
	if err := json.Unmarshal(resp.Body, &m); err != nil {
		e.t.Fatalf("%s %s: not JSON: %s", method, target, resp.Body)
	}
	if resp.Status != want {
		e.t.Fatalf("%s %s %s: %d, want %d: %v", method, target, body, resp.Status, want, m)
	}
	return m
}

func (e *env) addLib(body string) int64 {
	e.t.Helper()
	m := e.call("POST", "/refmgr/lib", body, plugintest.Admin, 200)
	if m["code"] != "ok_lib_added" {
		e.t.Fatalf("add lib: %v", m)
	}
	return int64(m["id"].(float64))
}

func (e *env) addLink(lib int64, rec int, key string) int64 {
	e.t.Helper()
	m := e.call("POST", "/refmgr/link", fmt.Sprintf(`{"tb":"us","record_id":"%d","lib_id":%d,"refmgr_key":%q}`, rec, lib, key), plugintest.Writer, 200)
	return int64(m["id"].(float64))
}

func (e *env) links(rec int) []map[string]any {
	e.t.Helper()
	m := e.call("GET", fmt.Sprintf("/refmgr/links/us/%d", rec), "", plugintest.Reader, 200)
	var out []map[string]any
	for _, l := range m["links"].([]any) {
		out = append(out, l.(map[string]any))
	}
	return out
}

func TestLibraries(t *testing.T) {
	e := newEnv(t)
	if m := e.call("GET", "/refmgr/libs", "", plugintest.Admin, 200); len(m["libs"].([]any)) != 0 {
		t.Fatalf("empty: %v", m)
	}
	pub := e.addLib(`{"type":"group","refmgr_id":"336647","name":"Zeta group"}`)
	priv := e.addLib(`{"type":"user","refmgr_id":"12345","name":"Alpha","api_key":"s3cr3tKEY","citation_style":"apa"}`)
	libs := e.call("GET", "/refmgr/libs", "", plugintest.Admin, 200)["libs"].([]any)
	if len(libs) != 2 {
		t.Fatalf("libs: %v", libs)
	}
	a, z := libs[0].(map[string]any), libs[1].(map[string]any)
	if a["name"] != "Alpha" || a["has_api_key"] != true || a["citation_style"] != "apa" || a["type"] != "user" ||
		z["has_api_key"] != false || z["citation_style"] != "chicago-author-date" || z["refmgr_id"] != "336647" {
		t.Fatalf("libs: %v", libs)
	}
	for _, l := range libs {
		if _, has := l.(map[string]any)["api_key"]; has {
			t.Fatalf("api_key answered: %v", l)
		}
	}
	// Stored sealed, never in clear.
	for _, r := range e.host.SystemRows("demo", "libs") {
		if num(r["id"]) == priv && (!strings.HasPrefix(str(r["api_key"]), "fake-sealed:") || strings.Contains(fmt.Sprint(r), "s3cr3tKEY")) {
			t.Fatalf("key stored as %v", r)
		}
		if num(r["id"]) == pub && r["api_key"] != nil {
			t.Fatalf("no key stored as %v", r)
		}
	}
	bad := []struct{ body, code string }{
		{`{"type":"group"}`, "parameter_missing"},
		{`{"type":"team","refmgr_id":"1","name":"x"}`, "invalid_library_type"},
		{`{"type":"group","refmgr_id":"abc","name":"x"}`, "invalid_refmgr_id"},
		{`{"type":"group","refmgr_id":"1","name":"x","citation_style":"a b"}`, "invalid_citation_style"},
		{`{"type":"group","refmgr_id":"1","name":["x"]}`, "invalid_parameter"},
		{`[1]`, "invalid_json"},
	}
	for _, b := range bad {
		if m := e.call("POST", "/refmgr/lib", b.body, plugintest.Admin, 400); m["code"] != b.code {
			t.Errorf("%s: %v, want %s", b.body, m, b.code)
		}
	}
	if n := len(e.host.SystemRows("demo", "libs")); n != 2 {
		t.Fatalf("bad input wrote: %d libs", n)
	}
	e.call("GET", "/refmgr/libs", "", plugintest.Writer, 403)

	// Deleting a library deletes its links, and only them.
	e.z.AddLibrary("group", "336647", "Zeta", "")
	e.z.AddLibrary("user", "12345", "Alpha", "s3cr3tKEY")
	e.addLink(pub, 1, "AAAA1111")
	e.addLink(priv, 1, "BBBB2222")
	if m := e.call("DELETE", fmt.Sprintf("/refmgr/lib/%d", pub), "", plugintest.Admin, 200); m["code"] != "ok_lib_deleted" {
		t.Fatalf("delete: %v", m)
	}
	if ls := e.links(1); len(ls) != 1 || num(ls[0]["lib_id"]) != priv {
		t.Fatalf("links after delete: %v", ls)
	}
	e.call("DELETE", fmt.Sprintf("/refmgr/lib/%d", pub), "", plugintest.Admin, 404)
}

func TestLinksAndBibliography(t *testing.T) {
	e := newEnv(t)
	e.z.AddLibrary("group", "336647", "Rome", "")
	e.z.AddLibrary("user", "12345", "Mine", "k3y")
	e.z.PutItem("group", "336647", "AAAA1111", "Andrea Carandini", "1985", "Settefinestre")
	e.z.PutItem("user", "12345", "BBBB2222", "Mary Beard", "2008", "Pompeii")
	grp := e.addLib(`{"type":"group","refmgr_id":"336647","name":"Rome"}`)
	usr := e.addLib(`{"type":"user","refmgr_id":"12345","name":"Mine","api_key":"k3y","citation_style":"apa"}`)

	m := e.call("POST", "/refmgr/link", fmt.Sprintf(`{"tb":"us","record_id":1,"lib_id":"%d","refmgr_key":"AAAA1111","pages":"10-15","notes":"See ch. 3","sort":"1"}`, grp), plugintest.Writer, 200)
	if m["code"] != "ok_link_added" || m["cached"] != true {
		t.Fatalf("add: %v", m)
	}
	first := int64(m["id"].(float64))
	second := e.addLink(usr, 1, "BBBB2222")
	ls := e.links(1)
	if len(ls) != 2 || num(ls[0]["id"]) != second || num(ls[1]["id"]) != first {
		t.Fatalf("order by sort: %v", ls)
	}
	g, u := ls[1], ls[0]
	if g["author_year"] != "Carandini 1985" || !strings.Contains(str(g["full_citation"]), "<i>Settefinestre</i>") ||
		g["refmgr_url"] != "https://www.zotero.org/groups/336647/items/AAAA1111" || g["pages"] != "10-15" || num(g["refmgr_version"]) != 1 {
		t.Fatalf("group link: %v", g)
	}
	if u["refmgr_url"] != nil || u["author_year"] != "Beard 2008" || !strings.Contains(str(u["full_citation"]), "Beard, M. (2008)") {
		t.Fatalf("user link (apa, private key): %v", u)
	}
	// The private library was asked with its key, opened from the seal.
	sawKey := false
	for _, r := range e.z.Requests() {
		sawKey = sawKey || r.Header.Get("Zotero-API-Key") == "k3y"
	}
	if !sawKey {
		t.Fatal("the API key never reached the provider")
	}

	// An item the library lacks is saved detached; a provider down saves
	// the link without cache.
	missing := e.addLink(grp, 2, "NONE0000")
	e.z.SetDown(true)
	m = e.call("POST", "/refmgr/link", fmt.Sprintf(`{"tb":"us","record_id":2,"lib_id":%d,"refmgr_key":"AAAA1111"}`, grp), plugintest.Writer, 200)
	e.z.SetDown(false)
	if m["cached"] != false {
		t.Fatalf("down: %v", m)
	}
	ls = e.links(2)
	if len(ls) != 2 || num(ls[0]["id"]) != missing || num(ls[0]["detached"]) != 1 || ls[1]["full_citation"] != nil || num(ls[1]["detached"]) != 0 {
		t.Fatalf("record 2: %v", ls)
	}

	// Bibliography section: links by id; {} for a record without any.
	sec, err := e.h.Enrich(pluginsdk.EnrichCall{Section: "bibliography", Table: "us", IDs: []int64{1, 2, 3}, Actor: plugintest.Reader})
	if err != nil {
		t.Fatal(err)
	}
	b1 := sec[1].(map[string]any)
	if len(b1) != 2 || b1[fmt.Sprint(first)].(map[string]any)["refmgr_url"] == nil || len(sec[3].(map[string]any)) != 0 {
		t.Fatalf("bibliography: %v", sec)
	}

	// Edit and delete.
	e.call("PATCH", fmt.Sprintf("/refmgr/link/%d", first), `{"pages":"12-14","notes":"Updated","sort":"0"}`, plugintest.Writer, 200)
	if g := e.links(1)[0]; num(g["id"]) != first || g["pages"] != "12-14" || g["notes"] != "Updated" {
		t.Fatalf("edited: %v", g)
	}
	if m := e.call("PATCH", fmt.Sprintf("/refmgr/link/%d", first), `{"tb":"x"}`, plugintest.Writer, 400); m["code"] != "parameter_missing" {
		t.Fatalf("nothing to change: %v", m)
	}
	e.call("PATCH", fmt.Sprintf("/refmgr/link/%d", first), `{"sort":"x"}`, plugintest.Writer, 400)
	e.call("PATCH", "/refmgr/link/999", `{"sort":1}`, plugintest.Writer, 404)
	if m := e.call("DELETE", fmt.Sprintf("/refmgr/link/%d", first), "", plugintest.Writer, 200); m["code"] != "ok_link_deleted" {
		t.Fatalf("delete: %v", m)
	}
	e.call("DELETE", fmt.Sprintf("/refmgr/link/%d", first), "", plugintest.Writer, 404)

	// Bad input.
	bad := []struct {
		body   string
		status int
		code   string
	}{
		{`{"tb":"us","record_id":1}`, 400, "parameter_missing"},
		{fmt.Sprintf(`{"tb":"us","record_id":1,"lib_id":%d,"refmgr_key":"bad key!"}`, grp), 400, "invalid_refmgr_key"},
		{fmt.Sprintf(`{"tb":"us","record_id":"x","lib_id":%d,"refmgr_key":"AAAA1111"}`, grp), 400, "invalid_parameter"},
		{`{"tb":"us","record_id":1,"lib_id":999,"refmgr_key":"AAAA1111"}`, 404, "lib_not_found"},
		{fmt.Sprintf(`{"tb":"nowhere","record_id":1,"lib_id":%d,"refmgr_key":"AAAA1111"}`, grp), 404, "table_not_found"},
	}
	n := len(e.host.SystemRows("demo", "links"))
	for _, b := range bad {
		if m := e.call("POST", "/refmgr/link", b.body, plugintest.Writer, b.status); m["code"] != b.code {
			t.Errorf("%s: %v, want %s", b.body, m, b.code)
		}
	}
	if len(e.host.SystemRows("demo", "links")) != n {
		t.Fatal("bad input wrote a link")
	}
	e.call("POST", "/refmgr/link", `{}`, plugintest.Reader, 403)
	if ls := e.call("GET", "/refmgr/links/us/77", "", plugintest.Reader, 200)["links"].([]any); len(ls) != 0 {
		t.Fatalf("a record that does not exist has no links: %v", ls)
	}
	// BraDypUS's prefixed table name (<app>_<table>) names the table.
	if ls := e.call("GET", "/refmgr/links/demo_us/2", "", plugintest.Reader, 200)["links"].([]any); len(ls) != 2 {
		t.Fatalf("prefixed table name: %v", ls)
	}
	if m := e.call("GET", "/refmgr/links/other_us/2", "", plugintest.Reader, 404); m["code"] != "table_not_found" {
		t.Fatalf("another prefix: %v", m)
	}
	// A link whose table is gone can still be removed.
	e.host.SetCatalog("demo", pluginsdk.Catalog{})
	e.call("DELETE", fmt.Sprintf("/refmgr/link/%d", missing), "", plugintest.Writer, 200)
}

func TestSearch(t *testing.T) {
	e := newEnv(t)
	e.z.AddLibrary("group", "336647", "Rome", "")
	e.z.PutItem("group", "336647", "AAAA1111", "Andrea Carandini", "1985", "Settefinestre")
	e.z.PutItem("group", "336647", "CCCC3333", "Filippo Coarelli", "2008", "Roma")
	grp := e.addLib(`{"type":"group","refmgr_id":"336647","name":"Rome"}`)
	m := e.call("GET", fmt.Sprintf("/refmgr/search?lib_id=%d&q=roma&limit=20", grp), "", plugintest.Writer, 200)
	res := m["results"].([]any)
	if len(res) != 1 {
		t.Fatalf("search: %v", m)
	}
	r := res[0].(map[string]any)
	if r["key"] != "CCCC3333" || r["author_year"] != "Coarelli 2008" || r["title"] != "Roma" ||
		!strings.Contains(str(r["full_citation"]), "csl-entry") || r["refmgr_url"] != "https://www.zotero.org/groups/336647/items/CCCC3333" {
		t.Fatalf("hit: %v", r)
	}
	for _, c := range []struct {
		q      string
		status int
		code   string
	}{
		{"", 400, "parameter_missing"},
		{"?lib_id=99999&q=pompeii", 404, "lib_not_found"},
		{fmt.Sprintf("?lib_id=%d&q=x&limit=many", grp), 400, "invalid_parameter"},
	} {
		if m := e.call("GET", "/refmgr/search"+c.q, "", plugintest.Writer, c.status); m["code"] != c.code {
			t.Errorf("%q: %v", c.q, m)
		}
	}
	e.z.SetDown(true)
	if m := e.call("GET", fmt.Sprintf("/refmgr/search?lib_id=%d&q=roma", grp), "", plugintest.Writer, 502); m["code"] != "refmgr_api_error" {
		t.Fatalf("down: %v", m)
	}
	e.call("GET", fmt.Sprintf("/refmgr/search?lib_id=%d&q=roma", grp), "", plugintest.Reader, 403)
}

// TestSync: a changed, a deleted and a rate-limited item; one
// representative per (library, key); batches of at most 50 keys.
func TestSync(t *testing.T) {
	e := newEnv(t)
	e.z.AddLibrary("group", "1", "G", "")
	for i := range 60 {
		e.z.PutItem("group", "1", fmt.Sprintf("K%07d", i), "Ann Author", "2001", fmt.Sprintf("Book %d", i))
	}
	lib := e.addLib(`{"type":"group","refmgr_id":"1","name":"G"}`)
	// 60 items on record 1, three of them on record 2 as well.
	for i := range 60 {
		e.addLink(lib, 1, fmt.Sprintf("K%07d", i))
	}
	for _, i := range []int{1, 2, 3} {
		e.addLink(lib, 2, fmt.Sprintf("K%07d", i))
	}
	e.z.PutItem("group", "1", "K0000001", "Ann Author", "2002", "Book 1, second edition") // changed
	e.z.DeleteItem("group", "1", "K0000002")                                              // deleted
	e.z.PutItem("group", "1", "K0000003", "Ann Author", "2003", "Book 3, reprint")        // changed…
	e.z.RateLimit("K0000003", 1)                                                          // …but its citation: 429

	m := e.call("POST", "/refmgr/sync/us/2", "", plugintest.Writer, 200)
	failed := m["failed"].([]any)
	if m["total"] != 3.0 || m["updated"] != 1.0 || m["detached"] != 1.0 || m["errors"] != 1.0 || len(failed) != 1 {
		t.Fatalf("record sync: %v", m)
	}
	if f := failed[0].(map[string]any); f["refmgr_key"] != "K0000003" || f["code"] != "rate_limited" || f["retry_after"] != 1.0 {
		t.Fatalf("rate-limited item: %v", f)
	}
	ls := e.links(2)
	if ls[0]["author_year"] != "Author 2002" || !strings.Contains(str(ls[0]["full_citation"]), "second edition") ||
		num(ls[1]["detached"]) != 1 || num(ls[2]["refmgr_version"]) != 4 || strings.Contains(str(ls[2]["full_citation"]), "reprint") {
		t.Fatalf("record 2 after sync: %v", ls)
	}
	if ls := e.links(1); num(ls[1]["refmgr_version"]) != 2 || num(ls[2]["detached"]) != 0 {
		t.Fatalf("a record sync touches only its record: %v", ls[:3])
	}

	// The whole app: 60 items in two requests (50 + 10); K1 on record 1,
	// K3 (no longer limited) and the newly changed K4 updated; K2
	// detached on record 1 too; K5's citation rate-limited.
	e.z.PutItem("group", "1", "K0000004", "Ann Author", "2004", "Book 4 revised")
	e.z.PutItem("group", "1", "K0000005", "Ann Author", "2005", "Book 5 revised")
	e.z.RateLimit("K0000005", 1)
	before := len(e.z.Batches())
	m = e.call("POST", "/refmgr/sync", "", plugintest.Admin, 200)
	if m["total"] != 60.0 || m["updated"] != 3.0 || m["detached"] != 1.0 || m["errors"] != 1.0 || m["unchanged"] != 55.0 {
		t.Fatalf("global sync: %v", m)
	}
	if b := e.z.Batches()[before:]; len(b) != 2 || b[0] != 50 || b[1] != 10 {
		t.Fatalf("batches: %v", b)
	}
	for _, rec := range []int{1, 2} {
		for _, l := range e.links(rec) {
			key, detached := str(l["refmgr_key"]), num(l["detached"]) == 1
			if detached != (key == "K0000002") || (key == "K0000003" && !strings.Contains(str(l["full_citation"]), "reprint")) {
				t.Fatalf("record %d after global sync: %v", rec, l)
			}
		}
	}
	// Nothing deleted: the detached links are still there.
	if n := len(e.host.SystemRows("demo", "links")); n != 63 {
		t.Fatalf("%d links, want 63", n)
	}

	// Run as a job (the server's X-Strata-Job header): progress per batch;
	// a cancelled job stops the sync.
	jobCall := func(job string) plugintest.Response {
		resp, err := e.h.Do(plugintest.Request{Method: "POST", Target: "/refmgr/sync", Actor: plugintest.Admin,
			Header: http.Header{pluginsdk.JobHeader: {job}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := jobCall("17"); resp.Status != 200 {
		t.Fatalf("as a job: %d %s", resp.Status, resp.Body)
	}
	if got := fmt.Sprint(e.host.JobReports()); got != "[{17 0 60} {17 50 60} {17 60 60}]" {
		t.Fatalf("progress: %s", got)
	}
	e.host.CancelJob("18")
	if resp := jobCall("18"); resp.Status != 503 || !strings.Contains(string(resp.Body), "sync_interrupted") {
		t.Fatalf("cancelled: %d %s", resp.Status, resp.Body)
	}

	// A refused batch (429 on the items request) fails its items, not the
	// sync; so does a provider that is down.
	e.z.RateLimitNext(1)
	m = e.call("POST", "/refmgr/sync/us/2", "", plugintest.Writer, 200)
	if m["errors"] != 3.0 || m["updated"] != 0.0 {
		t.Fatalf("refused batch: %v", m)
	}
	e.z.SetDown(true)
	m = e.call("POST", "/refmgr/sync", "", plugintest.Admin, 200)
	if m["errors"] != 60.0 || m["failed"].([]any)[0].(map[string]any)["code"] != "refmgr_unavailable" {
		t.Fatalf("down: %v", m)
	}
	e.call("POST", "/refmgr/sync", "", plugintest.Writer, 403)
	if m := e.call("POST", "/refmgr/sync/nowhere/3", "", plugintest.Writer, 404); m["code"] != "table_not_found" {
		t.Fatalf("unknown table: %v", m)
	}
}
