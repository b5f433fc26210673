package server

import (
	"context"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/goccy/go-yaml"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/auth"
)

// TestOpenAPIMatchesRouteTable keeps docs/openapi.yaml true to the code:
// every route is documented with its method, and every documented
// operation exists.
func TestOpenAPIMatchesRouteTable(t *testing.T) {
	raw, err := os.ReadFile("../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("docs/openapi.yaml is not valid YAML: %v", err)
	}
	if _, ok := doc["paths"].(map[string]any); !ok {
		t.Fatal("docs/openapi.yaml has no paths mapping")
	}
	documented := map[string]bool{}
	pathLine := regexp.MustCompile(`^  (/\S*):\s*$`)
	methodLine := regexp.MustCompile(`^    (get|post|put|patch|delete):\s*$`)
	current := ""
	for _, line := range strings.Split(string(raw), "\n") {
		if m := pathLine.FindStringSubmatch(line); m != nil {
			current = m[1]
		} else if m := methodLine.FindStringSubmatch(line); m != nil && current != "" {
			documented[strings.ToUpper(m[1])+" "+current] = true
		}
	}
	s, err := New(Deps{Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`[:*](\w+)`)
	var missing []string
	for _, r := range s.routes {
		key := r.Method + " " + param.ReplaceAllString(r.FullPath(), "{$1}")
		if !documented[key] {
			missing = append(missing, key)
		}
		delete(documented, key)
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("routes missing from docs/openapi.yaml: %v", missing)
	}
	if len(documented) > 0 {
		t.Errorf("docs/openapi.yaml documents routes that do not exist: %v", documented)
	}
}

// TestOpenAPIIsValid loads docs/openapi.yaml with a real OpenAPI loader
// and validates it: structure, references, schemas, examples, and unique
// operation ids.
func TestOpenAPIIsValid(t *testing.T) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile("../../docs/openapi.yaml")
	if err != nil {
		t.Fatalf("load docs/openapi.yaml: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	// Every operation has an operationId (Validate checks they are
	// unique) and says who may call it: its own security, or the
	// document's default.
	camel := regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			if !camel.MatchString(op.OperationID) {
				t.Errorf("%s: operationId %q is not camelCase", where, op.OperationID)
			}
			if op.Security == nil && len(doc.Security) == 0 {
				t.Errorf("%s: no security (security: [] for a public operation)", where)
			}
		}
	}
}

// TestOpenAPISecurityMatchesAccess: public routes say security: [],
// super_admin routes accept a session token only (API keys never carry
// privilege 1), every other route a session token or an API key.
func TestOpenAPISecurityMatchesAccess(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromFile("../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Deps{Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	schemes := func(req openapi3.SecurityRequirements) []string {
		var out []string
		for _, r := range req {
			for name := range r {
				out = append(out, name)
			}
		}
		sort.Strings(out)
		return out
	}
	param := regexp.MustCompile(`[:*](\w+)`)
	for _, r := range s.routes {
		path := param.ReplaceAllString(r.FullPath(), "{$1}")
		item := doc.Paths.Find(path)
		if item == nil || item.GetOperation(r.Method) == nil {
			continue // TestOpenAPIMatchesRouteTable reports it
		}
		op := item.GetOperation(r.Method)
		req := doc.Security
		if op.Security != nil {
			req = *op.Security
		}
		var want []string
		switch {
		case r.Scope == Instance || r.Scope == Root || r.Access == auth.Public:
			want = nil
		case r.Access == auth.SuperAdminOnly:
			want = []string{"bearer"}
		default:
			want = []string{"apiKey", "bearer"}
		}
		if got := schemes(req); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s %s (%s): security %v, want %v", r.Method, path, r.Access, got, want)
		}
	}
}
