package crate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"net/mail"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// CSVWriter writes one table as Frictionless CSV (the default dialect:
// RFC 4180, comma, '"' doubled inside quoted cells, CRLF after every row,
// UTF-8 without BOM, a header row of field names). It counts the bytes and
// hashes them for the Resource. Cells are written exactly: a newline inside
// a value stays the newline it was (quoted), and nothing is added to values
// that a spreadsheet would read as formulas — this is data, not a sheet.
type CSVWriter struct {
	w      *bufio.Writer
	fields []Field
	h      hash.Hash
	n      int64
	rows   int64
	line   []byte
	err    error
	closed bool
}

// NewCSV checks fields (as CheckSchema does) and writes the header row.
func NewCSV(w io.Writer, fields []Field) (*CSVWriter, error) {
	if err := CheckSchema(Schema{Fields: fields}); err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	c := &CSVWriter{fields: slices.Clone(fields), h: sha256.New()}
	c.w = bufio.NewWriterSize(io.MultiWriter(countWriter{&c.n}, c.h, w), 64<<10)
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	if err := c.writeLine(names); err != nil {
		return nil, err
	}
	return c, nil
}

type countWriter struct{ n *int64 }

func (c countWriter) Write(p []byte) (int, error) { *c.n += int64(len(p)); return len(p), nil }

// Row writes one row: vals[i] is the value of field i (see FormatCell for
// the Go types each field type takes; nil is missing). A value that does
// not fit its field or breaks a constraint other than unique is an error
// and nothing of the row is written.
func (c *CSVWriter) Row(vals []any) error {
	if c.err != nil {
		return c.err
	}
	if c.closed {
		return errors.New("csv: row after Close")
	}
	if len(vals) != len(c.fields) {
		return fmt.Errorf("csv: row %d has %d values for %d fields", c.rows+1, len(vals), len(c.fields))
	}
	cells := make([]string, len(vals))
	for i, v := range vals {
		s, err := FormatCell(c.fields[i], v)
		if err == nil {
			err = CheckCell(c.fields[i], s)
		}
		if err != nil {
			return fmt.Errorf("csv: row %d: %w", c.rows+1, err)
		}
		cells[i] = s
	}
	if err := c.writeLine(cells); err != nil {
		return err
	}
	c.rows++
	return nil
}

func (c *CSVWriter) writeLine(cells []string) error {
	b := c.line[:0]
	for i, s := range cells {
		if i > 0 {
			b = append(b, ',')
		}
		// A lone empty cell would make a blank line, which readers skip.
		if needsQuotes(s) || len(cells) == 1 && s == "" {
			b = append(b, '"')
			b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
			b = append(b, '"')
		} else {
			b = append(b, s...)
		}
	}
	b = append(b, '\r', '\n')
	c.line = b
	if _, err := c.w.Write(b); err != nil {
		c.err = fmt.Errorf("csv: %w", err)
	}
	return c.err
}

// needsQuotes: delimiter, quote and line breaks must be quoted (RFC 4180);
// leading or trailing blanks are quoted too so that no reader trims them.
func needsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if strings.ContainsAny(s, ",\"\r\n") {
		return true
	}
	first, last := s[0], s[len(s)-1]
	return first == ' ' || first == '\t' || last == ' ' || last == '\t'
}

// Close flushes what is buffered. Bytes and Hash are final after it.
func (c *CSVWriter) Close() error {
	if c.closed {
		return c.err
	}
	c.closed = true
	if c.err != nil {
		return c.err
	}
	if err := c.w.Flush(); err != nil {
		c.err = fmt.Errorf("csv: %w", err)
	}
	return c.err
}

// Rows is the number of data rows written.
func (c *CSVWriter) Rows() int64 { return c.rows }

// Bytes is the size of the file written so far (all of it after Close).
func (c *CSVWriter) Bytes() int64 { return c.n }

// SHA256 is the lowercase hex SHA-256 of the file (after Close).
func (c *CSVWriter) SHA256() string { return hex.EncodeToString(c.h.Sum(nil)) }

// Hash is the Frictionless form of the hash: "sha256:<hex>".
func (c *CSVWriter) Hash() string { return "sha256:" + c.SHA256() }

var (
	intRe    = regexp.MustCompile(`^[+-]?[0-9]+$`)
	numberRe = regexp.MustCompile(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)
)

// FormatCell gives the CSV text of v for field f. nil (or a nil pointer) is
// missing: the empty cell. Per type:
//
//	string            string, []byte, fmt.Stringer
//	integer, year     any Go integer; a float64 only if integral and
//	                  within ±2^53; or a string of digits
//	number            float32/64 (shortest form, 'g'; NaN and ±Inf are
//	                  errors), any integer, json.Number, a numeric string
//	boolean           bool ("true"/"false")
//	date              time.Time (its own calendar date, yyyy-mm-dd), or
//	                  a string in that form
//	datetime          time.Time (UTC, RFC 3339, fraction only if needed)
//	array, object,    a JSON string/[]byte/json.RawMessage, or any value
//	geojson           json.Marshal takes (map keys sorted)
//
// A string for a non-string field must already be in the field's lexical
// form; it is checked, not rewritten.
func FormatCell(f Field, v any) (string, error) {
	if v == nil {
		return "", nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return "", nil
		}
		return FormatCell(f, rv.Elem().Interface())
	}
	bad := func() (string, error) {
		return "", fmt.Errorf("field %q (%s): cannot write a %T", f.Name, f.Type, v)
	}
	if s, ok := v.(string); ok {
		if f.Type != TypeString {
			if _, err := parseCell(f, s); err != nil {
				return "", err
			}
		}
		return s, nil
	}
	switch f.Type {
	case TypeString:
		switch x := v.(type) {
		case []byte:
			return string(x), nil
		case fmt.Stringer:
			return x.String(), nil
		}
		return bad()
	case TypeInteger, TypeYear:
		if s, ok := formatInt(v); ok {
			return s, nil
		}
		if x, ok := v.(float64); ok && x == math.Trunc(x) && math.Abs(x) <= 1<<53 {
			return strconv.FormatInt(int64(x), 10), nil
		}
		return bad()
	case TypeNumber:
		switch x := v.(type) {
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return "", fmt.Errorf("field %q: %v cannot be published as a number", f.Name, x)
			}
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		case float32:
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return "", fmt.Errorf("field %q: %v cannot be published as a number", f.Name, x)
			}
			return strconv.FormatFloat(float64(x), 'g', -1, 32), nil
		case json.Number:
			if _, err := parseCell(f, string(x)); err != nil {
				return "", err
			}
			return string(x), nil
		}
		if s, ok := formatInt(v); ok {
			return s, nil
		}
		return bad()
	case TypeBoolean:
		if b, ok := v.(bool); ok {
			return strconv.FormatBool(b), nil
		}
		return bad()
	case TypeDate:
		if t, ok := v.(time.Time); ok {
			if t.Year() < 0 || t.Year() > 9999 {
				return "", fmt.Errorf("field %q: year %d does not fit a date", f.Name, t.Year())
			}
			return t.Format(time.DateOnly), nil
		}
		return bad()
	case TypeDatetime:
		if t, ok := v.(time.Time); ok {
			t = t.UTC()
			if t.Year() < 0 || t.Year() > 9999 {
				return "", fmt.Errorf("field %q: year %d does not fit a datetime", f.Name, t.Year())
			}
			return t.Format(time.RFC3339Nano), nil
		}
		return bad()
	case TypeArray, TypeObject, TypeGeoJSON:
		var b []byte
		switch x := v.(type) {
		case []byte:
			b = x
		case json.RawMessage:
			b = x
		default:
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				return "", fmt.Errorf("field %q: %w", f.Name, err)
			}
			b = bytes.TrimRight(buf.Bytes(), "\n")
		}
		s := string(b)
		if _, err := parseCell(f, s); err != nil {
			return "", err
		}
		return s, nil
	}
	return bad()
}

func formatInt(v any) (string, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10), true
	}
	return "", false
}

// ParseCell reads a CSV cell of field f back into a Go value, as a
// Frictionless reader would with the default missingValues [""]: nil for
// missing, else string, int64 (integer, year), float64, bool, time.Time
// (date at UTC midnight; datetime in UTC), []any (array), map[string]any
// (object, geojson).
func ParseCell(f Field, cell string) (any, error) {
	if cell == "" {
		return nil, nil
	}
	return parseCell(f, cell)
}

func parseCell(f Field, s string) (any, error) {
	bad := func(err error) (any, error) {
		if len(s) > 80 {
			s = s[:80] + "…"
		}
		if err != nil {
			return nil, fmt.Errorf("field %q: %q is not a valid %s: %v", f.Name, s, f.Type, err)
		}
		return nil, fmt.Errorf("field %q: %q is not a valid %s", f.Name, s, f.Type)
	}
	if !utf8.ValidString(s) {
		return bad(errors.New("invalid UTF-8"))
	}
	if strings.ContainsRune(s, 0) {
		return bad(errors.New("NUL character"))
	}
	switch f.Type {
	case TypeString:
		switch f.Format {
		case "uri":
			if u, err := url.Parse(s); err != nil || u.Scheme == "" {
				return bad(err)
			}
		case "email":
			if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
				return bad(err)
			}
		}
		return s, nil
	case TypeInteger, TypeYear:
		if !intRe.MatchString(s) {
			return bad(nil)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return bad(err)
		}
		return n, nil
	case TypeNumber:
		if !numberRe.MatchString(s) {
			return bad(nil)
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return bad(err)
		}
		return x, nil
	case TypeBoolean:
		switch s {
		case "true", "True", "TRUE", "1":
			return true, nil
		case "false", "False", "FALSE", "0":
			return false, nil
		}
		return bad(nil)
	case TypeDate:
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return bad(err)
		}
		return t, nil
	case TypeDatetime:
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return bad(err)
		}
		return t.UTC(), nil
	case TypeArray, TypeObject, TypeGeoJSON:
		var x any
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		if err := d.Decode(&x); err != nil {
			return bad(err)
		}
		if d.More() {
			return bad(errors.New("text after the JSON value"))
		}
		switch f.Type {
		case TypeArray:
			if _, ok := x.([]any); !ok {
				return bad(errors.New("not a JSON array"))
			}
		case TypeObject:
			if _, ok := x.(map[string]any); !ok {
				return bad(errors.New("not a JSON object"))
			}
		case TypeGeoJSON:
			m, ok := x.(map[string]any)
			if !ok {
				return bad(errors.New("not a JSON object"))
			}
			if _, ok := m["type"].(string); !ok {
				return bad(errors.New(`no "type"`))
			}
		}
		return x, nil
	}
	return nil, fmt.Errorf("field %q: unknown type %q", f.Name, f.Type)
}

// CheckCell checks one cell against its field: the type, and the
// constraints that concern a single value (required, enum, minimum,
// maximum, minLength, maxLength, pattern). Uniqueness is a table matter
// (CheckPackage).
func CheckCell(f Field, cell string) error {
	v, err := ParseCell(f, cell)
	if err != nil {
		return err
	}
	c := f.Constraints
	if c == nil {
		return nil
	}
	if v == nil {
		if c.Required {
			return fmt.Errorf("field %q: required but missing", f.Name)
		}
		return nil
	}
	if len(c.Enum) > 0 {
		ok := false
		for _, e := range c.Enum {
			ev, _ := parseCell(f, e)
			if reflect.DeepEqual(ev, v) {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("field %q: %q is not one of %q", f.Name, cell, c.Enum)
		}
	}
	if c.Minimum != "" {
		if m, err := parseCell(f, c.Minimum); err == nil && compareValues(v, m) < 0 {
			return fmt.Errorf("field %q: %s is below the minimum %s", f.Name, cell, c.Minimum)
		}
	}
	if c.Maximum != "" {
		if m, err := parseCell(f, c.Maximum); err == nil && compareValues(v, m) > 0 {
			return fmt.Errorf("field %q: %s is above the maximum %s", f.Name, cell, c.Maximum)
		}
	}
	n := utf8.RuneCountInString(cell)
	if c.MinLength != nil && n < *c.MinLength {
		return fmt.Errorf("field %q: shorter than %d", f.Name, *c.MinLength)
	}
	if c.MaxLength != nil && n > *c.MaxLength {
		return fmt.Errorf("field %q: longer than %d", f.Name, *c.MaxLength)
	}
	if c.Pattern != "" {
		re, err := regexp.Compile("^(?:" + c.Pattern + ")$")
		if err != nil {
			return fmt.Errorf("field %q: pattern: %w", f.Name, err)
		}
		if !re.MatchString(cell) {
			return fmt.Errorf("field %q: %q does not match %q", f.Name, cell, c.Pattern)
		}
	}
	return nil
}

// compareValues orders two parsed values of the same field type; values
// that have no order compare equal.
func compareValues(a, b any) int {
	switch x := a.(type) {
	case int64:
		y, _ := b.(int64)
		return cmpOrdered(x, y)
	case float64:
		y, _ := b.(float64)
		return cmpOrdered(x, y)
	case string:
		y, _ := b.(string)
		return strings.Compare(x, y)
	case time.Time:
		y, _ := b.(time.Time)
		return x.Compare(y)
	}
	return 0
}

func cmpOrdered[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ReadCSV reads Frictionless CSV (the default dialect) and calls row for
// each record, header included, with its 1-based record number. Quoted
// cells are returned exactly as written — unlike encoding/csv, a CRLF
// inside quotes stays CRLF — so a round trip gives back the values the
// CSVWriter was given. A UTF-8 BOM at the start is an error (Frictionless
// CSV has none).
func ReadCSV(r io.Reader, row func(n int, cells []string) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if b, err := br.Peek(3); err == nil && string(b) == "\uFEFF" {
		return errors.New("csv: starts with a byte-order mark")
	}
	var cells []string
	var cell []byte
	n := 0
	for {
		n++
		cells = cells[:0]
		c, err := br.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("csv: record %d: %w", n, err)
		}
		br.UnreadByte()
		for {
			cell = cell[:0]
			c, err = br.ReadByte()
			if err == nil && c == '"' {
				for {
					c, err = br.ReadByte()
					if err != nil {
						return fmt.Errorf("csv: record %d: unterminated quoted cell", n)
					}
					if c == '"' {
						c2, err2 := br.ReadByte()
						if err2 == nil && c2 == '"' {
							cell = append(cell, '"')
							continue
						}
						if err2 == nil {
							br.UnreadByte()
						}
						break
					}
					cell = append(cell, c)
				}
				c, err = br.ReadByte()
			} else {
				for err == nil && c != ',' && c != '\r' && c != '\n' {
					if c == '"' {
						return fmt.Errorf("csv: record %d: quote inside an unquoted cell", n)
					}
					cell = append(cell, c)
					c, err = br.ReadByte()
				}
			}
			cells = append(cells, string(cell))
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("csv: record %d: %w", n, err)
			}
			if c == ',' {
				continue
			}
			if c == '\r' {
				if c2, err2 := br.ReadByte(); err2 != nil || c2 != '\n' {
					return fmt.Errorf("csv: record %d: CR not followed by LF", n)
				}
				break
			}
			if c == '\n' {
				break
			}
			return fmt.Errorf("csv: record %d: %q after a quoted cell", n, c)
		}
		if err := row(n, cells); err != nil {
			return err
		}
	}
}
