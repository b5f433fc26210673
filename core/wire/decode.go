package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// FieldError is a value that does not fit where it was sent. Path is the
// value's place in the body ("fields[2].order"), Want what was expected and
// Got what came, both in the API's words.
type FieldError struct {
	Path string
	Want string
	Got  string
}

func (e *FieldError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("the body must be %s, not %s", e.Want, e.Got)
	}
	return fmt.Sprintf("%s must be %s, not %s", e.Path, e.Want, e.Got)
}

// SyntaxError is a body that is not one well-formed JSON value in UTF-8.
type SyntaxError struct{ Detail string }

func (e *SyntaxError) Error() string { return e.Detail }

// Options tune Decode.
type Options struct {
	// ExactNumbers keeps numbers that land in an interface as json.Number
	// (record values, where an int64 must not pass through a float64).
	ExactNumbers bool
}

// Decode reads body, one JSON value, into dst (a non-nil pointer) the way
// every handler reads its input: unknown keys are ignored, keys match
// field names case-insensitively as encoding/json does, and scalars are
// read liberally (see Bool, Int, Float, Text) wherever the destination is a
// bool, a number or a string; "" for a pointer to a number or bool is nil.
// Text may not hold a NUL character, and the body must be valid UTF-8
// without lone surrogate escapes, so that both engines store exactly what
// was sent.
func Decode(body []byte, dst any, opt Options) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return &SyntaxError{"the body is empty"}
	}
	if !utf8.Valid(body) {
		return &SyntaxError{"the body is not valid UTF-8"}
	}
	if loneSurrogate(body) {
		return &SyntaxError{"the body escapes half of a UTF-16 surrogate pair (\\ud800 … without its other half)"}
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return &SyntaxError{syntaxDetail(err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &SyntaxError{"unexpected data after the JSON value"}
	}
	if err := noNUL("", v); err != nil {
		return err
	}
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("wire.Decode needs a non-nil pointer")
	}
	d := decoder{opt: opt}
	return d.value("", v, rv.Elem())
}

// noNUL refuses a NUL character anywhere in the decoded value, keys
// included, whatever the destination (an interface or a raw message
// keeps text as it came): PostgreSQL cannot store it, SQLite would.
func noNUL(path string, v any) error {
	switch x := v.(type) {
	case string:
		if strings.IndexByte(x, 0) >= 0 {
			return &FieldError{Path: path, Want: "text without NUL characters", Got: "text with a NUL character"}
		}
	case []any:
		for i, e := range x {
			if err := noNUL(fmt.Sprintf("%s[%d]", path, i), e); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range x {
			if strings.IndexByte(k, 0) >= 0 {
				return &FieldError{Path: path, Want: "keys without NUL characters", Got: "a key with a NUL character"}
			}
			if err := noNUL(join(path, k), e); err != nil {
				return err
			}
		}
	}
	return nil
}

// Assign converts an already decoded JSON value (numbers as json.Number or
// float64) into dst with Decode's rules.
func Assign(v any, dst any, opt Options) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("wire.Assign needs a non-nil pointer")
	}
	d := decoder{opt: opt}
	return d.value("", v, rv.Elem())
}

func syntaxDetail(err error) string {
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("syntax error at byte %d", syntax.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends in the middle of a value"
	}
	return "malformed JSON"
}

type decoder struct{ opt Options }

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
)

func (d *decoder) fail(path, want string, v any) error {
	return &FieldError{Path: path, Want: want, Got: Describe(v)}
}

func (d *decoder) value(path string, v any, rv reflect.Value) error {
	if s, ok := v.(string); ok && strings.IndexByte(s, 0) >= 0 {
		return &FieldError{Path: path, Want: "text without NUL characters", Got: "text with a NUL character"}
	}
	if rv.Type() == rawMessageType {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		rv.SetBytes(b)
		return nil
	}
	if rv.CanAddr() && rv.Addr().Type().Implements(unmarshalerType) && rv.Kind() != reflect.Pointer {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := rv.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(b); err != nil {
			return &FieldError{Path: path, Want: wantOr(err, "a valid value"), Got: Describe(v)}
		}
		return nil
	}
	switch rv.Kind() {
	case reflect.Pointer:
		if v == nil {
			rv.SetZero()
			return nil
		}
		if s, ok := v.(string); ok && strings.TrimSpace(s) == "" && scalarKind(rv.Type().Elem().Kind()) {
			rv.SetZero() // "" for an optional number or flag: no value
			return nil
		}
		if rv.IsNil() {
			rv.Set(reflect.New(rv.Type().Elem()))
		}
		return d.value(path, v, rv.Elem())
	case reflect.Interface:
		if v == nil {
			rv.SetZero()
			return nil
		}
		if rv.NumMethod() != 0 {
			return d.fail(path, "a value", v)
		}
		rv.Set(reflect.ValueOf(d.plain(v)))
		return nil
	}
	if v == nil {
		return nil // null leaves the field as it is, as encoding/json does
	}
	switch rv.Kind() {
	case reflect.Bool:
		b, err := Bool(v)
		if err != nil && !errors.Is(err, ErrEmpty) {
			return d.fail(path, "a boolean", v)
		}
		rv.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := Int(v)
		if errors.Is(err, ErrEmpty) {
			rv.SetInt(0)
			return nil
		}
		if err != nil {
			return d.fail(path, wantOr(err, "an integer"), v)
		}
		if rv.OverflowInt(n) {
			return d.fail(path, "a smaller integer", v)
		}
		rv.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := Int(v)
		if errors.Is(err, ErrEmpty) {
			rv.SetUint(0)
			return nil
		}
		if err != nil || n < 0 || rv.OverflowUint(uint64(n)) {
			return d.fail(path, "a positive integer", v)
		}
		rv.SetUint(uint64(n))
	case reflect.Float32, reflect.Float64:
		f, err := Float(v)
		if errors.Is(err, ErrEmpty) {
			rv.SetFloat(0)
			return nil
		}
		if err != nil || (rv.Kind() == reflect.Float32 && math.Abs(f) > math.MaxFloat32) {
			return d.fail(path, "a number", v)
		}
		rv.SetFloat(f)
	case reflect.String:
		s, err := Text(v)
		if err != nil {
			return d.fail(path, "text", v)
		}
		rv.SetString(s)
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			return d.fail(path, "a list", v)
		}
		out := reflect.MakeSlice(rv.Type(), len(list), len(list))
		for i, e := range list {
			if err := d.value(fmt.Sprintf("%s[%d]", path, i), e, out.Index(i)); err != nil {
				return err
			}
		}
		rv.Set(out)
	case reflect.Array:
		list, ok := v.([]any)
		if !ok || len(list) > rv.Len() {
			return d.fail(path, fmt.Sprintf("a list of at most %d", rv.Len()), v)
		}
		for i, e := range list {
			if err := d.value(fmt.Sprintf("%s[%d]", path, i), e, rv.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return d.fail(path, "an object", v)
		}
		if rv.Type().Key().Kind() != reflect.String {
			return fmt.Errorf("wire: map keys of %s are not supported", rv.Type())
		}
		if rv.IsNil() {
			rv.Set(reflect.MakeMapWithSize(rv.Type(), len(obj)))
		}
		et := rv.Type().Elem()
		for k, e := range obj {
			ev := reflect.New(et).Elem()
			if err := d.value(join(path, k), e, ev); err != nil {
				return err
			}
			rv.SetMapIndex(reflect.ValueOf(k).Convert(rv.Type().Key()), ev)
		}
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return d.fail(path, "an object", v)
		}
		for k, e := range obj {
			f, ok := fieldsOf(rv.Type()).lookup(k)
			if !ok {
				continue // unknown keys are ignored
			}
			fv, ok := fieldByIndex(rv, f.index)
			if !ok {
				continue
			}
			if err := d.value(join(path, f.name), e, fv); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("wire: %s is not supported", rv.Type())
	}
	return nil
}

// plain converts a decoded value for an interface destination: numbers
// stay json.Number with ExactNumbers, else become float64 as with
// encoding/json.
func (d *decoder) plain(v any) any {
	switch x := v.(type) {
	case json.Number:
		if d.opt.ExactNumbers {
			return x
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = d.plain(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = d.plain(x[k])
		}
	}
	return v
}

func scalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

func wantOr(err error, def string) string {
	if w := Want(err); w != "" {
		return w
	}
	return def
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fieldByIndex walks to a (possibly embedded) field, allocating embedded
// pointers on the way.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{}, false
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, v.CanSet()
}

type structField struct {
	name  string
	index []int
}

type structFields struct {
	exact map[string]structField
	fold  map[string]structField
}

func (s *structFields) lookup(key string) (structField, bool) {
	if f, ok := s.exact[key]; ok {
		return f, true
	}
	f, ok := s.fold[strings.ToLower(key)]
	return f, ok
}

var fieldCache sync.Map // reflect.Type -> *structFields

// fieldsOf lists a struct's JSON keys as encoding/json names them: the
// json tag's name, else the Go name; "-" skipped; embedded structs
// without a tag promote their fields.
func fieldsOf(t reflect.Type) *structFields {
	if c, ok := fieldCache.Load(t); ok {
		return c.(*structFields)
	}
	s := &structFields{exact: map[string]structField{}, fold: map[string]structField{}}
	var walk func(t reflect.Type, prefix []int)
	walk = func(t reflect.Type, prefix []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			index := append(append([]int{}, prefix...), i)
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, index)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if _, dup := s.exact[name]; dup && len(prefix) > 0 {
				continue // the outer field wins
			}
			sf := structField{name: name, index: index}
			s.exact[name] = sf
			if _, dup := s.fold[strings.ToLower(name)]; !dup || len(prefix) == 0 {
				s.fold[strings.ToLower(name)] = sf
			}
		}
	}
	walk(t, nil)
	fieldCache.Store(t, s)
	return s
}
