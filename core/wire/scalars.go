package wire

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
)

// ErrEmpty is returned by the scalar readers for an empty (or blank)
// string, which callers treat as "no value": null for an optional number or
// lookup, false for a checkbox.
var ErrEmpty = errors.New("empty value")

// Bool reads a boolean the way existing clients send one: true/false, 1/0,
// "1"/"0", "true"/"false", "yes"/"no", "on"/"off" (any case, spaces
// trimmed). An empty string is ErrEmpty.
func Bool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case json.Number:
		return Bool(x.String())
	case float64:
		if x == 0 || x == 1 {
			return x == 1, nil
		}
	case int:
		if x == 0 || x == 1 {
			return x == 1, nil
		}
	case int64:
		if x == 0 || x == 1 {
			return x == 1, nil
		}
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "1", "true", "yes", "on", "t", "y":
			return true, nil
		case "0", "false", "no", "off", "f", "n":
			return false, nil
		case "":
			return false, ErrEmpty
		}
	}
	return false, errWant("a boolean")
}

// Int reads a whole number sent as a JSON number or a numeric string
// ("12", " 12 ", "12.0"). Fractions, overflow and text are errors; an empty
// string is ErrEmpty.
func Int(v any) (int64, error) {
	switch x := v.(type) {
	case json.Number:
		return intText(x.String())
	case string:
		return intText(x)
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, errWant("an integer")
		}
		return int64(x), nil
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case bool:
		// A checkbox stored in an integer column: BraDypUS clients send
		// booleans for 0/1 flags.
		if x {
			return 1, nil
		}
		return 0, nil
	}
	return 0, errWant("an integer")
}

func intText(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, ErrEmpty
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	} else if errors.Is(err, strconv.ErrRange) {
		return 0, errWant("an integer within ±9223372036854775807")
	}
	// "12.0", "1e3": accepted when the value is whole.
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, errWant("an integer")
	}
	return int64(f), nil
}

// Float reads a finite number sent as a JSON number or a numeric string;
// an empty string is ErrEmpty. A decimal comma ("3,5") is accepted, as
// European clients send it.
func Float(v any) (float64, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
		if s == "" {
			return 0, ErrEmpty
		}
		if strings.Count(s, ",") == 1 && !strings.Contains(s, ".") {
			s = strings.Replace(s, ",", ".", 1)
		}
	case float64:
		return x, nil
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	default:
		return 0, errWant("a number")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errWant("a number")
	}
	return f, nil
}

// Text reads a text value: a string, or a number or boolean written as
// text. Lists and objects are not text.
func Text(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	}
	return "", errWant("text")
}

// wantError says what was expected; Decode adds the field path.
type wantError struct{ want string }

func (e *wantError) Error() string { return e.want + " is expected" }

func errWant(want string) error { return &wantError{want} }

// Want is the expectation an error of this package carries ("an integer",
// "a boolean"), in the API's words; "" for other errors.
func Want(err error) string {
	var w *wantError
	if errors.As(err, &w) {
		return w.want
	}
	var f *FieldError
	if errors.As(err, &f) {
		return f.Want
	}
	return ""
}

// Describe names a JSON value's kind in the API's words, for messages:
// "text", "a number", "a list" ... never a Go type name.
func Describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "text"
	case json.Number, float64, int, int64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a value"
}

// List is a list of text values that clients send as a JSON list, as one
// string with commas ("a, b"), or as one value; null and "" are empty.
type List []string

// UnmarshalJSON reads the forms above.
func (l *List) UnmarshalJSON(b []byte) error {
	var v any
	if err := Decode(b, &v, Options{ExactNumbers: true}); err != nil {
		return err
	}
	out, err := ListOf(v)
	if err != nil {
		return err
	}
	*l = out
	return nil
}

// ListOf reads a decoded value with List's rules.
func ListOf(v any) (List, error) {
	switch x := v.(type) {
	case nil:
		return List{}, nil
	case []any:
		out := make(List, 0, len(x))
		for _, e := range x {
			s, err := Text(e)
			if err != nil {
				return nil, errWant("a list of text values")
			}
			out = append(out, s)
		}
		return out, nil
	case string:
		out := List{}
		for _, p := range strings.Split(x, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out, nil
	}
	s, err := Text(v)
	if err != nil {
		return nil, errWant("a list of text values")
	}
	return List{s}, nil
}
