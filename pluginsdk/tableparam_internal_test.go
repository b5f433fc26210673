package pluginsdk

import "testing"

// Route.TableParam crosses the wire both ways.
func TestRouteTableParamWire(t *testing.T) {
	m := Manifest{Name: "refs", Version: "1.0.0", Routes: []Route{{Method: "GET", Path: "/refs/summary", Access: AccessRead, TableParam: "table"}}}
	if got := ManifestFromProto(manifestToProto(m)).Routes[0].TableParam; got != "table" {
		t.Errorf("over the wire: %q", got)
	}
}
