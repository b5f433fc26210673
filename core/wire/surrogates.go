package wire

// loneSurrogate reports whether a JSON text escapes half of a UTF-16
// surrogate pair without the other half ("\ud800" alone): encoding/json
// silently turns it into U+FFFD, so the value stored would not be the
// value sent. body must be valid UTF-8; strings are scanned escape by
// escape, so an escaped backslash followed by "u" is not an escape.
func loneSurrogate(body []byte) bool {
	inString := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !inString {
			if c == '"' {
				inString = true
			}
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 >= len(body) {
				return false // a syntax error, reported by the decoder
			}
			if body[i+1] != 'u' {
				i++ // skip the escaped character
				continue
			}
			r, ok := hex4(body, i+2)
			if !ok {
				return false
			}
			i += 5
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return true // a low half with no high half before it
			case r >= 0xD800 && r <= 0xDBFF:
				if i+6 >= len(body) || body[i+1] != '\\' || body[i+2] != 'u' {
					return true
				}
				lo, ok := hex4(body, i+3)
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return true
				}
				i += 6
			}
		}
	}
	return false
}

// hex4 reads four hex digits at body[at:].
func hex4(body []byte, at int) (rune, bool) {
	if at+4 > len(body) {
		return 0, false
	}
	var r rune
	for _, c := range body[at : at+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}
