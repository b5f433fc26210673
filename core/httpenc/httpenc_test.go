package httpenc

import "testing"

func TestNegotiate(t *testing.T) {
	for _, tc := range []struct{ header, want string }{
		{"", ""},
		{"gzip", "gzip"},
		{"gzip, deflate, br, zstd", "br"}, // Chromium's: the server's order on equal q
		{"br;q=0.5, gzip", "gzip"},
		{"br;q=0, gzip;q=0.1", ""}, // identity, not named, keeps q=1
		{"br;q=0, gzip;q=0", ""},
		{"identity", ""},
		{"deflate", ""},
		{"*", "br"},
		{"*;q=0.2, br;q=0", "gzip"},
		{"gzip;q=0.5, identity", ""},  // identity (q=1) preferred
		{"gzip;q=0.5, *;q=0", "gzip"}, // identity refused: the coding
		{"GZIP;Q=1", "gzip"},
		{"x-gzip", "gzip"},
		{"gzip;q=2", ""}, // malformed: ignored
		{"gzip;q=abc, br", "br"},
		{" , gzip ,", "gzip"},
	} {
		if got := Negotiate(tc.header, "br", "gzip"); got != tc.want {
			t.Errorf("Negotiate(%q) = %q, want %q", tc.header, got, tc.want)
		}
	}
	if got := Negotiate("br, gzip", "gzip"); got != "gzip" {
		t.Errorf("only gzip offered: got %q", got)
	}
}
