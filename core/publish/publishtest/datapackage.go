package publishtest

import (
	"bytes"
	"fmt"
	"os"
	"sync"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ecmaRegexp runs a JSON Schema pattern as the ECMA-262 regular expression
// it is: the profiles' path pattern uses lookahead, which Go's regexp lacks.
type ecmaRegexp struct{ re *regexp2.Regexp }

func (r ecmaRegexp) MatchString(s string) bool {
	ok, err := r.re.MatchString(s)
	return ok && err == nil
}

func (r ecmaRegexp) String() string { return r.re.String() }

func compileECMA(pattern string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	return ecmaRegexp{re}, nil
}

var (
	dpMu      sync.Mutex
	dpSchemas = map[string]*jsonschema.Schema{}
)

// dataPackageSchema compiles (once) the Frictionless Data Package profile
// of a version, "1.0" or "2.0". The profiles embed the Data Resource and
// Table Schema profiles; the draft-07 metaschema is built into the library,
// so every URL the compiler asks for is refused.
func dataPackageSchema(version string) (*jsonschema.Schema, error) {
	dpMu.Lock()
	defer dpMu.Unlock()
	if s := dpSchemas[version]; s != nil {
		return s, nil
	}
	if version != "1.0" && version != "2.0" {
		return nil, fmt.Errorf("publishtest: no Data Package profile %q", version)
	}
	fn, err := rootPath(frictionless + "/datapackage-" + version + ".json")
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(fn)
	if err != nil {
		return nil, fmt.Errorf("publishtest: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("publishtest: %s: %w", fn, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	c.UseRegexpEngine(compileECMA)
	url := "https://datapackage.org/profiles/" + version + "/datapackage.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("publishtest: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("publishtest: compile %s: %w", fn, err)
	}
	dpSchemas[version] = s
	return s, nil
}

// DataPackage validates a datapackage.json against the Frictionless Data
// Package 2.0 profile.
func DataPackage(raw []byte) error { return DataPackageProfile(raw, "2.0") }

// DataPackageProfile validates a datapackage.json against the Frictionless
// Data Package profile of version "1.0" or "2.0".
func DataPackageProfile(raw []byte, version string) error {
	s, err := dataPackageSchema(version)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("publishtest: datapackage.json: not JSON: %w", err)
	}
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("publishtest: datapackage.json against the Data Package %s profile: %w", version, err)
	}
	return nil
}
