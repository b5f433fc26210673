package publishtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// IRIs the RO-Crate checks look for in the expanded graph.
const (
	schemaOrg     = "http://schema.org/"
	dctConformsTo = "http://purl.org/dc/terms/conformsTo"
	roCrateSpec   = "https://w3id.org/ro/crate/1.2"
	metadataFile  = "ro-crate-metadata.json"
)

// iso8601Date is a date, or a date-time with a zone, of ISO 8601 as
// schema.org's Date and DateTime write them.
var iso8601Date = regexp.MustCompile(`^-?\d{4,}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$`)

// ROCrate checks an ro-crate-metadata.json by RO-Crate 1.2's rules on the
// descriptor and the root data entity, reading them after JSON-LD
// expansion (ExpandJSONLD, safe mode: no term dropped): the document names
// the 1.2 context by URL and holds only @context and a flat @graph; the
// descriptor ro-crate-metadata.json is a CreativeWork about the root and
// conformsTo the 1.2 specification; the root ("./") is a Dataset with a
// name, a description, a single ISO 8601 datePublished and a license. It
// returns the expanded root node, for further checks.
func ROCrate(meta []byte) (root map[string]any, err error) {
	var compact map[string]json.RawMessage
	if err := json.Unmarshal(meta, &compact); err != nil {
		return nil, fmt.Errorf("publishtest: RO-Crate: not a JSON object: %w", err)
	}
	var errs []error
	bad := func(f string, a ...any) { errs = append(errs, fmt.Errorf("publishtest: RO-Crate: "+f, a...)) }
	var ctx any
	_ = json.Unmarshal(compact["@context"], &ctx)
	if ctx != ROCrateContext {
		bad("@context is %s, want %q", compact["@context"], ROCrateContext)
	}
	for k := range compact {
		if k != "@context" && k != "@graph" {
			bad("top-level key %q beside @context and @graph", k)
		}
	}
	expanded, err := ExpandJSONLD(meta)
	if err != nil {
		return nil, err
	}
	nodes := map[string]map[string]any{}
	var graph []any
	if len(expanded) == 1 {
		if g, ok := expanded[0].(map[string]any)["@graph"].([]any); ok {
			graph = g
		}
	}
	if graph == nil {
		graph = expanded
	}
	for _, n := range graph {
		m, _ := n.(map[string]any)
		id, _ := m["@id"].(string)
		if id == "" {
			bad("a node without @id after expansion")
			continue
		}
		nodes[id] = m
	}
	rootID := ExpandBase
	desc := nodes[ExpandBase+metadataFile]
	if desc == nil {
		bad("no descriptor %s", metadataFile)
	} else {
		if !hasIRI(desc["@type"], schemaOrg+"CreativeWork") {
			bad("descriptor @type %v, want schema:CreativeWork", desc["@type"])
		}
		if !hasIDRef(desc[schemaOrg+"about"], rootID) {
			bad("descriptor about %v, want the root ./", desc[schemaOrg+"about"])
		}
		if !hasIDRef(desc[dctConformsTo], roCrateSpec) {
			bad("descriptor conformsTo %v, want %s", desc[dctConformsTo], roCrateSpec)
		}
	}
	root = nodes[rootID]
	if root == nil {
		bad("no root data entity ./")
		return nil, errors.Join(errs...)
	}
	if !hasIRI(root["@type"], schemaOrg+"Dataset") {
		bad("root @type %v, want schema:Dataset", root["@type"])
	}
	for _, p := range []string{"name", "description"} {
		if s := literals(root[schemaOrg+p]); len(s) == 0 || strings.TrimSpace(s[0]) == "" {
			bad("root has no %s", p)
		}
	}
	if d := literals(root[schemaOrg+"datePublished"]); len(d) != 1 || !iso8601Date.MatchString(d[0]) {
		bad("root datePublished %v is not one ISO 8601 date", root[schemaOrg+"datePublished"])
	}
	if root[schemaOrg+"license"] == nil {
		bad("root has no license")
	}
	return root, errors.Join(errs...)
}

// hasIRI reports whether an expanded @type holds iri.
func hasIRI(v any, iri string) bool {
	for _, x := range asSlice(v) {
		if x == iri {
			return true
		}
	}
	return false
}

// hasIDRef reports whether an expanded property value holds {"@id": id}.
func hasIDRef(v any, id string) bool {
	for _, x := range asSlice(v) {
		if m, ok := x.(map[string]any); ok && m["@id"] == id {
			return true
		}
	}
	return false
}

// literals returns the string @values of an expanded property.
func literals(v any) []string {
	var out []string
	for _, x := range asSlice(v) {
		if m, ok := x.(map[string]any); ok {
			if s, ok := m["@value"].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}
