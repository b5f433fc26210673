package pluginsdk_test

import (
	"strings"
	"testing"
)

// Route.TableParam is checked by Validate.
func TestRouteTableParam(t *testing.T) {
	for _, c := range []struct {
		param string
		ok    bool
	}{
		{"", true}, {"tb", true}, {"table", true},
		{"t b", false}, {"tb[]", false}, {"9", false},
	} {
		m := validManifest()
		m.Routes[0].TableParam = c.param
		err := m.Validate()
		if (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), "table parameter")) {
			t.Errorf("%q: %v", c.param, err)
		}
	}
}
