package server_test

import (
	"fmt"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestTableDeletionPreview: GET /config/table/{tb}/deletion counts what a
// deletion removes (rows, stratigraphic relations, manual links, versions,
// features, file links) and keeps (the files), and the references that
// need cascade; it writes nothing, and the deletion then removes what it
// said.
func TestTableDeletionPreview(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		f.must(t, 200, f.super, "PUT", api+"/config/table/units", `{"rs":true,"geodata":true}`)
		site := f.create(t, f.super, "sites", `{"name":"Pompeii"}`)
		u1 := f.create(t, f.writer, "units", fmt.Sprintf(`{"code":"US 1","site":%d}`, site))
		u2 := f.create(t, f.writer, "units", `{"code":"US 2"}`)
		find := f.create(t, f.writer, "finds", `{"label":"f1"}`)
		f.must(t, 200, f.writer, "POST", api+"/record/units/rs", fmt.Sprintf(`{"first":%d,"relation":1,"second":%d}`, u1, u2))
		f.must(t, 200, f.writer, "POST", api+"/manual-link", fmt.Sprintf(`{"tb_one":"finds","id_one":%d,"tb_two":"units","id_two":%d}`, find, u1))
		f.must(t, 200, f.writer, "POST", fmt.Sprintf("%s/record/units/%d", api, u2), `{"core":{"code":"US 2b"}}`) // a version
		f.must(t, 200, f.writer, "POST", api+"/geoface/feature", fmt.Sprintf(`{"tb":"units","id":%d,"geometry":"POINT(14.48 40.75)"}`, u1))
		f.uploadOK(t, f.writer, "units", u1, "a.txt", []byte("a"))
		f.uploadOK(t, f.writer, "units", u2, "b.txt", []byte("b"))

		preview := func(tb string) map[string]any {
			t.Helper()
			return f.must(t, 200, f.super, "GET", api+"/config/table/"+tb+"/deletion", "")["deletion"].(map[string]any)
		}
		p := preview("units")
		// Saves, uploads and relations each store a version of the record.
		var versions float64
		if err := f.app.DB.QueryRow(t.Context(), `SELECT COUNT(*) FROM `+f.app.DB.Sys("versions")+` WHERE tb = 'units'`).Scan(&versions); err != nil || versions < 1 {
			t.Fatalf("versions of units: %v %v", versions, err)
		}
		for k, want := range map[string]any{"rs": 1.0, "manual_links": 1.0, "versions": versions, "geodata": 1.0, "file_links": 2.0, "files": 2.0, "needs_cascade": true} {
			if p[k] != want {
				t.Errorf("units %s = %v, want %v (%v)", k, p[k], want, p)
			}
		}
		if fmt.Sprint(p["records"]) != "map[units:2]" || fmt.Sprint(p["dropped"]) != "[units]" {
			t.Errorf("units records/dropped: %v", p)
		}
		// finds.unit is a lookup to units: the deletion needs cascade.
		if us := fmt.Sprint(p["usages"]); us != "[map[field:unit kind:lookup table:finds value:units]]" {
			t.Errorf("units usages: %s", us)
		}
		// finds: its admin-made plugin table goes with it, and needs cascade.
		p = preview("finds")
		if fmt.Sprint(p["dropped"]) != "[finds_samples finds]" || fmt.Sprint(p["records"]) != "map[finds:1 finds_samples:0]" || p["needs_cascade"] != true {
			t.Errorf("finds: %v", p)
		}
		for _, c := range []struct {
			who, tb string
			status  int
			code    string
		}{{f.super, "nowhere", 404, "table_not_found"}, {f.writer, "units", 403, "not_enough_privilege"}} {
			if code, m := f.do(t, c.who, "GET", api+"/config/table/"+c.tb+"/deletion", ""); code != c.status || m["code"] != c.code {
				t.Errorf("%s: %d %v, want %d %s", c.tb, code, m, c.status, c.code)
			}
		}
		// The preview wrote nothing; the deletion removes what it counted
		// and keeps the files.
		if code, m := f.do(t, f.super, "DELETE", api+"/config/table/units", ""); code != 409 || m["code"] != "table_in_use" {
			t.Fatalf("delete without cascade: %d %v", code, m)
		}
		f.must(t, 200, f.super, "DELETE", api+"/config/table/units?cascade=1", "")
		for q, want := range map[string]int{
			`SELECT COUNT(*) FROM ` + f.app.DB.Sys("rs"):                               0,
			`SELECT COUNT(*) FROM ` + f.app.DB.Sys("manual_links"):                     0,
			`SELECT COUNT(*) FROM ` + f.app.DB.Sys("geodata"):                          0,
			`SELECT COUNT(*) FROM ` + f.app.DB.Sys("file_links"):                       0,
			`SELECT COUNT(*) FROM ` + f.app.DB.Sys("files"):                            2,
			`SELECT COUNT(*) FROM ` + f.app.DB.Sys("versions") + ` WHERE tb = 'units'`: 0,
		} {
			var n int
			if err := f.app.DB.QueryRow(t.Context(), q).Scan(&n); err != nil || n != want {
				t.Errorf("%s: %d %v, want %d", q, n, err, want)
			}
		}
	})
}
