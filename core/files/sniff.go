package files

import (
	"net/http"
	"strings"
)

// sniffLen is how much of the content DetectContentType looks at.
const sniffLen = 512

// Sniff names the content type of a file from its first bytes, then
// refines it with the extension where the content alone cannot tell
// (text formats, containers); a client's declared type is never used. An
// extension never turns content sniffed as active (HTML, XML, SVG) into
// something a browser would render inline.
func Sniff(head []byte, ext string) string {
	m := http.DetectContentType(head)
	base := m
	if i := strings.IndexByte(base, ';'); i >= 0 {
		base = base[:i]
	}
	switch base {
	case "text/html", "text/xml":
		return m // active content stays what it is, whatever the name says
	case "text/plain":
		switch ext {
		case "svg":
			if strings.Contains(strings.ToLower(string(head)), "<svg") {
				return "image/svg+xml"
			}
		case "js", "mjs":
			return "text/javascript; charset=utf-8"
		case "csv":
			return "text/csv; charset=utf-8"
		case "json", "geojson":
			return "application/json"
		case "md":
			return "text/markdown; charset=utf-8"
		}
	case "application/zip":
		if t, ok := zipTypes[ext]; ok {
			return t
		}
	case "application/octet-stream":
		if t, ok := binaryTypes[ext]; ok && matchesMagic(ext, head) {
			return t
		}
	}
	return m
}

var zipTypes = map[string]string{
	"docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	"pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	"odt":  "application/vnd.oasis.opendocument.text",
	"ods":  "application/vnd.oasis.opendocument.spreadsheet",
}

var binaryTypes = map[string]string{
	"tif":  "image/tiff",
	"tiff": "image/tiff",
}

func matchesMagic(ext string, head []byte) bool {
	switch ext {
	case "tif", "tiff":
		return len(head) >= 4 && (string(head[:4]) == "II*\x00" || string(head[:4]) == "MM\x00*")
	}
	return false
}
