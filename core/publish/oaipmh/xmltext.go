package oaipmh

import (
	"io"
	"strings"
	"unicode/utf8"
)

// escape returns s as XML character data or attribute value: markup
// characters become references, invalid UTF-8 becomes U+FFFD and characters
// XML 1.0 forbids (most C0 controls, U+FFFE, U+FFFF, surrogates) are dropped,
// so any string yields a well-formed document. Tabs, newlines and carriage
// returns become references so attribute values keep them.
func escape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&apos;")
		case r == '\t':
			b.WriteString("&#9;")
		case r == '\n':
			b.WriteString("&#10;")
		case r == '\r':
			b.WriteString("&#13;")
		case !xmlChar(r):
			// dropped: no XML 1.0 document may contain it
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// xmlChar reports whether r is in XML 1.0's Char production.
func xmlChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD ||
		(r >= 0x20 && r <= 0xD7FF) ||
		(r >= 0xE000 && r <= 0xFFFD) ||
		(r >= 0x10000 && r <= 0x10FFFF)
}

// errWriter writes strings and remembers the first error, so writers need
// not check every call.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) s(parts ...string) {
	for _, p := range parts {
		if e.err != nil {
			return
		}
		_, e.err = io.WriteString(e.w, p)
	}
}

// elem writes <name>escaped text</name>.
func (e *errWriter) elem(name, text string) {
	e.s("<", name, ">", escape(text), "</", name, ">")
}
