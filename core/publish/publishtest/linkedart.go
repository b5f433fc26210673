package publishtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// LinkedArtContext is the Linked Art context URL records name.
const LinkedArtContext = "https://linked.art/ns/v1/linked-art.json"

const linkedArtSchemaBase = "https://linked.art/api/1.0/schema/"

var (
	laOnce    sync.Once
	laSchemas map[string]*jsonschema.Schema
	laErr     error
)

// refuseLoader refuses every URL the compiler was not given, so that a $ref
// to a remote schema is an error instead of a request to the network.
type refuseLoader struct{}

func (refuseLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("publishtest: offline: no schema for %s", u)
}

// dateTimeRE is a date-time of RFC 3339 with, as ISO 8601 and XML Schema 1.1
// allow, an expanded or negative year: how BC dates are written.
var dateTimeRE = regexp.MustCompile(`^(-?)(\d{4,})(-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))$`)

// ISODateTime is the "date-time" format asserted on Linked Art documents:
// RFC 3339 for years 0000-9999 and the same with an expanded (no leading
// zero) or negative (not -0000) year. Values other than strings pass, as
// JSON Schema formats apply to strings only.
func ISODateTime(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	m := dateTimeRE.FindStringSubmatch(s)
	if m == nil {
		return fmt.Errorf("%q is not an ISO 8601 date-time", s)
	}
	if len(m[2]) > 4 && m[2][0] == '0' {
		return fmt.Errorf("%q: an expanded year has no leading zero", s)
	}
	if m[1] == "-" && strings.Trim(m[2], "0") == "" {
		return fmt.Errorf("%q: year -0000", s)
	}
	// Month, day and time checked on a leap year RFC 3339 can write.
	if _, err := time.Parse(time.RFC3339, "2000"+m[3]); err != nil {
		return fmt.Errorf("%q: %w", s, err)
	}
	return nil
}

func loadLinkedArt() (map[string]*jsonschema.Schema, error) {
	laOnce.Do(func() {
		laSchemas, laErr = compileLinkedArt()
	})
	return laSchemas, laErr
}

func compileLinkedArt() (map[string]*jsonschema.Schema, error) {
	dir, err := rootPath(linkedArtSchemas)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.UseLoader(refuseLoader{})
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "date-time", Validate: ISODateTime})
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("publishtest: no Linked Art schemas in %s (%v)", dir, err)
	}
	for _, fn := range files {
		b, err := os.ReadFile(fn)
		if err != nil {
			return nil, fmt.Errorf("publishtest: %w", err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("publishtest: %s: %w", fn, err)
		}
		m, ok := doc.(map[string]any)
		id, _ := m["$id"].(string)
		if !ok || id == "" {
			return nil, fmt.Errorf("publishtest: %s has no $id", fn)
		}
		// The files say draft 2020-12 but are draft 7 (array items,
		// definitions), and upstream validates them as draft 7.
		delete(m, "$schema")
		if err := c.AddResource(id, m); err != nil {
			return nil, fmt.Errorf("publishtest: %s: %w", fn, err)
		}
	}
	// Upstream bug: core.json's Name.referred_to_by says
	// "$ref": "/definitions/referred_to_byProp" (no "#"), which resolves to
	// a URL that does not exist. Serve there what it obviously means.
	if err := c.AddResource("https://linked.art/definitions/referred_to_byProp",
		map[string]any{"$ref": linkedArtSchemaBase + "core.json#/definitions/referred_to_byProp"}); err != nil {
		return nil, fmt.Errorf("publishtest: %w", err)
	}
	out := map[string]*jsonschema.Schema{}
	for _, name := range []string{"object", "place"} {
		s, err := c.Compile(linkedArtSchemaBase + name + ".json")
		if err != nil {
			return nil, fmt.Errorf("publishtest: compile Linked Art %s.json: %w", name, err)
		}
		out[name] = s
	}
	return out, nil
}

// LinkedArt validates a Linked Art record against the Linked Art JSON
// schema of its endpoint: place.json for a "Place", object.json for
// anything else (whose schema then says what is wrong with its type).
func LinkedArt(doc []byte) error {
	schemas, err := loadLinkedArt()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("publishtest: Linked Art: not JSON: %w", err)
	}
	name := "object"
	if m, ok := inst.(map[string]any); ok && m["type"] == "Place" {
		name = "place"
	}
	if err := schemas[name].Validate(inst); err != nil {
		return fmt.Errorf("publishtest: Linked Art %s.json: %w", name, err)
	}
	return nil
}

// linkedArtNamespaces are those every expanded property of a record must be
// in: a term the context did not define would be dropped (the context has
// no @vocab) or left relative.
var linkedArtNamespaces = []string{
	"http://www.cidoc-crm.org/cidoc-crm/",
	"http://www.ics.forth.gr/isl/CRMsci/",
	"http://www.ics.forth.gr/isl/CRMdig/",
	"http://www.w3.org/2000/01/rdf-schema#",
	"http://purl.org/dc/elements/1.1/",
	"http://purl.org/dc/terms/",
	"https://linked.art/ns/terms/",
}

// Census counts what a JSON-LD document says, so that the compact document
// and its expansion can be compared.
type Census struct {
	// Props counts properties other than id, type and @context (compact)
	// or keywords (expanded).
	Props int
	// Types counts type / @type occurrences on nodes (not on literals).
	Types int
	// Keys counts each expanded property IRI (expanded census only).
	Keys map[string]int
	// IDs counts each @id and node @type IRI (expanded census only).
	IDs map[string]int
}

func countCompact(v any, c *Census) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			switch k {
			case "@context", "id":
			case "type":
				c.Types++
			default:
				c.Props++
			}
			countCompact(val, c)
		}
	case []any:
		for _, e := range x {
			countCompact(e, c)
		}
	}
}

func countExpanded(v any, c *Census) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			switch {
			case k == "@type":
				if _, literal := x["@value"]; literal {
					continue // a literal's datatype, not a node's class
				}
				c.Types++
				for _, ty := range asSlice(val) {
					if s, ok := ty.(string); ok {
						c.IDs[s]++
					}
				}
			case k == "@id":
				if s, ok := val.(string); ok {
					c.IDs[s]++
				}
			case strings.HasPrefix(k, "@"):
			default:
				c.Props++
				c.Keys[k]++
			}
			countExpanded(val, c)
		}
	case []any:
		for _, e := range x {
			countExpanded(e, c)
		}
	}
}

func asSlice(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

// LinkedArtExpansion expands a Linked Art record with the context held in
// testdata and returns the census of the expansion. The error lists every
// problem: a property or type the expansion dropped, an @id or @type that
// is not an absolute IRI, a property outside the CRM and Linked Art
// namespaces. The census is filled whenever the document expanded.
func LinkedArtExpansion(doc []byte) (Census, error) {
	ec := Census{Keys: map[string]int{}, IDs: map[string]int{}}
	var compact any
	if err := json.Unmarshal(doc, &compact); err != nil {
		return ec, fmt.Errorf("publishtest: Linked Art: not JSON: %w", err)
	}
	var cc Census
	countCompact(compact, &cc)
	expanded, err := expand(doc, "", false)
	if err != nil {
		return ec, err
	}
	countExpanded(expanded, &ec)
	var problems []string
	if cc.Props != ec.Props || cc.Types != ec.Types {
		problems = append(problems, fmt.Sprintf("expansion dropped terms: %d properties and %d types before, %d and %d after", cc.Props, cc.Types, ec.Props, ec.Types))
	}
	for id := range ec.IDs {
		if u, err := url.Parse(id); err != nil || !u.IsAbs() {
			problems = append(problems, fmt.Sprintf("%q expands to no absolute IRI", id))
		}
	}
	for k := range ec.Keys {
		ok := false
		for _, ns := range linkedArtNamespaces {
			ok = ok || strings.HasPrefix(k, ns)
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("property %q expands outside the CRM/Linked Art namespaces", k))
		}
	}
	if len(problems) == 0 {
		return ec, nil
	}
	sort.Strings(problems)
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = errors.New("publishtest: Linked Art expansion: " + p)
	}
	return ec, errors.Join(errs...)
}
