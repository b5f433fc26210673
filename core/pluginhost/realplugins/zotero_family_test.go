package realplugins_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestRealPluginRefmgrZoteroFamily: BraDypUS 5.4.2's web client
// (ZoteroLibsPanel.vue, ZoteroSection.vue) calls the refmgr routes as
// /api/zotero/* with zotero_* keys (controllers/Zotero.php). Through the
// server, on both engines, with the real binary and the fake Zotero: each
// route of that family, the keys the client reads in each answer, the
// access BraDypUS's router gives each (a reader and a writer refused where
// it refuses them), and the record's side the client reads (has_zotero,
// the bibliography's zotero_key and zotero_url, the table form's zotero).
func TestRealPluginRefmgrZoteroFamily(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		z := pompeiiLibraries(t)
		f := newRefmgrFixture(t, e, z, true)
		site := f.create("sites", `{"core":{"name":"Pompeii"}}`)

		// The table form: zotero read as BraDypUS names it, and saved back.
		f.json("PUT", "/config/table/sites", `{"zotero":1}`, f.super, 200)
		if tb := obj(f.json("GET", "/config/table/sites", "", f.super, 200), "table"); tb["zotero"] != true || tb["refmgr"] != true {
			t.Fatalf("table config: zotero %v, refmgr %v", tb["zotero"], tb["refmgr"])
		}
		if sch := obj(f.record("sites", site), "schema"); sch["has_zotero"] != true || sch["has_refmgr"] != true {
			t.Fatalf("record schema: %v", sch)
		}

		// ZoteroLibsPanel: add (api_key and citation_style null when left
		// empty), list reading zotero_id and has_api_key.
		m := f.json("POST", "/zotero/lib", `{"type":"group","zotero_id":"336647","name":"Pompeii group","api_key":null,"citation_style":null}`, f.super, 200)
		if m["status"] != "success" || m["code"] != "ok_lib_added" {
			t.Fatalf("add library: %v", m)
		}
		grp := int64(m["id"].(float64))
		usr := int64(f.json("POST", "/zotero/lib", `{"type":"user","zotero_id":"4242","name":"My library","api_key":"zk-SECRET-123","citation_style":"apa"}`, f.super, 200)["id"].(float64))
		rec := f.do("GET", "/zotero/libs", "", f.super)
		if strings.Contains(rec.Body.String(), "zk-SECRET") || strings.Contains(rec.Body.String(), `"api_key"`) || strings.Contains(rec.Body.String(), "refmgr") {
			t.Fatalf("libraries: %s", rec.Body)
		}
		libs := f.json("GET", "/zotero/libs", "", f.super, 200)["libs"].([]any)
		if len(libs) != 2 {
			t.Fatalf("libraries: %v", libs)
		}
		mine, pompeii := libs[0].(map[string]any), libs[1].(map[string]any) // by name
		if mine["zotero_id"] != "4242" || mine["has_api_key"] != true || mine["citation_style"] != "apa" || mine["type"] != "user" ||
			pompeii["zotero_id"] != "336647" || pompeii["has_api_key"] != false || pompeii["citation_style"] != "chicago-author-date" ||
			pompeii["name"] != "Pompeii group" || pompeii["id"] != float64(grp) {
			t.Fatalf("libraries: %v", libs)
		}
		if code, c, m := f.code("POST", "/zotero/lib", `{"type":"group","zotero_id":"x1","name":"x"}`, f.super); code != 400 || c != "invalid_zotero_id" ||
			!strings.Contains(fmt.Sprint(m["message"]), "zotero_id") {
			t.Fatalf("bad zotero_id: %d %v", code, m)
		}
		if code, c, _ := f.code("POST", "/zotero/lib", `{"type":"group","name":"x"}`, f.super); code != 400 || c != "parameter_missing" {
			t.Fatalf("no zotero_id: %d %s", code, c)
		}

		// ZoteroSection: search (lib_id, q, limit), add a link (sort, no
		// pages), the record's links after a sync, sort and inline edits.
		res := f.json("GET", fmt.Sprintf("/zotero/search?lib_id=%d&q=pompeii&limit=20", grp), "", f.writer, 200)["results"].([]any)
		hit := res[0].(map[string]any)
		if len(res) != 1 || hit["key"] != "BBBB2222" || hit["author_year"] != "Beard 2008" || hit["title"] != "Pompeii: the life of a Roman town" ||
			hit["zotero_url"] != "https://www.zotero.org/groups/336647/items/BBBB2222" || hit["zotero_version"] == nil ||
			!strings.Contains(fmt.Sprint(hit["full_citation"]), "Beard") {
			t.Fatalf("search: %v", res)
		}
		if res := f.json("GET", fmt.Sprintf("/zotero/search?lib_id=%d&q=pompeii", usr), "", f.writer, 200)["results"].([]any); len(res) != 1 ||
			res[0].(map[string]any)["zotero_url"] != nil || res[0].(map[string]any)["author_year"] != "Zanker 1998" {
			t.Fatalf("search of a private user library: %v", res)
		}
		var ids []int64
		for i, key := range []string{"BBBB2222", "AAAA1111"} {
			m := f.json("POST", "/zotero/link", fmt.Sprintf(`{"tb":"dig_sites","record_id":"%d","lib_id":%d,"zotero_key":%q,"sort":%d}`, site, grp, key, i), f.writer, 200)
			if m["status"] != "success" || m["code"] != "ok_link_added" || m["id"] == nil {
				t.Fatalf("add link: %v", m)
			}
			ids = append(ids, int64(m["id"].(float64)))
		}
		if code, c, _ := f.code("POST", "/zotero/link", fmt.Sprintf(`{"tb":"sites","record_id":%d,"lib_id":%d,"zotero_key":"no key"}`, site, grp), f.writer); code != 400 || c != "invalid_zotero_key" {
			t.Fatalf("bad zotero_key: %d %s", code, c)
		}
		if code, c, _ := f.code("POST", "/zotero/link", fmt.Sprintf(`{"tb":"sites","record_id":%d,"lib_id":%d,"refmgr_key":"AAAA1111"}`, site, grp), f.writer); code != 400 || c != "parameter_missing" {
			t.Fatalf("refmgr_key on the zotero family: %d %s", code, c)
		}
		z.PutItem("group", "336647", "BBBB2222", "Mary Beard", "2010", "Pompeii (paperback)")
		if m := f.json("POST", fmt.Sprintf("/zotero/sync/dig_sites/%d", site), "", f.writer, 200); m["status"] != "success" || m["updated"] != 1.0 || m["detached"] != 0.0 {
			t.Fatalf("record sync: %v", m)
		}
		links := f.json("GET", fmt.Sprintf("/zotero/links/dig_sites/%d", site), "", f.reader, 200)["links"].([]any)
		if len(links) != 2 {
			t.Fatalf("links: %v", links)
		}
		for i, l := range links {
			l := l.(map[string]any)
			if l["id"] != float64(ids[i]) || l["lib_id"] != float64(grp) || l["sort"] != float64(i) || l["zotero_url"] == nil ||
				l["zotero_version"] == nil || l["refmgr_key"] != nil || l["refmgr_url"] != nil {
				t.Fatalf("link %d: %v", i, l)
			}
		}
		if b := links[0].(map[string]any); b["zotero_key"] != "BBBB2222" || b["author_year"] != "Beard 2010" || b["detached"] != 0.0 ||
			b["lib_name"] != "Pompeii group" || !strings.Contains(fmt.Sprint(b["full_citation"]), "paperback") {
			t.Fatalf("synced link: %v", b)
		}
		// Drag to sort (sort: i) and the inline pages / notes.
		f.json("PATCH", fmt.Sprintf("/zotero/link/%d", ids[1]), `{"sort":0}`, f.writer, 200)
		f.json("PATCH", fmt.Sprintf("/zotero/link/%d", ids[0]), `{"sort":1}`, f.writer, 200)
		if m := f.json("PATCH", fmt.Sprintf("/zotero/link/%d", ids[1]), `{"pages":"pp. 12-14"}`, f.writer, 200); m["code"] != "ok_link_updated" {
			t.Fatalf("patch: %v", m)
		}
		f.json("PATCH", fmt.Sprintf("/zotero/link/%d", ids[1]), `{"notes":"see plan"}`, f.writer, 200)

		// The record as the client reads it: the bibliography by link id,
		// in the new order, with BraDypUS's names.
		bib := f.record("sites", site)["bibliography"].(map[string]any)
		a := obj(bib, fmt.Sprint(ids[1]))
		if len(bib) != 2 || a["zotero_key"] != "AAAA1111" || a["zotero_url"] != "https://www.zotero.org/groups/336647/items/AAAA1111" ||
			a["pages"] != "pp. 12-14" || a["notes"] != "see plan" || a["sort"] != 0.0 || a["author_year"] != "Carandini 1985" {
			t.Fatalf("bibliography: %v", bib)
		}

		// Sync all (a job route: a quick one answers at once), an item
		// gone from the library marked detached.
		z.DeleteItem("group", "336647", "AAAA1111")
		rec = f.do("POST", "/zotero/sync", "", f.super)
		if rec.Code != 200 || rec.Header().Get("X-Strata-Job") == "" {
			t.Fatalf("sync all: %d %s", rec.Code, rec.Body)
		}
		m = f.json("GET", "/jobs/"+rec.Header().Get("X-Strata-Job"), "", f.super, 200)
		if body := obj(obj(m, "result"), "body"); body["status"] != "success" || body["updated"] != 0.0 || body["detached"] != 1.0 ||
			body["errors"] != 0.0 || body["total"] != 2.0 {
			t.Fatalf("sync all: %v", m)
		}
		if d := obj(f.record("sites", site)["bibliography"].(map[string]any), fmt.Sprint(ids[1]))["detached"]; d != 1.0 {
			t.Fatalf("detached after sync: %v", d)
		}

		// Access, as BraDypUS's router gives it: libraries and the global
		// sync admin, search and changes edit, the links read.
		for _, c := range []struct {
			method, url, body string
			token             string
		}{
			{"GET", "/zotero/libs", "", f.writer},
			{"POST", "/zotero/lib", `{"type":"group","zotero_id":"1","name":"x"}`, f.writer},
			{"DELETE", fmt.Sprintf("/zotero/lib/%d", usr), "", f.writer},
			{"POST", "/zotero/sync", "", f.writer},
			{"GET", fmt.Sprintf("/zotero/search?lib_id=%d&q=pompeii", grp), "", f.reader},
			{"POST", "/zotero/link", fmt.Sprintf(`{"tb":"sites","record_id":%d,"lib_id":%d,"zotero_key":"BBBB2222"}`, site, grp), f.reader},
			{"PATCH", fmt.Sprintf("/zotero/link/%d", ids[0]), `{"sort":5}`, f.reader},
			{"DELETE", fmt.Sprintf("/zotero/link/%d", ids[0]), "", f.reader},
			{"POST", fmt.Sprintf("/zotero/sync/sites/%d", site), "", f.reader},
		} {
			if code, got, _ := f.code(c.method, c.url, c.body, c.token); code != 403 || got != "not_enough_privilege" {
				t.Errorf("%s %s: %d %s, want 403 not_enough_privilege", c.method, c.url, code, got)
			}
		}
		if n := len(f.json("GET", fmt.Sprintf("/zotero/links/sites/%d", site), "", f.reader, 200)["links"].([]any)); n != 2 {
			t.Fatalf("the refusals changed the links: %d", n)
		}

		// Delete a link, then a library with its links.
		if m := f.json("DELETE", fmt.Sprintf("/zotero/link/%d", ids[0]), "", f.writer, 200); m["status"] != "success" || m["code"] != "ok_link_deleted" {
			t.Fatalf("delete link: %v", m)
		}
		if code, c, _ := f.code("DELETE", fmt.Sprintf("/zotero/link/%d", ids[0]), "", f.writer); code != 404 || c != "link_not_found" {
			t.Fatalf("deleted twice: %d %s", code, c)
		}
		if m := f.json("DELETE", fmt.Sprintf("/zotero/lib/%d", grp), "", f.super, 200); m["status"] != "success" || m["code"] != "ok_lib_deleted" {
			t.Fatalf("delete library: %v", m)
		}
		if n := f.count("sys_refmgr_links"); n != 0 {
			t.Fatalf("%d links left after the library's delete", n)
		}
		if libs := f.json("GET", "/zotero/libs", "", f.super, 200)["libs"].([]any); len(libs) != 1 || libs[0].(map[string]any)["zotero_id"] != "4242" {
			t.Fatalf("libraries left: %v", libs)
		}
		// The refmgr family still answers in its own names.
		if libs := f.json("GET", "/refmgr/libs", "", f.super, 200)["libs"].([]any); libs[0].(map[string]any)["refmgr_id"] != "4242" {
			t.Fatalf("refmgr family: %v", libs)
		}
	})
}
