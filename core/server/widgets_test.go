package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

const widgetModule = "export default { mount(el, field) { el.textContent = field.value } }\n"

// TestWidgets: the super admin uploads (raw body or multipart file),
// replaces and deletes per-app ES modules; readers list and load them as
// text/javascript with an ETag (304 on a match) and nosniff; bad names,
// the 256 KiB cap and lesser privileges are refused; a field's widget
// parameter must name an installed widget.
func TestWidgets(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		testenv.NewUser(t, f.app, "admin2@example.org", "admin2@example.org", auth.Admin)
		admin := testenv.Login(t, f.inst.Server, "dig", "admin2@example.org", testenv.Password)

		if code, m := f.do(t, f.reader, "GET", api+"/widgets", ""); code != 200 || fmt.Sprint(m["widgets"]) != "[]" {
			t.Fatalf("empty list: %d %v", code, m)
		}
		rec := f.send(t, f.super, "PUT", api+"/widget/quire-matrix", []byte(widgetModule), map[string]string{"Content-Type": "text/javascript"})
		if rec.Code != 201 || !strings.Contains(rec.Body.String(), `"code":"widget_created"`) {
			t.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
		etag := rec.Header().Get("ETag")
		if len(etag) < 10 || etag[0] != '"' {
			t.Fatalf("etag on create: %q", etag)
		}
		// Multipart upload of a second one.
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		part, _ := mw.CreateFormFile("file", "harris.js")
		part.Write([]byte("export const x = 1;\n"))
		mw.Close()
		rec = f.send(t, f.super, "PUT", api+"/widget/harris2", buf.Bytes(), map[string]string{"Content-Type": mw.FormDataContentType()})
		if rec.Code != 201 {
			t.Fatalf("multipart: %d %s", rec.Code, rec.Body)
		}
		if code, m := f.do(t, f.reader, "GET", api+"/widgets", ""); code != 200 || fmt.Sprint(m["widgets"]) != "[harris2 quire-matrix]" {
			t.Fatalf("list: %d %v", code, m)
		}

		rec = f.send(t, f.reader, "GET", api+"/widget/quire-matrix", nil, nil)
		if rec.Code != 200 || rec.Body.String() != widgetModule {
			t.Fatalf("serve: %d %q", rec.Code, rec.Body)
		}
		h := rec.Header()
		if !strings.HasPrefix(h.Get("Content-Type"), "text/javascript") || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("ETag") != etag {
			t.Fatalf("serve headers: %v", h)
		}
		for _, inm := range []string{etag, `"x", ` + etag, "W/" + etag, "*"} {
			if rec := f.send(t, f.reader, "GET", api+"/widget/quire-matrix", nil, map[string]string{"If-None-Match": inm}); rec.Code != 304 || rec.Body.Len() != 0 {
				t.Fatalf("If-None-Match %s: %d %q", inm, rec.Code, rec.Body)
			}
		}
		if rec := f.send(t, f.reader, "GET", api+"/widget/quire-matrix", nil, map[string]string{"If-None-Match": `"stale"`}); rec.Code != 200 {
			t.Fatalf("stale etag: %d", rec.Code)
		}

		// Replacing changes the ETag; the same bytes keep it.
		rec = f.send(t, f.super, "PUT", api+"/widget/quire-matrix", []byte(widgetModule+"// v2\n"), nil)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"code":"widget_replaced"`) || rec.Header().Get("ETag") == etag {
			t.Fatalf("replace: %d %s %s", rec.Code, rec.Body, rec.Header().Get("ETag"))
		}
		if rec := f.send(t, f.reader, "GET", api+"/widget/quire-matrix", nil, map[string]string{"If-None-Match": etag}); rec.Code != 200 || !strings.HasSuffix(rec.Body.String(), "// v2\n") {
			t.Fatalf("after replace: %d %q", rec.Code, rec.Body)
		}

		big := bytes.Repeat([]byte("/* padding */\n"), (256<<10)/14+1)
		exact := append([]byte("//"), bytes.Repeat([]byte("x"), 256<<10-3)...)
		exact = append(exact, '\n')
		if rec := f.send(t, f.super, "PUT", api+"/widget/exact", exact, nil); rec.Code != 201 {
			t.Fatalf("exactly 256 KiB: %d %s", rec.Code, rec.Body)
		}
		for _, tc := range []struct {
			name, who, method, path string
			body                    []byte
			status                  int
			code                    string
		}{
			{"underscore", f.reader, "GET", "/widget/my_widget", nil, 400, "invalid_widget_name"},
			{"upper case", f.reader, "GET", "/widget/MyWidget", nil, 400, "invalid_widget_name"},
			{"dots", f.reader, "GET", "/widget/a.js", nil, 400, "invalid_widget_name"},
			{"NUL byte", f.reader, "GET", "/widget/a%00b", nil, 400, "invalid_widget_name"},
			{"encoded slash is no widget path", f.reader, "GET", "/widget/..%2Fx", nil, 404, "route_not_found"},
			{"too long", f.reader, "GET", "/widget/" + strings.Repeat("a", 65), nil, 400, "invalid_widget_name"},
			{"unknown", f.reader, "GET", "/widget/non-existent-widget", nil, 404, "widget_not_found"},
			{"anonymous list", "", "GET", "/widgets", nil, 401, ""},
			{"anonymous get", "", "GET", "/widget/quire-matrix", nil, 401, ""},
			{"bad name on put", f.super, "PUT", "/widget/Bad_Name", []byte(widgetModule), 400, "invalid_widget_name"},
			{"over the cap", f.super, "PUT", "/widget/big", big, 413, ""},
			{"empty", f.super, "PUT", "/widget/empty", []byte("  \n"), 400, "invalid_widget"},
			{"not text", f.super, "PUT", "/widget/bin", []byte{0xff, 0xfe, 0x00, 'x'}, 400, "invalid_widget"},
			{"writer may not upload", f.writer, "PUT", "/widget/w", []byte(widgetModule), 403, "not_enough_privilege"},
			{"admin may not upload", admin, "PUT", "/widget/w", []byte(widgetModule), 403, "not_enough_privilege"},
			{"admin may not delete", admin, "DELETE", "/widget/harris2", nil, 403, "not_enough_privilege"},
			{"delete unknown", f.super, "DELETE", "/widget/nope", nil, 404, "widget_not_found"},
			{"delete bad name", f.super, "DELETE", "/widget/NOPE", nil, 400, "invalid_widget_name"},
		} {
			rec := f.send(t, tc.who, tc.method, api+tc.path, tc.body, nil)
			if rec.Code != tc.status || (tc.code != "" && !strings.Contains(rec.Body.String(), `"code":"`+tc.code+`"`)) {
				t.Fatalf("%s: %d %s", tc.name, rec.Code, rec.Body)
			}
			if tc.status >= 400 && !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
				t.Fatalf("%s: error not JSON: %s", tc.name, rec.Header().Get("Content-Type"))
			}
		}
		if _, m := f.do(t, f.reader, "GET", api+"/widgets", ""); fmt.Sprint(m["widgets"]) != "[exact harris2 quire-matrix]" {
			t.Fatalf("refused uploads were stored: %v", m)
		}

		// A field's widget names an installed one.
		if code, m := f.do(t, f.super, "POST", api+"/config/table/finds/field", `{"name":"quire","widget":"nope"}`); code != 400 || m["code"] != "invalid_field_parameter" || m["parameter"] != "widget" {
			t.Fatalf("field with unknown widget: %d %v", code, m)
		}
		if code, m := f.do(t, f.super, "POST", api+"/config/table/finds/field", `{"name":"quire","widget":"quire-matrix"}`); code != 200 {
			t.Fatalf("field with widget: %d %v", code, m)
		}
		if code, m := f.do(t, f.super, "PUT", api+"/config/table/finds/field/quire", `{"widget":"missing"}`); code != 400 || m["parameter"] != "widget" {
			t.Fatalf("update to unknown widget: %d %v", code, m)
		}

		// Deleting leaves fields naming it editable.
		if code, m := f.do(t, f.super, "DELETE", api+"/widget/quire-matrix", ""); code != 200 || m["code"] != "widget_deleted" {
			t.Fatalf("delete: %d %v", code, m)
		}
		if code, m := f.do(t, f.reader, "GET", api+"/widget/quire-matrix", ""); code != 404 || m["code"] != "widget_not_found" {
			t.Fatalf("after delete: %d %v", code, m)
		}
		if code, m := f.do(t, f.super, "PUT", api+"/config/table/finds/field/quire", `{"label":"Quire"}`); code != 200 {
			t.Fatalf("update a field whose widget was deleted: %d %v", code, m)
		}
	})
}

// TestWidgetsInBackups: a backup carries the app's widgets and a restore
// brings back one deleted since.
func TestWidgetsInBackups(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		inst := testenv.NewInstanceWithJobs(t, e)
		testenv.NewApp(t, inst.Apps, "dig")
		tok := testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password)
		admin := testenv.Bearer(tok)
		testenv.Scenario{Name: "upload", Method: "PUT", URL: "/dig/api/widget/harris", Body: widgetModule, Headers: admin,
			ExpectedStatus: 201}.Run(t, inst.Server)
		rec := testenv.Scenario{Name: "backup", Method: "POST", URL: "/dig/api/backups", Headers: admin,
			ExpectedStatus: 200, ExpectedContent: []string{`"state":"done"`}}.Run(t, inst.Server)
		var created struct {
			File string `json:"file"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || created.File == "" {
			t.Fatalf("backup: %s", rec.Body)
		}
		testenv.Scenario{Name: "delete", Method: "DELETE", URL: "/dig/api/widget/harris", Headers: admin, ExpectedStatus: 200}.Run(t, inst.Server)
		testenv.Scenario{Name: "gone", Method: "GET", URL: "/dig/api/widget/harris", Headers: admin, ExpectedStatus: 404}.Run(t, inst.Server)
		testenv.Scenario{Name: "restore", Method: "POST", URL: "/dig/api/backup/" + created.File + "/restore", Headers: admin,
			ExpectedStatus: 200, ExpectedContent: []string{`"code":"ok_backup_restored"`}}.Run(t, inst.Server)
		req := httptest.NewRequest("GET", "/dig/api/widget/harris", nil)
		req.Header.Set("Authorization", admin["Authorization"])
		back := httptest.NewRecorder()
		inst.Server.ServeHTTP(back, req)
		if back.Code != 200 || back.Body.String() != widgetModule {
			t.Fatalf("restored module: %d %q", back.Code, back.Body)
		}
	})
}
