package files

import (
	"strings"
	"testing"
)

func TestSplitName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, name, ext string }{
		{"photo.PNG", "photo", "png"},
		{"../../etc/passwd", "passwd", ""},
		{`..\..\boot.ini`, "boot", "ini"},
		{"a\x00b.jpg", "ab", "jpg"},
		{"archive.tar.gz", "archive.tar", "gz"},
		{"..", "file", ""},
		{"", "file", ""},
		{".hidden", "hidden", ""},
		{"scavo 2024 — US 12.jpeg", "scavo 2024 — US 12", "jpeg"},
		{"name.with space", "name.with space", ""},
		{strings.Repeat("é", 300) + ".pdf", strings.Repeat("é", 100), "pdf"},
	} {
		n, e := SplitName(c.in)
		if n != c.name || e != c.ext {
			t.Errorf("SplitName(%q) = %q, %q; want %q, %q", c.in, n, e, c.name, c.ext)
		}
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	for _, c := range []struct {
		head, ext, want string
		active, image   bool
	}{
		{png, "png", "image/png", false, true},
		{png, "html", "image/png", true, true}, // the name makes it an attachment anyway
		{"<html><script>alert(1)</script>", "png", "text/html; charset=utf-8", true, false},
		{`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>`, "svg", "text/xml; charset=utf-8", true, false},
		{`<svg xmlns="http://www.w3.org/2000/svg"/>`, "svg", "image/svg+xml", true, false},
		{"alert(1)", "js", "text/javascript; charset=utf-8", true, false},
		{"%PDF-1.7", "pdf", "application/pdf", false, false},
		{"a,b\n1,2", "csv", "text/csv; charset=utf-8", false, false},
		{"II*\x00rest", "tif", "image/tiff", false, false},
		{"\x00\x01\x02", "tif", "application/octet-stream", false, false},
	} {
		f := File{Mime: Sniff([]byte(c.head), c.ext), Ext: c.ext}
		if f.Mime != c.want || f.Active() != c.active || f.IsImage() != c.image {
			t.Errorf("%q .%s: %q active=%v image=%v", c.head, c.ext, f.Mime, f.Active(), f.IsImage())
		}
	}
}
