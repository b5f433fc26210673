package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestStratigraphicRelationsAndManualLinks(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		if _, err := schema.PutTable(context.Background(), f.app.DB, "units", schema.TableConfig{RS: schema.RSOn(true), IDField: schema.Set("code")}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		u1 := f.create(t, f.writer, "units", `{"code":"US 1"}`)
		u2 := f.create(t, f.writer, "units", `{"code":"US 2"}`)
		u3 := f.create(t, f.self, "units", `{"code":"US 3"}`)
		site := f.create(t, f.writer, "sites", `{"name":"Pompeii"}`)
		rs := "/dig/api/record/units/rs"
		body := func(a, r, b int64) string { return fmt.Sprintf(`{"first":%d,"relation":%d,"second":"%d"}`, a, r, b) }
		code, m := f.do(t, f.writer, "POST", rs, body(u1, 5, u2)) // US 1 covers US 2
		if code != 200 || m["code"] != "ok_relation_add" {
			t.Fatalf("add relation: %d %v", code, m)
		}
		relID := int64(m["id"].(float64))
		for _, s := range []testenv.Scenario{
			{Name: "same pair, same direction", Body: body(u1, 5, u2), ExpectedStatus: 409, ExpectedContent: []string{`"code":"relation_already_exist"`}},
			{Name: "same pair, other direction", Body: body(u2, 1, u1), ExpectedStatus: 409, ExpectedContent: []string{`"code":"relation_already_exist"`}},
			{Name: "self relation", Body: body(u1, 9, u1), ExpectedStatus: 400, ExpectedContent: []string{`"code":"self_relation"`}},
			{Name: "unknown code", Body: body(u1, 11, u3), ExpectedStatus: 400, ExpectedContent: []string{`"code":"invalid_relation"`}},
			{Name: "missing record", Body: body(u1, 5, 9999), ExpectedStatus: 404, ExpectedContent: []string{`"code":"record_not_found"`, `"id":9999`}},
			{Name: "missing fields", Body: `{"first":1}`, ExpectedStatus: 400},
			{Name: "BraDypUS's id_first/id_second names, same pair", Body: fmt.Sprintf(`{"id_first":%d,"id_second":%d,"relation":5}`, u1, u2), ExpectedStatus: 409, ExpectedContent: []string{`"code":"relation_already_exist"`}},
			{Name: "table without rs", URL: "/dig/api/record/sites/rs", Body: body(site, 5, site+1), ExpectedStatus: 400, ExpectedContent: []string{`"code":"rs_not_enabled"`}},
			{Name: "reader may not", Body: body(u1, 6, u3), Headers: testenv.Bearer(f.reader), ExpectedStatus: 403},
			{Name: "self_writer from another's record", Body: body(u1, 6, u3), Headers: testenv.Bearer(f.self), ExpectedStatus: 403},
		} {
			s.Method = "POST"
			if s.URL == "" {
				s.URL = rs
			}
			if s.Headers == nil {
				s.Headers = testenv.Bearer(f.writer)
			}
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
		// Each record shows the relation from its own side.
		_, rec := f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/units/%d", u2), "")
		rel := rec["rs"].(map[string]any)[fmt.Sprint(relID)].(map[string]any)
		if rel["first"] != float64(u2) || rel["relation"] != 1.0 || rel["first_label"] != "US 2" || rel["second_label"] != "US 1" {
			t.Fatalf("relation seen from US 2: %v", rel)
		}
		f.do(t, f.self, "POST", rs, body(u3, 8, u2)) // US 3 fills US 2 (own record)
		_, m = f.do(t, f.reader, "GET", "/dig/api/rs/matrix?tb=units", "")
		if len(m["nodes"].([]any)) != 3 || len(m["relations"].([]any)) != 2 || m["has_chronology"] != false {
			t.Fatalf("matrix: %v", m)
		}
		// A unit without relations yet is part of the matrix too.
		f.create(t, f.writer, "units", `{"code":"US 4"}`)
		if _, m = f.do(t, f.reader, "GET", "/dig/api/rs/matrix?tb=units", ""); len(m["nodes"].([]any)) != 4 {
			t.Fatalf("matrix with an unrelated unit: %v", m)
		}
		// has_chronology follows the chronology feature of the table.
		spec := schema.FeatureSpec{Plugin: "chronology", Name: schema.ChronologyFeature}
		if err := schema.ActivateFeature(t.Context(), f.app.DB, "units", spec, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		if _, m = f.do(t, f.reader, "GET", "/dig/api/rs/matrix?tb=units", ""); m["has_chronology"] != true {
			t.Fatalf("matrix with chronology active: %v", m)
		}
		if code, _ := f.do(t, f.reader, "GET", "/dig/api/rs/matrix?tb=sites", ""); code != 400 {
			t.Fatalf("matrix of a table without rs: %d", code)
		}
		if code, _ := f.do(t, f.reader, "GET", "/dig/api/rs/matrix", ""); code != 400 {
			t.Fatalf("matrix without tb: %d", code)
		}
		if code, _ := f.do(t, f.reader, "DELETE", fmt.Sprintf("/dig/api/rs/%d", relID), ""); code != 403 {
			t.Fatalf("reader deleted a relation: %d", code)
		}
		if code, m := f.do(t, f.writer, "DELETE", fmt.Sprintf("/dig/api/rs/%d", relID), ""); code != 200 {
			t.Fatalf("delete relation: %d %v", code, m)
		}
		if code, _ := f.do(t, f.writer, "DELETE", fmt.Sprintf("/dig/api/rs/%d", relID), ""); code != 404 {
			t.Fatalf("delete relation twice: %d", code)
		}

		// Manual links: shown on both records, once either way.
		link := fmt.Sprintf(`{"tb_one":"units","id_one":%d,"tb_two":"sites","id_two":%d,"label":"excavated at"}`, u1, site)
		code, m = f.do(t, f.writer, "POST", "/dig/api/manual-link", link)
		if code != 200 || m["code"] != "all_links_saved" {
			t.Fatalf("manual link: %d %v", code, m)
		}
		reverse := fmt.Sprintf(`{"tb_one":"sites","id_one":%d,"tb_two":"units","id_two":%d}`, site, u1)
		if code, m = f.do(t, f.writer, "POST", "/dig/api/manual-link", reverse); code != 409 || m["code"] != "link_already_exists" {
			t.Fatalf("reverse duplicate: %d %v", code, m)
		}
		_, rec = f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/sites/%d", site), "")
		ml := rec["manualLinks"].(map[string]any)
		if len(ml) != 1 || !strings.Contains(fmt.Sprint(ml), "ref_label:US 1") || !strings.Contains(fmt.Sprint(ml), "excavated at") {
			t.Fatalf("link on the other record: %v", ml)
		}
		for _, s := range []testenv.Scenario{
			{Name: "to a missing record", Body: fmt.Sprintf(`{"tb_one":"units","id_one":%d,"tb_two":"sites","id_two":999}`, u1), ExpectedStatus: 404},
			{Name: "to an unknown table", Body: fmt.Sprintf(`{"tb_one":"units","id_one":%d,"tb_two":"nowhere","id_two":1}`, u1), ExpectedStatus: 404},
			{Name: "to itself", Body: fmt.Sprintf(`{"tb_one":"units","id_one":%d,"tb_two":"units","id_two":%d}`, u1, u1), ExpectedStatus: 400},
		} {
			s.Method, s.URL, s.Headers = "POST", "/dig/api/manual-link", testenv.Bearer(f.writer)
			t.Run(s.Name, func(t *testing.T) { s.Run(t, f.inst.Server) })
		}
		// A find's lookup shows as a link on its unit.
		f.create(t, f.writer, "finds", fmt.Sprintf(`{"label":"a","unit":%d}`, u1))
		_, rec = f.do(t, f.reader, "GET", fmt.Sprintf("/dig/api/record/units/%d", u1), "")
		if l := rec["links"].(map[string]any)["finds"].(map[string]any); l["tot"] != 1.0 {
			t.Fatalf("links: %v", l)
		}
	})
}

// TestDeletedUserLeavesRecordsWithoutCreator: records survive their
// creator's account, with creator set to null (SPEC §2.4).
func TestDeletedUserLeavesRecordsWithoutCreator(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		id := f.create(t, f.writer, "sites", `{"name":"Kept"}`)
		writer := f.userID(t, "writer@example.org")
		if code, m := f.do(t, f.super, "DELETE", fmt.Sprintf("/dig/api/user/%d", writer), ""); code != 200 {
			t.Fatalf("delete user: %d %v", code, m)
		}
		var creator *int64
		if err := f.app.DB.QueryRow(t.Context(), `SELECT creator FROM `+f.app.DB.Qualify("sites")+` WHERE id = ?`, id).Scan(&creator); err != nil || creator != nil {
			t.Fatalf("creator after deleting the user: %v %v", creator, err)
		}
	})
}

// TestSubsetHidesRowsFromExport completes the subset paths: export too.
func TestSubsetHidesRowsFromExport(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		f.create(t, f.super, "sites", `{"name":"Pompeii"}`)
		f.create(t, f.super, "sites", `{"name":"Herculaneum"}`)
		priv := fmt.Sprintf("/dig/api/user/%d/privileges", f.userID(t, "reader@example.org"))
		if code, m := f.do(t, f.super, "POST", priv, `{"table_name":"sites","privilege":30,"subset":{"name":{"_eq":"Pompeii"}}}`); code != 200 {
			t.Fatalf("override: %d %v", code, m)
		}
		for _, format := range []string{"csv", "json"} {
			rec := f.export(t, f.reader, "sites", "format="+format)
			if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Pompeii") || strings.Contains(rec.Body.String(), "Herculaneum") {
				t.Fatalf("%s export under a subset: %d %s", format, rec.Code, rec.Body.String())
			}
		}
	})
}
