package server

import "testing"

// The media types compressed on the fly, and those left alone because
// they are compressed already or must stream event by event.
func TestCompressible(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json; charset=utf-8":      true,
		"text/csv; charset=utf-8":              true,
		"application/geo+json":                 true,
		"application/vnd.google-earth.kml+xml": true,
		"text/html; charset=utf-8":             true,
		"image/svg+xml":                        true,
		"application/javascript":               true,
		"Application/JSON":                     true,
		"text/event-stream":                    false,
		"text/event-stream; charset=utf-8":     false,
		"image/png":                            false,
		"image/jpeg":                           false,
		"application/zip":                      false,
		"application/gzip":                     false,
		"application/pdf":                      false,
		"application/octet-stream":             false,
		"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": false,
		"": false,
	} {
		if got := compressible(ct); got != want {
			t.Errorf("compressible(%q) = %v, want %v", ct, got, want)
		}
	}
}
