package pluginhost

import (
	"strings"
	"testing"
)

// A route's table parameter is a plain query parameter name.
func TestValidateTableParam(t *testing.T) {
	for _, c := range []struct {
		param string
		ok    bool
	}{
		{"", true}, {"tb", true}, {"table", true}, {"source_tb", true},
		{"t b", false}, {"tb[]", false}, {"1tb", false}, {"tb=finds", false}, {strings.Repeat("t", 64), false},
	} {
		m := goodManifest()
		m.Routes[0].TableParam = c.param
		probs := validateManifest(m)
		if ok := len(probs) == 0; ok != c.ok || (!ok && !strings.Contains(strings.Join(probs, "; "), "table parameter")) {
			t.Errorf("table parameter %q: %v", c.param, probs)
		}
	}
}
