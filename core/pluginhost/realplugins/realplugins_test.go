package realplugins_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// The three plugins load, their features activate on a table by name or
// alias, and the full record shows what they add: the chronology and
// osteology columns, the schema flags and the radiocarbon child table.
func TestRealPluginsActivation(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, nil)
		list := f.json("GET", "/plugins", "", f.super, 200)["plugins"].([]any)
		var loaded []string
		for _, p := range list {
			p := p.(map[string]any)
			loaded = append(loaded, p["name"].(string))
			if p["state"] != "running" {
				t.Errorf("plugin %v: %v", p["name"], p["state"])
			}
		}
		if !slices.Equal(loaded, realPlugins) {
			t.Fatalf("GET /plugins: %v", loaded)
		}

		f.activate("finds", "fuzzy-date", "chronology") // the alias
		f.activate("finds", "osteology", "osteology")
		f.activate("finds", "radiocarbon", "radiocarbon")
		// Activating again is harmless.
		f.activate("finds", "chronology", "chronology")
		if status, code, _ := f.code("POST", "/config/table/finds/chronology", "", f.writer); status != 403 {
			t.Errorf("activation by a writer: %d %s", status, code)
		}
		if status, code, _ := f.code("POST", "/config/table/finds/munsell", "", f.super); status != 404 || code != "feature_not_found" {
			t.Errorf("unknown feature: %d %s", status, code)
		}
		if status, code, _ := f.code("POST", "/config/table/finds_radiocarbon/chronology", "", f.super); status != 400 || code != "invalid_parameter" {
			t.Errorf("a feature on the plugin's own child table: %d %s", status, code)
		}
		active := map[string][]any{}
		for _, p := range f.json("GET", "/plugins", "", f.super, 200)["plugins"].([]any) {
			for feat, tables := range p.(map[string]any)["active_tables"].(map[string]any) {
				active[feat] = tables.([]any)
			}
		}
		for _, feat := range realPlugins {
			if fmt.Sprint(active[feat]) != "[finds]" {
				t.Errorf("active_tables of %s: %v", feat, active[feat])
			}
		}

		id := f.create("finds", `{"core":{"code":"F1"}}`)
		rec := f.record("finds", id)
		for _, c := range []string{"chrono_from", "chrono_to", "chrono_label", "chrono_certainty", "chrono_period", "osteo_data"} {
			if _, ok := obj(rec, "core")[c]; !ok {
				t.Errorf("core lacks %s: %v", c, obj(rec, "core"))
			}
		}
		sch := obj(rec, "schema")
		if sch["has_chronology"] != true || sch["has_osteology"] != true {
			t.Errorf("schema flags: has_chronology %v, has_osteology %v", sch["has_chronology"], sch["has_osteology"])
		}
		child := obj(sch, "plugins", "finds_radiocarbon")
		var cols []string
		readonly := map[string]bool{}
		for _, fd := range child["fields"].([]any) {
			fd := fd.(map[string]any)
			cols = append(cols, fd["name"].(string))
			readonly[fd["name"].(string)] = fd["readonly"] == true
		}
		if want := []string{"lab_code", "bp", "bp_error", "material", "d13c", "curve", "cal_1s_from", "cal_1s_to",
			"cal_2s_from", "cal_2s_to", "notes"}; !slices.Equal(cols, want) {
			t.Errorf("finds_radiocarbon fields %v, want %v", cols, want)
		}
		if !readonly["cal_1s_from"] || !readonly["cal_2s_to"] || readonly["bp"] {
			t.Errorf("computed columns are read-only, the others not: %v", readonly)
		}
		if p := obj(rec, "plugins", "finds_radiocarbon"); p == nil || fmt.Sprint(obj(p, "metadata")["tot"]) != "0" {
			t.Errorf("plugins.finds_radiocarbon: %v", obj(rec, "plugins"))
		}

		// A table without the features has none of it.
		other := f.create("units", `{"core":{"code":"U1"}}`)
		rec = f.record("units", other)
		if sch := obj(rec, "schema"); sch["has_chronology"] != false || sch["has_osteology"] != false || len(obj(sch, "plugins")) != 0 {
			t.Errorf("units schema: %v", sch)
		}
		if _, ok := obj(rec, "core")["chrono_from"]; ok {
			t.Errorf("units has chrono_from")
		}
	})
}

// chronoFixture has chronology active on finds and units (units pointing
// at sites through the lookup "site") and finds dated every way a label
// can: closed, ante quem, post quem, undated, explicit bounds.
type chronoFixture struct {
	*fixture
	ids map[string]int64 // finds by code
}

func newChronoFixture(t *testing.T, e store.Engine) *chronoFixture {
	t.Helper()
	f := &chronoFixture{fixture: newFixture(t, e, nil), ids: map[string]int64{}}
	// Before activation neither the column nor the operator exists there.
	if status, code, _ := f.code("POST", "/records/finds", `{"filter":{"chrono_from":{"_chrono_overlap":[-350,-320]}}}`, f.reader); status != 400 || code != "invalid_field" {
		t.Errorf("_chrono_overlap before activation: %d %s", status, code)
	}
	f.activate("finds", "fuzzy-date", "chronology")
	f.activate("units", "chronology", "chronology")
	for _, r := range []struct{ code, core string }{
		{"A", `"chrono_label":"c4l BCE"`},     // -325 … -301
		{"B", `"chrono_label":"c1 CE/c2 CE"`}, // 1 … 200
		{"C", `"chrono_label":"?/c4 BCE"`},    // ante quem: … -301
		{"D", `"chrono_label":"c4 BCE/?"`},    // post quem: -400 …
		{"E", `"chrono_period":"unknown"`},    // undated
		{"F", `"chrono_label":"c4e BCE"`},     // -400 … -376
		{"G", `"chrono_label":"c1 CE/?"`},     // post quem: 1 …
		{"H", `"chrono_label":"?/c5 BCE"`},    // ante quem: … -401
		// Bounds sent with a label: the label is free text.
		{"I", `"chrono_label":"Hellenistic to early Roman","chrono_from":"-250","chrono_to":100,"chrono_certainty":"probabile"`},
	} {
		f.ids[r.code] = f.create("finds", `{"core":{"code":"`+r.code+`",`+r.core+`}}`)
	}
	return f
}

// list lists the codes of finds matching a list request.
func (f *chronoFixture) list(t *testing.T, method, url, body string) []string {
	t.Helper()
	got := codes(f.json(method, url, body, f.reader, 200))
	sort.Strings(got)
	return got
}

func TestRealPluginChronologySave(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newChronoFixture(t, e)
		for code, want := range map[string][2]any{
			"A": {int64(-325), int64(-301)}, "B": {int64(1), int64(200)}, "C": {nil, int64(-301)}, "D": {int64(-400), nil},
			"E": {nil, nil}, "I": {int64(-250), int64(100)},
		} {
			rec := f.record("finds", f.ids[code])
			if got := [2]any{num(val(rec, "chrono_from")), num(val(rec, "chrono_to"))}; got != want {
				t.Errorf("%s: stored %v, want %v", code, got, want)
			}
		}
		rec := f.record("finds", f.ids["I"])
		if val(rec, "chrono_label") != "Hellenistic to early Roman" || num(val(rec, "chrono_certainty")) != int64(2) {
			t.Errorf("free-text label and certainty word: %v %v", val(rec, "chrono_label"), val(rec, "chrono_certainty"))
		}
		// Straight from the database: the hook's values are what is stored.
		var from, to int64
		if err := f.app.DB.QueryRow(context.Background(), `SELECT chrono_from, chrono_to FROM `+f.app.DB.Qualify("finds")+
			` WHERE code = 'A'`).Scan(&from, &to); err != nil || from != -325 || to != -301 {
			t.Errorf("stored A: %d %d %v", from, to, err)
		}

		before := f.count("finds")
		for _, c := range []struct {
			name, body, field, rule string
		}{
			{"unreadable label", `{"core":{"code":"X","chrono_label":"c99x"}}`, "chrono_label", "label"},
			{"from after to", `{"core":{"code":"X","chrono_from":100,"chrono_to":-100}}`, "chrono_from", "order"},
			{"year 0", `{"core":{"code":"X","chrono_from":0,"chrono_to":5}}`, "chrono_from", "range"},
			{"not a year", `{"core":{"code":"X","chrono_from":"soon"}}`, "chrono_from", "integer"},
			{"unknown certainty", `{"core":{"code":"X","chrono_certainty":7}}`, "chrono_certainty", "certainty"},
		} {
			status, code, body := f.code("POST", "/record/finds", c.body, f.writer)
			e := fieldError(body, c.field, c.rule)
			if status != 400 || code != "validation_failed" || e == nil || e["label"] == "" || e["table"] != nil {
				t.Errorf("%s: %d %s %v", c.name, status, code, body)
			}
		}
		if n := f.count("finds"); n != before {
			t.Errorf("refused saves wrote %d rows", n-before)
		}

		// An update sending one bound is checked against the stored other.
		a := fmt.Sprint(f.ids["A"])
		status, code, body := f.code("POST", "/record/finds/"+a, `{"core":{"chrono_from":-200}}`, f.writer)
		if e := fieldError(body, "chrono_from", "order"); status != 400 || code != "validation_failed" || e == nil {
			t.Errorf("from after the stored to: %d %s %v", status, code, body)
		}
		f.json("POST", "/record/finds/"+a, `{"core":{"chrono_from":-330}}`, f.writer, 200)
		if rec := f.record("finds", f.ids["A"]); num(val(rec, "chrono_from")) != int64(-330) || num(val(rec, "chrono_to")) != int64(-301) {
			t.Errorf("after a partial update: %v %v", val(rec, "chrono_from"), val(rec, "chrono_to"))
		}

		// The parser as a route.
		p := f.json("GET", "/chrono/parse?q="+url.QueryEscape("c1 CE/c2 CE"), "", f.reader, 200)
		if num(p["from"]) != int64(1) || num(p["to"]) != int64(200) || p["kind"] != "range" {
			t.Errorf("/chrono/parse: %v", p)
		}
		p = f.json("GET", "/chrono/parse?q="+url.QueryEscape("?/c3 CE"), "", f.reader, 200)
		if p["from"] != nil || num(p["to"]) != int64(300) || p["kind"] != "ante_quem" {
			t.Errorf("/chrono/parse ante quem: %v", p)
		}
		if status, code, _ := f.code("GET", "/chrono/parse?q=c99x", "", f.reader); status != 400 || code != "invalid_label" {
			t.Errorf("/chrono/parse of a bad label: %d %s", status, code)
		}
		if status, _, _ := f.code("GET", "/chrono/parse?q=c4", "", ""); status != 401 {
			t.Errorf("/chrono/parse without a credential: %d", status)
		}
	})
}

func TestRealPluginChronologyOverlap(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newChronoFixture(t, e)
		bracket := func(pairs ...string) string {
			q := url.Values{}
			for i := 0; i < len(pairs); i += 2 {
				q.Add(pairs[i], pairs[i+1])
			}
			return "/records/finds?per_page=100&" + q.Encode()
		}
		const op = "filter[chrono_from][_chrono_overlap]"
		for _, c := range []struct {
			name, method, url, body string
			want                    string
		}{
			// -350 … -320: A (-325 … -301), C (ante quem … -301), D (post quem -400 …).
			{"JSON body, array", "POST", "/records/finds", `{"filter":{"chrono_from":{"_chrono_overlap":[-350,-320]}},"per_page":100}`, "[A C D]"},
			{"JSON body, object", "POST", "/records/finds", `{"filter":{"chrono_from":{"_chrono_overlap":{"from":-350,"to":-320}}},"per_page":100}`, "[A C D]"},
			{"given backwards", "POST", "/records/finds", `{"filter":{"chrono_from":{"_chrono_overlap":[-320,-350]}},"per_page":100}`, "[A C D]"},
			{"tokens", "POST", "/records/finds", `{"filter":{"chrono_from":{"_chrono_overlap":["c4 BCE","c4 BCE"]}},"per_page":100}`, "[A C D F]"},
			{"with another condition", "POST", "/records/finds", `{"filter":{"chrono_from":{"_chrono_overlap":[-350,-320]},"code":{"_neq":"A"}},"per_page":100}`, "[C D]"},
			{"inside _or", "POST", "/records/finds", `{"filter":{"_or":[{"chrono_from":{"_chrono_overlap":[150,160]}},{"code":{"_eq":"E"}}]},"per_page":100}`, "[B D E G]"},
			// Open query sides: up to -390 takes the ante quem records and
			// every dating starting by then; from 150 every dating ending
			// after it and the post quem ones.
			{"open from", "POST", "/records/finds", `{"filter":{"chrono_from":{"_chrono_overlap":{"to":-390}}},"per_page":100}`, "[C D F H]"},
			{"open to", "POST", "/records/finds", `{"filter":{"chrono_from":{"_chrono_overlap":[150,null]}},"per_page":100}`, "[B D G]"},
			{"brackets, list", "GET", bracket(op+"[]", "-350", op+"[]", "-320"), "", "[A C D]"},
			{"brackets, indexes", "GET", bracket(op+"[0]", "-350", op+"[1]", "-320"), "", "[A C D]"},
			{"brackets, object", "GET", bracket(op+"[from]", "-350", op+"[to]", "-320"), "", "[A C D]"},
			{"brackets, open from", "GET", bracket(op+"[to]", "-390"), "", "[C D F H]"},
			{"brackets, open to", "GET", bracket(op+"[from]", "150"), "", "[B D G]"},
			{"filter= JSON", "GET", "/records/finds?per_page=100&filter=" + url.QueryEscape(`{"chrono_from":{"_chrono_overlap":[-350,-320]}}`), "", "[A C D]"},
		} {
			if got := fmt.Sprint(f.list(t, c.method, c.url, c.body)); got != c.want {
				t.Errorf("%s: %s, want %s", c.name, got, c.want)
			}
		}
		// The same filter, written by hand: the operator is only shorthand.
		hand := `{"filter":{"_and":[{"_or":[{"chrono_from":{"_nnull":true}},{"chrono_to":{"_nnull":true}}]},` +
			`{"_or":[{"chrono_from":{"_null":true}},{"chrono_from":{"_lte":-320}}]},{"_or":[{"chrono_to":{"_null":true}},{"chrono_to":{"_gte":-350}}]}]},"per_page":100}`
		if got := fmt.Sprint(f.list(t, "POST", "/records/finds", hand)); got != "[A C D]" {
			t.Errorf("built-in equivalent: %s", got)
		}
		for _, c := range []struct{ name, filter string }{
			{"three values", `{"chrono_from":{"_chrono_overlap":[1,2,3]}}`},
			{"no bound", `{"chrono_from":{"_chrono_overlap":[null,null]}}`},
			{"not a year", `{"chrono_from":{"_chrono_overlap":["soon","later"]}}`},
			{"another field", `{"chrono_to":{"_chrono_overlap":[-350,-320]}}`},
		} {
			if status, code, body := f.code("POST", "/records/finds", `{"filter":`+c.filter+`}`, f.reader); status != 400 || code != "invalid_filter" {
				t.Errorf("%s: %d %s %v", c.name, status, code, body)
			}
		}
	})
}

// The timeline and the related-records density read through the Host
// (Catalog, QueryRecords) as the caller: units point at sites through a
// lookup, chronology is active on units (and finds), not on sites.
func TestRealPluginChronologyTimelineAndRelated(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newChronoFixture(t, e)
		ids := func(list []any) []int64 {
			var out []int64
			for _, r := range list {
				out = append(out, num(r.(map[string]any)["id"]).(int64))
			}
			return out
		}

		// The timeline's window is the overlap rule; records ordered by
		// from, ante quem first.
		tl := f.json("GET", "/chrono/timeline?from=-350&to=-320&"+url.Values{"tb[]": {"finds"}}.Encode(), "", f.reader, 200)
		if got, want := ids(tl["records"].([]any)), []int64{f.ids["C"], f.ids["D"], f.ids["A"]}; !slices.Equal(got, want) ||
			num(tl["total"]) != int64(3) || tl["truncated"] != false {
			t.Errorf("timeline: %v (total %v, truncated %v), want %v", got, tl["total"], tl["truncated"], want)
		}
		first := tl["records"].([]any)[0].(map[string]any)
		if first["tb"] != "finds" || first["from"] != nil || num(first["to"]) != int64(-301) || first["label_text"] != "?/c4 BCE" {
			t.Errorf("timeline entry: %v", first)
		}

		pompeii := f.create("sites", `{"core":{"name":"Pompeii"}}`)
		paestum := f.create("sites", `{"core":{"name":"Paestum"}}`)
		var units []int64
		for _, u := range []struct {
			site  int64
			label string
		}{{pompeii, "c4l BCE"}, {pompeii, "c4l BCE"}, {pompeii, "c1 CE/c2 CE"}, {pompeii, ""}, {paestum, "c5 BCE"}} {
			core := fmt.Sprintf(`{"code":"U%d","site":%d`, len(units)+1, u.site)
			if u.label != "" {
				core += fmt.Sprintf(`,"chrono_label":%q`, u.label)
			}
			id := f.create("units", `{"core":`+core+`}}`)
			if u.site == pompeii {
				units = append(units, id)
			}
		}

		// Without tb every chronology table counts: U1 and U2 join.
		tl = f.json("GET", "/chrono/timeline?from=-350&to=-320", "", f.reader, 200)
		var tables []string
		for _, r := range tl["records"].([]any) {
			tables = append(tables, r.(map[string]any)["tb"].(string))
		}
		sort.Strings(tables)
		if fmt.Sprint(tables) != "[finds finds finds units units]" {
			t.Errorf("timeline of every table: %v", tables)
		}
		// A table without chronology: BraDypUS's client opens the timeline
		// of any table and BraDypUS skips one without fuzzy_date; so does
		// Strata, answering 200 with reason feature_not_active. With it,
		// the answer is unchanged (no reason) and grouped as BraDypUS
		// groups it (tables).
		for _, c := range []struct {
			name, query string
			records     int
			inactive    []any // nil: no reason
		}{
			{"without the feature", "tb[]=sites", 0, []any{"sites"}},
			{"one with, one without", "from=-350&to=-320&tb[]=sites&tb[]=finds", 3, []any{"sites"}},
			{"with the feature", "from=-350&to=-320&tb[]=finds", 3, nil},
		} {
			tl := f.json("GET", "/chrono/timeline?"+c.query, "", f.reader, 200)
			recs, _ := tl["records"].([]any)
			tables, _ := tl["tables"].([]any)
			if tl["status"] != "success" || len(recs) != c.records || num(tl["total"]) != int64(c.records) || tables == nil {
				t.Errorf("%s: %v", c.name, tl)
				continue
			}
			if c.records > 0 {
				g := tables[0].(map[string]any)
				if len(tables) != 1 || g["tb_id"] != "finds" || len(g["records"].([]any)) != c.records {
					t.Errorf("%s: tables %v", c.name, tables)
				}
			} else if len(tables) != 0 {
				t.Errorf("%s: tables %v", c.name, tables)
			}
			_, has := tl["reason"]
			if c.inactive == nil {
				if has {
					t.Errorf("%s: reason %v", c.name, tl["reason"])
				}
				continue
			}
			if tl["reason"] != "feature_not_active" || tl["message"] != "chronology is not active on sites" || !slices.Equal(tl["inactive"].([]any), c.inactive) {
				t.Errorf("%s: reason %v message %v inactive %v", c.name, tl["reason"], tl["message"], tl["inactive"])
			}
		}
		for _, c := range []struct {
			url, code string
			status    int
		}{
			{"/chrono/timeline?from=-100&to=-200", "invalid_parameter", 400},
			{"/chrono/timeline?tb[]=nowhere", "table_not_found", 404},
			{fmt.Sprintf("/chrono/related/sites/%d", 999999), "record_not_found", 404},
		} {
			if status, code, _ := f.code("GET", c.url, "", f.reader); status != c.status || code != c.code {
				t.Errorf("%s: %d %s", c.url, status, code)
			}
		}

		// Related, automatic: units is a child of sites through "site";
		// the click-through filter lists exactly the related units.
		checkRelated := func(mode string) map[string]any {
			t.Helper()
			rel := f.json("GET", fmt.Sprintf("/chrono/related/sites/%d", pompeii), "", f.reader, 200)
			list, _ := rel["related"].([]any)
			if rel["mode"] != mode || len(list) != 1 {
				t.Fatalf("related (%s): %v", mode, rel)
			}
			r := list[0].(map[string]any)
			if r["tb"] != "units" || num(r["records"]) != int64(4) {
				t.Errorf("related entry: %v", r)
			}
			h := obj(r, "histogram")
			peak := obj(r, "peak")
			if bins, _ := h["bins"].([]any); len(bins) != 60 || peak == nil {
				t.Errorf("histogram: %d bins, peak %v", len(bins), peak)
			} else if from, to := peak["from"].(float64), peak["to"].(float64); from < -330 || to > -295 {
				// U1 and U2 overlap there; U3 spreads thinly over 200 years.
				t.Errorf("peak %v … %v, want within c4l BCE", from, to)
			}
			body, _ := jsonText(map[string]any{"filter": r["filter"], "per_page": 100})
			got := ids(f.json("POST", "/records/units", body, f.reader, 200)["data"].([]any))
			slices.Sort(got)
			if !slices.Equal(got, units) {
				t.Errorf("click-through %v: %v, want %v", r["filter"], got, units)
			}
			return r
		}
		if r := checkRelated("auto"); r["fk_col"] != "site" || fmt.Sprint(r["filter"]) != fmt.Sprintf("map[site:map[_eq:%d]]", pompeii) {
			t.Errorf("automatic hop: fk_col %v, filter %v", r["fk_col"], r["filter"])
		}

		// With a density path (which needs a relation, not only a lookup)
		// the entry is the path's last table and the filter lists ids.
		f.json("PUT", "/config/table/sites", `{"chrono_density_path":["finds"]}`, f.super, 400)
		f.json("POST", "/config/relations", `{"from_tb":"units","from_col":"site","to_tb":"sites","to_col":"id"}`, f.super, 200)
		f.json("PUT", "/config/table/sites", `{"chrono_density_path":["units"]}`, f.super, 200)
		if r := checkRelated("path"); fmt.Sprint(r["path"]) != "[units]" || obj(r, "filter", "id")["_in"] == nil {
			t.Errorf("density path: path %v, filter %v", r["path"], r["filter"])
		}
	})
}

func TestRealPluginOsteology(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, nil)
		f.activate("finds", "osteology", "osteology")

		// Sent as JSON text (the column's type) with synonyms, odd case
		// and spaces: stored normalised.
		doc := `{"individuals":[{"id":" T1 ","label":"Tomb 1","bones":{"Femur_Right":{"present":true,"conservation":"Frammentario","certainty":"CERTO"},` +
			`"cranium":{"present":true,"conservation":"complete"},"tibia_left":{"present":false},"femur_left":{"present":true,"conservation":">50%"}}}]}`
		body, _ := jsonText(map[string]any{"core": map[string]any{"code": "B1", "osteo_data": doc}})
		id := f.create("finds", body)
		stored, _ := val(f.record("finds", id), "osteo_data").(string)
		want := `{"individuals":[{"id":"T1","label":"Tomb 1","notes":"","bones":{"cranium":{"present":true,"conservation":"complete"},` +
			`"femur_left":{"present":true,"conservation":"gt50"},"femur_right":{"present":true,"conservation":"fragmentary","certainty":"certain"},` +
			`"tibia_left":{"present":false}}}]}`
		if stored != want {
			t.Errorf("stored osteo_data:\n%s\nwant\n%s", stored, want)
		}
		// The document itself (an object) is accepted too, stored as text.
		obj2 := f.create("finds", `{"core":{"code":"B2","osteo_data":{"individuals":[{"id":1,"bones":{"ulna_left":{"present":true}}}]}}}`)
		if s, _ := val(f.record("finds", obj2), "osteo_data").(string); !strings.Contains(s, `"ulna_left":{"present":true}`) {
			t.Errorf("object form stored as %q", s)
		}

		before := f.count("finds")
		for _, c := range []struct{ name, doc, path, rule string }{
			{"unknown element", `{"individuals":[{"id":"T1","bones":{"femur_lft":{"present":true}}}]}`, "individuals[0].bones.femur_lft", "unknown_element"},
			{"bad conservation", `{"individuals":[{"id":"T1","bones":{"cranium":{"present":true,"conservation":"excellent"}}}]}`,
				"individuals[0].bones.cranium.conservation", "invalid_value"},
			{"second individual", `{"individuals":[{"id":"T1","bones":{}},{"id":"T2","bones":{"cranium":{}}}]}`, "individuals[1].bones.cranium.present", "required"},
			{"not JSON", `{"individuals":[`, "", "invalid_json"},
		} {
			body, _ := jsonText(map[string]any{"core": map[string]any{"code": "X", "osteo_data": c.doc}})
			status, code, answer := f.code("POST", "/record/finds", body, f.writer)
			e := fieldError(answer, "osteo_data", c.rule)
			if status != 400 || code != "validation_failed" || e == nil || (c.path != "" && fmt.Sprint(e["path"]) != c.path) {
				t.Errorf("%s: %d %s %v", c.name, status, code, answer)
			}
		}
		if n := f.count("finds"); n != before {
			t.Errorf("refused saves wrote %d rows", n-before)
		}

		sch := f.json("GET", "/osteology/schema", "", f.reader, 200)
		elements := map[string]map[string]any{}
		for _, el := range sch["elements"].([]any) {
			el := el.(map[string]any)
			elements[el["id"].(string)] = el
		}
		if fr := elements["femur_right"]; fr == nil || fr["region"] != "lower_limb" || fr["side"] != "right" || obj(fr, "labels")["it"] != "Femore destro" {
			t.Errorf("femur_right in the schema: %v", fr)
		}
		var regions []string
		for _, r := range sch["regions"].([]any) {
			regions = append(regions, r.(map[string]any)["id"].(string))
		}
		for _, r := range []string{"head", "spine", "thorax", "shoulder", "upper_limb", "pelvis", "lower_limb", "foot"} {
			if !slices.Contains(regions, r) {
				t.Errorf("regions %v lack %s", regions, r)
			}
		}
		if len(sch["conservation"].([]any)) != 5 || len(sch["certainty"].([]any)) != 3 {
			t.Errorf("values: %v %v", sch["conservation"], sch["certainty"])
		}

		sum := f.json("GET", fmt.Sprintf("/osteology/summary/finds/%d", id), "", f.reader, 200)
		inds := sum["individuals"].([]any)
		if len(inds) != 1 {
			t.Fatalf("summary: %v", sum)
		}
		ind := inds[0].(map[string]any)
		if ind["id"] != "T1" || num(ind["recorded"]) != int64(4) || num(ind["present"]) != int64(3) {
			t.Errorf("individual: %v", ind)
		}
		for _, r := range ind["regions"].([]any) {
			r := r.(map[string]any)
			switch r["region"] {
			case "head":
				if num(r["present"]) != int64(1) || num(obj(r, "conservation")["complete"]) != int64(1) {
					t.Errorf("head: %v", r)
				}
			case "lower_limb":
				c := obj(r, "conservation")
				if num(r["recorded"]) != int64(3) || num(r["present"]) != int64(2) || num(c["fragmentary"]) != int64(1) || num(c["gt50"]) != int64(1) {
					t.Errorf("lower_limb: %v", r)
				}
			}
		}
		unit := f.create("units", `{"core":{"code":"U1"}}`)
		for _, c := range []struct {
			url, code string
			status    int
		}{
			{"/osteology/summary/finds/999999", "record_not_found", 404},
			{fmt.Sprintf("/osteology/summary/units/%d", unit), "feature_not_active", 404},
			{"/osteology/summary/finds/x", "invalid_parameter", 400},
		} {
			if status, code, _ := f.code("GET", c.url, "", f.reader); status != c.status || code != c.code {
				t.Errorf("%s: %d %s", c.url, status, code)
			}
		}
	})
}

// calRow is a radiocarbon row as stored: lab code and the four ranges.
type calRow struct {
	lab                        string
	s1from, s1to, s2from, s2to any
}

// calRows reads a table's radiocarbon rows from the database, by id.
func (f *fixture) calRows(table string) []calRow {
	f.t.Helper()
	rows, err := f.app.DB.Query(context.Background(), `SELECT lab_code, cal_1s_from, cal_1s_to, cal_2s_from, cal_2s_to FROM `+
		f.app.DB.Qualify(table)+` ORDER BY id`)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var out []calRow
	for rows.Next() {
		var lab string
		var a, b, c, d *int64
		if err := rows.Scan(&lab, &a, &b, &c, &d); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, calRow{lab, orNil(a), orNil(b), orNil(c), orNil(d)})
	}
	if err := rows.Err(); err != nil {
		f.t.Fatal(err)
	}
	return out
}

func orNil(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// pin is the calibration the issue fixes: 3200 ± 40 BP on IntCal20.
var pin = calRow{"", int64(3386), int64(3450), int64(3278), int64(3486)}

func TestRealPluginRadiocarbon(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, nil)
		// The built-in curves, and those of STRATA_CURVES_DIR when the
		// test run sets it (the server passes it on).
		if !strings.Contains(f.logs.String(), "calibration curves loaded") || !strings.Contains(f.logs.String(), curvesDir) {
			t.Errorf("the plugin did not say it loaded the curves (dir %q): %s", curvesDir, f.logs.String())
		}
		f.activate("finds", "radiocarbon", "radiocarbon")

		// Client-sent ranges are ignored; numbers as text are numbers; an
		// empty curve is IntCal20; a row without an age has no ranges.
		id := f.create("finds", `{"core":{"code":"C1"},"plugins":{"finds_radiocarbon":[
			{"fields":{"lab_code":"OxA-1","bp":3200,"bp_error":40,"curve":"intcal20","material":"charcoal",
				"cal_1s_from":1,"cal_1s_to":2,"cal_2s_from":3,"cal_2s_to":4}},
			{"fields":{"lab_code":"OxA-2","bp":"3200","bp_error":"40","curve":""}},
			{"fields":{"lab_code":"OxA-3","material":"bone"}}]}}`)
		want := []calRow{{"OxA-1", pin.s1from, pin.s1to, pin.s2from, pin.s2to}, {"OxA-2", pin.s1from, pin.s1to, pin.s2from, pin.s2to}, {lab: "OxA-3"}}
		if got := f.calRows("finds_radiocarbon"); !slices.Equal(got, want) {
			t.Errorf("stored %v, want %v", got, want)
		}
		rec := f.record("finds", id)
		data := obj(rec, "plugins", "finds_radiocarbon")["data"].([]any)
		if len(data) != 3 {
			t.Fatalf("plugins.finds_radiocarbon: %v", obj(rec, "plugins"))
		}
		row := func(i int, col string) any { return num(obj(data[i].(map[string]any), col)["val"]) }
		if row(0, "cal_1s_from") != int64(3386) || row(0, "cal_2s_to") != int64(3486) || row(1, "curve") != "intcal20" || row(2, "cal_1s_from") != nil {
			t.Errorf("full record rows: %v", data)
		}

		// An update sending only bp recalibrates with the stored error;
		// one touching neither age, error nor curve leaves the ranges.
		first := fmt.Sprint(row(0, "id"))
		cal := f.json("GET", "/radiocarbon/calibrate?bp=2000&error=40", "", f.reader, 200)
		f.json("POST", fmt.Sprintf("/record/finds/%d", id), `{"plugins":{"finds_radiocarbon":[{"id":`+first+`,"fields":{"bp":2000}}]}}`, f.writer, 200)
		s1, s2 := obj(cal, "sigma1"), obj(cal, "sigma2")
		if got := f.calRows("finds_radiocarbon")[0]; got != (calRow{"OxA-1", num(s1["from"]), num(s1["to"]), num(s2["from"]), num(s2["to"])}) {
			t.Errorf("after changing bp: %v, want the route's %v %v", got, s1, s2)
		}
		f.json("POST", fmt.Sprintf("/record/finds/%d", id), `{"plugins":{"finds_radiocarbon":[{"id":`+first+`,"fields":{"notes":"re-read","cal_1s_from":5}}]}}`, f.writer, 200)
		if got := f.calRows("finds_radiocarbon")[0]; got.s1from != num(s1["from"]) {
			t.Errorf("after a notes-only update: %v", got)
		}

		// A bad row refuses the whole save: no record, no row, not even
		// the valid ones; on an update, not the core change either.
		finds, dates := f.count("finds"), f.count("finds_radiocarbon")
		for _, c := range []struct{ name, rows, field, rule string }{
			{"bp_error 0", `{"fields":{"bp":3200,"bp_error":0}}`, "bp_error", "range"},
			{"negative error", `{"fields":{"bp":3200,"bp_error":-5}}`, "bp_error", "range"},
			{"no error", `{"fields":{"bp":3200}}`, "bp_error", "required"},
			{"unknown curve", `{"fields":{"bp":3200,"bp_error":40,"curve":"intcal13"}}`, "curve", "unknown_curve"},
			{"beyond the curve", `{"fields":{"bp":60000,"bp_error":40}}`, "bp", "out_of_range"},
			{"not a number", `{"fields":{"bp":"old","bp_error":40}}`, "bp", "integer"},
		} {
			rows := `[{"fields":{"lab_code":"ok","bp":3200,"bp_error":40}},` + c.rows + `]`
			for _, url := range []string{"/record/finds", fmt.Sprintf("/record/finds/%d", id)} {
				status, code, body := f.code("POST", url, `{"core":{"code":"changed"},"plugins":{"finds_radiocarbon":`+rows+`}}`, f.writer)
				e := fieldError(body, c.field, c.rule)
				if status != 400 || code != "validation_failed" || e == nil || e["table"] != "finds_radiocarbon" || num(e["row"]) != int64(1) {
					t.Errorf("%s, %s: %d %s %v", c.name, url, status, code, body)
				}
			}
		}
		if f.count("finds") != finds || f.count("finds_radiocarbon") != dates || val(f.record("finds", id), "code") != "C1" {
			t.Errorf("refused saves wrote: %d finds (was %d), %d dates (was %d)", f.count("finds"), finds, f.count("finds_radiocarbon"), dates)
		}

		// The route.
		cal = f.json("GET", "/radiocarbon/calibrate?bp=3200&error=40", "", f.reader, 200)
		if s1, s2 := obj(cal, "sigma1"), obj(cal, "sigma2"); cal["curve"] != "intcal20" ||
			(calRow{"", num(s1["from"]), num(s1["to"]), num(s2["from"]), num(s2["to"])}) != pin {
			t.Errorf("calibrate: %v %v %v", cal["curve"], s1, s2)
		}
		if d, _ := cal["distribution"].([]any); len(d) == 0 || cal["citation"] == "" {
			t.Errorf("distribution of %d points, citation %v", len(d), cal["citation"])
		}
		if y := obj(cal, "sigma2_years"); num(y["from"]) != int64(1950-3486-1) || num(y["to"]) != int64(1950-3278-1) {
			t.Errorf("2σ in calendar years: %v", y)
		}
		if sh := f.json("GET", "/radiocarbon/calibrate?bp=3200&bp_error=40&curve=shcal20", "", f.reader, 200); sh["curve"] != "shcal20" {
			t.Errorf("SHCal20: %v", sh["curve"])
		}
		// Issue 30: the HPD intervals beside the envelopes (their science
		// is checked in the plugin's TestHPDIntervalsAgainstDistribution)
		// and the curves a client offers, through the server's router.
		if h1, _ := cal["hpd1"].([]any); len(h1) != 1 || num(h1[0].(map[string]any)["from"]) != int64(3386) {
			t.Errorf("hpd1 of 3200 ± 40 BP: %v", cal["hpd1"])
		}
		if cv, _ := f.json("GET", "/radiocarbon/curves", "", f.reader, 200)["curves"].([]any); len(cv) != 3 || cv[0].(map[string]any)["name"] != "intcal20" {
			t.Errorf("curves: %v", cv)
		}
		for _, c := range []struct {
			url, code string
			status    int
		}{
			{"/radiocarbon/calibrate?bp=3200", "parameter_missing", 400},
			{"/radiocarbon/calibrate?bp=3200&error=0", "invalid_parameter", 400},
			{"/radiocarbon/calibrate?bp=3200&error=40&curve=intcal13", "unknown_curve", 400},
		} {
			if status, code, _ := f.code("GET", c.url, "", f.reader); status != c.status || code != c.code {
				t.Errorf("%s: %d %s", c.url, status, code)
			}
		}
	})
}

// Deactivation hides a feature's columns, child table and data from
// lists, records, schema, writes and filters; reactivation brings them
// back as they were.
func TestRealPluginsDeactivateReactivate(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, nil)
		for _, p := range realPlugins {
			f.activate("finds", p, p)
		}
		// A radiocarbon row without an age needs no curves.
		doc := `{"individuals":[{"id":"T1","label":"","notes":"","bones":{"cranium":{"present":true}}}]}`
		body, _ := jsonText(map[string]any{"core": map[string]any{"code": "R1", "chrono_label": "c4l BCE", "osteo_data": doc},
			"plugins": map[string]any{"finds_radiocarbon": []any{map[string]any{"fields": map[string]any{"lab_code": "OxA-9", "material": "bone"}}}}})
		id := f.create("finds", body)
		url := fmt.Sprintf("/record/finds/%d", id)
		pluginCols := []string{"chrono_from", "chrono_to", "chrono_label", "chrono_certainty", "chrono_period", "osteo_data"}

		check := func(active bool) {
			t.Helper()
			rec := f.record("finds", id)
			for _, c := range pluginCols {
				if _, ok := obj(rec, "core")[c]; ok != active {
					t.Errorf("active %v: core has %s: %v", active, c, ok)
				}
			}
			if active && (num(val(rec, "chrono_from")) != int64(-325) || val(rec, "osteo_data") != doc) {
				t.Errorf("values back: %v %v", val(rec, "chrono_from"), val(rec, "osteo_data"))
			}
			rows := obj(rec, "plugins", "finds_radiocarbon")
			if (rows != nil) != active || (active && fmt.Sprint(obj(rows, "metadata")["tot"]) != "1") {
				t.Errorf("active %v: plugins %v", active, obj(rec, "plugins"))
			}
			sch := obj(rec, "schema")
			if sch["has_chronology"] != active || sch["has_osteology"] != active || (obj(sch, "plugins", "finds_radiocarbon") != nil) != active {
				t.Errorf("active %v: schema %v %v %v", active, sch["has_chronology"], sch["has_osteology"], obj(sch, "plugins"))
			}
			list := f.json("GET", "/records/finds", "", f.reader, 200)
			var fields []string
			for _, fd := range list["fields"].([]any) {
				fields = append(fields, fd.(map[string]any)["name"].(string))
			}
			row := list["data"].([]any)[0].(map[string]any)
			for _, c := range pluginCols {
				if _, ok := row[c]; ok != active || slices.Contains(fields, c) != active {
					t.Errorf("active %v: list row has %s: %v, fields %v", active, c, ok, fields)
				}
			}
			if active {
				return
			}
			for _, c := range []struct{ name, method, url, body string }{
				{"write chrono_label", "POST", url, `{"core":{"chrono_label":"c4 BCE"}}`},
				{"write chrono_from", "POST", "/record/finds", `{"core":{"code":"X","chrono_from":-300}}`},
				{"write osteo_data", "POST", url, `{"core":{"osteo_data":"{}"}}`},
				{"write radiocarbon rows", "POST", url, `{"plugins":{"finds_radiocarbon":[{"fields":{"lab_code":"x"}}]}}`},
				{"filter on chrono_from", "POST", "/records/finds", `{"filter":{"chrono_from":{"_lt":0}}}`},
				{"_chrono_overlap", "POST", "/records/finds", `{"filter":{"chrono_from":{"_chrono_overlap":[-350,-320]}}}`},
				{"ask for the column", "GET", "/records/finds?columns=code,chrono_from", ""},
			} {
				if status, code, body := f.code(c.method, c.url, c.body, f.writer); status != 400 || code != "invalid_field" {
					t.Errorf("%s while inactive: %d %s %v", c.name, status, code, body)
				}
			}
			if status, code, _ := f.code("GET", "/records/finds_radiocarbon", "", f.reader); status != 404 || code != "table_not_found" {
				t.Errorf("the hidden child table: %d %s", status, code)
			}
			// As BraDypUS answers a table without fuzzy_date: empty, and why.
			if tl := f.json("GET", "/chrono/timeline?tb[]=finds", "", f.reader, 200); len(tl["records"].([]any)) != 0 ||
				len(tl["tables"].([]any)) != 0 || tl["reason"] != "feature_not_active" {
				t.Errorf("timeline of an inactive table: %v", tl)
			}
		}

		check(true)
		f.deactivate("finds", "fuzzy-date", "chronology")
		f.deactivate("finds", "osteology", "osteology")
		f.deactivate("finds", "radiocarbon", "radiocarbon")
		// Deactivating again is harmless; a feature never activated on a
		// table cannot be.
		f.deactivate("finds", "chronology", "chronology")
		if status, code, _ := f.code("DELETE", "/config/table/units/chronology", "", f.super); status != 404 || code != "feature_not_active" {
			t.Errorf("deactivating a feature never activated: %d %s", status, code)
		}
		check(false)
		// Saves not touching the features need none of them.
		f.json("POST", url, `{"core":{"code":"R1b"}}`, f.writer, 200)
		f.create("finds", `{"core":{"code":"R2"}}`)
		// Hidden, not gone.
		var from int64
		if err := f.app.DB.QueryRow(context.Background(), `SELECT chrono_from FROM `+f.app.DB.Qualify("finds")+
			fmt.Sprintf(` WHERE id = %d`, id)).Scan(&from); err != nil || from != -325 || f.count("finds_radiocarbon") != 1 {
			t.Errorf("data while inactive: %d %v, %d dates", from, err, f.count("finds_radiocarbon"))
		}

		f.activate("finds", "chronology", "chronology")
		f.activate("finds", "osteology", "osteology")
		f.activate("finds", "radiocarbon", "radiocarbon")
		check(true)
		if got := codes(f.json("POST", "/records/finds", `{"filter":{"chrono_from":{"_chrono_overlap":[-350,-320]}}}`, f.reader, 200)); fmt.Sprint(got) != "[R1b]" {
			t.Errorf("overlap after reactivation: %v", got)
		}
	})
}

// The radiocarbon process is SIGKILLed (and the chronology one with it):
// saves with radiocarbon rows answer 503 plugin_unavailable and write
// nothing, so do lists using _chrono_overlap; what needs neither goes on.
// Once the supervisor has restarted them the same requests work.
func TestRealPluginDown(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		// Two seconds of backoff leave time to see the refusals.
		f := newFixture(t, e, func(o *pluginhost.Options) { o.MinBackoff, o.MaxBackoff = 2*time.Second, 2*time.Second })
		for _, p := range realPlugins {
			f.activate("finds", p, p)
		}
		withRows := `{"core":{"code":"D%d","chrono_label":"c4l BCE"},"plugins":{"finds_radiocarbon":[` +
			`{"fields":{"lab_code":"L1","bp":3200,"bp_error":40}},{"fields":{"lab_code":"L2","bp":3200,"bp_error":40}}]}}`
		id := f.create("finds", fmt.Sprintf(withRows, 0))
		url := fmt.Sprintf("/record/finds/%d", id)
		stored := obj(f.record("finds", id), "plugins", "finds_radiocarbon")["data"].([]any)
		rowID := obj(stored[0].(map[string]any), "id")["val"]
		overlap := `{"filter":{"chrono_from":{"_chrono_overlap":[-350,-320]}}}`

		pids := map[string]int{}
		for _, p := range []string{"radiocarbon", "chronology"} {
			if pids[p] = f.mgr.PID(p); pids[p] == 0 {
				t.Fatalf("no %s process", p)
			}
			if err := syscall.Kill(pids[p], syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
		for p, pid := range pids {
			for deadline := time.Now().Add(20 * time.Second); f.mgr.PID(p) == pid; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s: process %d still listed", p, pid)
				}
			}
			if s := f.mgr.State(p); s != pluginhost.StateRestarting {
				t.Fatalf("%s after the kill: %s", p, s)
			}
		}

		finds, dates := f.count("finds"), f.count("finds_radiocarbon")
		for _, c := range []struct{ name, method, url, body string }{
			{"create with rows", "POST", "/record/finds", `{"core":{"code":"D1"},"plugins":{"finds_radiocarbon":[{"fields":{"lab_code":"L3","bp":3200,"bp_error":40}}]}}`},
			{"update adding a row", "POST", url, `{"core":{"code":"changed"},"plugins":{"finds_radiocarbon":[{"fields":{"lab_code":"L3","bp":100,"bp_error":20}}]}}`},
			{"update of a row", "POST", url, fmt.Sprintf(`{"plugins":{"finds_radiocarbon":[{"id":%v,"fields":{"bp":3300}}]}}`, rowID)},
			{"radiocarbon route", "GET", "/radiocarbon/calibrate?bp=3200&error=40", ""},
			{"list with _chrono_overlap", "POST", "/records/finds", overlap},
			{"chronology route", "GET", "/chrono/parse?q=c4", ""},
		} {
			if status, code, body := f.code(c.method, c.url, c.body, f.writer); status != 503 || code != "plugin_unavailable" {
				t.Errorf("%s while down: %d %s %v", c.name, status, code, body)
			}
		}
		if f.count("finds") != finds || f.count("finds_radiocarbon") != dates || val(f.record("finds", id), "code") != "D0" {
			t.Errorf("refused saves wrote: %d finds (was %d), %d dates (was %d)", f.count("finds"), finds, f.count("finds_radiocarbon"), dates)
		}
		if got := f.calRows("finds_radiocarbon"); len(got) != 2 || got[0] != (calRow{"L1", pin.s1from, pin.s1to, pin.s2from, pin.s2to}) {
			t.Errorf("the stored rows changed: %v", got)
		}
		// Reads, plain lists and saves the running plugin handles go on.
		if rec := f.record("finds", id); len(obj(rec, "plugins", "finds_radiocarbon")["data"].([]any)) != 2 {
			t.Errorf("read while down: %v", obj(rec, "plugins"))
		}
		f.json("POST", "/records/finds", `{"filter":{"code":{"_eq":"D0"}}}`, f.reader, 200)
		f.json("POST", url, `{"core":{"osteo_data":"{\"individuals\":[]}"}}`, f.writer, 200)
		states := map[string]any{}
		for _, p := range f.json("GET", "/plugins", "", f.super, 200)["plugins"].([]any) {
			p := p.(map[string]any)
			states[p["name"].(string)] = p["state"]
		}
		if fmt.Sprint(states) != "map[chronology:restarting osteology:running radiocarbon:restarting]" {
			t.Errorf("GET /plugins: %v", states)
		}

		for p, pid := range pids {
			for deadline := time.Now().Add(20 * time.Second); f.mgr.State(p) != pluginhost.StateRunning; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s not restarted: %s", p, f.mgr.State(p))
				}
			}
			if now := f.mgr.PID(p); now == 0 || now == pid {
				t.Errorf("%s pid after the restart: %d (was %d)", p, now, pid)
			}
			if in, _ := f.mgr.Describe(p); in.Restarts < 1 || in.LastError == "" {
				t.Errorf("%s after the restart: %+v", p, in)
			}
		}
		again := f.create("finds", fmt.Sprintf(withRows, 1))
		rows := f.calRows("finds_radiocarbon")
		if len(rows) != dates+2 || rows[len(rows)-1] != (calRow{"L2", pin.s1from, pin.s1to, pin.s2from, pin.s2to}) {
			t.Errorf("save after the restart (record %d): %v", again, rows)
		}
		if got := codes(f.json("POST", "/records/finds", overlap, f.reader, 200)); fmt.Sprint(got) != "[D0 D1]" {
			t.Errorf("overlap after the restart: %v", got)
		}
	})
}
