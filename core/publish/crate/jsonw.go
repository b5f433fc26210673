package crate

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// jsonWriter writes JSON by hand so that documents stream (nothing is
// assembled in memory) and keys come out in the order the code writes them.
// The first error sticks; later writes do nothing.
type jsonWriter struct {
	w   *bufio.Writer
	err error
}

func newJSONWriter(w io.Writer) *jsonWriter {
	return &jsonWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

func (j *jsonWriter) raw(s string) {
	if j.err != nil {
		return
	}
	_, j.err = j.w.WriteString(s)
}

func (j *jsonWriter) indent(n int) {
	if j.err != nil {
		return
	}
	j.err = j.w.WriteByte('\n')
	for i := 0; i < n && j.err == nil; i++ {
		_, j.err = j.w.WriteString("  ")
	}
}

// str writes s as a JSON string. Invalid UTF-8 is an error rather than
// silently becoming U+FFFD: published data must say what the database says.
func (j *jsonWriter) str(s string) {
	if j.err != nil {
		return
	}
	if !utf8.ValidString(s) {
		j.err = fmt.Errorf("invalid UTF-8 in %q", s)
		return
	}
	w := j.w
	w.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			w.WriteString(s[start:i])
			switch c {
			case '"':
				w.WriteString(`\"`)
			case '\\':
				w.WriteString(`\\`)
			case '\n':
				w.WriteString(`\n`)
			case '\r':
				w.WriteString(`\r`)
			case '\t':
				w.WriteString(`\t`)
			default:
				fmt.Fprintf(w, `\u%04x`, c)
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		// U+2028 and U+2029 are valid JSON but break JavaScript readers
		// that embed the document; escaping them costs nothing.
		if r == '\u2028' || r == '\u2029' {
			w.WriteString(s[start:i])
			fmt.Fprintf(w, `\u%04x`, r)
			i += size
			start = i
			continue
		}
		i += size
	}
	w.WriteString(s[start:])
	j.err = w.WriteByte('"')
}

func (j *jsonWriter) int(n int64) {
	if j.err != nil {
		return
	}
	var buf [24]byte
	_, j.err = j.w.Write(strconv.AppendInt(buf[:0], n, 10))
}

func (j *jsonWriter) flush() error {
	if j.err != nil {
		return j.err
	}
	return j.w.Flush()
}
