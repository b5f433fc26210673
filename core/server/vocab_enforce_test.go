package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestVocabularyEnforced: a select or multi_select bound to a vocabulary
// refuses values that are not its items (rule "vocabulary") in single
// saves, batches and the import check, unless the field has vocab_free; a
// combo_select suggests only. Values stored before (or left by an item
// deleted with keep_values) are kept by updates and listed by the schema
// validation report.
func TestVocabularyEnforced(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		ctx, now := t.Context(), time.Now().UTC()
		for _, def := range []schema.FieldDef{
			{Name: "material", Label: "Material", Type: "select", VocabularySet: "materials"},
			{Name: "materials", Label: "Materials", Type: "multi_select", VocabularySet: "materials"},
			{Name: "ware", Label: "Ware", Type: "combo_select", VocabularySet: "materials"},
			{Name: "colour", Label: "Colour", Type: "select", VocabularySet: "materials", VocabFree: true},
			{Name: "shape", Label: "Shape", Type: "select", VocabularySet: "shapes"}, // a vocabulary with no items yet
		} {
			if _, err := schema.AddField(ctx, f.app.DB, "finds", def, now); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := schema.AddField(ctx, f.app.DB, "finds_samples", schema.FieldDef{Name: "material", Label: "Material", Type: "select", VocabularySet: "materials"}, now); err != nil {
			t.Fatal(err)
		}
		const api = "/dig/api"
		for _, def := range []string{"bronze", "iron", "pottery"} {
			if code, m := f.do(t, f.super, "POST", api+"/vocabularies", `{"voc":"materials","def":"`+def+`"}`); code != 200 {
				t.Fatalf("item %s: %d %v", def, code, m)
			}
		}
		// A record stored before enforcement (written straight to the table).
		old := f.create(t, f.writer, "finds", `{"label":"old"}`)
		if _, err := f.app.DB.Exec(ctx, `UPDATE `+f.app.DB.Qualify("finds")+` SET material = ?, materials = ? WHERE id = ?`, "unobtainium", `["iron","adamant"]`, old); err != nil {
			t.Fatal(err)
		}

		refused := func(name string, code int, m map[string]any, field string) {
			t.Helper()
			if code != 400 || m["code"] != "validation_failed" {
				t.Fatalf("%s: %d %v, want 400 validation_failed", name, code, m)
			}
			for _, fe := range m["errors"].([]any) {
				e := fe.(map[string]any)
				if e["field"] == field && e["rule"] == "vocabulary" {
					return
				}
			}
			t.Fatalf("%s: no vocabulary error on %s: %v", name, field, m["errors"])
		}
		for _, c := range []struct{ name, body, field string }{
			{"select", `{"core":{"label":"a","material":"unobtainium"}}`, "material"},
			{"case matters", `{"core":{"label":"a","material":"Bronze"}}`, "material"},
			{"multi_select list", `{"core":{"label":"a","materials":["iron","unobtainium"]}}`, "materials"},
			{"multi_select lone value", `{"core":{"label":"a","materials":"unobtainium"}}`, "materials"},
			{"multi_select as BraDypUS's comma-separated text", `{"core":{"label":"a","materials":"iron, unobtainium"}}`, "materials"},
			{"plugin row", `{"core":{"label":"a"},"plugins":{"finds_samples":[{"lab":"L","material":"unobtainium"}]}}`, "material"},
		} {
			code, m := f.do(t, f.writer, "POST", api+"/record/finds", c.body)
			refused(c.name, code, m, c.field)
		}
		if code, m := f.do(t, f.writer, "GET", api+"/records/finds?filter[label][_eq]=a", ""); code != 200 || m["total"] != float64(0) {
			t.Fatalf("a refused save wrote: %d %v", code, m)
		}

		// Items, free fields, combo_select and an empty vocabulary pass.
		ok := f.create(t, f.writer, "finds", `{"label":"b","material":"bronze","materials":["iron","pottery"],"ware":"terra sigillata","colour":"teal","shape":"anything"}`)
		f.create(t, f.writer, "finds", `{"label":"b2","materials":"iron,pottery"}`) // BraDypUS's form of a list

		// Updates: a new bad value is refused; the value the record holds is
		// kept when it is sent back unchanged, or with other fields.
		code, m := f.do(t, f.writer, "POST", fmt.Sprintf("%s/record/finds/%d", api, ok), `{"core":{"material":"unobtainium"}}`)
		refused("update to a bad value", code, m, "material")
		for _, body := range []string{
			`{"core":{"label":"old2","material":"unobtainium","materials":["iron","adamant"]}}`,
			`{"core":{"materials":["adamant","bronze"]}}`, // keeps the old bad item, adds a good one
			`{"core":{"weight":3}}`,
		} {
			if code, m := f.do(t, f.writer, "POST", fmt.Sprintf("%s/record/finds/%d", api, old), body); code != 200 {
				t.Fatalf("update keeping old values %s: %d %v", body, code, m)
			}
		}
		code, m = f.do(t, f.writer, "POST", fmt.Sprintf("%s/record/finds/%d", api, old), `{"core":{"materials":["adamant","mithril"]}}`)
		refused("update adding a second bad item", code, m, "materials")
		if !strings.Contains(fmt.Sprint(m["errors"]), "mithril") || strings.Contains(fmt.Sprint(m["errors"]), "adamant") {
			t.Fatalf("the message names the new value only: %v", m["errors"])
		}

		// Batch: the bad request's index, nothing written.
		code, m = f.do(t, f.writer, "POST", api+"/batch", `{"requests":[
			{"method":"POST","url":"/record/finds","body":{"core":{"label":"c","material":"iron"}}},
			{"method":"POST","url":"/record/finds","body":{"core":{"label":"d","material":"unobtainium"}}}]}`)
		refused("batch", code, m, "material")
		if fmt.Sprint(m["indexes"]) != "[1]" {
			t.Fatalf("batch indexes: %v", m)
		}
		if code, m := f.do(t, f.writer, "POST", api+"/batch", `{"requests":[
			{"method":"POST","url":"/record/finds","body":{"core":{"label":"c","material":"iron"}}},
			{"method":"POST","url":"/record/finds","body":{"core":{"label":"d","material":"pottery"}}}]}`); code != 200 {
			t.Fatalf("good batch: %d %v", code, m)
		}

		// The import check: a per-row error on the bad row.
		_, up := f.upload(t, f.super, api+"/import/preview-file", "file", "f.csv", []byte("label,material\ne,bronze\nf,unobtainium\n"))
		code, m = f.do(t, f.super, "POST", api+"/import/data", fmt.Sprintf(`{"temp_id":%q,"tb":"finds","dry_run":true}`, up["temp_id"]))
		if code != 400 || m["code"] != "import_rows_invalid" || !strings.Contains(fmt.Sprint(m["errors"]), "vocabulary") || !strings.Contains(fmt.Sprint(m["errors"]), "row:2") {
			t.Fatalf("import check: %d %v", code, m)
		}

		// vocab_free reads back, and turning it on lets the value in.
		_, m = f.do(t, f.super, "GET", api+"/config/table/finds/fields", "")
		free := map[string]any{}
		for _, x := range m["data"].([]any) {
			fx := x.(map[string]any)
			free[fx["name"].(string)] = fx["vocab_free"]
		}
		if free["colour"] != true || free["material"] != false {
			t.Fatalf("vocab_free read back: %v", free)
		}
		if code, m := f.do(t, f.super, "PUT", api+"/config/table/finds/field/material", `{"vocab_free":true}`); code != 200 || m["field"].(map[string]any)["vocab_free"] != true {
			t.Fatalf("set vocab_free: %d %v", code, m)
		}
		f.create(t, f.writer, "finds", `{"label":"g","material":"unobtainium"}`)
		if code, m := f.do(t, f.super, "PUT", api+"/config/table/finds/field/material", `{"vocab_free":false}`); code != 200 || m["field"].(map[string]any)["vocab_free"] != false {
			t.Fatalf("clear vocab_free: %d %v", code, m)
		}

		// The validation report lists what is outside (records old and g:
		// "unobtainium" twice; "adamant" once in the list field).
		_, m = f.do(t, f.super, "GET", api+"/config/validation", "")
		var lines []string
		for _, x := range m["report"].([]any) {
			it := x.(map[string]any)
			if it["check"] == "vocabulary_values" {
				lines = append(lines, fmt.Sprint(it["status"], " ", it["text"]))
			}
		}
		got := strings.Join(lines, "\n")
		for _, want := range []string{`warning Field finds.material: 2 records hold values outside vocabulary materials: "unobtainium" (2)`,
			`warning Field finds.materials: 1 records hold values outside vocabulary materials: "adamant" (1)`} {
			if !strings.Contains(got, want) {
				t.Fatalf("report lacks %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "colour") || strings.Contains(got, "ware") {
			t.Fatalf("free fields are not reported:\n%s", got)
		}
	})
}
