package bones

import (
	"fmt"
	"strings"
)

// Side of an element.
type Side string

const (
	Left  Side = "left"
	Right Side = "right"
	None  Side = "none" // midline or unpaired
)

// Labels are the display names of an element, region or value.
type Labels struct {
	En string `json:"en"`
	It string `json:"it"`
}

// Region ids (SPEC.md §2.8), in display order.
const (
	Head      = "head"
	Spine     = "spine"
	Thorax    = "thorax"
	Shoulder  = "shoulder"
	UpperLimb = "upper_limb"
	Pelvis    = "pelvis"
	LowerLimb = "lower_limb"
	Foot      = "foot"
	Teeth     = "teeth"
)

// Region of the skeleton.
type Region struct {
	ID     string `json:"id"`
	Labels Labels `json:"labels"`
}

var regions = []Region{
	{Head, Labels{"Head", "Testa"}},
	{Spine, Labels{"Spine", "Colonna vertebrale"}},
	{Thorax, Labels{"Thorax", "Torace"}},
	{Shoulder, Labels{"Shoulder girdle", "Cingolo scapolare"}},
	{UpperLimb, Labels{"Upper limb", "Arto superiore"}},
	{Pelvis, Labels{"Pelvis", "Bacino"}},
	{LowerLimb, Labels{"Lower limb", "Arto inferiore"}},
	{Foot, Labels{"Foot", "Piede"}},
	{Teeth, Labels{"Teeth", "Denti"}},
}

// Element is one recordable bone, group of bones or tooth.
type Element struct {
	ID     string `json:"id"`     // e.g. "femur_right", "vertebrae_cervical", "tooth_36"
	Base   string `json:"base"`   // the id without its side: "femur"; teeth "tooth"
	Region string `json:"region"` // a Region id
	Side   Side   `json:"side"`
	// Group: several bones recorded as one entry (ribs, carpals, …).
	Group  bool   `json:"group,omitempty"`
	FDI    int    `json:"fdi,omitempty"` // teeth: the FDI two-digit code
	Labels Labels `json:"labels"`
	// SameAs names the element this one records under another name: the
	// ids of BraDypUS's inventory (its client's bone map) that mean what
	// one of ours means. Both are accepted and stored as sent, so a
	// BraDypUS client reads back the keys it wrote; one individual may not
	// give both (that would count the bones twice).
	SameAs string `json:"same_as,omitempty"`
	// PartOf names the element this one is a part of (ilium, ischium and
	// pubis of the os coxae), for clients that draw either level.
	PartOf string `json:"part_of,omitempty"`
}

// The catalogue. Sided elements are written once with their English name
// and the Italian name in both genders' agreement, because Italian
// adjectives agree with the noun: "femore destro" but "tibia destra",
// "ossa carpali destre".
//
// Choices worth knowing: sacrum and coccyx sit in spine (they are the
// fused sacral and coccygeal vertebrae of the vertebral column); hand bones
// in upper_limb and the patella in lower_limb, as the regions list has no
// hand or knee; atlas and axis are separate from the other cervical
// vertebrae, as in common inventory forms (Buikstra & Ubelaker 1994); the
// cranium can be recorded whole or by bone.
var catalogue = buildCatalogue()

type sided struct {
	base, region string
	group        bool
	en           string // singular or plural English name, without side
	itR, itL     string // Italian with the side adjective agreed
}

func buildCatalogue() []Element {
	var out []Element
	single := func(id, region string, group bool, en, it string) {
		out = append(out, Element{ID: id, Base: id, Region: region, Side: None, Group: group, Labels: Labels{en, it}})
	}
	pair := func(s sided) {
		out = append(out,
			Element{ID: s.base + "_right", Base: s.base, Region: s.region, Side: Right, Group: s.group,
				Labels: Labels{s.en + " (right)", s.itR}},
			Element{ID: s.base + "_left", Base: s.base, Region: s.region, Side: Left, Group: s.group,
				Labels: Labels{s.en + " (left)", s.itL}})
	}

	// head
	single("cranium", Head, false, "Cranium", "Cranio")
	single("frontal", Head, false, "Frontal bone", "Osso frontale")
	pair(sided{"parietal", Head, false, "Parietal bone", "Osso parietale destro", "Osso parietale sinistro"})
	single("occipital", Head, false, "Occipital bone", "Osso occipitale")
	pair(sided{"temporal", Head, false, "Temporal bone", "Osso temporale destro", "Osso temporale sinistro"})
	single("sphenoid", Head, false, "Sphenoid", "Osso sfenoide")
	pair(sided{"zygomatic", Head, false, "Zygomatic bone", "Osso zigomatico destro", "Osso zigomatico sinistro"})
	pair(sided{"maxilla", Head, false, "Maxilla", "Osso mascellare destro", "Osso mascellare sinistro"})
	pair(sided{"nasal", Head, false, "Nasal bone", "Osso nasale destro", "Osso nasale sinistro"})
	single("mandible", Head, false, "Mandible", "Mandibola")
	single("hyoid", Head, false, "Hyoid", "Osso ioide")

	// spine
	single("atlas", Spine, false, "Atlas (C1)", "Atlante (C1)")
	single("axis", Spine, false, "Axis (C2)", "Epistrofeo (C2)")
	single("vertebrae_cervical", Spine, true, "Cervical vertebrae (C3–C7)", "Vertebre cervicali (C3–C7)")
	single("vertebrae_thoracic", Spine, true, "Thoracic vertebrae", "Vertebre toraciche")
	single("vertebrae_lumbar", Spine, true, "Lumbar vertebrae", "Vertebre lombari")
	single("sacrum", Spine, false, "Sacrum", "Osso sacro")
	single("coccyx", Spine, false, "Coccyx", "Coccige")

	// thorax
	single("sternum", Thorax, false, "Sternum", "Sterno")
	pair(sided{"ribs", Thorax, true, "Ribs", "Coste destre", "Coste sinistre"})

	// shoulder
	pair(sided{"clavicle", Shoulder, false, "Clavicle", "Clavicola destra", "Clavicola sinistra"})
	pair(sided{"scapula", Shoulder, false, "Scapula", "Scapola destra", "Scapola sinistra"})

	// upper limb
	pair(sided{"humerus", UpperLimb, false, "Humerus", "Omero destro", "Omero sinistro"})
	pair(sided{"radius", UpperLimb, false, "Radius", "Radio destro", "Radio sinistro"})
	pair(sided{"ulna", UpperLimb, false, "Ulna", "Ulna destra", "Ulna sinistra"})
	pair(sided{"carpals", UpperLimb, true, "Carpals", "Ossa carpali destre", "Ossa carpali sinistre"})
	pair(sided{"metacarpals", UpperLimb, true, "Metacarpals", "Ossa metacarpali destre", "Ossa metacarpali sinistre"})
	pair(sided{"hand_phalanges", UpperLimb, true, "Hand phalanges", "Falangi della mano destra", "Falangi della mano sinistra"})

	// pelvis
	pair(sided{"os_coxae", Pelvis, false, "Os coxae (hip bone)", "Osso coxale destro", "Osso coxale sinistro"})

	// lower limb
	pair(sided{"femur", LowerLimb, false, "Femur", "Femore destro", "Femore sinistro"})
	pair(sided{"patella", LowerLimb, false, "Patella", "Rotula destra", "Rotula sinistra"})
	pair(sided{"tibia", LowerLimb, false, "Tibia", "Tibia destra", "Tibia sinistra"})
	pair(sided{"fibula", LowerLimb, false, "Fibula", "Fibula (perone) destra", "Fibula (perone) sinistra"})

	// foot
	pair(sided{"talus", Foot, false, "Talus", "Talo (astragalo) destro", "Talo (astragalo) sinistro"})
	pair(sided{"calcaneus", Foot, false, "Calcaneus", "Calcagno destro", "Calcagno sinistro"})
	pair(sided{"tarsals_other", Foot, true, "Other tarsals (navicular, cuboid, cuneiforms)",
		"Altre ossa tarsali destre (navicolare, cuboide, cuneiformi)", "Altre ossa tarsali sinistre (navicolare, cuboide, cuneiformi)"})
	pair(sided{"metatarsals", Foot, true, "Metatarsals", "Ossa metatarsali destre", "Ossa metatarsali sinistre"})
	pair(sided{"foot_phalanges", Foot, true, "Foot phalanges", "Falangi del piede destro", "Falangi del piede sinistro"})

	out = append(out, bradypusElements()...)
	out = append(out, teeth()...)
	return out
}

// bradypusElements are the entries of BraDypUS's inventory (the bone map
// of its web client, which existing clients send) that our catalogue
// names otherwise or records at another level. They are first-class ids,
// never rewritten on save: a client gets back the keys it sent.
func bradypusElements() []Element {
	var out []Element
	single := func(id, region string, group bool, sameAs, en, it string) {
		out = append(out, Element{ID: id, Base: id, Region: region, Side: None, Group: group, SameAs: sameAs, Labels: Labels{en, it}})
	}
	pair := func(base, region string, group bool, sameAs, partOf, en, itR, itL string) {
		same := func(side string) string {
			if sameAs == "" {
				return ""
			}
			return sameAs + "_" + side
		}
		part := func(side string) string {
			if partOf == "" {
				return ""
			}
			return partOf + "_" + side
		}
		out = append(out,
			Element{ID: base + "_right", Base: base, Region: region, Side: Right, Group: group, SameAs: same("right"), PartOf: part("right"),
				Labels: Labels{en + " (right)", itR}},
			Element{ID: base + "_left", Base: base, Region: region, Side: Left, Group: group, SameAs: same("left"), PartOf: part("left"),
				Labels: Labels{en + " (left)", itL}})
	}
	single("face", Head, true, "", "Facial skeleton", "Massiccio facciale")
	single("cervical_vertebrae", Spine, true, "", "Cervical vertebrae (C1–C7)", "Vertebre cervicali (C1–C7)")
	single("thoracic_vertebrae", Spine, true, "vertebrae_thoracic", "Thoracic vertebrae (T1–T12)", "Vertebre toraciche (T1–T12)")
	single("lumbar_vertebrae", Spine, true, "vertebrae_lumbar", "Lumbar vertebrae (L1–L5)", "Vertebre lombari (L1–L5)")
	pair("ilium", Pelvis, false, "", "os_coxae", "Ilium", "Ileo destro", "Ileo sinistro")
	pair("ischium", Pelvis, false, "", "os_coxae", "Ischium", "Ischio destro", "Ischio sinistro")
	pair("pubis", Pelvis, false, "", "os_coxae", "Pubis", "Pube destro", "Pube sinistro")
	pair("tarsals", Foot, true, "tarsals_other", "", "Tarsals other than talus and calcaneus",
		"Ossa tarsali destre (escl. talo e calcagno)", "Ossa tarsali sinistre (escl. talo e calcagno)")
	return out
}

// teeth in FDI notation: quadrants 1–4 permanent (8 teeth each), 5–8
// deciduous (5 each, for subadults); quadrant 1/5 upper right, 2/6 upper
// left, 3/7 lower left, 4/8 lower right.
func teeth() []Element {
	type pos struct{ en, it string }
	permanent := []pos{
		{"central incisor", "Incisivo centrale"}, {"lateral incisor", "Incisivo laterale"},
		{"canine", "Canino"}, {"first premolar", "Primo premolare"}, {"second premolar", "Secondo premolare"},
		{"first molar", "Primo molare"}, {"second molar", "Secondo molare"}, {"third molar", "Terzo molare"},
	}
	deciduous := []pos{
		{"deciduous central incisor", "Incisivo centrale deciduo"}, {"deciduous lateral incisor", "Incisivo laterale deciduo"},
		{"deciduous canine", "Canino deciduo"}, {"deciduous first molar", "Primo molare deciduo"},
		{"deciduous second molar", "Secondo molare deciduo"},
	}
	var out []Element
	for q := 1; q <= 8; q++ {
		list := permanent
		if q > 4 {
			list = deciduous
		}
		jaw, jawIt := "Upper", "superiore"
		if q == 3 || q == 4 || q == 7 || q == 8 {
			jaw, jawIt = "Lower", "inferiore"
		}
		side, sideEn, sideIt := Right, "right", "destro"
		if q == 2 || q == 3 || q == 6 || q == 7 {
			side, sideEn, sideIt = Left, "left", "sinistro"
		}
		for i, p := range list {
			code := q*10 + i + 1
			out = append(out, Element{
				ID: fmt.Sprintf("tooth_%d", code), Base: "tooth", Region: Teeth, Side: side, FDI: code,
				Labels: Labels{
					fmt.Sprintf("%s %s %s (%d)", jaw, sideEn, p.en, code),
					fmt.Sprintf("%s %s %s (%d)", p.it, jawIt, sideIt, code),
				},
			})
		}
	}
	return out
}

var byID = func() map[string]int {
	m := make(map[string]int, len(catalogue))
	for i, e := range catalogue {
		m[e.ID] = i
	}
	return m
}()

// Catalogue returns every element in display order (a copy).
func Catalogue() []Element { return append([]Element(nil), catalogue...) }

// Regions returns the regions in display order (a copy).
func Regions() []Region { return append([]Region(nil), regions...) }

// Lookup finds an element by id, ignoring case and surrounding spaces.
func Lookup(id string) (Element, bool) {
	i, ok := byID[strings.ToLower(strings.TrimSpace(id))]
	if !ok {
		return Element{}, false
	}
	return catalogue[i], true
}

// Attribute values.
const (
	Complete    = "complete"
	Fragmentary = "fragmentary"
	Traces      = "traces"
	GT50        = "gt50" // more than half of the element preserved
	LT50        = "lt50" // less than half

	Certain   = "certain"
	Probable  = "probable"
	Uncertain = "uncertain"
)

// Value is an allowed attribute value with its labels.
type Value struct {
	ID     string `json:"id"`
	Labels Labels `json:"labels"`
}

var conservation = []Value{
	{Complete, Labels{"Complete", "Completo"}},
	{GT50, Labels{"More than 50%", "Più del 50%"}},
	{LT50, Labels{"Less than 50%", "Meno del 50%"}},
	{Fragmentary, Labels{"Fragmentary", "Frammentario"}},
	{Traces, Labels{"Traces", "Tracce"}},
}

var certainty = []Value{
	{Certain, Labels{"Certain", "Certo"}},
	{Probable, Labels{"Probable", "Probabile"}},
	{Uncertain, Labels{"Uncertain", "Incerto"}},
}

// Synonyms accepted on input and stored as the canonical id: legacy
// Italian words and the obvious share notations.
var conservationIn = map[string]string{
	Complete: Complete, "completo": Complete, "completa": Complete,
	Fragmentary: Fragmentary, "frammentario": Fragmentary, "frammentaria": Fragmentary,
	Traces: Traces, "tracce": Traces,
	GT50: GT50, ">50": GT50, ">50%": GT50,
	LT50: LT50, "<50": LT50, "<50%": LT50,
}

var certaintyIn = map[string]string{
	Certain: Certain, "certo": Certain, "certa": Certain,
	Probable: Probable, "probabile": Probable,
	Uncertain: Uncertain, "incerto": Uncertain, "incerta": Uncertain,
}

// Schema is the GET /osteology/schema document.
type Schema struct {
	Regions      []Region  `json:"regions"`
	Elements     []Element `json:"elements"`
	Conservation []Value   `json:"conservation"`
	Certainty    []Value   `json:"certainty"`
}

// GetSchema returns the catalogue and the allowed values for clients.
func GetSchema() Schema {
	return Schema{
		Regions:      Regions(),
		Elements:     Catalogue(),
		Conservation: append([]Value(nil), conservation...),
		Certainty:    append([]Value(nil), certainty...),
	}
}
