package server

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/strata-archaeo/strata/config"
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
		key := r.Method + " " + param.ReplaceAllString(r.fullPath(), "{$1}")
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
