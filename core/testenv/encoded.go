package testenv

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"

	"github.com/andybalholm/brotli"
)

// rawClient leaves answers as sent: no Accept-Encoding of its own, no
// decompression.
var rawClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// RawDo sends a request with headers h to a real listener and returns the
// answer with its body exactly as sent (Content-Encoding not undone).
func RawDo(t testing.TB, method, url string, h map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	res, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// Decode undoes a Content-Encoding ("", "gzip" or "br"); another coding
// fails the test.
func Decode(t testing.TB, coding string, b []byte) []byte {
	t.Helper()
	var r io.Reader = bytes.NewReader(b)
	switch coding {
	case "":
		return b
	case "br":
		r = brotli.NewReader(r)
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	default:
		t.Fatalf("unexpected Content-Encoding %q", coding)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decoding %s: %v", coding, err)
	}
	return out
}
