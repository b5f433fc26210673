package server_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestVocabularies: the suite's and openapi's forms, privileges, bad
// input, and what an item change does to the records that store it.
func TestVocabularies(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		ctx, now := t.Context(), time.Now().UTC()
		for _, def := range []schema.FieldDef{
			{Name: "period", Label: "Period", Type: "select", VocabularySet: "periodo"},
			{Name: "periods", Label: "Periods", Type: "multi_select", VocabularySet: "periodo"},
		} {
			if _, err := schema.AddField(ctx, f.app.DB, "finds", def, now); err != nil {
				t.Fatal(err)
			}
		}
		// The samples plugin rows use the set too.
		if _, err := schema.AddField(ctx, f.app.DB, "finds_samples", schema.FieldDef{Name: "period", Label: "Period", Type: "select", VocabularySet: "periodo"}, now); err != nil {
			t.Fatal(err)
		}
		const api = "/dig/api"
		add := func(who, body string) (int, map[string]any) { return f.do(t, who, "POST", api+"/vocabularies", body) }
		id := func(m map[string]any) int64 { return int64(m["id"].(float64)) }

		// Empty at first; readers read.
		if code, m := f.do(t, f.reader, "GET", api+"/vocabularies", ""); code != 200 || len(m["vocs"].([]any)) != 0 {
			t.Fatalf("empty list: %d %v", code, m)
		}
		_, a1 := add(f.super, `{"voc":"periodo","def":"Arcaico"}`)
		_, a2 := add(f.super, `{"voc":"periodo","def":" Classico "}`)
		_, a3 := add(f.super, `{"tb":"finds","field":"period","value":"Ellenistico"}`) // openapi's form
		add(f.super, `{"voc":"tipo","def":"Positivo"}`)
		arcaico, classico, ellenistico := id(a1), id(a2), id(a3)

		bad := []struct {
			name, who, method, path, body string
			status                        int
			code                          string
		}{
			{"reader may not add", f.reader, "POST", "/vocabularies", `{"voc":"x","def":"y"}`, 403, "not_enough_privilege"},
			{"writer may not add", f.writer, "POST", "/vocabularies", `{"voc":"x","def":"y"}`, 403, "not_enough_privilege"},
			{"duplicate item", f.super, "POST", "/vocabularies", `{"voc":"periodo","def":"Arcaico"}`, 409, "vocabulary_item_exists"},
			{"empty item", f.super, "POST", "/vocabularies", `{"voc":"periodo","def":"  "}`, 400, "invalid_vocabulary"},
			{"no set", f.super, "POST", "/vocabularies", `{"def":"x"}`, 400, "invalid_vocabulary"},
			{"control character", f.super, "POST", "/vocabularies", `{"voc":"periodo","def":"a\u0007b"}`, 400, "invalid_vocabulary"},
			{"field without a set", f.super, "POST", "/vocabularies", `{"tb":"finds","field":"label","value":"x"}`, 400, "invalid_vocabulary"},
			{"unknown table", f.super, "GET", "/vocabularies?tb=nope&field=x", "", 404, "table_not_found"},
			{"unknown item", f.super, "DELETE", "/vocabulary/999999", "", 404, "error_def_erase"},
			{"not an id", f.super, "PATCH", "/vocabulary/abc", `{"val":"x"}`, 404, "error_def_erase"},
			{"rename to a sibling", f.super, "PATCH", fmt.Sprintf("/vocabulary/%d", arcaico), `{"val":"Classico"}`, 409, "vocabulary_item_exists"},
			{"sort with an unknown id", f.super, "POST", "/vocabularies/sort", fmt.Sprintf(`{"ids":[%d,999999]}`, classico), 404, "error_def_erase"},
			{"sort with no ids", f.super, "POST", "/vocabularies/sort", `{"ids":[]}`, 400, "invalid_vocabulary"},
			{"keep_values not a boolean", f.super, "DELETE", fmt.Sprintf("/vocabulary/%d?keep_values=maybe", arcaico), "", 400, "invalid_parameter"},
		}
		for _, tc := range bad {
			code, m := f.do(t, tc.who, tc.method, api+tc.path, tc.body)
			if code != tc.status || m["code"] != tc.code {
				t.Fatalf("%s: %d %v, want %d %s", tc.name, code, m, tc.status, tc.code)
			}
		}

		// Sets by name, items in order, trimmed; the failed sort changed nothing.
		_, m := f.do(t, f.reader, "GET", api+"/vocabularies", "")
		vocs := m["vocs"].([]any)
		if len(vocs) != 2 || vocs[0].(map[string]any)["name"] != "periodo" {
			t.Fatalf("sets: %v", vocs)
		}
		defs := func() []any {
			_, m := f.do(t, f.reader, "GET", api+"/vocabularies?voc=periodo", "")
			var out []any
			for _, it := range m["vocabularies"].([]any) {
				out = append(out, it.(map[string]any)["def"])
			}
			return out
		}
		if got := fmt.Sprint(defs()); got != "[Arcaico Classico Ellenistico]" {
			t.Fatalf("items: %s", got)
		}
		if code, m := f.do(t, f.super, "POST", api+"/vocabularies/sort", fmt.Sprintf(`{"ids":["%d",%d,%d]}`, ellenistico, arcaico, classico)); code != 200 || m["code"] != "ok_sort_update" {
			t.Fatalf("sort: %d %v", code, m)
		}
		if got := fmt.Sprint(defs()); got != "[Ellenistico Arcaico Classico]" {
			t.Fatalf("sorted: %s", got)
		}

		// Usages name every field of the set.
		_, m = f.do(t, f.reader, "GET", api+"/vocabularies/usages", "")
		if n := len(m["usages"].(map[string]any)["periodo"].([]any)); n != 3 {
			t.Fatalf("usages: %v", m["usages"])
		}

		// Records using "Arcaico": as the value, inside a list, in a plugin row.
		r1 := f.create(t, f.writer, "finds", `{"label":"a1","period":"Arcaico"}`)
		r2 := f.create(t, f.writer, "finds", `{"label":"a2","periods":["Classico","Arcaico"]}`)
		code, m := f.do(t, f.writer, "POST", api+"/record/finds", `{"core":{"label":"a3"},"plugins":{"finds_samples":[{"lab":"L","period":"Arcaico"}]}}`)
		if code != 200 {
			t.Fatalf("plugin row: %d %v", code, m)
		}
		r3 := int64(m["id"].(float64))
		other := f.create(t, f.writer, "finds", `{"label":"a4","period":"Classico"}`)

		// Deleting it is refused while they use it.
		code, m = f.do(t, f.super, "DELETE", fmt.Sprintf("%s/vocabulary/%d", api, arcaico), "")
		if code != http.StatusConflict || m["code"] != "vocabulary_item_in_use" || m["count"] != float64(3) {
			t.Fatalf("delete in use: %d %v", code, m)
		}
		// Renaming rewrites the three records, each with a version.
		code, m = f.do(t, f.super, "PATCH", fmt.Sprintf("%s/vocabulary/%d", api, arcaico), `{"val":"Arcaico (EBA)"}`)
		if code != 200 || m["code"] != "ok_def_update" || m["records"] != float64(3) {
			t.Fatalf("rename: %d %v", code, m)
		}
		read := func(id int64) map[string]any {
			_, m := f.do(t, f.reader, "GET", fmt.Sprintf("%s/record/finds/%d", api, id), "")
			return m
		}
		val := func(rec map[string]any, field string) any {
			return rec["core"].(map[string]any)[field].(map[string]any)["val"]
		}
		if v := val(read(r1), "period"); v != "Arcaico (EBA)" {
			t.Fatalf("r1 period %v", v)
		}
		if v := fmt.Sprint(val(read(r2), "periods")); v != `["Classico","Arcaico (EBA)"]` && v != "[Classico Arcaico (EBA)]" {
			t.Fatalf("r2 periods %v", v)
		}
		sample := read(r3)["plugins"].(map[string]any)["finds_samples"].(map[string]any)["data"].([]any)[0].(map[string]any)
		if v := sample["period"].(map[string]any)["val"]; v != "Arcaico (EBA)" {
			t.Fatalf("r3 sample period %v", v)
		}
		if v := val(read(other), "period"); v != "Classico" {
			t.Fatalf("untouched record changed: %v", v)
		}
		for _, id := range []int64{r1, r2, r3} {
			_, m := f.do(t, f.reader, "GET", fmt.Sprintf("%s/record/finds/%d/versions", api, id), "")
			if m["total"] == float64(0) || m["total"] == nil {
				t.Fatalf("record %d: no version after the rename: %v", id, m)
			}
		}
		// keep_values deletes it and leaves the values.
		if code, m := f.do(t, f.super, "DELETE", fmt.Sprintf("%s/vocabulary/%d?keep_values=1", api, arcaico), ""); code != 200 || m["code"] != "ok_def_erase" {
			t.Fatalf("delete keeping values: %d %v", code, m)
		}
		if v := val(read(r1), "period"); v != "Arcaico (EBA)" {
			t.Fatalf("value not kept: %v", v)
		}
		if got := fmt.Sprint(defs()); got != "[Ellenistico Classico]" {
			t.Fatalf("after delete: %s", got)
		}
		// An unused item goes without asking.
		if code, m := f.do(t, f.super, "DELETE", fmt.Sprintf("%s/vocabulary/%d", api, ellenistico), ""); code != 200 {
			t.Fatalf("delete unused: %d %v", code, m)
		}
	})
}

// TestVocabularyChangesPassTheGate: renaming or deleting an item rewrites
// or counts the rows of every table that stores its set, so an admin
// denied one of them, or limited there to a row subset, is refused before
// anything changes; an admin with every row renames as before.
func TestVocabularyChangesPassTheGate(t *testing.T) {
	testenv.EachWithOwner(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		ctx, now := t.Context(), time.Now().UTC()
		if _, err := schema.AddField(ctx, f.app.DB, "finds", schema.FieldDef{Name: "period", Label: "Period", Type: "select", VocabularySet: "periodo"}, now); err != nil {
			t.Fatal(err)
		}
		const api = "/dig/api"
		_, m := f.do(t, f.super, "POST", api+"/vocabularies", `{"voc":"periodo","def":"Arcaico"}`)
		item := int64(m["id"].(float64))
		id := f.create(t, f.super, "finds", `{"label":"a","period":"Arcaico"}`)
		admin := func(email, override string) string {
			u := testenv.NewUser(t, f.app, email, email, auth.Admin)
			f.must(t, 200, f.super, "POST", fmt.Sprintf("%s/user/%d/privileges", api, u.ID), override)
			return testenv.Login(t, f.inst.Server, "dig", email, testenv.Password)
		}
		denied := admin("denied@example.org", `{"table_name":"finds","privilege":40}`)
		subset := admin("subset@example.org", `{"table_name":"finds","privilege":10,"subset":{"label":{"_eq":"zzz"}}}`)
		for _, who := range []string{denied, subset} {
			for _, req := range []struct{ method, body string }{
				{"PATCH", `{"val":"Arcaic"}`},
				{"DELETE", ""},
			} {
				code, m := f.do(t, who, req.method, fmt.Sprintf("%s/vocabulary/%d", api, item), req.body)
				if code != 403 || m["code"] != "not_enough_privilege" || m["table"] != "finds" {
					t.Fatalf("%s: %d %v, want 403 not_enough_privilege on finds", req.method, code, m)
				}
			}
		}
		m = f.must(t, 200, f.super, "GET", fmt.Sprintf("%s/record/finds/%d", api, id), "")
		if got := m["core"].(map[string]any)["period"].(map[string]any)["val"]; got != "Arcaico" {
			t.Fatalf("the refused rename changed the record: %v", got)
		}
		full := admin("full@example.org", `{"table_name":"sites","privilege":30}`)
		if code, m := f.do(t, full, "PATCH", fmt.Sprintf("%s/vocabulary/%d", api, item), `{"val":"Arcaic"}`); code != 200 || m["records"] != float64(1) {
			t.Fatalf("an admin with every row: %d %v", code, m)
		}
	})
}
