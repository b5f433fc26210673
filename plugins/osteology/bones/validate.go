package bones

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Doc is an osteo_data document after validation, values canonical.
type Doc struct {
	Individuals []Individual `json:"individuals"`
}

// Individual is one person in the record.
type Individual struct {
	// ID as sent: a string (trimmed) or an integer (json.Number), so that
	// a client gets back the type it uses.
	ID    any             `json:"id"`
	Label string          `json:"label"`
	Notes string          `json:"notes"`
	Bones map[string]Bone `json:"bones"` // by catalogue id
}

// Bone is the record of one element for one individual.
type Bone struct {
	Present             bool   `json:"present"`
	Conservation        string `json:"conservation,omitempty"`
	Certainty           string `json:"certainty,omitempty"`
	LateralityCertainty string `json:"laterality_certainty,omitempty"`
	Notes               string `json:"notes,omitempty"`
}

// FieldError names what is wrong and where, as a JSON path into osteo_data
// ("individuals[0].bones.femur_lft"; "" is the document itself).
type FieldError struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error codes.
const (
	CodeInvalidJSON    = "invalid_json"
	CodeInvalidType    = "invalid_type"
	CodeRequired       = "required"
	CodeUnknownField   = "unknown_field"
	CodeUnknownElement = "unknown_element"
	CodeInvalidValue   = "invalid_value"
	CodeDuplicate      = "duplicate"
	CodeTooManyErrors  = "too_many_errors"
)

// MaxErrors caps the errors reported for one document.
const MaxErrors = 100

// Validate checks an osteo_data document and returns it normalised:
// element ids and values in canonical lower case (accepted synonyms such as
// the Italian "frammentario" or ">50%" replaced by their ids), strings
// trimmed, label, notes and bones always present, keys in a fixed order.
//
// Shape (issue 5, CONTRACT.md §8):
//
//	{"individuals":[{"id", "label", "notes",
//	  "bones":{"<element>":{"present", "conservation", "certainty",
//	                        "laterality_certainty", "notes"}}}]}
//
// Per bone only present (a boolean) is required; conservation is complete,
// fragmentary, traces, gt50 or lt50; certainty and laterality_certainty
// are certain, probable or uncertain (laterality only on left/right
// elements); null means absent. Individual ids (non-empty strings or
// integers) are required and unique. Element keys are matched ignoring
// case. Unknown keys are errors at every level, not dropped: a misspelt
// "conservaton" would otherwise lose data silently.
//
// An empty document (no bytes, only spaces, or null) is valid and returns
// nil: the record has no osteology data.
func Validate(raw []byte) ([]byte, []FieldError) {
	doc, errs := Parse(raw)
	if len(errs) > 0 || doc == nil {
		return nil, errs
	}
	out, err := json.Marshal(doc)
	if err != nil { // cannot happen: Doc holds strings, bools, numbers
		return nil, []FieldError{{"", CodeInvalidJSON, err.Error()}}
	}
	return out, nil
}

// Parse is Validate returning the document itself.
func Parse(raw []byte) (*Doc, []FieldError) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, []FieldError{{"", CodeInvalidJSON, "not valid JSON: " + err.Error()}}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, []FieldError{{"", CodeInvalidJSON, "not valid JSON: data after the document"}}
	}
	p := &parser{}
	doc := p.doc(v)
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return doc, nil
}

type parser struct {
	errs []FieldError
}

func (p *parser) add(path, code, format string, a ...any) {
	switch {
	case len(p.errs) < MaxErrors:
		p.errs = append(p.errs, FieldError{path, code, fmt.Sprintf(format, a...)})
	case len(p.errs) == MaxErrors:
		p.errs = append(p.errs, FieldError{"", CodeTooManyErrors, fmt.Sprintf("more than %d errors; the rest are not listed", MaxErrors)})
	}
}

// Describe names the kind of a decoded JSON value in words ("a number",
// "an object"), for messages; never a Go type name.
func Describe(v any) string { return typeName(v) }

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64, int, int64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a value of another kind"
}

// unknownKeys reports keys outside allowed, sorted for a stable order.
func (p *parser) unknownKeys(path string, m map[string]any, allowed ...string) {
	var bad []string
	for k := range m {
		if !contains(allowed, k) {
			bad = append(bad, k)
		}
	}
	sort.Strings(bad)
	for _, k := range bad {
		p.add(join(path, k), CodeUnknownField, "unknown field %q (allowed: %s)", k, strings.Join(allowed, ", "))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (p *parser) doc(v any) *Doc {
	m, ok := v.(map[string]any)
	if !ok {
		p.add("", CodeInvalidType, "osteo_data must be an object {\"individuals\":[...]}, got %s", typeName(v))
		return nil
	}
	p.unknownKeys("", m, "individuals")
	d := &Doc{Individuals: []Individual{}}
	list, ok := m["individuals"].([]any)
	if !ok && m["individuals"] != nil {
		p.add("individuals", CodeInvalidType, "individuals must be an array, got %s", typeName(m["individuals"]))
		return d
	}
	seen := map[string]int{}
	for i, iv := range list {
		path := fmt.Sprintf("individuals[%d]", i)
		ind, key := p.individual(path, iv)
		if key != "" {
			if j, dup := seen[key]; dup {
				p.add(path+".id", CodeDuplicate, "id %s is already used by individuals[%d]", key, j)
			} else {
				seen[key] = i
			}
		}
		d.Individuals = append(d.Individuals, ind)
	}
	return d
}

// individual returns the individual and its id's key for uniqueness ("" if
// the id is invalid). A string "7" and the number 7 are the same id.
func (p *parser) individual(path string, v any) (Individual, string) {
	ind := Individual{Bones: map[string]Bone{}}
	m, ok := v.(map[string]any)
	if !ok {
		p.add(path, CodeInvalidType, "an individual must be an object, got %s", typeName(v))
		return ind, ""
	}
	p.unknownKeys(path, m, "id", "label", "notes", "bones")
	key := ""
	switch id := m["id"].(type) {
	case nil:
		p.add(path+".id", CodeRequired, "id is required")
	case string:
		if s := strings.TrimSpace(id); s == "" {
			p.add(path+".id", CodeInvalidValue, "id must not be empty")
		} else {
			ind.ID, key = s, strconv.Quote(s)
		}
	case json.Number:
		if n, err := strconv.ParseInt(id.String(), 10, 64); err != nil {
			p.add(path+".id", CodeInvalidValue, "a numeric id must be an integer, got %s", id)
		} else {
			ind.ID, key = json.Number(strconv.FormatInt(n, 10)), strconv.Quote(strconv.FormatInt(n, 10))
		}
	default:
		p.add(path+".id", CodeInvalidType, "id must be a string or an integer, got %s", typeName(id))
	}
	ind.Label = p.text(path+".label", m["label"])
	ind.Notes = p.text(path+".notes", m["notes"])

	bones, ok := m["bones"].(map[string]any)
	if !ok {
		if m["bones"] != nil {
			p.add(path+".bones", CodeInvalidType, "bones must be an object keyed by element id, got %s", typeName(m["bones"]))
		}
		return ind, key
	}
	keys := make([]string, 0, len(bones))
	for k := range bones {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	from := map[string]string{} // canonical id → key as sent
	for _, k := range keys {
		bp := path + ".bones." + k
		el, ok := Lookup(k)
		if !ok {
			p.add(bp, CodeUnknownElement, "unknown element %q (GET /osteology/schema lists them)", k)
			continue
		}
		same := el.ID // an element and its SameAs are one entry
		if el.SameAs != "" {
			same = el.SameAs
		}
		if prev, dup := from[same]; dup {
			p.add(bp, CodeDuplicate, "element %s is already given as %q", el.ID, prev)
			continue
		}
		from[same] = k
		if b, ok := p.bone(bp, el, bones[k]); ok {
			ind.Bones[el.ID] = b
		}
	}
	return ind, key
}

// text reads an optional string (null or absent = "").
func (p *parser) text(path string, v any) string {
	switch s := v.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(s)
	}
	p.add(path, CodeInvalidType, "must be a string, got %s", typeName(v))
	return ""
}

// enum reads an optional value from a vocabulary, ignoring case and spaces.
func (p *parser) enum(path string, v any, vocab map[string]string, values []Value) string {
	if v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		p.add(path, CodeInvalidType, "must be a string, got %s", typeName(v))
		return ""
	}
	norm := strings.ToLower(strings.TrimSpace(s))
	if norm == "" {
		return ""
	}
	if id, ok := vocab[norm]; ok {
		return id
	}
	ids := make([]string, len(values))
	for i, x := range values {
		ids[i] = x.ID
	}
	p.add(path, CodeInvalidValue, "%q is not one of %s", s, strings.Join(ids, ", "))
	return ""
}

func (p *parser) bone(path string, el Element, v any) (Bone, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		p.add(path, CodeInvalidType, "must be an object {\"present\": true|false, ...}, got %s", typeName(v))
		return Bone{}, false
	}
	p.unknownKeys(path, m, "present", "conservation", "certainty", "laterality_certainty", "notes")
	var b Bone
	switch pr := m["present"].(type) {
	case bool:
		b.Present = pr
	case nil:
		p.add(path+".present", CodeRequired, "present (true or false) is required")
	default:
		p.add(path+".present", CodeInvalidType, "present must be true or false, got %s", typeName(pr))
	}
	b.Conservation = p.enum(path+".conservation", m["conservation"], conservationIn, conservation)
	b.Certainty = p.enum(path+".certainty", m["certainty"], certaintyIn, certainty)
	b.LateralityCertainty = p.enum(path+".laterality_certainty", m["laterality_certainty"], certaintyIn, certainty)
	if b.LateralityCertainty != "" && el.Side == None {
		p.add(path+".laterality_certainty", CodeInvalidValue, "%s has no side; laterality_certainty applies to left/right elements", el.ID)
	}
	b.Notes = p.text(path+".notes", m["notes"])
	return b, true
}
