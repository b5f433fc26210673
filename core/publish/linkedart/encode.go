package linkedart

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
)

// ContextURL is the only JSON-LD context the documents use. Everything they
// say, including the CRMarchaeo terms, resolves through it (it declares the
// "archaeo:" prefix), so no extension context is published.
const ContextURL = "https://linked.art/ns/v1/linked-art.json"

// Namespaces and IRIs of the CRM extensions used, spelt as the Linked Art
// context spells them.
const (
	CRMarchaeo = "http://www.cidoc-crm.org/cidoc-crm/CRMarchaeo/"
	CRMsci     = "http://www.ics.forth.gr/isl/CRMsci/"

	// StratigraphicUnit is CRMarchaeo's A8 Stratigraphic Unit, given as the
	// classification of a unit (see doc.go for why not as its type).
	StratigraphicUnit = CRMarchaeo + "A8_Stratigraphic_Unit"
	// StratigraphicGenesis is CRMarchaeo's A4, classifying a unit's formation.
	StratigraphicGenesis = CRMarchaeo + "A4_Stratigraphic_Genesis"
	// PhysicalRelation is CRMarchaeo's AP11 has physical relation, written
	// compactly as the assigned_property of a relation's attribute assignment.
	PhysicalRelation = "archaeo:AP11_has_physical_relation"
	// Sample is CRMsci's S13 Sample, classifying a sample.
	Sample = CRMsci + "S13_Sample"
)

// Getty AAT terms that Linked Art prescribes for the patterns used.
const (
	aatPrimaryName   = "http://vocab.getty.edu/aat/300404670"
	aatBriefText     = "http://vocab.getty.edu/aat/300418049"
	aatLicence       = "http://vocab.getty.edu/aat/300435434"
	aatWebPage       = "http://vocab.getty.edu/aat/300264578"
	aatDating        = "http://vocab.getty.edu/aat/300054714"
	aatUniqueID      = "http://vocab.getty.edu/aat/300404012"
	aatBurials       = "http://vocab.getty.edu/aat/300263485"
	iiifPresentation = "http://iiif.io/api/presentation/"
	iiifManifestType = `application/ld+json;profile="http://iiif.io/api/presentation/3/context.json"`
)

// maxYear bounds the years accepted, far beyond any archaeological date, so
// that negation cannot overflow and the dates stay parseable.
const maxYear = 999_999_999

// Encode turns a record into a Linked Art JSON-LD document: UTF-8, indented
// with two spaces, keys in a fixed order, ending in a newline. The same
// record always gives the same bytes.
func Encode(r Record) ([]byte, error) {
	doc, err := build(r)
	if err != nil {
		return nil, fmt.Errorf("linkedart: record %q: %w", r.URI, err)
	}
	compact, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("linkedart: record %q: %w", r.URI, err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return nil, fmt.Errorf("linkedart: record %q: indent: %w", r.URI, err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

type encoder struct {
	r Record
}

func build(r Record) (*object, error) {
	e := &encoder{r: r}
	if err := checkIRI(r.URI); err != nil {
		return nil, fmt.Errorf("URI: %w", err)
	}
	if r.VocabBase != "" {
		if err := checkIRI(r.VocabBase); err != nil {
			return nil, fmt.Errorf("VocabBase: %w", err)
		}
	}
	isPlace := r.Kind == KindSite
	typ := "HumanMadeObject"
	if isPlace {
		typ = "Place"
		if len(r.Material) > 0 || len(r.Dimensions) > 0 || r.Production != nil {
			return nil, errors.New("a site (Place) has no material, dimensions or production in Linked Art; publish them as fields")
		}
	}
	switch r.Kind {
	case KindUnit, KindFind, KindSample, KindBurial, KindSite, KindOther:
	default:
		return nil, fmt.Errorf("unknown kind %q", r.Kind)
	}

	doc := obj("@context", ContextURL, "id", r.URI, "type", typ, "_label", e.label())

	classes, err := e.classifications()
	if err != nil {
		return nil, err
	}
	statements := []any{}
	for i, f := range r.Fields {
		c, s, err := e.field(f)
		if err != nil {
			return nil, fmt.Errorf("field %d (%q): %w", i, f.Name, err)
		}
		if c != nil {
			classes = append(classes, c)
		}
		if s != nil {
			statements = append(statements, s)
		}
	}
	if r.Licence != "" {
		if err := checkIRI(r.Licence); err != nil {
			return nil, fmt.Errorf("Licence: %w", err)
		}
		statements = append(statements, obj(
			"type", "LinguisticObject",
			"_label", "Licence",
			"classified_as", []any{typeRef(aatLicence, "copyright/licensing statement", briefText())},
			"content", r.Licence))
	}
	doc.set("classified_as", classes)
	doc.set("identified_by", e.identifiers())
	doc.set("referred_to_by", statements)
	if r.TableURI != "" {
		if err := checkIRI(r.TableURI); err != nil {
			return nil, fmt.Errorf("TableURI: %w", err)
		}
		doc.set("member_of", []any{obj("id", r.TableURI, "type", "Set", "_label", r.TableLabel)})
	}

	if isPlace {
		places := []any{}
		for i, p := range r.PartOf {
			if err := checkIRI(p.URI); err != nil {
				return nil, fmt.Errorf("PartOf %d: %w", i, err)
			}
			places = append(places, obj("id", p.URI, "type", "Place", "_label", p.Label))
		}
		doc.set("part_of", places)
	} else {
		if err := e.objectParts(doc); err != nil {
			return nil, err
		}
	}

	assignments := []any{}
	for i, rel := range r.Relations {
		a, err := e.relation(rel)
		if err != nil {
			return nil, fmt.Errorf("relation %d: %w", i, err)
		}
		assignments = append(assignments, a)
	}
	for i, c := range r.Radiocarbon {
		a, err := e.radiocarbon(c)
		if err != nil {
			return nil, fmt.Errorf("radiocarbon date %d (%q): %w", i, c.LabCode, err)
		}
		assignments = append(assignments, a)
	}
	doc.set("attributed_by", assignments)

	subjects, err := e.subjectOf()
	if err != nil {
		return nil, err
	}
	doc.set("subject_of", subjects)
	return doc, nil
}

// label is the record's _label, which the schemas require.
func (e *encoder) label() string {
	for _, s := range []string{e.r.Label, e.r.Identifier} {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	if e.r.TableLabel != "" {
		return e.r.TableLabel + " " + e.r.URI
	}
	return e.r.URI
}

func (e *encoder) identifiers() []any {
	out := []any{}
	if e.r.Label != "" {
		out = append(out, obj("type", "Name", "content", e.r.Label,
			"classified_as", []any{typeRef(aatPrimaryName, "primary name")}))
	}
	if e.r.Identifier != "" {
		out = append(out, obj("type", "Identifier", "content", e.r.Identifier,
			"classified_as", []any{typeRef(aatUniqueID, "unique identifiers")}))
	}
	return out
}

// classifications are the kind's CRM extension class, as a type (see
// doc.go), and the admin's term for the kind.
func (e *encoder) classifications() ([]any, error) {
	out := []any{}
	switch e.r.Kind {
	case KindUnit:
		out = append(out, typeRef(StratigraphicUnit, "Stratigraphic Unit (CRMarchaeo A8)"))
	case KindSample:
		out = append(out, typeRef(Sample, "Sample (CRMsci S13)"))
	case KindBurial:
		if e.r.Classification == nil {
			out = append(out, typeRef(aatBurials, "burials"))
		}
	}
	if e.r.Classification != nil {
		t, err := e.term(*e.r.Classification, "term")
		if err != nil {
			return nil, fmt.Errorf("classification: %w", err)
		}
		if t != nil {
			out = append(out, t)
		}
	}
	return out, nil
}

func (e *encoder) field(f Field) (class, statement *object, err error) {
	if f.Value == nil && f.Term == nil {
		return nil, nil, nil
	}
	if f.Name == "" {
		return nil, nil, errors.New("no name")
	}
	label := f.Label
	if label == "" {
		label = f.Name
	}
	fieldIRI, err := e.vocab("field/" + pathSeg(e.r.Table) + "/" + pathSeg(f.Name))
	if err != nil {
		return nil, nil, err
	}
	if f.Term != nil && (f.Term.ID != "" || f.Term.Label != "") {
		// A vocabulary value is a classification of the record by the term,
		// and the term is itself classified by the field: Linked Art's
		// meta-type pattern (as style or shape are).
		t, err := e.term(*f.Term, "term", typeRef(fieldIRI, label))
		if err != nil {
			return nil, nil, err
		}
		return t, nil, nil
	}
	content, err := valueString(f.Value)
	if err != nil {
		return nil, nil, err
	}
	if content == "" {
		return nil, nil, nil
	}
	return nil, obj(
		"type", "LinguisticObject",
		"_label", label,
		"classified_as", []any{typeRef(fieldIRI, label, briefText())},
		"content", content), nil
}

func valueString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case bool:
		return strconv.FormatBool(x), nil
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("unsupported value type %T", v)
}

// objectParts sets the properties only a HumanMadeObject has.
func (e *encoder) objectParts(doc *object) error {
	r := e.r
	var parent *object
	places := []any{}
	for i, p := range r.PartOf {
		if err := checkIRI(p.URI); err != nil {
			return fmt.Errorf("PartOf %d: %w", i, err)
		}
		if p.Kind == KindSite {
			places = append(places, obj("id", p.URI, "type", "Place", "_label", p.Label))
			continue
		}
		if parent != nil {
			// The object schema allows a single part_of object.
			return fmt.Errorf("PartOf %d: a record can be part of only one other object (already %q)", i, r.PartOf[0].URI)
		}
		parent = obj("id", p.URI, "type", "HumanMadeObject", "_label", p.Label)
	}
	materials := []any{}
	for i, m := range r.Material {
		t, err := e.typed(m, "material", "Material")
		if err != nil {
			return fmt.Errorf("material %d: %w", i, err)
		}
		if t != nil {
			materials = append(materials, t)
		}
	}
	dims := []any{}
	for i, d := range r.Dimensions {
		o, err := e.dimension(d)
		if err != nil {
			return fmt.Errorf("dimension %d: %w", i, err)
		}
		dims = append(dims, o)
	}
	if parent != nil {
		doc.set("part_of", parent)
	}
	doc.set("made_of", materials)
	doc.set("dimension", dims)
	if r.Production != nil {
		p, err := e.production(*r.Production)
		if err != nil {
			return fmt.Errorf("production: %w", err)
		}
		doc.set("produced_by", p)
	}
	if len(places) > 0 {
		// Where a find was found is the place of the activity that
		// encountered it (CRMsci S19), Linked Art's pattern for find spots.
		doc.set("encountered_by", []any{obj("type", "Encounter", "took_place_at", places)})
	}
	return nil
}

func (e *encoder) dimension(d Dimension) (*object, error) {
	if math.IsNaN(d.Value) || math.IsInf(d.Value, 0) {
		return nil, fmt.Errorf("value %v is not a number JSON can carry", d.Value)
	}
	unit, err := e.typed(d.Unit, "unit", "MeasurementUnit")
	if err != nil {
		return nil, fmt.Errorf("unit: %w", err)
	}
	if unit == nil {
		return nil, errors.New("no unit")
	}
	o := obj("type", "Dimension", "_label", strings.TrimSpace(d.Type.Label+" "+formatFloat(d.Value)+" "+d.Unit.Label))
	t, err := e.term(d.Type, "dimension")
	if err != nil {
		return nil, fmt.Errorf("type: %w", err)
	}
	if t != nil {
		o.set("classified_as", []any{t})
	}
	o.set("value", d.Value)
	o.set("unit", unit)
	return o, nil
}

func (e *encoder) production(p Period) (*object, error) {
	o := obj("type", "Production")
	if e.r.Kind == KindUnit {
		o.set("classified_as", []any{typeRef(StratigraphicGenesis, "Stratigraphic Genesis (CRMarchaeo A4)")})
	}
	ts, err := timespan(p.Label, p.Begin, p.End)
	if err != nil {
		return nil, err
	}
	o.set("timespan", ts)
	if p.PeriodURI != "" {
		if err := checkIRI(p.PeriodURI); err != nil {
			return nil, fmt.Errorf("PeriodURI: %w", err)
		}
		o.set("during", []any{obj("id", p.PeriodURI, "type", "Period", "_label", p.Label)})
	}
	if len(o.keys) == 1 {
		return nil, nil
	}
	return o, nil
}

// timespan is a TimeSpan from whole astronomical years; nil when there is
// nothing to say (Linked Art requires a name or one of the bounds).
func timespan(name string, begin, end *int) (*object, error) {
	ts := obj("type", "TimeSpan", "_label", yearsLabel(begin, end))
	if name != "" {
		ts.set("identified_by", []any{obj("type", "Name", "content", name)})
	}
	if begin != nil {
		s, err := yearStart(*begin)
		if err != nil {
			return nil, fmt.Errorf("begin: %w", err)
		}
		ts.set("begin_of_the_begin", s)
	}
	if end != nil {
		s, err := yearEnd(*end)
		if err != nil {
			return nil, fmt.Errorf("end: %w", err)
		}
		ts.set("end_of_the_end", s)
	}
	if begin != nil && end != nil && *begin > *end {
		return nil, fmt.Errorf("begins (%d) after it ends (%d)", *begin, *end)
	}
	if name == "" && begin == nil && end == nil {
		return nil, nil
	}
	return ts, nil
}

func (e *encoder) relation(rel Relation) (*object, error) {
	if strings.TrimSpace(rel.Type) == "" {
		return nil, errors.New("no type")
	}
	if err := checkIRI(rel.TargetURI); err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	typeIRI := rel.TypeURI
	if typeIRI == "" {
		var err error
		if typeIRI, err = e.vocab("relation/" + pathSeg(rel.Type)); err != nil {
			return nil, err
		}
	} else if err := checkIRI(typeIRI); err != nil {
		return nil, fmt.Errorf("type URI: %w", err)
	}
	typeLabel := rel.TypeLabel
	if typeLabel == "" {
		typeLabel = rel.Type
	}
	targetLabel := rel.TargetLabel
	if targetLabel == "" {
		targetLabel = rel.TargetURI
	}
	targetType := "HumanMadeObject"
	if e.r.Kind == KindSite {
		targetType = "Place"
	}
	return obj(
		"type", "AttributeAssignment",
		"_label", e.label()+" "+typeLabel+" "+targetLabel,
		"classified_as", []any{typeRef(typeIRI, typeLabel)},
		"assigned", []any{obj("id", rel.TargetURI, "type", targetType, "_label", rel.TargetLabel)},
		"assigned_property", PhysicalRelation), nil
}

// radiocarbon is a dating: an attribute assignment classified as dating,
// identified by the laboratory code, assigning the conventional age (a
// Dimension in radiocarbon years BP whose limits are ±1σ), its error (a
// second Dimension) and one TimeSpan per calibrated range.
func (e *encoder) radiocarbon(c C14) (*object, error) {
	if c.Error < 0 {
		return nil, fmt.Errorf("negative error %d", c.Error)
	}
	if c.BP < -maxYear || c.BP > maxYear || c.Error > maxYear {
		return nil, fmt.Errorf("age %d±%d out of range", c.BP, c.Error)
	}
	c14Type, err := e.vocab("c14/radiocarbon-dating")
	if err != nil {
		return nil, err
	}
	ageType, _ := e.vocab("c14/conventional-age")
	errType, _ := e.vocab("c14/standard-error")
	bpUnit, _ := e.vocab("unit/radiocarbon-years-bp")
	labCode, _ := e.vocab("c14/lab-code")
	curveType, _ := e.vocab("c14/calibration-curve")
	materialType, _ := e.vocab("c14/sample-material")
	probType, _ := e.vocab("c14/calibrated-range")

	unit := obj("id", bpUnit, "type", "MeasurementUnit", "_label", "radiocarbon years BP")
	ageLabel := fmt.Sprintf("%d ± %d BP", c.BP, c.Error)
	assigned := []any{
		obj("type", "Dimension", "_label", ageLabel,
			"classified_as", []any{typeRef(ageType, "conventional radiocarbon age")},
			"value", c.BP,
			"lower_value_limit", c.BP-c.Error,
			"upper_value_limit", c.BP+c.Error,
			"unit", unit),
		obj("type", "Dimension", "_label", fmt.Sprintf("± %d", c.Error),
			"classified_as", []any{typeRef(errType, "standard error of the radiocarbon age")},
			"value", c.Error,
			"unit", unit),
	}
	for i, rg := range c.Calibrated {
		if rg.From > rg.To {
			return nil, fmt.Errorf("calibrated range %d: from %d is after to %d", i, rg.From, rg.To)
		}
		if math.IsNaN(rg.Probability) || rg.Probability < 0 || rg.Probability > 1 {
			return nil, fmt.Errorf("calibrated range %d: probability %v not in [0,1]", i, rg.Probability)
		}
		from, to := rg.From, rg.To
		ts, err := timespan("", &from, &to)
		if err != nil {
			return nil, fmt.Errorf("calibrated range %d: %w", i, err)
		}
		num := formatFloat(math.Round(rg.Probability*1000) / 10)
		pct := num + "%"
		rangeType, err := e.vocab("c14/calibrated-range/" + pathSeg(num))
		if err != nil {
			return nil, err
		}
		// The probability is the range's classification (68.3% and 95.4%
		// ranges are two kinds of calibrated range); its name says it all
		// for people.
		ts.set("classified_as", []any{typeRef(rangeType, pct+" probability range", typeRef(probType, "calibrated range"))})
		ts.set("identified_by", []any{obj("type", "Name", "content", pct+": "+yearsLabel(&from, &to))})
		assigned = append(assigned, reorder(ts, "type", "_label", "classified_as", "identified_by", "begin_of_the_begin", "end_of_the_end"))
	}
	statements := []any{}
	if c.Material != "" {
		statements = append(statements, obj("type", "LinguisticObject", "_label", "Sample material",
			"classified_as", []any{typeRef(materialType, "sample material", briefText())},
			"content", c.Material))
	}
	if c.Curve != "" {
		statements = append(statements, obj("type", "LinguisticObject", "_label", "Calibration curve",
			"classified_as", []any{typeRef(curveType, "calibration curve", briefText())},
			"content", c.Curve))
	}
	label := "Radiocarbon date " + ageLabel
	if c.LabCode != "" {
		label = "Radiocarbon date " + c.LabCode + ": " + ageLabel
	}
	o := obj(
		"type", "AttributeAssignment",
		"_label", label,
		"classified_as", []any{typeRef(aatDating, "dating (measuring process)"), typeRef(c14Type, "radiocarbon dating")})
	if c.LabCode != "" {
		o.set("identified_by", []any{obj("type", "Identifier", "content", c.LabCode,
			"classified_as", []any{typeRef(labCode, "laboratory code")})})
	}
	o.set("referred_to_by", statements)
	o.set("assigned", assigned)
	return o, nil
}

// subjectOf holds the landing page and the IIIF manifests, both in Linked
// Art's pattern: a LinguisticObject (the content) digitally carried by a
// DigitalObject with a format and an access point.
func (e *encoder) subjectOf() ([]any, error) {
	out := []any{}
	if e.r.Homepage != "" {
		if err := checkIRI(e.r.Homepage); err != nil {
			return nil, fmt.Errorf("Homepage: %w", err)
		}
		out = append(out, obj(
			"type", "LinguisticObject",
			"_label", "Web page for "+e.label(),
			"digitally_carried_by", []any{obj(
				"type", "DigitalObject",
				"_label", "Web page for "+e.label(),
				"classified_as", []any{typeRef(aatWebPage, "web pages (documents)")},
				"format", "text/html",
				"access_point", []any{obj("id", e.r.Homepage, "type", "DigitalObject")})}))
	}
	for i, img := range e.r.Images {
		if err := checkIRI(img.URI); err != nil {
			return nil, fmt.Errorf("image %d: %w", i, err)
		}
		label := img.Label
		if label == "" {
			label = "IIIF manifest for " + e.label()
		}
		out = append(out, obj(
			"type", "LinguisticObject",
			"_label", label,
			"digitally_carried_by", []any{obj(
				"type", "DigitalObject",
				"_label", label,
				"format", iiifManifestType,
				"conforms_to", []any{obj("id", iiifPresentation, "type", "InformationObject")},
				"access_point", []any{obj("id", img.URI, "type", "DigitalObject")})}))
	}
	return out, nil
}

// term is a Type reference for t, with optional classifications of the type
// itself. A term with neither ID nor label is nothing (nil).
func (e *encoder) term(t Term, space string, meta ...*object) (*object, error) {
	o, err := e.typed(t, space, "Type")
	if err != nil || o == nil {
		return o, err
	}
	if len(meta) > 0 {
		list := make([]any, len(meta))
		for i, m := range meta {
			list[i] = m
		}
		o.set("classified_as", list)
	}
	return o, nil
}

// typed is a reference to a term as the given Linked Art class (Type,
// Material, MeasurementUnit). A term without an ID gets one under
// VocabBase, made from its label, so that the same label always gives the
// same IRI.
func (e *encoder) typed(t Term, space, class string) (*object, error) {
	id := t.ID
	if id == "" {
		if strings.TrimSpace(t.Label) == "" {
			return nil, nil
		}
		var err error
		if id, err = e.vocab(space + "/" + pathSeg(t.Label)); err != nil {
			return nil, err
		}
	} else if err := checkIRI(id); err != nil {
		return nil, err
	}
	return obj("id", id, "type", class, "_label", t.Label), nil
}

func (e *encoder) vocab(path string) (string, error) {
	if e.r.VocabBase == "" {
		return "", fmt.Errorf("VocabBase is needed to name %q", path)
	}
	base := e.r.VocabBase
	if !strings.HasSuffix(base, "/") && !strings.HasSuffix(base, "#") {
		base += "/"
	}
	return base + path, nil
}

func typeRef(id, label string, meta ...*object) *object {
	o := obj("id", id, "type", "Type", "_label", label)
	if len(meta) > 0 {
		list := make([]any, len(meta))
		for i, m := range meta {
			list[i] = m
		}
		o.set("classified_as", list)
	}
	return o
}

func briefText() *object { return typeRef(aatBriefText, "brief text") }

// reorder returns o with the named keys first, in that order, then the rest.
func reorder(o *object, first ...string) *object {
	out := &object{}
	done := map[string]bool{}
	for _, k := range first {
		for i, ok := range o.keys {
			if ok == k {
				out.keys = append(out.keys, k)
				out.vals = append(out.vals, o.vals[i])
				done[k] = true
			}
		}
	}
	for i, k := range o.keys {
		if !done[k] {
			out.keys = append(out.keys, k)
			out.vals = append(out.vals, o.vals[i])
		}
	}
	return out
}

// checkIRI accepts absolute IRIs only: the documents' ids must not depend on
// a base, and a relative one would silently change meaning on expansion.
func checkIRI(s string) error {
	if s == "" {
		return errors.New("empty IRI")
	}
	if strings.ContainsAny(s, " \t\r\n\"<>\\^`{|}") {
		return fmt.Errorf("IRI %q contains a character IRIs cannot", s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("IRI %q: %w", s, err)
	}
	if u.Scheme == "" || (u.Host == "" && u.Opaque == "") {
		return fmt.Errorf("IRI %q is not absolute", s)
	}
	return nil
}

// pathSeg makes a string safe as one IRI path segment. Empty becomes "_".
func pathSeg(s string) string {
	if s == "" {
		return "_"
	}
	return url.PathEscape(s)
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// yearStart is 1 January of astronomical year y, at midnight UTC, in ISO
// 8601 / XML Schema 1.1 form: four digits at least, a minus sign before BC
// years (0000 is 1 BC, -0500 is 501 BC).
func yearStart(y int) (string, error) {
	s, err := isoYear(y)
	if err != nil {
		return "", err
	}
	return s + "-01-01T00:00:00Z", nil
}

// yearEnd is the last second of astronomical year y, as Linked Art writes
// the end of a year.
func yearEnd(y int) (string, error) {
	s, err := isoYear(y)
	if err != nil {
		return "", err
	}
	return s + "-12-31T23:59:59Z", nil
}

func isoYear(y int) (string, error) {
	if y < -maxYear || y > maxYear {
		return "", fmt.Errorf("year %d out of range", y)
	}
	if y < 0 {
		return fmt.Sprintf("-%04d", -y), nil
	}
	return fmt.Sprintf("%04d", y), nil
}

// yearsLabel is a human label for a span of astronomical years, e.g.
// "501 BC – 401 BC".
func yearsLabel(begin, end *int) string {
	switch {
	case begin != nil && end != nil:
		return humanYear(*begin) + " – " + humanYear(*end)
	case begin != nil:
		return "from " + humanYear(*begin)
	case end != nil:
		return "until " + humanYear(*end)
	}
	return ""
}

func humanYear(y int) string {
	if y <= 0 {
		return strconv.Itoa(1-y) + " BC"
	}
	return "AD " + strconv.Itoa(y)
}
