package ratelimit

import (
	"net/http/httptest"
	"testing"
)

func TestClientAddr(t *testing.T) {
	trusted, err := ParseProxies([]string{"10.0.0.0/8", " 127.0.0.1 ", ""})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		proxies Proxies
		remote  string
		xff     []string
		want    string
	}{
		{"direct connection", Proxies{}, "203.0.113.7:5555", nil, "203.0.113.7"},
		{"X-Forwarded-For ignored without trusted proxies", Proxies{}, "203.0.113.7:5555", []string{"198.51.100.1"}, "203.0.113.7"},
		{"X-Forwarded-For ignored from an untrusted peer", trusted, "203.0.113.7:5555", []string{"198.51.100.1"}, "203.0.113.7"},
		{"a trusted proxy's client", trusted, "10.1.2.3:80", []string{"198.51.100.1"}, "198.51.100.1"},
		{"the client's own header is not believed", trusted, "10.1.2.3:80", []string{"1.1.1.1, 198.51.100.1"}, "198.51.100.1"},
		{"through two trusted proxies", trusted, "127.0.0.1:80", []string{"198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"several header lines", trusted, "10.1.2.3:80", []string{"1.1.1.1", "198.51.100.2"}, "198.51.100.2"},
		{"garbage in the header stops the walk", trusted, "10.1.2.3:80", []string{"198.51.100.1, nonsense"}, "10.1.2.3"},
		{"only proxies", trusted, "10.1.2.3:80", []string{"10.0.0.1"}, "10.0.0.1"},
		{"IPv6 by /64", Proxies{}, "[2001:db8:1:2:3:4:5:6]:443", nil, "2001:db8:1:2::/64"},
		{"IPv4-mapped IPv6", Proxies{}, "[::ffff:203.0.113.7]:1", nil, "203.0.113.7"},
		{"unparseable remote address", Proxies{}, "pipe", nil, "pipe"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remote
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := tc.proxies.ClientAddr(r); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if _, err := ParseProxies([]string{"proxy.example"}); err == nil {
		t.Error("a host name is not a trusted proxy")
	}
}
