package pluginsdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Values cross the wire as JSON. They are decoded with UseNumber so that a
// value the plugin does not touch goes back exactly as it came (a float64
// would round integers above 2^53 and re-encode 1.0 as 1).

// decodeJSON decodes one JSON value with UseNumber and refuses trailing data.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// DecodeObject decodes a JSON object the way the SDK decodes row values
// (numbers as json.Number). Empty input is an empty map.
func DecodeObject(data []byte) (map[string]any, error) {
	m := map[string]any{}
	if len(bytes.TrimSpace(data)) == 0 {
		return m, nil
	}
	if err := decodeJSON(data, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if m == nil { // the JSON was null
		m = map[string]any{}
	}
	return m, nil
}

// encodeJSON marshals without HTML escaping: these are API values, and
// "<" must stay "<" for a plugin that compares bytes.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Int reads an integer value of a row: a json.Number, any Go integer, a
// float64 without a fraction, or a string holding an integer (surrounding
// spaces ignored). ok is false for nil, other types and non-integers.
func Int(v any) (n int64, ok bool) {
	switch x := v.(type) {
	case json.Number:
		return parseInt(string(x))
	case string:
		return parseInt(strings.TrimSpace(x))
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	}
	return 0, false
}

func parseInt(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	// 5.0 and 5e2 are integers too.
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// Float reads a number value of a row: a json.Number, a Go number, or a
// string holding a number (surrounding spaces ignored). ok is false for
// nil, other types, NaN and infinities.
func Float(v any) (f float64, ok bool) {
	var err error
	switch x := v.(type) {
	case json.Number:
		f, err = strconv.ParseFloat(string(x), 64)
	case string:
		f, err = strconv.ParseFloat(strings.TrimSpace(x), 64)
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case int32:
		f = float64(x)
	default:
		return 0, false
	}
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}
