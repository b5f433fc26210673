package realplugins_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
	"github.com/strata-archaeo/strata/plugins/refmgr/zotero/zoterotest"
)

// pompeiiLibraries is the fake Zotero of the refmgr tests: a group library
// with two items and a user library (with its API key) with one.
func pompeiiLibraries(t *testing.T) *zoterotest.Fake {
	z := zoterotest.New(t)
	z.AddLibrary("group", "336647", "Pompeii", "")
	z.AddLibrary("user", "4242", "Mine", "zk-SECRET-123")
	z.PutItem("group", "336647", "AAAA1111", "Andrea Carandini", "1985", "Settefinestre")
	z.PutItem("group", "336647", "BBBB2222", "Mary Beard", "2008", "Pompeii: the life of a Roman town")
	z.PutItem("user", "4242", "DDDD4444", "Paul Zanker", "1998", "Pompeii: public and private life")
	return z
}

// newRefmgrFixture is the fixture with the refmgr binary running against
// the fake Zotero z (its URL passed on as the server does), with a job
// system when withJobs.
func newRefmgrFixture(t *testing.T, e store.Engine, z *zoterotest.Fake, withJobs bool) *fixture {
	t.Helper()
	f := newFixtureWith(t, e, func(o *pluginhost.Options) {
		link(t, filepath.Join(binDir, "refmgr"), filepath.Join(o.Dir, "refmgr"))
		o.Env = append(o.Env, "REFMGR_ZOTERO_URL="+z.URL)
	}, withJobs)
	if s := f.mgr.State("refmgr"); s != pluginhost.StateRunning {
		t.Fatalf("refmgr: %s", s)
	}
	return f
}

// TestRealPluginRefmgr: the refmgr binary, given the fake Zotero's URL
// through REFMGR_ZOTERO_URL as the server passes it on, through the
// server on both engines: libraries (the API key never answered, sealed
// in the database), search, links, the bibliography section, sync with a
// changed, a deleted and a rate-limited item, and a library's delete
// taking its links.
func TestRealPluginRefmgr(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		z := pompeiiLibraries(t)
		z.PutItem("group", "336647", "CCCC3333", "Filippo Coarelli", "2007", "Rome and environs")
		f := newRefmgrFixture(t, e, z, false)
		site := f.create("sites", `{"core":{"name":"Pompeii"}}`)
		other := f.create("sites", `{"core":{"name":"Herculaneum"}}`)

		// Libraries: admin only; the key never answered, sealed at rest.
		if code, _, _ := f.code("GET", "/refmgr/libs", "", f.writer); code != 403 {
			t.Fatalf("writer lists libraries: %d", code)
		}
		if m := f.json("GET", "/refmgr/libs", "", f.super, 200); len(m["libs"].([]any)) != 0 {
			t.Fatalf("no libraries yet: %v", m)
		}
		grp := int64(f.json("POST", "/refmgr/lib", `{"type":"group","refmgr_id":"336647","name":"Pompeii group"}`, f.super, 200)["id"].(float64))
		usr := int64(f.json("POST", "/refmgr/lib", `{"type":"user","refmgr_id":"4242","name":"My library","api_key":"zk-SECRET-123","citation_style":"apa"}`, f.super, 200)["id"].(float64))
		if code, c, _ := f.code("POST", "/refmgr/lib", `{"type":"group"}`, f.super); code != 400 || c != "parameter_missing" {
			t.Fatalf("missing parameters: %d %s", code, c)
		}
		rec := f.do("GET", "/refmgr/libs", "", f.super)
		if strings.Contains(rec.Body.String(), "zk-SECRET") || strings.Contains(rec.Body.String(), `"api_key"`) {
			t.Fatalf("the key is answered: %s", rec.Body)
		}
		var stored string
		if err := f.app.DB.QueryRow(context.Background(), `SELECT api_key FROM `+f.app.DB.Qualify("sys_refmgr_libs")+` WHERE id = ?`, usr).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(stored, "enc:v1:") || strings.Contains(stored, "zk-SECRET") {
			t.Fatalf("the key is stored as %q", stored)
		}

		// Search (edit) with the library's key opened for the provider.
		if code, _, _ := f.code("GET", fmt.Sprintf("/refmgr/search?lib_id=%d&q=pompeii", usr), "", f.reader); code != 403 {
			t.Fatalf("reader searches: %d", code)
		}
		res := f.json("GET", fmt.Sprintf("/refmgr/search?lib_id=%d&q=pompeii", usr), "", f.writer, 200)["results"].([]any)
		if len(res) != 1 || res[0].(map[string]any)["author_year"] != "Zanker 1998" || res[0].(map[string]any)["refmgr_url"] != nil ||
			!strings.Contains(res[0].(map[string]any)["full_citation"].(string), "Zanker, P. (1998)") {
			t.Fatalf("search: %v", res)
		}
		if code, c, _ := f.code("GET", "/refmgr/search?lib_id=999&q=x", "", f.writer); code != 404 || c != "lib_not_found" {
			t.Fatalf("unknown library: %d %s", code, c)
		}

		// Links and the bibliography section.
		for i, key := range []string{"AAAA1111", "BBBB2222", "CCCC3333"} {
			f.json("POST", "/refmgr/link", fmt.Sprintf(`{"tb":"sites","record_id":%d,"lib_id":%d,"refmgr_key":%q,"sort":%d,"pages":"p. %d"}`, site, grp, key, i, i+1), f.writer, 200)
		}
		f.json("POST", "/refmgr/link", fmt.Sprintf(`{"tb":"sites","record_id":"%d","lib_id":"%d","refmgr_key":"AAAA1111"}`, other, grp), f.writer, 200)
		if code, c, _ := f.code("POST", "/refmgr/link", fmt.Sprintf(`{"tb":"nowhere","record_id":1,"lib_id":%d,"refmgr_key":"AAAA1111"}`, grp), f.writer); code != 404 || c != "table_not_found" {
			t.Fatalf("unknown table: %d %s", code, c)
		}
		// A record that does not exist (yet) may be cited, as in BraDypUS
		// (its suite, 17f, links a record it never made).
		ahead := int64(f.json("POST", "/refmgr/link", fmt.Sprintf(`{"tb":"dig_sites","record_id":999,"lib_id":%d,"refmgr_key":"AAAA1111"}`, grp), f.writer, 200)["id"].(float64))
		f.json("DELETE", fmt.Sprintf("/refmgr/link/%d", ahead), "", f.writer, 200)
		// A record the caller may not see may not be cited nor read.
		hidden := f.create("finds", `{"core":{"code":"SECRET"}}`)
		subset := `{"code":{"_neq":"SECRET"}}`
		w, err := auth.FindUserByEmail(context.Background(), f.app.DB, "writer@example.org")
		if err != nil {
			t.Fatal(err)
		}
		if err := auth.SaveTablePrivilege(context.Background(), f.app.DB, &auth.TablePrivilege{UserID: w.ID, TableName: "finds",
			Privilege: auth.Writer, Subset: &subset}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		if code, c, _ := f.code("POST", "/refmgr/link", fmt.Sprintf(`{"tb":"finds","record_id":%d,"lib_id":%d,"refmgr_key":"AAAA1111"}`, hidden, grp), f.writer); code != 404 || c != "record_not_found" {
			t.Fatalf("hidden record: %d %s", code, c)
		}
		if code, c, _ := f.code("GET", fmt.Sprintf("/refmgr/links/finds/%d", hidden), "", f.writer); code != 404 || c != "record_not_found" {
			t.Fatalf("hidden record's links: %d %s", code, c)
		}
		// …nor its links changed: the super admin links it, the writer
		// cannot touch the link.
		hiddenLink := int64(f.json("POST", "/refmgr/link", fmt.Sprintf(`{"tb":"finds","record_id":%d,"lib_id":%d,"refmgr_key":"AAAA1111"}`, hidden, grp), f.super, 200)["id"].(float64))
		if code, c, _ := f.code("DELETE", fmt.Sprintf("/refmgr/link/%d", hiddenLink), "", f.writer); code != 404 || c != "record_not_found" {
			t.Fatalf("hidden record's link deleted by the writer: %d %s", code, c)
		}
		f.json("DELETE", fmt.Sprintf("/refmgr/link/%d", hiddenLink), "", f.super, 200)
		links := f.json("GET", fmt.Sprintf("/refmgr/links/sites/%d", site), "", f.reader, 200)["links"].([]any)
		first := links[0].(map[string]any)
		if len(links) != 3 || first["refmgr_key"] != "AAAA1111" || first["author_year"] != "Carandini 1985" ||
			first["refmgr_url"] != "https://www.zotero.org/groups/336647/items/AAAA1111" || first["pages"] != "p. 1" ||
			!strings.Contains(first["full_citation"].(string), "<i>Settefinestre</i>") {
			t.Fatalf("links: %v", links)
		}
		bib := f.record("sites", site)["bibliography"].(map[string]any)
		if len(bib) != 3 {
			t.Fatalf("bibliography: %v", bib)
		}
		for id, l := range bib {
			if fmt.Sprint(l.(map[string]any)["id"]) != id || !strings.HasPrefix(l.(map[string]any)["refmgr_url"].(string), "https://www.zotero.org/groups/336647/items/") {
				t.Fatalf("bibliography entry %s: %v", id, l)
			}
		}
		// A record without links is answered {} by the server itself, its
		// links' absence found through the index the manifest declares: no
		// call to the plugin. One with links is the plugin's.
		unit := f.create("units", `{"core":{"code":"U1"}}`)
		calls := refmgrCalls(t, f)
		if bib := f.record("units", unit)["bibliography"]; fmt.Sprint(bib) != "map[]" {
			t.Fatalf("a record without links: bibliography %v", bib)
		}
		if got := refmgrCalls(t, f); got != calls {
			t.Fatalf("reading a record without links called the plugin %d times", got-calls)
		}
		if bib := f.record("sites", other)["bibliography"].(map[string]any); len(bib) != 1 || refmgrCalls(t, f) == calls {
			t.Fatalf("a record with a link: bibliography %v, plugin calls %d → %d", bib, calls, refmgrCalls(t, f))
		}
		for _, ix := range []string{"sys_refmgr_links_tb_record_id_idx", "sys_refmgr_links_lib_id_idx"} {
			if !hasIndex(t, f.app.DB, ix) {
				t.Fatalf("index %s not made", ix)
			}
		}

		// Sync: B changed, C deleted, A's citation rate-limited after a
		// change; the per-record sync and then the global one.
		z.PutItem("group", "336647", "BBBB2222", "Mary Beard", "2010", "Pompeii (paperback)")
		z.DeleteItem("group", "336647", "CCCC3333")
		z.PutItem("group", "336647", "AAAA1111", "Andrea Carandini", "1986", "Settefinestre II")
		z.RateLimit("AAAA1111", 1)
		if code, _, _ := f.code("POST", fmt.Sprintf("/refmgr/sync/sites/%d", site), "", f.reader); code != 403 {
			t.Fatalf("reader syncs: %d", code)
		}
		m := f.json("POST", fmt.Sprintf("/refmgr/sync/sites/%d", site), "", f.writer, 200)
		if m["total"] != 3.0 || m["updated"] != 1.0 || m["detached"] != 1.0 || m["errors"] != 1.0 {
			t.Fatalf("record sync: %v", m)
		}
		if fl := m["failed"].([]any)[0].(map[string]any); fl["refmgr_key"] != "AAAA1111" || fl["code"] != "rate_limited" {
			t.Fatalf("rate-limited: %v", fl)
		}
		byKey := map[string]map[string]any{}
		for _, l := range f.json("GET", fmt.Sprintf("/refmgr/links/sites/%d", site), "", f.reader, 200)["links"].([]any) {
			byKey[l.(map[string]any)["refmgr_key"].(string)] = l.(map[string]any)
		}
		if byKey["BBBB2222"]["author_year"] != "Beard 2010" || byKey["CCCC3333"]["detached"] != 1.0 ||
			byKey["AAAA1111"]["author_year"] != "Carandini 1985" || byKey["CCCC3333"]["full_citation"] == nil {
			t.Fatalf("after record sync: %v", byKey)
		}
		if code, _, _ := f.code("POST", "/refmgr/sync", "", f.writer); code != 403 {
			t.Fatalf("writer syncs all: %d", code)
		}
		m = f.json("POST", "/refmgr/sync", "", f.super, 200)
		if m["total"] != 3.0 || m["updated"] != 1.0 || m["detached"] != 1.0 || m["errors"] != 0.0 {
			t.Fatalf("global sync (one representative per item): %v", m)
		}
		for _, rid := range []int64{site, other} {
			for _, l := range f.json("GET", fmt.Sprintf("/refmgr/links/sites/%d", rid), "", f.reader, 200)["links"].([]any) {
				if l := l.(map[string]any); l["refmgr_key"] == "AAAA1111" && l["author_year"] != "Carandini 1986" {
					t.Fatalf("A after global sync on record %d: %v", rid, l)
				}
			}
		}

		// Edit, delete a link; delete the library with its links.
		lid := int64(first["id"].(float64))
		f.json("PATCH", fmt.Sprintf("/refmgr/link/%d", lid), `{"notes":"see plan","sort":"5"}`, f.writer, 200)
		f.json("DELETE", fmt.Sprintf("/refmgr/link/%d", lid), "", f.writer, 200)
		if code, c, _ := f.code("DELETE", fmt.Sprintf("/refmgr/link/%d", lid), "", f.writer); code != 404 || c != "link_not_found" {
			t.Fatalf("deleted twice: %d %s", code, c)
		}
		f.json("DELETE", fmt.Sprintf("/refmgr/lib/%d", grp), "", f.super, 200)
		if n := f.count("sys_refmgr_links"); n != 0 {
			t.Fatalf("%d links left after the library's delete", n)
		}
		if libs := f.json("GET", "/refmgr/libs", "", f.super, 200)["libs"].([]any); len(libs) != 1 || libs[0].(map[string]any)["has_api_key"] != true {
			t.Fatalf("libraries left: %v", libs)
		}
	})
}

// TestRealPluginRefmgrSyncJob: with the server's job system, the global
// sync (a job route) runs as a job: a quick one answers its result with
// the job's id, an asynchronous one answers 202 and shows its progress at
// GET /jobs/{id}, then its result.
func TestRealPluginRefmgrSyncJob(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		z := zoterotest.New(t)
		z.AddLibrary("group", "77", "G", "")
		for i := range 60 {
			z.PutItem("group", "77", fmt.Sprintf("K%07d", i), "Ann Author", "2001", fmt.Sprintf("Book %d", i))
		}
		f := newFixtureWith(t, e, func(o *pluginhost.Options) {
			link(t, filepath.Join(binDir, "refmgr"), filepath.Join(o.Dir, "refmgr"))
			o.Env = append(o.Env, "REFMGR_ZOTERO_URL="+z.URL)
		}, true)
		site := f.create("sites", `{"core":{"name":"Pompeii"}}`)
		lib := int64(f.json("POST", "/refmgr/lib", `{"type":"group","refmgr_id":"77","name":"G"}`, f.super, 200)["id"].(float64))
		for i := range 60 {
			f.json("POST", "/refmgr/link", fmt.Sprintf(`{"tb":"sites","record_id":%d,"lib_id":%d,"refmgr_key":"K%07d"}`, site, lib, i), f.writer, 200)
		}
		z.PutItem("group", "77", "K0000059", "Ann Author", "2002", "Book 59, revised")

		rec := f.do("POST", "/refmgr/sync", "", f.super)
		if rec.Code != 200 || rec.Header().Get("X-Strata-Job") == "" || !strings.Contains(rec.Body.String(), `"updated":1`) {
			t.Fatalf("quick job: %d %v %s", rec.Code, rec.Header(), rec.Body)
		}
		j := f.json("GET", "/jobs/"+rec.Header().Get("X-Strata-Job"), "", f.super, 200)
		if j["state"] != "done" || j["kind"] != "plugin_route" || j["done"] != 60.0 || j["total"] != 60.0 ||
			obj(j, "result", "body")["total"] != 60.0 || obj(j, "result")["status"] != 200.0 {
			t.Fatalf("the quick job: %v", j)
		}

		// Slow provider (Backoff: 1 s before each later request): the
		// client follows the job.
		z.PutItem("group", "77", "K0000001", "Ann Author", "2003", "Book 1, revised")
		z.SetBackoff(1)
		m := f.json("POST", "/refmgr/sync?async=1", "", f.super, 202)
		id := fmt.Sprint(obj(m, "job")["id"])
		if m["code"] != "job_started" || id == "" {
			t.Fatalf("async: %v", m)
		}
		sawProgress := false
		deadline := time.Now().Add(30 * time.Second)
		for {
			j = f.json("GET", "/jobs/"+id, "", f.super, 200)
			if j["state"] == "running" && j["total"] == 60.0 && j["done"].(float64) < 60 {
				sawProgress = true
			}
			if j["state"] == "done" || j["state"] == "failed" || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if j["state"] != "done" || !sawProgress || obj(j, "result", "body")["updated"] != 1.0 || j["done"] != 60.0 {
			t.Fatalf("async job (progress seen: %v): %v", sawProgress, j)
		}
		if code, _, _ := f.code("POST", "/refmgr/sync", "", f.writer); code != 403 {
			t.Fatalf("writer starts a sync job: %d", code)
		}
	})
}

// refmgrCalls is how many calls the server has made to the refmgr process.
func refmgrCalls(t *testing.T, f *fixture) int64 {
	t.Helper()
	for _, st := range f.mgr.PluginStats() {
		if st.Name == "refmgr" {
			return st.Calls
		}
	}
	t.Fatal("refmgr is not loaded")
	return 0
}

// hasIndex reports whether the app's database has the index name.
func hasIndex(t *testing.T, db *store.DB, name string) bool {
	t.Helper()
	q, args := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = ?`, []any{name}
	if db.Engine == store.Postgres {
		q, args = `SELECT COUNT(*) FROM pg_indexes WHERE schemaname = ? AND indexname = ?`, []any{db.Schema(), name}
	}
	var n int
	if err := db.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}
