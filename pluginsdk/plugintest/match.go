package plugintest

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/strata-archaeo/strata/pluginsdk"
)

// Match reports whether row satisfies filter, a filter object of the
// filter language (docs/filter.md): field keys with operator objects,
// _and/_or groups, every built-in operator with the server's NULL and case
// rules. It is how FakeHost filters, and lets a test check what the filter
// a plugin operator resolves to selects:
//
//	res, _ := h.ResolveFilter(call)
//	ok, err := plugintest.Match(res.Filter, map[string]any{"munsell_colour": "10YR 5/3"})
//
// Nested conditions (lookups, plugin tables, backlinks) and plugin
// operators need the server and are an error here. A nil filter matches
// everything. The row's values may be Go values or decoded JSON.
func Match(filter any, row map[string]any) (bool, error) {
	if filter == nil {
		return true, nil
	}
	obj, err := asObject(filter)
	if err != nil {
		return false, err
	}
	return matchObject(obj, row)
}

// asObject brings a filter given as a Go map, a struct or raw JSON to
// map[string]any with json.Number numbers.
func asObject(v any) (map[string]any, error) {
	var b []byte
	switch x := v.(type) {
	case json.RawMessage:
		b = x
	case []byte:
		b = x
	case string:
		b = []byte(x)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("filter does not encode to JSON: %w", err)
		}
	}
	obj, err := pluginsdk.DecodeObject(b)
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	return obj, nil
}

func matchObject(obj map[string]any, row map[string]any) (bool, error) {
	for key, val := range obj {
		var ok bool
		var err error
		switch key {
		case "_and", "_or":
			ok, err = matchGroup(key, val, row)
		default:
			if strings.HasPrefix(key, "_") {
				return false, fmt.Errorf("%s: an operator where a field is expected", key)
			}
			ops, isObj := val.(map[string]any)
			if !isObj {
				return false, fmt.Errorf("%s: expected an object of operators", key)
			}
			ok, err = matchField(key, ops, row)
		}
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func matchGroup(key string, val any, row map[string]any) (bool, error) {
	items, isArr := val.([]any)
	if !isArr {
		return false, fmt.Errorf("%s: expected an array of conditions", key)
	}
	if len(items) == 0 {
		return true, nil // an empty group adds no condition
	}
	for i, it := range items {
		sub, isObj := it.(map[string]any)
		if !isObj {
			return false, fmt.Errorf("%s[%d]: expected an object", key, i)
		}
		ok, err := matchObject(sub, row)
		if err != nil {
			return false, err
		}
		if key == "_or" && ok {
			return true, nil
		}
		if key == "_and" && !ok {
			return false, nil
		}
	}
	return key == "_and", nil
}

func matchField(field string, ops map[string]any, row map[string]any) (bool, error) {
	v := row[field]
	if _, isJSON := v.(json.Number); !isJSON && v != nil {
		// Go values seeded by a test: give them their JSON form.
		if n, err := normalise(map[string]any{"v": v}); err == nil {
			v = n["v"]
		}
	}
	for op, arg := range ops {
		if !strings.HasPrefix(op, "_") {
			return false, fmt.Errorf("%s.%s: nested conditions need the server (plugintest matches one table)", field, op)
		}
		ok, err := matchOp(field, op, arg, v)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func matchOp(field, op string, arg, v any) (bool, error) {
	null := v == nil
	switch op {
	case "_null", "_nnull", "_empty", "_nempty":
		if !isFlag(arg) {
			return false, fmt.Errorf("%s.%s takes true or nothing", field, op)
		}
		empty := null || v == ""
		switch op {
		case "_null":
			return null, nil
		case "_nnull":
			return !null, nil
		case "_empty":
			return empty, nil
		}
		return !empty, nil
	case "_in", "_nin", "_between":
		list := asList(arg)
		if op == "_between" {
			if len(list) != 2 {
				return false, fmt.Errorf("%s._between takes two values", field)
			}
			return !null && compareValues(v, list[0]) >= 0 && compareValues(v, list[1]) <= 0, nil
		}
		in := false
		for _, x := range list {
			if !null && compareValues(v, x) == 0 {
				in = true
			}
		}
		if op == "_in" {
			return in, nil
		}
		return null || !in, nil
	}
	if arg == nil {
		return false, fmt.Errorf("%s.%s: a comparison with null is refused: use _null", field, op)
	}
	switch arg.(type) {
	case map[string]any, []any:
		return false, fmt.Errorf("%s.%s: expected one value", field, op)
	}
	switch op {
	case "_eq":
		return !null && compareValues(v, arg) == 0, nil
	case "_neq":
		return null || compareValues(v, arg) != 0, nil
	case "_gt":
		return !null && compareValues(v, arg) > 0, nil
	case "_lt":
		return !null && compareValues(v, arg) < 0, nil
	case "_gte":
		return !null && compareValues(v, arg) >= 0, nil
	case "_lte":
		return !null && compareValues(v, arg) <= 0, nil
	}
	text, pat := textOf(v), textOf(arg)
	folded, fpat := fold(text), fold(pat)
	switch op {
	case "_contains":
		return !null && strings.Contains(text, pat), nil
	case "_icontains":
		return !null && strings.Contains(folded, fpat), nil
	case "_ncontains":
		return null || !strings.Contains(folded, fpat), nil
	case "_starts_with":
		return !null && strings.HasPrefix(folded, fpat), nil
	case "_nstarts_with":
		return null || !strings.HasPrefix(folded, fpat), nil
	case "_ends_with":
		return !null && strings.HasSuffix(folded, fpat), nil
	case "_nends_with":
		return null || !strings.HasSuffix(folded, fpat), nil
	}
	return false, fmt.Errorf("%s.%s: unknown operator (plugin operators need the server)", field, op)
}

func isFlag(arg any) bool {
	switch x := arg.(type) {
	case nil:
		return true
	case bool:
		return x
	case string:
		return x == "true"
	case json.Number:
		return x == "1"
	}
	return false
}

// asList reads a list operand: an array, or a comma-separated string.
func asList(arg any) []any {
	switch x := arg.(type) {
	case []any:
		return x
	case string:
		var out []any
		for _, s := range strings.Split(x, ",") {
			out = append(out, strings.TrimSpace(s))
		}
		return out
	}
	return []any{arg}
}

// compareValues orders two values: numerically when the row value is a
// number (or a bool) and the operand converts, else by the text forms in
// code point order, as the server does on both engines.
func compareValues(v, arg any) int {
	switch v.(type) {
	case json.Number, float64, int, int64:
		a, okA := pluginsdk.Float(v)
		b, okB := pluginsdk.Float(arg)
		if okA && okB {
			return cmpFloat(a, b)
		}
	case bool:
		if b, ok := boolOf(arg); ok {
			return cmpFloat(b2f(v.(bool)), b2f(b))
		}
	}
	return strings.Compare(textOf(v), textOf(arg))
}

func boolOf(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.TrimSpace(x) {
		case "true", "1":
			return true, true
		case "false", "0":
			return false, true
		}
	case json.Number:
		return x == "1", x == "1" || x == "0"
	}
	return false, false
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case math.IsNaN(a) || math.IsNaN(b):
		return -1
	}
	return 0
}

func textOf(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return string(x)
	}
	return fmt.Sprint(v)
}

// fold is the server's case folding: unicode.ToLower, rune by rune.
func fold(s string) string { return strings.Map(unicode.ToLower, s) }
