package jsonout_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/jsonout"
)

// reference is what gin's PureJSON writes (without its newline).
func reference(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func check(t *testing.T, v any) {
	t.Helper()
	want, werr := reference(v)
	got, gerr := jsonout.Append([]byte("prefix"), v)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%#v: error %v, encoding/json's %v", v, gerr, werr)
	}
	if werr != nil {
		return
	}
	if !bytes.HasPrefix(got, []byte("prefix")) || !bytes.Equal(got[len("prefix"):], want) {
		t.Fatalf("%#v:\n got %s\nwant %s", v, got, want)
	}
}

type named map[string]any

type point struct {
	X int    `json:"x"`
	Y string `json:"y,omitempty"`
}

func TestAppendMatchesEncodingJSON(t *testing.T) {
	var allBytes []byte
	for b := 0; b < 256; b++ {
		allBytes = append(allBytes, byte(b))
	}
	desc := "a <b> & c"
	creator := int64(-7)
	rome := time.FixedZone("CET", 3600)
	odd := time.FixedZone("LMT", 3600+9*60+21)
	strs := []string{"", "plain", `quote " backslash \ slash /`, "tab\tnl\nret\rbs\bff\f", "\x00\x01\x1f\x7f",
		"<script>&amp;</script>", "è é ü 漢字 🙂", "\u2028\u2029", "bad \xff\xfe utf8 \xc3", string(allBytes), "\xe2\x80"}
	floats := []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e-6, 9.99e-7, 1e-7, 123456789.125, 1e20, 1e21, 1.5e300,
		-2.5e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, 100, 12.5, 2100}
	vals := []any{nil, true, false, 0, 42, -42, int64(math.MaxInt64), int64(math.MinInt64), int32(-3),
		&desc, (*string)(nil), &creator, (*int64)(nil), []string{"a", "<b>"}, []string(nil), []int64{1, -2}, []int64(nil),
		time.Date(2026, 11, 24, 12, 30, 15, 123456000, time.UTC), time.Date(2026, 11, 24, 12, 30, 15, 0, rome),
		time.Date(1999, 1, 2, 3, 4, 5, 100, time.Local), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1900, 1, 1, 0, 0, 0, 0, odd), time.Time{},
		jsonout.Compact(`{"a":[1,2,{"b":null}]}`), jsonout.Compact(nil), json.RawMessage(` { "a" : [ 1 , 2 ] } `), json.RawMessage(`{bad`),
		math.NaN(), math.Inf(1), float32(1.1), uint8(3), []byte("bytes"), point{X: 1}, &point{Y: "<>"}, named{"z": 1, "a": named{}},
		map[string]string{"b": "x", "a": "y"}, map[int]any{2: "x", 1: nil},
		[]map[string]any{{"b": 1, "a": 2}, {}, nil}, []map[string]any(nil), []any{1, "x", nil, []any{}, map[string]any{}}, []any(nil),
		map[string]any(nil), map[string]any{},
	}
	for _, s := range strs {
		vals = append(vals, s, map[string]any{s: s})
	}
	for _, f := range floats {
		vals = append(vals, f, -f)
	}
	// A full record's shape: nested maps, with many keys (more than the
	// encoder's stack buffer), lists of maps and precomputed JSON.
	big := map[string]any{}
	for i := 0; i < 50; i++ {
		big[strings.Repeat("k", i%7)+string(rune('a'+i%26))+string(rune('0'+i%10))] = map[string]any{"name": "f", "val": float64(i) / 3, "val_label": nil}
	}
	vals = append(vals, map[string]any{"metadata": map[string]any{"rec_id": int64(12), "can_edit": true}, "core": big,
		"files":  []map[string]any{{"id": int64(1), "created_at": time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), "description": (*string)(nil)}},
		"schema": jsonout.Compact(`{"fields":[{"name":"a"}]}`), "plugins": map[string]any{"x": map[string]any{"data": []map[string]any{}}}})
	for _, v := range vals {
		check(t, v)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\xff", "\u2028", "<&>", "\x00\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check(t, s)
		check(t, map[string]any{s: []any{s}})
	})
}

func FuzzAppendFloat(f *testing.F) {
	for _, x := range []float64{0, 1e-7, 1e21, 123.456, -5e-324} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) { check(t, x) })
}
