// Package jsonout writes the API's answers as JSON: byte for byte what
// encoding/json writes with HTML escaping off (gin's PureJSON), without
// its reflection for the values answers are made of (maps of any, slices,
// strings, numbers, booleans, times, JSON already encoded). Any other
// value is handed to encoding/json, so the output never differs.
package jsonout

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Compact is JSON its producer encoded compactly (with encoding/json): it
// is copied as it is, where encoding/json would check and compact it
// again (the largest part of a full record, its schema, is one).
type Compact []byte

// MarshalJSON returns c itself (encoding/json then compacts it: no change).
func (c Compact) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	return c, nil
}

// Append appends v's JSON to dst, as encoding/json.Encoder with
// SetEscapeHTML(false) writes it (without the trailing newline).
func Append(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendString(dst, x), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return fallback(dst, v)
		}
		return appendFloat(dst, x), nil
	case map[string]any:
		return appendMap(dst, x)
	case []map[string]any:
		return appendSlice(dst, x, appendMap)
	case []any:
		return appendSlice(dst, x, Append)
	case []string:
		return appendSlice(dst, x, func(dst []byte, e string) ([]byte, error) { return appendString(dst, e), nil })
	case []int64:
		return appendSlice(dst, x, func(dst []byte, e int64) ([]byte, error) { return strconv.AppendInt(dst, e, 10), nil })
	case *string:
		if x == nil {
			return append(dst, "null"...), nil
		}
		return appendString(dst, *x), nil
	case *int64:
		if x == nil {
			return append(dst, "null"...), nil
		}
		return strconv.AppendInt(dst, *x, 10), nil
	case time.Time:
		// time.Time.MarshalJSON: RFC 3339 with nanoseconds, quoted (an
		// error for years outside 0..9999, which encoding/json reports).
		if y := x.Year(); y < 0 || y > 9999 {
			return fallback(dst, v)
		}
		if _, off := x.Zone(); off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
			return fallback(dst, v) // an offset RFC 3339 cannot write
		}
		dst = append(dst, '"')
		dst = x.AppendFormat(dst, time.RFC3339Nano)
		return append(dst, '"'), nil
	case Compact:
		if x == nil {
			return append(dst, "null"...), nil
		}
		return append(dst, x...), nil
	}
	return fallback(dst, v)
}

// appendMap writes m with its keys in order, as encoding/json does.
func appendMap(dst []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	if len(m) == 0 {
		return append(dst, "{}"...), nil
	}
	var small [32]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, strings.Compare)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = Append(dst, m[k]); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// fallback encodes v with encoding/json (HTML escaping off).
func fallback(dst []byte, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// appendFloat writes f as encoding/json does: like ES6, %f between 1e-6
// and 1e21, else an exponent without padding.
func appendFloat(dst []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-07 → e-7
		n := len(dst)
		if n-start >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendString writes s quoted as encoding/json does without HTML
// escaping: quote, backslash and control characters escaped (\b, \f, \n,
// \r, \t by name), invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendSlice writes xs as a JSON array (null for a nil slice, as
// encoding/json does), each element by elem.
func appendSlice[T any](dst []byte, xs []T, elem func([]byte, T) ([]byte, error)) ([]byte, error) {
	if xs == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i, e := range xs {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = elem(dst, e); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}
