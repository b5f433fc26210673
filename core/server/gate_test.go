package server_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// The rows of the gate walk: one finds record the subset user may see
// and one outside their subset, each with a value no other text of an
// answer contains, and the outside one with an id no answer shows by
// chance.
const (
	gateInside     = "zqxinsidezqx"
	gateOutside    = "zqxoutsidezqx"
	gateOutsideID  = "987654"
	gateOutsideInv = "INV-4242"
)

// gateSkipped are the routes the walk does not call, with why: none of
// them reads or writes a user table's rows for the caller.
var gateSkipped = map[string]string{
	"POST /:app/api/backups":                     "a backup is the whole application (admin), taken as a file",
	"GET /:app/api/backup/:file/download":        "a backup is the whole application (admin)",
	"POST /:app/api/backup/:file/restore":        "replaces the whole application",
	"DELETE /:app/api/backup/:file":              "a backup file, no table",
	"GET /:app/api/auth/logout":                  "ends the caller's session",
	"POST /:app/api/upgrade/minor":               "the application's migrations",
	"POST /:app/api/auth/oauth/link":             "sign-in flows",
	"POST /:app/api/auth/oauth/register":         "sign-in flows",
	"POST /:app/api/auth/password-reset/request": "sign-in flows",
	"POST /:app/api/auth/password-reset/confirm": "sign-in flows",
	"GET /:app/api/realtime":                     "a stream that stays open; it names no table: its subscriptions (POST /realtime/subscriptions, walked) do; TestStreamIsGated (gate_stream_test.go) is this walk's variant for it",
}

// gateBodyRoutes are routes known to take their table in the body or
// the query string (the findings of issue 27 among them), with what the
// subset admin's answer shows of the row inside their subset: the walk
// must see each ask the records gate and answer that, so the generic
// request below cannot silently stop reaching them.
var gateBodyRoutes = map[string]string{
	"POST /:app/api/chart/data":            gateInside,
	"POST /:app/api/search-replace":        gateInside,
	"POST /:app/api/import/preview-photos": `"found":true`,
	"GET /:app/api/records/:tb":            gateInside,
	"POST /:app/api/charts":                `"code":"ok_save_chart"`, // computed before it is kept
	"POST /:app/api/batch":                 `"status":"success"`,
	"POST /:app/api/geoface/feature":       `"code":"geodata_not_enabled"`, // finds keeps no geodata: refused after the gate
	"POST /:app/api/manual-link":           `"status":"success"`,
	"POST /:app/api/assemblage/data":       `"status":"success"`,
	"POST /:app/api/realtime/presence":     `"code":"client_not_found"`, // the record passed the gate; the walk has no stream
	"POST /:app/api/sync/push":             `"status":"applied"`,        // the inside record's mutation; the outside one's is refused
	"POST /:app/api/sync/uploads":          `"status":"receiving"`,      // an upload to the inside record begins
	"PUT /:app/api/sync/offline-tables":    `"table":"finds"`,           // a default offline table, its filter validated as the admin
	"POST /:app/api/rs/:tb/check/fix":      `"code":"ok_rs_fixed"`,      // the reciprocal of a relation between inside records is added
}

// gateRequest is one call of the walk.
type gateRequest struct {
	method, path, contentType string
	body                      []byte
}

// gateRequests derives the walk's request for every route of the route
// table: path parameters filled (the table is finds, a record id the
// outside record's), the table named in every key areas read it from
// (tb, table, definition.tb and source_tb, tb_one, a batch's update) in
// the query and the body with the inside record's id, and a search that
// matches both rows. The photo preview gets a ZIP whose photo names
// match both rows by their inventory numbers. site is a record of sites
// (the other end of a manual link).
func gateRequests(t *testing.T, f *digFixture, inside, site int64) map[string]gateRequest {
	// :device_id names an offline device of the caller (GET /sync/devices/:device_id): no table.
	// :upload_id names an upload of the caller (GET|PUT /sync/uploads/:upload_id): no table.
	fill := strings.NewReplacer(":app", "dig", ":tb", "finds", ":id", gateOutsideID, ":device_id", "gate-device", ":fld", "notes", ":feature", "chronology",
		":name", "x", ":provider", "idp_a", ":ids", gateOutsideID, "*path", "x", ":file", "dig_20200101_000000_abcdef.tar.gz",
		":upload_id", "x")
	query := fmt.Sprintf("?tb=finds&table=finds&fld=notes&field=notes&id=%d&record_id=%d&q=zqx&search=zqx&value=zqx&x_field=notes", inside, inside)
	body := strings.ReplaceAll(`{"tb":"finds","table":"finds","fld":"notes","field":"notes","search":"zqx","replace":"zqx","preview":true,"q":"zqx",`+
		`"name":"gate","label":"gate","definition":{"tb":"finds","type":"bar","x_field":"notes","source_tb":"finds","char_field":"notes","group_field":"label","measure":"count"},`+
		`"core":{"label":"in"},"id":ID,"ids":[ID],"record_id":ID,"record":ID,"tb_one":"finds","id_one":ID,"tb_two":"sites","id_two":SITE,`+
		`"geometry":{"type":"Point","coordinates":[12.5,41.9]},"update":{"finds":[{"id":ID,"core":{"label":"in"}}]}}`, "ID", fmt.Sprint(inside))
	body = strings.ReplaceAll(body, "SITE", fmt.Sprint(site))
	out := map[string]gateRequest{}
	for _, r := range server.RouteAccess(f.inst.Server) {
		key := r[0] + " " + r[1]
		if r[2] == auth.Public.String() || r[2] == auth.SuperAdminOnly.String() || gateSkipped[key] != "" || !strings.HasPrefix(r[1], "/:app/") {
			continue
		}
		path := fill.Replace(r[1])
		if strings.Contains(path, "/:") || strings.Contains(path, "*") {
			t.Fatalf("route %s has a parameter the gate walk does not fill", key)
		}
		req := gateRequest{method: r[0], path: path + query, contentType: "application/json", body: []byte(body)}
		if r[0] == http.MethodGet {
			req.body = nil
		}
		out[key] = req
	}
	// Offline sync takes its tables inside its own shapes: a push with a
	// mutation of the inside record and one of the outside record (which
	// must change nothing), an upload to the inside record.
	out["POST /:app/api/sync/push"] = gateRequest{method: "POST", path: "/dig/api/sync/push", contentType: "application/json",
		body: []byte(fmt.Sprintf(`{"mutations":[{"mutation_id":"gate-m1","device_id":"gate-device","seq":1,"table":"finds","id":%d,"set":{"label":"in"}},`+
			`{"mutation_id":"gate-m2","device_id":"gate-device","seq":2,"table":"finds","id":%s,"set":{"notes":"gone"}}]}`, inside, gateOutsideID))}
	out["POST /:app/api/sync/uploads"] = gateRequest{method: "POST", path: "/dig/api/sync/uploads", contentType: "application/json",
		body: []byte(fmt.Sprintf(`{"upload_id":"gate-u1","device_id":"gate-device","filename":"a.jpg","size":10,"table":"finds","id":%d}`, inside))}
	out["PUT /:app/api/sync/offline-tables"] = gateRequest{method: "PUT", path: "/dig/api/sync/offline-tables", contentType: "application/json",
		body: []byte(`{"tables":[{"table":"finds","filter":{"notes":{"_icontains":"zqx"}}}]}`)}
	// The photo preview is multipart: a ZIP, the table and a pattern.
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for _, n := range []string{"INV-1.jpg", gateOutsideInv + ".jpg"} {
		w, _ := zw.Create(n)
		w.Write([]byte("not really a photo"))
	}
	zw.Close()
	var mbuf bytes.Buffer
	mw := multipart.NewWriter(&mbuf)
	mw.WriteField("tb", "finds")
	mw.WriteField("pattern", "{inv}.jpg")
	fw, _ := mw.CreateFormFile("zip", "photos.zip")
	fw.Write(zbuf.Bytes())
	mw.Close()
	out["POST /:app/api/import/preview-photos"] = gateRequest{method: "POST", path: "/dig/api/import/preview-photos",
		contentType: mw.FormDataContentType(), body: mbuf.Bytes()}
	return out
}

// TestEveryTableRouteIsGated walks the route table (as the hostile-bodies
// walk does) and calls every route an account below super_admin can
// reach, as an admin denied finds (per-table override 40) and as an
// admin whose finds are cut to a row subset. The denied admin gets 403 or
// 404 on every route naming finds in its path, and no answer anywhere
// shows a value of finds; the subset admin's answers never show the
// record outside the subset (its text or its id). Every route whose path
// takes a table, and the known routes that take it in the body, must be
// seen asking the records gate, so a new route cannot skip it unnoticed.
func TestEveryTableRouteIsGated(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		inside := f.create(t, f.super, "finds", `{"label":"in","notes":"`+gateInside+`","inv":"INV-1"}`)
		outside := f.create(t, f.super, "finds", `{"label":"out","notes":"`+gateOutside+`","inv":"`+gateOutsideInv+`"}`)
		// An id no answer shows by chance (ids are small in a test app).
		if _, err := f.app.DB.Exec(t.Context(), `UPDATE `+f.app.DB.Qualify("finds")+` SET id = `+gateOutsideID+` WHERE id = ?`, outside); err != nil {
			t.Fatal(err)
		}
		// Rows of finds saved without a plugin's check (GET /plugins/x/unchecked
		// lists them): the outside record's must not show to the subset admin.
		outsideID, _ := strconv.ParseInt(gateOutsideID, 10, 64)
		for _, id := range []int64{inside, outsideID} {
			if _, err := f.app.DB.Exec(t.Context(), `INSERT INTO `+f.app.DB.Sys("plugin_unchecked")+
				` (plugin, feature, tb, record_id, row_table, row_id, reason, at) VALUES ('x', 'f', 'finds', ?, 'finds', ?, 'plugin_not_running', ?)`,
				id, id, time.Now().UTC()); err != nil {
				t.Fatal(err)
			}
		}
		account := func(email, override string) string {
			u := testenv.NewUser(t, f.app, email, email, auth.Admin)
			f.must(t, 200, f.super, "POST", fmt.Sprintf("%s/user/%d/privileges", api, u.ID), override)
			return testenv.Login(t, f.inst.Server, "dig", email, testenv.Password)
		}
		denied := account("denied@example.org", `{"table_name":"finds","privilege":40}`)
		subset := account("subset@example.org", `{"table_name":"finds","privilege":10,"subset":{"label":{"_eq":"in"}}}`)

		var mu sync.Mutex
		asked := map[string]bool{} // routes that asked the gate about finds
		current := ""
		wasAsked := func(key string) bool {
			mu.Lock()
			defer mu.Unlock()
			return asked[key]
		}
		server.WatchScopes(f.inst.Server, func(_ *http.Request, table string) {
			mu.Lock()
			defer mu.Unlock()
			if table == "finds" {
				asked[current] = true
			}
		})
		send := func(who string, r gateRequest) *httptest.ResponseRecorder {
			req := httptest.NewRequest(r.method, r.path, bytes.NewReader(r.body))
			req.Header.Set("Authorization", who)
			if r.body != nil {
				req.Header.Set("Content-Type", r.contentType)
			}
			rec := httptest.NewRecorder()
			f.inst.Server.ServeHTTP(rec, req)
			return rec
		}
		reqs := gateRequests(t, f, inside, f.create(t, f.super, "sites", `{"name":"Gate"}`))
		// The matrix check's fix takes a relation in its body: finds gets
		// relations among inside records, stored both ways as BraDypUS
		// kept them, and one without its reciprocal row, which the subset
		// admin may fix.
		if _, err := schema.PutTable(t.Context(), f.app.DB, "finds", schema.TableConfig{RS: schema.RSOn(true)}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		in2 := f.create(t, f.super, "finds", `{"label":"in"}`)
		in3 := f.create(t, f.super, "finds", `{"label":"in"}`)
		f.must(t, 200, f.super, "POST", api+"/record/finds/rs", fmt.Sprintf(`{"first":%d,"relation":5,"second":%d}`, inside, in2))
		if _, err := f.app.DB.Exec(t.Context(), `INSERT INTO `+f.app.DB.Sys("rs")+` (tb, first, second, relation, created_at) VALUES ('finds', ?, ?, 1, ?)`,
			in2, inside, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		rel := f.must(t, 200, f.super, "POST", api+"/record/finds/rs", fmt.Sprintf(`{"first":%d,"relation":6,"second":%d}`, inside, in3))
		reqs["POST /:app/api/rs/:tb/check/fix"] = gateRequest{method: "POST", path: "/dig/api/rs/finds/check/fix", contentType: "application/json",
			body: []byte(fmt.Sprintf(`{"kind":"missing_reciprocal","relation_id":%v}`, rel["id"]))}
		subsetAnswers := map[string]string{}
		for _, key := range slices.Sorted(maps.Keys(reqs)) {
			r := reqs[key]
			tableInPath := strings.Contains(key, "/:tb")
			idInRequest := strings.Contains(r.path, gateOutsideID) || bytes.Contains(r.body, []byte(gateOutsideID))
			for _, u := range []struct {
				name, who string
				hidden    []string
			}{
				// The subset admin first: whether their request asked the
				// gate about finds says the route takes a table.
				{"subset", subset, []string{gateOutside}},
				{"denied", denied, []string{gateInside, gateOutside}},
			} {
				mu.Lock()
				current = u.name + " " + key
				mu.Unlock()
				rec := send(u.who, r)
				answer := rec.Body.String()
				if u.name == "subset" {
					subsetAnswers[key] = answer
				}
				if rec.Code >= 500 && !gateUnavailable(answer) {
					t.Errorf("%s as %s: %d %.300s", key, u.name, rec.Code, answer)
				}
				for _, h := range u.hidden {
					if strings.Contains(answer, h) {
						t.Errorf("%s as %s shows %q: %d %.300s", key, u.name, h, rec.Code, answer)
					}
				}
				if !idInRequest && strings.Contains(answer, gateOutsideID) {
					t.Errorf("%s as %s shows the outside record's id: %d %.300s", key, u.name, rec.Code, answer)
				}
				refused := rec.Code == 403 || rec.Code == 404 || (rec.Code < 300 && emptyAnswer(answer))
				if u.name == "denied" && (tableInPath || wasAsked("subset "+key)) && !refused {
					t.Errorf("%s as denied: %d %.300s, want 403 or 404", key, rec.Code, answer)
				}
			}
			// The subset admin may read finds: their request reached the
			// gate, or the route does not take a table.
			if tableInPath && !wasAsked("subset "+key) {
				t.Errorf("%s names a table in its path but never asked the records gate about it", key)
			}
		}
		var took []string
		for _, key := range slices.Sorted(maps.Keys(reqs)) {
			if wasAsked("subset " + key) {
				took = append(took, key)
			}
		}
		t.Logf("%d routes took finds: %s", len(took), strings.Join(took, ", "))
		for key, shows := range gateBodyRoutes {
			if _, ok := reqs[key]; !ok {
				t.Errorf("%s: no such route", key)
			} else if !wasAsked("subset " + key) {
				t.Errorf("%s takes a table but the walk's request never reached the records gate", key)
			} else if !strings.Contains(subsetAnswers[key], shows) {
				t.Errorf("%s: the subset admin's answer does not show %s: %.300s", key, shows, subsetAnswers[key])
			}
		}
		// Nothing the two admins sent changed the outside record.
		m := f.must(t, 200, f.super, "GET", api+"/record/finds/"+gateOutsideID, "")
		if got := fmt.Sprint(m["core"].(map[string]any)["notes"].(map[string]any)["val"]); got != gateOutside {
			t.Errorf("the outside record's notes are now %q", got)
		}
	})
}

// emptyAnswer reports whether a 2xx answer holds no rows: every list in
// it is empty (a list route may answer an unreadable table with nothing).
func emptyAnswer(answer string) bool {
	return !strings.Contains(answer, `"id":`) && !strings.Contains(answer, `"val":`)
}

// gateUnavailable reports whether a 5xx answer says a dependency this
// instance runs without is missing (mail, plugins, the job system), not
// that the server failed.
func gateUnavailable(answer string) bool {
	for code := range unavailable {
		if strings.Contains(answer, `"code":"`+code+`"`) {
			return true
		}
	}
	return strings.Contains(answer, `"code":"jobs_unavailable"`)
}

// TestDeniedTableFindings are the three findings of the hostile review
// (issue 27), each as its caller: a writer denied finds asking for its
// chart data, an admin denied finds previewing and applying a
// search-replace on it and previewing a photo import into it. Each is
// refused with 403 not_enough_privilege, shows no value or id of finds,
// and changes nothing.
func TestDeniedTableFindings(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		id := f.create(t, f.super, "finds", `{"label":"in","notes":"`+gateInside+`","inv":"INV-1"}`)
		deny := func(email string, level int) string {
			u := testenv.NewUser(t, f.app, email, email, level)
			f.must(t, 200, f.super, "POST", fmt.Sprintf("%s/user/%d/privileges", api, u.ID), `{"table_name":"finds","privilege":40}`)
			return testenv.Login(t, f.inst.Server, "dig", email, testenv.Password)
		}
		writer, admin := deny("w-denied@example.org", auth.Writer), deny("a-denied@example.org", auth.Admin)
		photos := gateRequests(t, f, id, 0)["POST /:app/api/import/preview-photos"]
		for _, tc := range []struct {
			name, who string
			req       gateRequest
		}{
			{"chart data", writer, gateRequest{method: "POST", path: api + "/chart/data", contentType: "application/json",
				body: []byte(`{"definition":{"tb":"finds","type":"bar","x_field":"notes"}}`)}},
			{"search-replace preview", admin, gateRequest{method: "POST", path: api + "/search-replace", contentType: "application/json",
				body: []byte(`{"tb":"finds","fld":"notes","search":"zqx","replace":"gone","preview":true}`)}},
			{"search-replace apply", admin, gateRequest{method: "POST", path: api + "/search-replace", contentType: "application/json",
				body: []byte(`{"tb":"finds","fld":"notes","search":"zqx","replace":"gone"}`)}},
			{"photo preview", admin, photos},
			// A plugin table's rows are parts of its parent's records: no
			// more open than the parent.
			{"the plugin table of a denied table", writer, gateRequest{method: "GET", path: api + "/records/finds_samples"}},
		} {
			req := httptest.NewRequest(tc.req.method, tc.req.path, bytes.NewReader(tc.req.body))
			req.Header.Set("Authorization", tc.who)
			req.Header.Set("Content-Type", tc.req.contentType)
			rec := httptest.NewRecorder()
			f.inst.Server.ServeHTTP(rec, req)
			answer := rec.Body.String()
			if rec.Code != 403 || !strings.Contains(answer, `"code":"not_enough_privilege"`) || strings.Contains(answer, gateInside) ||
				strings.Contains(answer, `"record_id"`) {
				t.Errorf("%s: %d %.300s, want 403 not_enough_privilege and nothing of finds", tc.name, rec.Code, answer)
			}
		}
		m := f.must(t, 200, f.super, "GET", fmt.Sprintf("%s/record/finds/%d", api, id), "")
		if got := m["core"].(map[string]any)["notes"].(map[string]any)["val"]; got != gateInside {
			t.Errorf("finds' notes are now %v", got)
		}
	})
}
