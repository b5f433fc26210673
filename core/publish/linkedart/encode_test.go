package linkedart

import (
	"bytes"
	"encoding/json"

	"flag"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/publish/publishtest"
)

var update = flag.Bool("update", false, "rewrite testdata/golden")

// ---- validation: the Linked Art schemas and JSON-LD expansion, offline,
// through the publication's test kit (core/publish/publishtest) ----

func validate(t *testing.T, r Record, out []byte) {
	t.Helper()
	if err := publishtest.LinkedArt(out); err != nil {
		t.Error(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if want := r.Kind == KindSite; (m["type"] == "Place") != want {
		t.Errorf("kind %s written as type %v", r.Kind, m["type"])
	}
}

func expand(t *testing.T, out []byte) []any {
	t.Helper()
	exp, err := publishtest.ExpandJSONLD(out)
	if err != nil {
		t.Fatalf("expand: %v", err)
	}
	return exp
}

type census = publishtest.Census

func checkExpansion(t *testing.T, out []byte) census {
	t.Helper()
	ec, err := publishtest.LinkedArtExpansion(out)
	if err != nil {
		t.Error(err)
	}
	return ec
}

// TestExpansionCheckCanFail: a term the context does not define is dropped
// by the processor, and the census notices.
func TestExpansionCheckCanFail(t *testing.T) {
	for name, doc := range map[string]string{
		"undefined term":   `{"@context":"` + ContextURL + `","id":"https://x.org/1","type":"HumanMadeObject","_label":"x","has_physical_relation":[{"id":"https://x.org/2"}]}`,
		"undefined type":   `{"@context":"` + ContextURL + `","id":"https://x.org/1","type":"HumanMadeObject","_label":"x","classified_as":[{"id":"https://x.org/t","type":"Typ"}]}`,
		"undefined nested": `{"@context":"` + ContextURL + `","id":"https://x.org/1","type":"HumanMadeObject","_label":"x","dimension":[{"type":"Dimension","value":1,"valu":2}]}`,
	} {
		if _, err := publishtest.LinkedArtExpansion([]byte(doc)); err == nil {
			t.Errorf("%s: not noticed", name)
		}
	}
}

// ---- the tests ----

func TestEveryFixtureValidatesAndExpands(t *testing.T) {
	for name, r := range fixtures() {
		t.Run(name, func(t *testing.T) {
			out, err := Encode(r)
			if err != nil {
				t.Fatal(err)
			}
			validate(t, r, out)
			ec := checkExpansion(t, out)
			wantType := crm + "E22_Human-Made_Object"
			if r.Kind == KindSite {
				wantType = crm + "E53_Place"
			}
			if ec.IDs[wantType] == 0 {
				t.Errorf("no %s", wantType)
			}
			if ec.IDs[r.URI] == 0 {
				t.Errorf("record URI %s is not an @id", r.URI)
			}
			if r.Kind == KindUnit && ec.IDs[StratigraphicUnit] == 0 {
				t.Errorf("unit not classified as %s", StratigraphicUnit)
			}
			if r.Kind == KindSample && ec.IDs[Sample] == 0 {
				t.Errorf("sample not classified as %s", Sample)
			}
			if n := len(r.Relations); n > 0 && ec.IDs[CRMarchaeo+"AP11_has_physical_relation"] != n {
				t.Errorf("%d relations, %d AP11 assignments", n, ec.IDs[CRMarchaeo+"AP11_has_physical_relation"])
			}
		})
	}
}

const crm = "http://www.cidoc-crm.org/cidoc-crm/"

// TestExpandedIRIs checks the CRM reading of the full unit and find.
func TestExpandedIRIs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		r     Record
		keys  []string
		ids   []string
		texts []string
	}{
		{"unit", unitFull(),
			[]string{crm + "P2_has_type", crm + "P45_consists_of", crm + "P43_has_dimension", crm + "P108i_was_produced_by",
				crm + "P4_has_time-span", crm + "P82a_begin_of_the_begin", crm + "P82b_end_of_the_end", crm + "P10_falls_within",
				crm + "P140i_was_attributed_by", crm + "P141_assigned", crm + "P177_assigned_property_of_type",
				crm + "P90_has_value", crm + "P90a_has_lower_value_limit", crm + "P90b_has_upper_value_limit", crm + "P91_has_unit",
				crm + "P1_is_identified_by", crm + "P190_has_symbolic_content", crm + "P67i_is_referred_to_by", crm + "P46i_forms_part_of",
				"http://www.ics.forth.gr/isl/CRMsci/O19i_was_object_encountered_at", crm + "P7_took_place_at",
				crm + "P129i_is_subject_of", "https://linked.art/ns/terms/digitally_carried_by", "https://linked.art/ns/terms/access_point",
				"http://purl.org/dc/terms/conformsTo", "https://linked.art/ns/terms/member_of"},
			[]string{crm + "E22_Human-Made_Object", StratigraphicUnit, CRMarchaeo + "AP11_has_physical_relation", StratigraphicGenesis,
				crm + "E13_Attribute_Assignment", crm + "E54_Dimension", crm + "E52_Time-Span", crm + "E12_Production", crm + "E4_Period",
				crm + "E57_Material", crm + "E58_Measurement_Unit", crm + "E42_Identifier", crm + "E33_E41_Linguistic_Appellation",
				crm + "E33_Linguistic_Object", "http://www.ics.forth.gr/isl/CRMdig/D1_Digital_Object", crm + "E53_Place",
				"http://vocab.getty.edu/aat/300054714", vocab + "relation/above", vocab + "relation/cuts", "http://example.org/rel/bonds",
				vocab + "term/loose", vocab + "field/us/colour", vocab + "field/us/description", "http://iiif.io/api/presentation/"},
			[]string{"-0800-01-01T00:00:00Z", "-0050-12-31T23:59:59Z", "-0752-01-01T00:00:00Z", "-0485-12-31T23:59:59Z", "OxA-12345", "35", "6.5", "true"}},
		{"find", findFull(),
			[]string{crm + "P45_consists_of", crm + "P43_has_dimension", crm + "P108i_was_produced_by", crm + "P46i_forms_part_of"},
			[]string{crm + "E22_Human-Made_Object", "http://vocab.getty.edu/aat/300010669", vocab + "material/impasto",
				"http://vocab.getty.edu/aat/300379225", "http://vocab.getty.edu/aat/300010666"},
			[]string{"-0700-01-01T00:00:00Z", "-0600-12-31T23:59:59Z", "F77"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Encode(tc.r)
			if err != nil {
				t.Fatal(err)
			}
			ec := checkExpansion(t, out)
			for _, k := range tc.keys {
				if ec.Keys[k] == 0 {
					t.Errorf("no property %s", k)
				}
			}
			for _, id := range tc.ids {
				if ec.IDs[id] == 0 {
					t.Errorf("no @id/@type %s", id)
				}
			}
			exp, _ := json.Marshal(expand(t, out))
			for _, s := range tc.texts {
				if !bytes.Contains(exp, []byte(strconv.Quote(s))) {
					t.Errorf("expanded document lacks the value %q", s)
				}
			}
			if tc.name == "unit" && !bytes.Contains(exp, []byte(`"@type":"http://www.w3.org/2001/XMLSchema#dateTime"`)) {
				t.Error("dates are not typed xsd:dateTime")
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	for name, r := range fixtures() {
		t.Run(name, func(t *testing.T) {
			a, err := Encode(r)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 5; i++ {
				b, err := Encode(r)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a, b) {
					t.Fatalf("encoding %d differs", i)
				}
			}
		})
	}
}

// TestGolden pins the exact bytes of the full unit and find; go test
// -update rewrites them after a deliberate change.
func TestGolden(t *testing.T) {
	for name, r := range map[string]Record{"unit": unitFull(), "find": findFull()} {
		out, err := Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		fn := filepath.Join("testdata", "golden", name+".jsonld")
		if *update {
			if err := os.MkdirAll(filepath.Dir(fn), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(fn, out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(fn)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, want) {
			t.Errorf("%s differs from %s", name, fn)
		}
	}
}

func TestKeyOrder(t *testing.T) {
	out, err := Encode(unitFull())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(out))
	depth := 0
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else {
				depth--
			}
			expectKey = depth == 1 && v == '{'
		case string:
			if depth == 1 && expectKey {
				keys = append(keys, v)
				expectKey = false
				continue
			}
		}
		if depth == 1 {
			expectKey = true
		}
	}
	want := []string{"@context", "id", "type", "_label", "classified_as", "identified_by", "referred_to_by", "member_of",
		"part_of", "made_of", "dimension", "produced_by", "encountered_by", "attributed_by", "subject_of"}
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("top-level keys\n got %v\nwant %v", keys, want)
	}
}

func TestHostileStringsSurvive(t *testing.T) {
	r := fixtures()["hostile"]
	out, err := Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"</script>", "<b>", "\u2028", "\u2029", "\x00"} {
		if bytes.Contains(out, []byte(bad)) {
			t.Errorf("output contains raw %q", bad)
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	want := strings.ToValidUTF8(hostile, "\uFFFD")
	if doc["_label"] != want {
		t.Errorf("label round trip:\n got %q\nwant %q", doc["_label"], want)
	}
	if strings.Contains(string(out), `"@id"`) {
		t.Error("a string became a JSON-LD keyword key")
	}
}

func TestDates(t *testing.T) {
	for _, tc := range []struct {
		y          int
		start, end string
	}{
		{-500, "-0500-01-01T00:00:00Z", "-0500-12-31T23:59:59Z"},
		{-1, "-0001-01-01T00:00:00Z", "-0001-12-31T23:59:59Z"},
		{0, "0000-01-01T00:00:00Z", "0000-12-31T23:59:59Z"},
		{1, "0001-01-01T00:00:00Z", "0001-12-31T23:59:59Z"},
		{999, "0999-01-01T00:00:00Z", "0999-12-31T23:59:59Z"},
		{2024, "2024-01-01T00:00:00Z", "2024-12-31T23:59:59Z"},
		{-12000, "-12000-01-01T00:00:00Z", "-12000-12-31T23:59:59Z"},
		{10000, "10000-01-01T00:00:00Z", "10000-12-31T23:59:59Z"},
	} {
		s, err := yearStart(tc.y)
		e, err2 := yearEnd(tc.y)
		if err != nil || err2 != nil || s != tc.start || e != tc.end {
			t.Errorf("year %d: %q %q (%v %v), want %q %q", tc.y, s, e, err, err2, tc.start, tc.end)
		}
		if err := publishtest.ISODateTime(s); err != nil {
			t.Errorf("year %d: the test's format rejects %q: %v", tc.y, s, err)
		}
	}
	if got := yearsLabel(year(-500), year(1)); got != "501 BC – AD 1" {
		t.Errorf("label %q", got)
	}
	for _, y := range []int{maxYear + 1, -maxYear - 1, math.MinInt, math.MaxInt} {
		if _, err := yearStart(y); err == nil {
			t.Errorf("year %d accepted", y)
		}
	}
	// The format the schema test asserts must be able to fail.
	for _, bad := range []string{"-500-01-01T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-01", "-0000-01-01T00:00:00Z", "02024-01-01T00:00:00Z", "yesterday"} {
		if publishtest.ISODateTime(bad) == nil {
			t.Errorf("format accepts %q", bad)
		}
	}
}

// TestSchemaRejects proves the validation can fail: documents a broken
// encoder could write are refused by the schemas.
func TestSchemaRejects(t *testing.T) {
	good, err := Encode(unitFull())
	if err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(m map[string]any){
		"extra top-level property": func(m map[string]any) { m["has_physical_relation"] = []any{} },
		"second rdf type":          func(m map[string]any) { m["type"] = []any{"HumanMadeObject", "archaeo:A8_Stratigraphic_Unit"} },
		"no label":                 func(m map[string]any) { delete(m, "_label") },
		"dimension without unit": func(m map[string]any) {
			delete(m["dimension"].([]any)[0].(map[string]any), "unit")
		},
		"bad date": func(m map[string]any) {
			m["produced_by"].(map[string]any)["timespan"].(map[string]any)["begin_of_the_begin"] = "-500"
		},
		"part_of as array": func(m map[string]any) { m["part_of"] = []any{m["part_of"]} },
	} {
		t.Run(name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(good, &m); err != nil {
				t.Fatal(err)
			}
			mutate(m)
			b, _ := json.Marshal(m)
			if publishtest.LinkedArt(b) == nil {
				t.Error("schema accepted it")
			}
		})
	}
}

func TestErrors(t *testing.T) {
	for name, mutate := range map[string]func(r *Record){
		"no URI":              func(r *Record) { r.URI = "" },
		"relative URI":        func(r *Record) { r.URI = "us/1" },
		"URI with space":      func(r *Record) { r.URI = base + "us 1" },
		"unknown kind":        func(r *Record) { r.Kind = "pottery" },
		"site with material":  func(r *Record) { r.Kind = KindSite },
		"NaN dimension":       func(r *Record) { r.Dimensions[0].Value = math.NaN() },
		"Inf dimension":       func(r *Record) { r.Dimensions[0].Value = math.Inf(1) },
		"dimension no unit":   func(r *Record) { r.Dimensions[0].Unit = Term{} },
		"year too big":        func(r *Record) { r.Production.End = year(maxYear + 1) },
		"begin after end":     func(r *Record) { r.Production.Begin = year(0); r.Production.End = year(-1) },
		"range reversed":      func(r *Record) { r.Radiocarbon[0].Calibrated[0].From = 0 },
		"probability > 1":     func(r *Record) { r.Radiocarbon[0].Calibrated[0].Probability = 68.3 },
		"negative error":      func(r *Record) { r.Radiocarbon[0].Error = -1 },
		"relation no type":    func(r *Record) { r.Relations[0].Type = " " },
		"relation no target":  func(r *Record) { r.Relations[0].TargetURI = "" },
		"relative term ID":    func(r *Record) { r.Material[0].ID = "clay" },
		"no VocabBase":        func(r *Record) { r.VocabBase = "" },
		"bad VocabBase":       func(r *Record) { r.VocabBase = "vocab/" },
		"two object parents":  func(r *Record) { r.PartOf = append(r.PartOf, Ref{URI: base + "trench/4"}) },
		"field without name":  func(r *Record) { r.Fields[0].Name = "" },
		"field of odd type":   func(r *Record) { r.Fields[0].Value = []string{"x"} },
		"bad homepage":        func(r *Record) { r.Homepage = "/records/1" },
		"bad licence":         func(r *Record) { r.Licence = "CC BY 4.0" },
		"bad image":           func(r *Record) { r.Images[0].URI = "manifest.json" },
		"bad period URI":      func(r *Record) { r.Production.PeriodURI = "Iron Age" },
		"bad table URI":       func(r *Record) { r.TableURI = "us" },
		"bad relation typeID": func(r *Record) { r.Relations[2].TypeURI = "bonds" },
	} {
		t.Run(name, func(t *testing.T) {
			r := unitFull()
			mutate(&r)
			_, err := Encode(r)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), "linkedart: record ") {
				t.Errorf("error lacks context: %v", err)
			}
		})
	}
}

// TestFieldOrderFollowsInput: output follows the caller's order, never map
// iteration, so reordering fields reorders statements and nothing else.
func TestFieldOrderFollowsInput(t *testing.T) {
	r := unitFull()
	a, _ := Encode(r)
	r.Fields[0], r.Fields[3] = r.Fields[3], r.Fields[0]
	b, _ := Encode(r)
	if bytes.Equal(a, b) {
		t.Fatal("field order has no effect")
	}
	ia, ib := bytes.Index(a, []byte("Dark brown")), bytes.Index(b, []byte("Dark brown"))
	if ia < 0 || ib < 0 || ib < ia {
		t.Errorf("statement did not move: %d %d", ia, ib)
	}
	if len(a) != len(b) {
		t.Errorf("lengths differ: %d %d", len(a), len(b))
	}
}

func TestNoContextOtherThanLinkedArt(t *testing.T) {
	var names []string
	for n := range fixtures() {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out, err := Encode(fixtures()[n])
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(out, &m)
		if m["@context"] != ContextURL {
			t.Errorf("%s: @context %v", n, m["@context"])
		}
	}
}
