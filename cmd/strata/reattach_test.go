package main

import (
	"strings"
	"testing"
)

// A malformed STRATA_PLUGIN_REATTACH stops serve before it opens anything,
// with the reason: a developer would otherwise debug a plugin the server
// never attached to.
func TestServeRefusesBadReattach(t *testing.T) {
	for _, c := range []struct{ value, msg string }{
		{"not json", "STRATA_PLUGIN_REATTACH: not a JSON object"},
		{`{"munsell":{"Protocol":"grpc","Addr":{"Network":"unix","String":"/tmp/x"}}}`, `plugin "munsell": no Pid`},
	} {
		code, _, errOut := runWith(envMap{"STRATA_DATA_DIR": t.TempDir(), "STRATA_PLUGIN_REATTACH": c.value},
			"serve", "--addr", "127.0.0.1:0")
		if code != 1 || !strings.Contains(errOut, c.msg) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", c.value, code, errOut, c.msg)
		}
	}
}
