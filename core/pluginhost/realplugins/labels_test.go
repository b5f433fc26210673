package realplugins_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// readIn reads url as the reader with an Accept-Language header ("" for
// none) and returns the answer.
func (f *fixture) readIn(url, lang string) *httptest.ResponseRecorder {
	f.t.Helper()
	req := httptest.NewRequest("GET", "/dig/api"+url, nil)
	req.Header.Set("Authorization", f.reader)
	if lang != "" {
		req.Header.Set("Accept-Language", lang)
	}
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	if rec.Code != 200 {
		f.t.Fatalf("GET %s (%s): %d %s", url, lang, rec.Code, rec.Body)
	}
	return rec
}

// radiocarbonLabels are the labels of the radiocarbon child table and its
// columns as a record read shows them: the table's, then "column=label".
func radiocarbonLabels(t *testing.T, rec *httptest.ResponseRecorder) []string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	pt := obj(m, "schema", "plugins", "finds_radiocarbon")
	out := []string{fmt.Sprint(pt["tb_label"])}
	for _, fd := range pt["fields"].([]any) {
		fd := fd.(map[string]any)
		if n := fd["name"]; n == "lab_code" || n == "bp" || n == "cal_1s_from" {
			out = append(out, fmt.Sprintf("%v=%v", n, fd["label"]))
		}
	}
	return out
}

// TestRealPluginLabels: every bundled plugin declares Italian, the server
// passes the translations through (GET /plugins, GET /plugin-labels) and
// record reads show the plugins' labels in the language asked for, except
// where an admin renamed them; without a header, English as stored.
func TestRealPluginLabels(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newFixture(t, e, func(o *pluginhost.Options) {
			for _, p := range routePlugins {
				link(t, filepath.Join(binDir, p), filepath.Join(o.Dir, p))
			}
		})
		f.activate("finds", "radiocarbon", "radiocarbon")

		// Every feature, column and child table of the bundled plugins
		// has an Italian label besides its English one.
		var missing []string
		for _, p := range f.json("GET", "/plugins", "", f.super, 200)["plugins"].([]any) {
			p := p.(map[string]any)
			for _, ft := range p["features"].([]any) {
				ft := ft.(map[string]any)
				where := fmt.Sprintf("%v/%v", p["name"], ft["name"])
				if l := ft["labels"].(map[string]any); l["it"] == nil || l["en"] != ft["label"] {
					missing = append(missing, where+" labels "+fmt.Sprint(l))
				}
				for col, l := range ft["column_labels"].(map[string]any) {
					if l.(map[string]any)["it"] == nil {
						missing = append(missing, where+"."+col)
					}
				}
				if ch, ok := ft["child_labels"].(map[string]any); ft["child_suffix"] != nil && (!ok || ch["it"] == nil) {
					missing = append(missing, where+" child table")
				}
			}
			for name, l := range p["section_labels"].(map[string]any) {
				if l.(map[string]any)["it"] == nil {
					missing = append(missing, fmt.Sprintf("%v section %s", p["name"], name))
				}
			}
		}
		if len(missing) > 0 {
			t.Errorf("labels without Italian: %v", missing)
		}

		// Any signed-in client reads them, with the messages.
		texts := f.json("GET", "/plugin-labels", "", f.reader, 200)
		if langs := fmt.Sprint(texts["languages"]); langs != "[en it]" {
			t.Errorf("languages %s", langs)
		}
		byName := map[string]map[string]any{}
		for _, p := range texts["plugins"].([]any) {
			byName[p.(map[string]any)["name"].(string)] = p.(map[string]any)
		}
		if got := fmt.Sprint(obj(byName["radiocarbon"], "messages")["era.bce"]); got != "map[en:BCE it:a.C.]" {
			t.Errorf("radiocarbon message era.bce: %s", got)
		}
		if got := fmt.Sprint(obj(byName["refmgr"], "section_labels")["bibliography"]); got != "map[en:Bibliography it:Bibliografia]" {
			t.Errorf("refmgr section title: %s", got)
		}
		if got := fmt.Sprint(obj(byName["gazetteer"], "section_labels")["gazetteer_place"]); !strings.Contains(got, "it:Luogo del gazetteer") {
			t.Errorf("gazetteer section title: %s", got)
		}

		id := f.create("finds", `{"core":{"code":"L1"},"plugins":{"finds_radiocarbon":[{"fields":{"lab_code":"OxA-1","bp":2450,"bp_error":30}}]}}`)
		url := fmt.Sprintf("/record/finds/%d", id)
		english := []string{"Radiocarbon dates", "lab_code=Lab code", "bp=Age (BP)", "cal_1s_from=1σ from (cal BP)"}
		italian := []string{"Datazioni al radiocarbonio", "lab_code=Codice di laboratorio", "bp=Età (BP)", "cal_1s_from=1σ da (cal BP)"}
		for _, c := range []struct {
			lang, contentLanguage string
			want                  []string
		}{
			{"", "", english},
			{"it", "it", italian},
			{"it-CH, en;q=0.5", "it", italian}, // the language alone
			{"de, it;q=0.8", "it", italian},    // the first the plugins translate to
			{"en, it;q=0.9", "", english},      // English first: as stored
			{"de", "", english},                // no plugin speaks German
			{"*;q=0.1, ,;;=", "", english},     // nonsense: as stored
		} {
			rec := f.readIn(url, c.lang)
			if got := radiocarbonLabels(t, rec); !slices.Equal(got, c.want) {
				t.Errorf("Accept-Language %q: %v, want %v", c.lang, got, c.want)
			}
			if got := rec.Header().Get("Content-Language"); got != c.contentLanguage {
				t.Errorf("Accept-Language %q: Content-Language %q, want %q", c.lang, got, c.contentLanguage)
			}
			if !slices.Contains(rec.Header().Values("Vary"), "Accept-Language") {
				t.Errorf("Accept-Language %q: Vary %v", c.lang, rec.Header().Values("Vary"))
			}
		}
		// The list and its search fields speak Italian too.
		if body := f.readIn("/search/finds_radiocarbon/config", "it").Body.String(); !strings.Contains(body, "Codice di laboratorio") {
			t.Errorf("search config in Italian: %s", body)
		}

		// A label an admin renamed is theirs, in every language; the
		// others still follow the language.
		f.json("PUT", "/config/table/finds_radiocarbon/field/lab_code", `{"label":"Sample"}`, f.super, 200)
		renamed := []string{"Datazioni al radiocarbonio", "lab_code=Sample", "bp=Età (BP)", "cal_1s_from=1σ da (cal BP)"}
		if got := radiocarbonLabels(t, f.readIn(url, "it")); !slices.Equal(got, renamed) {
			t.Errorf("after a rename, Italian: %v, want %v", got, renamed)
		}
		if got := radiocarbonLabels(t, f.readIn(url, "")); got[1] != "lab_code=Sample" {
			t.Errorf("after a rename, English: %v", got)
		}
	})
}
