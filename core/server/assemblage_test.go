package server_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// pivotText is a pivot answer as "group(label):char=n,char=n; ..." in the
// answer's order, for comparing with hand-computed tables.
func pivotText(t *testing.T, m map[string]any) string {
	t.Helper()
	groups, _ := m["groups"].([]any)
	chars, _ := m["chars"].([]any)
	data, _ := m["data"].(map[string]any)
	labels, _ := m["group_labels"].(map[string]any)
	if groups == nil || chars == nil || data == nil || labels == nil {
		t.Fatalf("not a pivot: %v", m)
	}
	var parts []string
	for _, g := range groups {
		row := data[g.(string)].(map[string]any)
		cells := []string{}
		for _, c := range chars {
			if v, ok := row[c.(string)]; ok {
				cells = append(cells, fmt.Sprintf("%s=%v", c, v))
			}
		}
		name := g.(string)
		if l, ok := labels[name]; ok {
			name += "(" + l.(string) + ")"
		}
		parts = append(parts, name+":"+strings.Join(cells, ","))
	}
	return strings.Join(parts, "; ")
}

// TestAssemblagePivots: pivots through no, one and two lookup hops and
// from a plugin table, checked against counts worked out by hand; the
// measures, both filter forms, row subsets hiding rows of the source and
// of the grouped table, and the bad definitions.
func TestAssemblagePivots(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		if code, m := f.do(t, f.super, "PUT", api+"/config/table/sites", `{"id_field":"name"}`); code != 200 {
			t.Fatalf("id_field: %d %v", code, m)
		}
		s1 := f.create(t, f.super, "sites", `{"name":"Pompeii"}`)
		s2 := f.create(t, f.super, "sites", `{"name":"Ostia"}`)
		u1 := f.create(t, f.super, "units", fmt.Sprintf(`{"code":"US1","site":%d}`, s1))
		u2 := f.create(t, f.super, "units", fmt.Sprintf(`{"code":"US2","site":%d}`, s1))
		u3 := f.create(t, f.super, "units", fmt.Sprintf(`{"code":"US3","site":%d}`, s2))
		for _, r := range []string{
			fmt.Sprintf(`{"label":"a","weight":10,"unit":%d}`, u1),
			fmt.Sprintf(`{"label":"a","weight":20,"unit":%d}`, u1),
			fmt.Sprintf(`{"label":"b","weight":5,"unit":%d}`, u2),
			fmt.Sprintf(`{"label":"b","weight":5,"unit":%d}`, u3),
			fmt.Sprintf(`{"label":"c","weight":7,"unit":%d}`, u3),
			`{"label":"c"}`,
		} {
			f.create(t, f.writer, "finds", r)
		}
		withSamples := f.create(t, f.writer, "finds", `{"label":"d"}`)
		if code, m := f.do(t, f.writer, "POST", fmt.Sprintf("%s/record/finds/%d", api, withSamples),
			`{"core":{},"plugins":{"finds_samples":[{"fields":{"lab":"L1","bp":100}},{"fields":{"lab":"L1","bp":200}},{"fields":{"lab":"L2","bp":100}}]}}`); code != 200 {
			t.Fatalf("samples: %d %v", code, m)
		}
		data := func(who, def string) (int, map[string]any) {
			return f.do(t, who, "POST", api+"/assemblage/data", `{"definition":`+def+`}`)
		}
		unitHop := `{"local_field":"unit","join_tb":"units","join_pk":"id"}`
		siteHop := `{"local_field":"site","join_tb":"sites","join_pk":"id"}`
		u1s, u2s, u3s := fmt.Sprint(u1), fmt.Sprint(u2), fmt.Sprint(u3)
		s1s, s2s := fmt.Sprint(s1), fmt.Sprint(s2)
		cases := []struct {
			name, def, want string
		}{
			{"no hop, by a plain field", `{"source_tb":"finds","char_field":"label","group_path":[],"group_field":"weight","measure":"count"}`,
				":c=1,d=1; 5:b=2; 7:c=1; 10:a=1; 20:a=1"},
			{"one hop, by a plain field", `{"source_tb":"finds","char_field":"label","group_path":[` + unitHop + `],"group_field":"code","measure":"count"}`,
				":c=1,d=1; US1:a=2; US2:b=1; US3:b=1,c=1"},
			{"one hop, by a lookup: labels of its table", `{"source_tb":"finds","char_field":"label","group_path":[` + unitHop + `],"group_field":"site"}`,
				":c=1,d=1; " + s1s + "(Pompeii):a=2,b=1; " + s2s + "(Ostia):b=1,c=1"},
			{"two hops, by id", `{"source_tb":"finds","char_field":"label","group_path":[` + unitHop + `,` + siteHop + `],"group_field":"id","measure":"count"}`,
				":c=1,d=1; " + s1s + "(Pompeii):a=2,b=1; " + s2s + "(Ostia):b=1,c=1"},
			{"two hops, by a plain field", `{"source_tb":"finds","char_field":"label","group_path":[` + unitHop + `,` + siteHop + `],"group_field":"name"}`,
				":c=1,d=1; Ostia:b=1,c=1; Pompeii:a=2,b=1"},
			{"the source's lookup itself", `{"source_tb":"finds","char_field":"label","group_field":"unit","measure":"COUNT"}`,
				":c=1,d=1; " + u1s + "(" + u1s + "):a=2; " + u2s + "(" + u2s + "):b=1; " + u3s + "(" + u3s + "):b=1,c=1"},
			{"sum", `{"source_tb":"finds","char_field":"label","group_path":[` + unitHop + `],"group_field":"code","measure":"sum","measure_field":"weight"}`,
				":c=0,d=0; US1:a=30; US2:b=5; US3:b=5,c=7"},
			{"count_distinct", `{"source_tb":"finds","char_field":"label","group_path":[` + unitHop + `,` + siteHop + `],"group_field":"name","measure":"count_distinct","measure_field":"weight"}`,
				":c=0,d=0; Ostia:b=1,c=1; Pompeii:a=2,b=1"},
			{"wizard filters", `{"source_tb":"finds","char_field":"label","group_path":[` + unitHop + `],"group_field":"code","filters":[{"field":"weight","op":"_gt","value":"6"},{"field":"","op":"_eq","value":""}]}`,
				"US1:a=2; US3:c=1"},
			{"a flag filter needs no value", `{"source_tb":"finds","char_field":"label","group_field":"code","group_path":[` + unitHop + `],"filters":[{"field":"unit","op":"_empty","value":""}]}`,
				":c=1,d=1"},
			{"a filter object, through a path", `{"source_tb":"finds","char_field":"label","group_path":[` + unitHop + `],"group_field":"code","filters":{"unit":{"site":{"name":{"_eq":"Ostia"}}}}}`,
				"US3:b=1,c=1"},
			{"a plugin source, through id_link", `{"source_tb":"finds_samples","source_type":"plugin","char_field":"lab","group_path":[{"local_field":"id_link","join_tb":"finds"}],"group_field":"label","measure":"count"}`,
				"d:L1=2,L2=1"},
			{"a plugin source, distinct", `{"source_tb":"finds_samples","char_field":"lab","group_field":"bp","measure":"count_distinct","measure_field":"id_link"}`,
				"100:L1=1,L2=1; 200:L1=1"},
		}
		for _, tc := range cases {
			code, m := data(f.reader, tc.def)
			if code != 200 {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
			if got := pivotText(t, m); got != tc.want {
				t.Fatalf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
			}
		}
		_, m := data(f.reader, `{"source_tb":"finds","char_field":"label","group_path":[`+unitHop+`,`+siteHop+`],"group_field":"id"}`)
		if m["group_tb"] != "sites" || m["group_field"] != "id" {
			t.Fatalf("group axis: %v", m)
		}

		for _, tc := range []struct{ name, def, code string }{
			{"no source", `{"char_field":"label","group_field":"id"}`, "parameter_missing"},
			{"no char field", `{"source_tb":"finds","group_field":"id"}`, "parameter_missing"},
			{"no group field", `{"source_tb":"finds","char_field":"label"}`, "parameter_missing"},
			{"unknown char field", `{"source_tb":"finds","char_field":"nope","group_field":"id"}`, "invalid_field"},
			{"unknown group field", `{"source_tb":"finds","char_field":"label","group_path":[` + unitHop + `],"group_field":"label"}`, "invalid_field"},
			{"an injection for a field", `{"source_tb":"finds","char_field":"label","group_field":"label\"; DROP TABLE finds; --"}`, "invalid_field"},
			{"a hop through a plain field", `{"source_tb":"finds","char_field":"label","group_path":[{"local_field":"label","join_tb":"units"}],"group_field":"id"}`, "invalid_path"},
			{"a hop to the wrong table", `{"source_tb":"finds","char_field":"label","group_path":[{"local_field":"unit","join_tb":"sites"}],"group_field":"id"}`, "invalid_path"},
			{"a hop on another key", `{"source_tb":"finds","char_field":"label","group_path":[{"local_field":"unit","join_tb":"units","join_pk":"code"}],"group_field":"id"}`, "invalid_path"},
			{"three hops", `{"source_tb":"finds","char_field":"label","group_path":[` + unitHop + `,` + siteHop + `,` + siteHop + `],"group_field":"id"}`, "invalid_path"},
			{"unknown measure", `{"source_tb":"finds","char_field":"label","group_field":"id","measure":"median"}`, "invalid_measure"},
			{"sum without a field", `{"source_tb":"finds","char_field":"label","group_field":"id","measure":"sum"}`, "invalid_measure"},
			{"sum of text", `{"source_tb":"finds","char_field":"label","group_field":"id","measure":"sum","measure_field":"label"}`, "invalid_field"},
			{"a bad filter", `{"source_tb":"finds","char_field":"label","group_field":"id","filters":[{"field":"nope","op":"_eq","value":"1"}]}`, "invalid_field"},
			{"filters of the wrong shape", `{"source_tb":"finds","char_field":"label","group_field":"id","filters":"weight > 1"}`, "invalid_filter"},
		} {
			if code, m := data(f.reader, tc.def); code != 400 || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		if code, m := data(f.reader, `{"source_tb":"nope","char_field":"label","group_field":"id"}`); code != 404 {
			t.Fatalf("unknown table: %d %v", code, m)
		}

		// Row subsets: the reader sees no "c" find and only Pompeii; an
		// Ostia unit's finds are counted in the empty group, unnamed.
		reader := f.userID(t, "reader@example.org")
		for _, p := range []string{`{"table_name":"finds","privilege":30,"subset":{"label":{"_neq":"c"}}}`, `{"table_name":"sites","privilege":30,"subset":{"name":{"_eq":"Pompeii"}}}`} {
			if code, m := f.do(t, f.super, "POST", fmt.Sprintf("%s/user/%d/privileges", api, reader), p); code != 200 {
				t.Fatalf("subset: %d %v", code, m)
			}
		}
		twoHops := `{"source_tb":"finds","char_field":"label","group_path":[` + unitHop + `,` + siteHop + `],"group_field":"id"}`
		if _, m := data(f.reader, twoHops); pivotText(t, m) != ":b=1,d=1; "+s1s+"(Pompeii):a=2,b=1" {
			t.Fatalf("under subsets: %s", pivotText(t, m))
		}
		oneHopLookup := `{"source_tb":"finds","char_field":"label","group_path":[` + unitHop + `],"group_field":"site"}`
		if _, m := data(f.reader, oneHopLookup); pivotText(t, m) != ":d=1; "+s1s+"(Pompeii):a=2,b=1; "+s2s+":b=1" {
			t.Fatalf("labels under subsets: %s", pivotText(t, m))
		}
		if _, m := data(f.writer, twoHops); pivotText(t, m) != ":c=1,d=1; "+s1s+"(Pompeii):a=2,b=1; "+s2s+"(Ostia):b=1,c=1" {
			t.Fatalf("another user is not subset: %s", pivotText(t, m))
		}
		// A table the caller may not read at all is refused, as a source or on the path.
		if code, m := f.do(t, f.super, "POST", fmt.Sprintf("%s/user/%d/privileges", api, reader), `{"table_name":"units","privilege":40}`); code != 200 {
			t.Fatalf("no read: %d %v", code, m)
		}
		if code, m := data(f.reader, twoHops); code != 403 || m["code"] != "not_enough_privilege" {
			t.Fatalf("unreadable hop: %d %v", code, m)
		}
		if code, m := data(f.reader, `{"source_tb":"units","char_field":"code","group_field":"id"}`); code != 403 {
			t.Fatalf("unreadable source: %d %v", code, m)
		}
		_, m = f.do(t, f.reader, "GET", api+"/assemblage/sources", "")
		if strings.Contains(fmt.Sprint(m["tables"]), "units") {
			t.Fatalf("unreadable table listed: %v", m)
		}
	})
}

// TestAssemblageMeta: the sources and the fields a wizard builds paths from.
func TestAssemblageMeta(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		code, m := f.do(t, f.reader, "GET", api+"/assemblage/sources", "")
		if code != 200 {
			t.Fatalf("sources: %d %v", code, m)
		}
		var names []string
		for _, x := range m["tables"].([]any) {
			names = append(names, x.(map[string]any)["name"].(string))
		}
		sort.Strings(names)
		if fmt.Sprint(names) != "[finds sites units]" {
			t.Fatalf("tables: %v", m["tables"])
		}
		plugins := m["plugins"].([]any)
		if len(plugins) != 1 {
			t.Fatalf("plugins: %v", plugins)
		}
		if p := plugins[0].(map[string]any); p["name"] != "finds_samples" || p["parent_tb"] != "finds" || p["parent_label"] != "Finds" {
			t.Fatalf("plugin: %v", p)
		}

		code, m = f.do(t, f.reader, "GET", api+"/assemblage/table-meta?tb=finds", "")
		if code != 200 {
			t.Fatalf("meta: %d %v", code, m)
		}
		byName := map[string]map[string]any{}
		for _, x := range m["fields"].([]any) {
			fd := x.(map[string]any)
			byName[fd["name"].(string)] = fd
		}
		if u := byName["unit"]; u["is_fk"] != true || u["fk_tb"] != "units" || u["fk_pk"] != "id" || u["fk_label"] != "Stratigraphic units" || u["id_from_tb"] != "units" {
			t.Fatalf("lookup field: %v", u)
		}
		if w := byName["weight"]; w["is_numeric"] != true || w["is_fk"] != false {
			t.Fatalf("number field: %v", w)
		}
		if byName["id"] == nil || byName["label"]["is_numeric"] != false {
			t.Fatalf("fields: %v", byName)
		}
		if rel, _ := json.Marshal(m["relations"]); string(rel) != `[{"label":"Stratigraphic units","tb":"units"}]` {
			t.Fatalf("relations: %s", rel)
		}
		_, m = f.do(t, f.reader, "GET", api+"/assemblage/table-meta?tb=finds_samples", "")
		if !strings.Contains(fmt.Sprint(m["fields"]), "fk_tb:finds") {
			t.Fatalf("plugin id_link: %v", m["fields"])
		}
		if code, m := f.do(t, f.reader, "GET", api+"/assemblage/table-meta", ""); code != 400 || m["code"] != "parameter_missing" {
			t.Fatalf("no tb: %d %v", code, m)
		}
		if code, _ := f.do(t, f.reader, "GET", api+"/assemblage/table-meta?tb=nope", ""); code != 404 {
			t.Fatalf("unknown tb: %d", code)
		}
	})
}

// TestAssemblageSaved: an analysis is its owner's; shared, others see it
// read-only; bad definitions are not kept.
func TestAssemblageSaved(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		def := `{"source_tb":"finds","char_field":"label","group_path":[],"group_field":"unit","measure":"count","measure_field":null,"filters":[],"measure_label":"Finds"}`
		code, m := f.do(t, f.writer, "POST", api+"/assemblages", `{"name":"Finds by unit","definition":`+def+`}`)
		if code != 200 || m["code"] != "ok_save_analysis" {
			t.Fatalf("save: %d %v", code, m)
		}
		an := m["analysis"].(map[string]any)
		id := an["id"]
		if an["owned_by_me"] != true || an["is_global"] != false || an["definition"].(map[string]any)["measure_label"] != "Finds" || an["created_at"] == nil {
			t.Fatalf("saved: %v", an)
		}
		for _, tc := range []struct{ name, body, code string }{
			{"no name", `{"name":" ","definition":` + def + `}`, "parameter_missing"},
			{"no definition", `{"name":"x"}`, "parameter_missing"},
			{"bad definition", `{"name":"x","definition":{"source_tb":"finds","char_field":"nope","group_field":"id"}}`, "invalid_field"},
		} {
			if code, m := f.do(t, f.writer, "POST", api+"/assemblages", tc.body); code != 400 || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
		list := func(who string) []any {
			code, m := f.do(t, who, "GET", api+"/assemblages", "")
			if code != 200 {
				t.Fatalf("list: %d %v", code, m)
			}
			return m["analyses"].([]any)
		}
		if n := len(list(f.writer)); n != 1 {
			t.Fatalf("writer's list: %d", n)
		}
		if n := len(list(f.reader)); n != 0 {
			t.Fatalf("a private analysis seen: %d", n)
		}
		url := fmt.Sprintf("%s/assemblage/%v", api, id)
		if code, _ := f.do(t, f.reader, "POST", url+"/share", ""); code != 404 {
			t.Fatalf("another's private analysis: %d", code)
		}
		if code, m := f.do(t, f.writer, "POST", url+"/share", ""); code != 200 || m["code"] != "ok_share_analysis" {
			t.Fatalf("share: %d %v", code, m)
		}
		seen := list(f.reader)
		if len(seen) != 1 || seen[0].(map[string]any)["is_global"] != true || seen[0].(map[string]any)["owned_by_me"] != false ||
			seen[0].(map[string]any)["owner_name"] == nil {
			t.Fatalf("shared, as the reader sees it: %v", seen)
		}
		for _, r := range []struct{ method, url, body string }{
			{"POST", url, `{"name":"mine now","definition":` + def + `}`}, {"POST", url + "/unshare", ""}, {"DELETE", url, ""},
		} {
			if code, m := f.do(t, f.reader, r.method, r.url, r.body); code != 403 || m["code"] != "not_enough_privilege" {
				t.Fatalf("reader %s %s: %d %v", r.method, r.url, code, m)
			}
		}
		if code, m := f.do(t, f.writer, "POST", url, `{"name":"Finds by label","definition":{"source_tb":"finds","char_field":"label","group_field":"id"}}`); code != 200 ||
			m["analysis"].(map[string]any)["name"] != "Finds by label" || m["analysis"].(map[string]any)["is_global"] != true {
			t.Fatalf("update: %d %v", code, m)
		}
		if code, m := f.do(t, f.writer, "POST", url, `{"name":"x","definition":{"source_tb":"finds","char_field":"label","group_field":"id","measure":"avg"}}`); code != 400 || m["code"] != "invalid_measure" {
			t.Fatalf("bad update: %d %v", code, m)
		}
		if code, m := f.do(t, f.writer, "POST", url+"/unshare", ""); code != 200 || m["code"] != "ok_unshare_analysis" {
			t.Fatalf("unshare: %d %v", code, m)
		}
		if n := len(list(f.reader)); n != 0 {
			t.Fatalf("unshared still seen: %d", n)
		}
		if code, m := f.do(t, f.super, "POST", url+"/share", ""); code != 200 {
			t.Fatalf("an admin shares another's: %d %v", code, m)
		}
		if code, m := f.do(t, f.writer, "DELETE", url, ""); code != 200 || m["code"] != "ok_delete_analysis" {
			t.Fatalf("delete: %d %v", code, m)
		}
		if code, _ := f.do(t, f.writer, "DELETE", url, ""); code != 404 {
			t.Fatalf("deleted twice: %d", code)
		}
		if code, _ := f.do(t, f.writer, "POST", api+"/assemblage/x/share", ""); code != 404 {
			t.Fatalf("a bad id: %d", code)
		}
	})
}
