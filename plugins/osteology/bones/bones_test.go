package bones

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestCatalogue(t *testing.T) {
	cat := Catalogue()
	regionIDs := map[string]bool{}
	for _, r := range Regions() {
		if r.Labels.En == "" || r.Labels.It == "" {
			t.Errorf("region %s lacks a label", r.ID)
		}
		regionIDs[r.ID] = true
	}
	want := []string{"head", "spine", "thorax", "shoulder", "upper_limb", "pelvis", "lower_limb", "foot", "teeth"}
	for _, r := range want {
		if !regionIDs[r] {
			t.Errorf("region %s missing", r)
		}
	}
	if len(regionIDs) != len(want) {
		t.Errorf("regions %v", regionIDs)
	}

	idRe := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	seen := map[string]bool{}
	labels := map[string]string{}
	used := map[string]int{}
	for _, e := range cat {
		if seen[e.ID] {
			t.Errorf("duplicate id %s", e.ID)
		}
		seen[e.ID] = true
		if !idRe.MatchString(e.ID) {
			t.Errorf("id %q is not lower snake case", e.ID)
		}
		if !regionIDs[e.Region] {
			t.Errorf("%s: region %q", e.ID, e.Region)
		}
		used[e.Region]++
		if e.Labels.En == "" || e.Labels.It == "" {
			t.Errorf("%s: labels %+v", e.ID, e.Labels)
		}
		for _, l := range []string{"en:" + e.Labels.En, "it:" + e.Labels.It} {
			if other, dup := labels[l]; dup {
				t.Errorf("%s and %s share the label %q", e.ID, other, l)
			}
			labels[l] = e.ID
		}
		// The side agrees with the id: _right/_left suffixes for bones,
		// the FDI quadrant for teeth.
		switch {
		case e.Region == Teeth:
			q := e.FDI / 10
			wantSide := Right
			if q == 2 || q == 3 || q == 6 || q == 7 {
				wantSide = Left
			}
			if e.ID != "tooth_"+itoa(e.FDI) || e.Side != wantSide || e.Base != "tooth" {
				t.Errorf("tooth %+v", e)
			}
		case strings.HasSuffix(e.ID, "_right"):
			if e.Side != Right || e.Base != strings.TrimSuffix(e.ID, "_right") || !seen[e.Base+"_right"] {
				t.Errorf("%s: side %s base %s", e.ID, e.Side, e.Base)
			}
		case strings.HasSuffix(e.ID, "_left"):
			if e.Side != Left || e.Base != strings.TrimSuffix(e.ID, "_left") {
				t.Errorf("%s: side %s base %s", e.ID, e.Side, e.Base)
			}
		default:
			if e.Side != None || e.Base != e.ID {
				t.Errorf("%s: side %s base %s", e.ID, e.Side, e.Base)
			}
		}
		// Italian side adjectives agree and match the side.
		it := strings.ToLower(e.Labels.It)
		switch e.Side {
		case Right:
			if !strings.Contains(it, "destr") || strings.Contains(it, "sinistr") || !strings.Contains(e.Labels.En, "right") {
				t.Errorf("%s: labels %+v", e.ID, e.Labels)
			}
		case Left:
			if !strings.Contains(it, "sinistr") || strings.Contains(it, "destr") || !strings.Contains(e.Labels.En, "left") {
				t.Errorf("%s: labels %+v", e.ID, e.Labels)
			}
		}
	}
	for _, r := range want {
		if used[r] == 0 {
			t.Errorf("region %s has no elements", r)
		}
	}
	// Every sided bone has both sides.
	for _, e := range cat {
		if e.Region != Teeth && e.Side == Right && !seen[e.Base+"_left"] {
			t.Errorf("%s has no left", e.ID)
		}
	}
	// The brief's minimum set.
	for _, id := range []string{
		"cranium", "mandible", "hyoid", "vertebrae_cervical", "vertebrae_thoracic", "vertebrae_lumbar",
		"sacrum", "coccyx", "sternum", "ribs_left", "ribs_right",
		"clavicle_left", "clavicle_right", "scapula_left", "scapula_right",
		"humerus_left", "humerus_right", "radius_left", "radius_right", "ulna_left", "ulna_right",
		"carpals_left", "carpals_right", "metacarpals_left", "metacarpals_right",
		"hand_phalanges_left", "hand_phalanges_right", "os_coxae_left", "os_coxae_right",
		"femur_left", "femur_right", "patella_left", "patella_right", "tibia_left", "tibia_right",
		"fibula_left", "fibula_right", "talus_left", "talus_right", "calcaneus_left", "calcaneus_right",
		"tarsals_other_left", "tarsals_other_right", "metatarsals_left", "metatarsals_right",
		"foot_phalanges_left", "foot_phalanges_right", "tooth_11", "tooth_18", "tooth_28", "tooth_38", "tooth_48",
	} {
		if !seen[id] {
			t.Errorf("missing %s", id)
		}
	}
	// 32 permanent and 20 deciduous teeth.
	if used[Teeth] != 52 {
		t.Errorf("%d teeth", used[Teeth])
	}
	// Italian names the brief fixes.
	for id, it := range map[string]string{
		"femur_right": "Femore destro", "humerus_left": "Omero sinistro", "radius_right": "Radio destro",
		"ulna_left": "Ulna sinistra", "clavicle_right": "Clavicola destra", "scapula_left": "Scapola sinistra",
		"patella_right": "Rotula destra", "tibia_left": "Tibia sinistra", "sternum": "Sterno",
		"sacrum": "Osso sacro", "cranium": "Cranio", "mandible": "Mandibola",
		"tooth_11": "Incisivo centrale superiore destro (11)", "tooth_36": "Primo molare inferiore sinistro (36)",
		"tooth_85": "Secondo molare deciduo inferiore destro (85)",
	} {
		if e, ok := Lookup(id); !ok || e.Labels.It != it {
			t.Errorf("%s: %q, want %q", id, e.Labels.It, it)
		}
	}
	if e, _ := Lookup("fibula_left"); !strings.Contains(e.Labels.It, "Fibula") || !strings.Contains(e.Labels.It, "perone") {
		t.Errorf("fibula: %q", e.Labels.It)
	}
	if e, ok := Lookup(" Femur_Right "); !ok || e.ID != "femur_right" {
		t.Error("Lookup ignores case and spaces")
	}
	// Catalogue returns a copy.
	cat[0].ID = "changed"
	if Catalogue()[0].ID == "changed" {
		t.Error("Catalogue exposes its slice")
	}
	s := GetSchema()
	if len(s.Elements) != len(cat) || len(s.Regions) != 9 || len(s.Conservation) != 5 || len(s.Certainty) != 3 {
		t.Errorf("schema sizes %d %d %d %d", len(s.Elements), len(s.Regions), len(s.Conservation), len(s.Certainty))
	}
	if _, err := json.Marshal(s); err != nil {
		t.Error(err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestValidateValid(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", ``, ``},
		{"null", ` null `, ``},
		{"no individuals", `{}`, `{"individuals":[]}`},
		{"empty list", `{"individuals":[]}`, `{"individuals":[]}`},
		{"minimal", `{"individuals":[{"id":"A"}]}`, `{"individuals":[{"id":"A","label":"","notes":"","bones":{}}]}`},
		{"only present required",
			`{"individuals":[{"id":1,"bones":{"femur_right":{"present":true},"cranium":{"present":false}}}]}`,
			`{"individuals":[{"id":1,"label":"","notes":"","bones":{"cranium":{"present":false},"femur_right":{"present":true}}}]}`},
		{"everything",
			`{"individuals":[{"id":" T1 ","label":" Tomb 1 ","notes":"adult",
			  "bones":{"femur_left":{"present":true,"conservation":"gt50","certainty":"probable","laterality_certainty":"certain","notes":" cut marks "},
			           "tooth_36":{"present":true,"conservation":"complete","laterality_certainty":"uncertain"}}},
			  {"id":"T2","label":null,"notes":null,"bones":null}]}`,
			`{"individuals":[{"id":"T1","label":"Tomb 1","notes":"adult","bones":{"femur_left":{"present":true,"conservation":"gt50","certainty":"probable","laterality_certainty":"certain","notes":"cut marks"},"tooth_36":{"present":true,"conservation":"complete","laterality_certainty":"uncertain"}}},{"id":"T2","label":"","notes":"","bones":{}}]}`},
		{"synonyms and case",
			`{"individuals":[{"id":"a","bones":{"Femur_Right":{"present":true,"conservation":"Frammentario","certainty":"CERTO"},
			  "tibia_left":{"present":true,"conservation":">50%","certainty":"incerta"},"ulna_left":{"present":true,"conservation":"<50"},
			  "cranium":{"present":true,"conservation":"tracce","certainty":"","laterality_certainty":null}}}]}`,
			`{"individuals":[{"id":"a","label":"","notes":"","bones":{"cranium":{"present":true,"conservation":"traces"},"femur_right":{"present":true,"conservation":"fragmentary","certainty":"certain"},"tibia_left":{"present":true,"conservation":"gt50","certainty":"uncertain"},"ulna_left":{"present":true,"conservation":"lt50"}}}]}`},
	} {
		out, errs := Validate([]byte(tc.in))
		if len(errs) > 0 {
			t.Errorf("%s: %v", tc.name, errs)
			continue
		}
		if string(out) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, out, tc.want)
		}
		// Normalising is idempotent.
		if len(out) > 0 {
			again, errs := Validate(out)
			if len(errs) > 0 || string(again) != string(out) {
				t.Errorf("%s: second pass %s %v", tc.name, again, errs)
			}
		}
	}
}

// BraDypUS's client sends the keys of its own bone map; every one of them
// is an element here, kept as sent, and its same_as/part_of links name
// real elements of the same region and side.
func TestBraDypUSElements(t *testing.T) {
	client := []string{"cranium", "face", "mandible", "cervical_vertebrae", "thoracic_vertebrae",
		"lumbar_vertebrae", "sacrum", "coccyx", "sternum"}
	for _, b := range []string{"ribs", "clavicle", "scapula", "humerus", "radius", "ulna", "carpals",
		"metacarpals", "hand_phalanges", "ilium", "ischium", "pubis", "femur", "patella", "tibia", "fibula",
		"talus", "calcaneus", "tarsals", "metatarsals", "foot_phalanges"} {
		client = append(client, b+"_right", b+"_left")
	}
	bones := map[string]any{}
	for _, id := range client {
		el, ok := Lookup(id)
		if !ok {
			t.Errorf("BraDypUS element %s unknown", id)
			continue
		}
		bones[id] = map[string]any{"present": true, "conservation": "gt50"}
		for _, link := range []string{el.SameAs, el.PartOf} {
			if link == "" {
				continue
			}
			if other, ok := Lookup(link); !ok || other.Region != el.Region || other.Side != el.Side || other.SameAs != "" {
				t.Errorf("%s links to %s: %+v", id, link, other)
			}
		}
	}
	raw, _ := json.Marshal(map[string]any{"individuals": []any{map[string]any{"id": 1, "bones": bones}}})
	out, errs := Validate(raw)
	if len(errs) > 0 {
		t.Fatalf("BraDypUS inventory refused: %+v", errs)
	}
	var doc Doc
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	for _, id := range client {
		if _, ok := doc.Individuals[0].Bones[id]; !ok {
			t.Errorf("%s not stored under the key sent", id)
		}
	}
	sum := Summarize(&doc)
	if sum[0].Present != len(client) {
		t.Errorf("summary counts %d present of %d", sum[0].Present, len(client))
	}
}

func TestValidateInvalid(t *testing.T) {
	type fe struct{ path, code string }
	for _, tc := range []struct {
		name string
		in   string
		want []fe
	}{
		{"not json", `{"individuals":`, []fe{{"", CodeInvalidJSON}}},
		{"trailing data", `{} {}`, []fe{{"", CodeInvalidJSON}}},
		{"not an object", `[1]`, []fe{{"", CodeInvalidType}}},
		{"individuals not array", `{"individuals":{}}`, []fe{{"individuals", CodeInvalidType}}},
		{"unknown top key", `{"individuals":[],"version":2}`, []fe{{"version", CodeUnknownField}}},
		{"individual not object", `{"individuals":["A"]}`, []fe{{"individuals[0]", CodeInvalidType}}},
		{"id missing", `{"individuals":[{"label":"x"}]}`, []fe{{"individuals[0].id", CodeRequired}}},
		{"id empty", `{"individuals":[{"id":"  "}]}`, []fe{{"individuals[0].id", CodeInvalidValue}}},
		{"id float", `{"individuals":[{"id":1.5}]}`, []fe{{"individuals[0].id", CodeInvalidValue}}},
		{"id bool", `{"individuals":[{"id":true}]}`, []fe{{"individuals[0].id", CodeInvalidType}}},
		{"duplicate ids", `{"individuals":[{"id":"A"},{"id":"B"},{"id":"A"}]}`, []fe{{"individuals[2].id", CodeDuplicate}}},
		{"duplicate string and number", `{"individuals":[{"id":7},{"id":"7"}]}`, []fe{{"individuals[1].id", CodeDuplicate}}},
		{"label not string", `{"individuals":[{"id":"A","label":3,"notes":[]}]}`,
			[]fe{{"individuals[0].label", CodeInvalidType}, {"individuals[0].notes", CodeInvalidType}}},
		{"unknown individual key", `{"individuals":[{"id":"A","sex":"F"}]}`, []fe{{"individuals[0].sex", CodeUnknownField}}},
		{"bones not object", `{"individuals":[{"id":"A","bones":["femur_right"]}]}`, []fe{{"individuals[0].bones", CodeInvalidType}}},
		{"unknown element", `{"individuals":[{"id":"A","bones":{"femur_lft":{"present":true}}}]}`,
			[]fe{{"individuals[0].bones.femur_lft", CodeUnknownElement}}},
		{"unsided femur", `{"individuals":[{"id":"A","bones":{"femur":{"present":true}}}]}`,
			[]fe{{"individuals[0].bones.femur", CodeUnknownElement}}},
		{"italian element id", `{"individuals":[{"id":"A","bones":{"femore_destro":{"present":true}}}]}`,
			[]fe{{"individuals[0].bones.femore_destro", CodeUnknownElement}}},
		{"tooth outside FDI", `{"individuals":[{"id":"A","bones":{"tooth_19":{"present":true},"tooth_56":{"present":true}}}]}`,
			[]fe{{"individuals[0].bones.tooth_19", CodeUnknownElement}, {"individuals[0].bones.tooth_56", CodeUnknownElement}}},
		{"an element and its BraDypUS name", `{"individuals":[{"id":"A","bones":{"vertebrae_thoracic":{"present":true},"thoracic_vertebrae":{"present":false}}}]}`,
			[]fe{{"individuals[0].bones.vertebrae_thoracic", CodeDuplicate}}},
		{"sided BraDypUS name twice", `{"individuals":[{"id":"A","bones":{"tarsals_left":{"present":true},"tarsals_other_left":{"present":true}}}]}`,
			[]fe{{"individuals[0].bones.tarsals_other_left", CodeDuplicate}}},
		{"same element twice by case", `{"individuals":[{"id":"A","bones":{"Femur_Right":{"present":true},"femur_right":{"present":true}}}]}`,
			[]fe{{"individuals[0].bones.femur_right", CodeDuplicate}}},
		{"bone not object", `{"individuals":[{"id":"A","bones":{"cranium":true}}]}`,
			[]fe{{"individuals[0].bones.cranium", CodeInvalidType}}},
		{"present missing", `{"individuals":[{"id":"A","bones":{"cranium":{"conservation":"complete"}}}]}`,
			[]fe{{"individuals[0].bones.cranium.present", CodeRequired}}},
		{"present not bool", `{"individuals":[{"id":"A","bones":{"cranium":{"present":"yes"}}}]}`,
			[]fe{{"individuals[0].bones.cranium.present", CodeInvalidType}}},
		{"bad values", `{"individuals":[{"id":"A","bones":{"femur_right":{"present":true,"conservation":"good","certainty":"sure","laterality_certainty":"maybe","notes":5}}}]}`,
			[]fe{
				{"individuals[0].bones.femur_right.conservation", CodeInvalidValue},
				{"individuals[0].bones.femur_right.certainty", CodeInvalidValue},
				{"individuals[0].bones.femur_right.laterality_certainty", CodeInvalidValue},
				{"individuals[0].bones.femur_right.notes", CodeInvalidType},
			}},
		{"value not string", `{"individuals":[{"id":"A","bones":{"femur_right":{"present":true,"conservation":1}}}]}`,
			[]fe{{"individuals[0].bones.femur_right.conservation", CodeInvalidType}}},
		{"laterality on a midline bone", `{"individuals":[{"id":"A","bones":{"sternum":{"present":true,"laterality_certainty":"certain"}}}]}`,
			[]fe{{"individuals[0].bones.sternum.laterality_certainty", CodeInvalidValue}}},
		{"unknown bone key", `{"individuals":[{"id":"A","bones":{"sternum":{"present":true,"conservaton":"complete"}}}]}`,
			[]fe{{"individuals[0].bones.sternum.conservaton", CodeUnknownField}}},
		{"errors across individuals, in order",
			`{"individuals":[{"id":"A","bones":{"x":{"present":true}}},{"bones":{"tibia_left":{}}}]}`,
			[]fe{{"individuals[0].bones.x", CodeUnknownElement}, {"individuals[1].id", CodeRequired}, {"individuals[1].bones.tibia_left.present", CodeRequired}}},
	} {
		out, errs := Validate([]byte(tc.in))
		if out != nil {
			t.Errorf("%s: output %s despite errors", tc.name, out)
		}
		got := make([]fe, len(errs))
		for i, e := range errs {
			got[i] = fe{e.Path, e.Code}
			if e.Message == "" {
				t.Errorf("%s: empty message at %s", tc.name, e.Path)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %v\nwant %v\n(%v)", tc.name, got, tc.want, errs)
		}
	}
}

func TestValidateMessagesAndCap(t *testing.T) {
	_, errs := Validate([]byte(`{"individuals":[{"id":"A","bones":{"femur_right":{"present":true,"conservation":"good"}}}]}`))
	if len(errs) != 1 || !strings.Contains(errs[0].Message, "complete, gt50, lt50, fragmentary, traces") {
		t.Errorf("%v", errs)
	}
	var b strings.Builder
	b.WriteString(`{"individuals":[`)
	for i := 0; i < 150; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"id":"x"}`)
	}
	b.WriteString(`]}`)
	_, errs = Validate([]byte(b.String()))
	if len(errs) != MaxErrors+1 || errs[MaxErrors].Code != CodeTooManyErrors {
		t.Errorf("%d errors, last %+v", len(errs), errs[len(errs)-1])
	}
}

func TestSummary(t *testing.T) {
	in := `{"individuals":[
	  {"id":"T1","label":"Tomb 1","bones":{
	    "femur_right":{"present":true,"conservation":"complete"},
	    "femur_left":{"present":true,"conservation":"fragmentary"},
	    "tibia_left":{"present":true},
	    "patella_right":{"present":false,"conservation":"traces"},
	    "cranium":{"present":true,"conservation":"gt50"},
	    "tooth_11":{"present":true,"conservation":"complete"},
	    "tooth_21":{"present":false}}},
	  {"id":2,"label":"child"}]}`
	sum, errs := Summary([]byte(in))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(sum) != 2 {
		t.Fatalf("%d individuals", len(sum))
	}
	a := sum[0]
	if a.ID != "T1" || a.Label != "Tomb 1" || a.Recorded != 7 || a.Present != 5 || len(a.Regions) != 9 {
		t.Errorf("%+v", a)
	}
	reg := map[string]RegionSummary{}
	for _, r := range a.Regions {
		reg[r.Region] = r
		if len(r.Conservation) != 6 {
			t.Errorf("%s: conservation keys %v", r.Region, r.Conservation)
		}
	}
	ll := reg[LowerLimb]
	if ll.Recorded != 4 || ll.Present != 3 ||
		ll.Conservation[Complete] != 1 || ll.Conservation[Fragmentary] != 1 || ll.Conservation[Unspecified] != 1 || ll.Conservation[Traces] != 0 {
		t.Errorf("lower limb %+v", ll)
	}
	if h := reg[Head]; h.Recorded != 1 || h.Present != 1 || h.Conservation[GT50] != 1 {
		t.Errorf("head %+v", h)
	}
	if th := reg[Teeth]; th.Recorded != 2 || th.Present != 1 || th.Conservation[Complete] != 1 {
		t.Errorf("teeth %+v", th)
	}
	if f := reg[Foot]; f.Recorded != 0 || f.Present != 0 {
		t.Errorf("foot %+v", f)
	}
	if b := sum[1]; b.Present != 0 || b.Recorded != 0 || b.ID != json.Number("2") {
		t.Errorf("%+v", b)
	}
	j, _ := json.Marshal(sum[1])
	if !strings.HasPrefix(string(j), `{"id":2,"label":"child"`) {
		t.Errorf("json %s", j)
	}

	if s, errs := Summary(nil); len(errs) > 0 || s == nil || len(s) != 0 {
		t.Errorf("empty: %v %v", s, errs)
	}
	if _, errs := Summary([]byte(`{"individuals":[{"id":"A","bones":{"femur_lft":{"present":true}}}]}`)); len(errs) != 1 {
		t.Errorf("invalid: %v", errs)
	}
}
