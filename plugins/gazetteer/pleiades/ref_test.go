package pleiades

import (
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in, id string
		hosts  []string
	}{
		{"423025", "423025", nil},
		{"  423025 ", "423025", nil},
		{"https://pleiades.stoa.org/places/423025", "423025", nil},
		{"http://pleiades.stoa.org/places/423025/", "423025", nil},
		{"pleiades.stoa.org/places/423025", "423025", nil},
		{"https://www.Pleiades.Stoa.org/places/423025/json", "423025", nil},
		{"PLEIADES:579885", "579885", nil},
		{"http://127.0.0.1:8123/places/12", "12", []string{"127.0.0.1"}},
		// Not references to a Pleiades place.
		{"", "", nil},
		{"Roma", "", nil},
		{"-423025", "", nil},
		{"1234567890123", "", nil}, // more digits than an id has
		{"https://example.org/places/423025", "", nil},
		{"https://pleiades.stoa.org/search/423025", "", nil},
		{"https://pleiades.stoa.org/places/423025/json/extra", "", nil},
		{"https://pleiades.stoa.org/places/roma", "", nil},
		{"ftp://pleiades.stoa.org/places/423025", "", nil},
		{"https://user@pleiades.stoa.org/places/423025", "", nil},
		{"javascript:alert(1)", "", nil},
		{"http://127.0.0.1:8123/places/12", "", nil},
	} {
		id, ok := ParseRef(tc.in, tc.hosts...)
		if id != tc.id || ok != (tc.id != "") {
			t.Errorf("ParseRef(%q, %v) = %q, %v; want %q", tc.in, tc.hosts, id, ok, tc.id)
		}
	}
	if got := PlaceURI("423025"); got != "https://pleiades.stoa.org/places/423025" {
		t.Errorf("PlaceURI: %s", got)
	}
}

// FuzzParseRef: whatever it is given, ParseRef never panics, and what it
// accepts is a valid id that the input spells out.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"423025", "https://pleiades.stoa.org/places/423025/json", "pleiades:1", "http://[::1]/places/1", "%zz", "https://pleiades.stoa.org/places/%34%32"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := ParseRef(s, "example.org")
		if !ok {
			if id != "" {
				t.Fatalf("refused with an id: %q", id)
			}
			return
		}
		if !ValidID(id) {
			t.Fatalf("accepted %q as id %q", s, id)
		}
		if !strings.Contains(s, id) && !strings.Contains(s, "%") {
			t.Fatalf("id %q not in %q", id, s)
		}
	})
}
