package records

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/schema"
)

// MergeInput is a three-way merge of one record's core fields (DESIGN §10,
// "merges on versions"): what a device started from, what it set, and
// what the record holds now.
type MergeInput struct {
	// Base is the record as the device last saw it (StateAt of its
	// base_version); Theirs the record now. A field absent is null.
	Base, Theirs map[string]any
	// Mine are the fields the device set (only those: a field it did not
	// send is not its change).
	Mine map[string]any
	// Types are the fields' column types, so that values compare as the
	// save stores them (a blank string is null outside text, "5" is 5 in
	// an integer column). A field without one compares as JSON.
	Types map[string]schema.DBType
	// BaseUnknown says the base is gone (ErrBaseGone: retention pruned
	// it) and Base is ignored: every field the device set to a value
	// other than the server's is a conflict (with a null base), since
	// nothing tells whose change it is.
	BaseUnknown bool
}

// FieldConflict is one field both sides changed to different values.
type FieldConflict struct {
	Field  string `json:"field"`
	Base   any    `json:"base"`
	Mine   any    `json:"mine"`
	Theirs any    `json:"theirs"`
}

// MergeResult is what the merge decided: the fields to write (the
// device's values, only where the device alone changed them) and the
// fields in conflict, sorted by name, whose server value stays.
type MergeResult struct {
	Write     map[string]any
	Conflicts []FieldConflict
}

// Merge3 merges field by field. For each field the device set:
//   - unchanged from the base on the device: nothing to write (the
//     server's value, changed or not, stays);
//   - changed on the device only: written;
//   - changed on both sides to the same value: nothing to write, no
//     conflict;
//   - changed on both sides to different values: a conflict.
//
// Fields the device did not set keep the server's value. Merge3 is pure:
// no database, no clock, so it is tested and fuzzed on its own.
func Merge3(in MergeInput) MergeResult {
	out := MergeResult{Write: map[string]any{}, Conflicts: []FieldConflict{}}
	fields := make([]string, 0, len(in.Mine))
	for f := range in.Mine {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		t, typed := in.Types[f]
		same := func(a, b any) bool { return SameValue(t, typed, a, b) }
		mine, base, theirs := in.Mine[f], in.Base[f], in.Theirs[f]
		mineChanged, theirsChanged := !same(mine, base), !same(theirs, base)
		if in.BaseUnknown {
			base, mineChanged, theirsChanged = nil, true, true
		}
		switch {
		case !mineChanged:
		case !theirsChanged:
			out.Write[f] = mine
		case same(mine, theirs):
		default:
			out.Conflicts = append(out.Conflicts, FieldConflict{Field: f, Base: base, Mine: mine, Theirs: theirs})
		}
	}
	return out
}

// SameValue reports whether a and b are one value of a column of type t
// (typed false: no type known) as the save would store them: numbers by
// value (1 == 1.0 == "1" in a numeric column), a blank string as null
// outside text columns, a list as the JSON text a multi-select stores.
// Values that would not convert compare by their JSON form.
func SameValue(t schema.DBType, typed bool, a, b any) bool {
	return canonical(t, typed, a) == canonical(t, typed, b)
}

// canonical is v's comparable form: its JSON after the save's
// conversions, numbers written as float64 (a snapshot decoded from JSON
// holds float64 where a fresh read holds int64).
func canonical(t schema.DBType, typed bool, v any) string {
	if typed {
		if s, ok := v.(string); ok && t != schema.DBText && strings.TrimSpace(s) == "" {
			v = nil
		}
		switch t {
		case schema.DBText:
			if list, ok := v.([]any); ok {
				b, _ := json.Marshal(list)
				v = string(b)
			}
		case schema.DBInt:
			if v != nil {
				if n, err := toInt(v); err == nil {
					v = n
				}
			}
		case schema.DBFloat:
			if v != nil {
				if f, err := toFloat(v); err == nil {
					v = f
				}
			}
		case schema.DBBool:
			if v != nil {
				if b, err := toBool(v); err == nil {
					v = b
				}
			}
		}
	}
	return jsonForm(v)
}

// jsonForm is v as JSON with every number as float64 (integers beyond
// 2^53 keep their digits: they are ids and must not collide).
func jsonForm(v any) string {
	b, err := json.Marshal(numbersAsFloat(v))
	if err != nil {
		return "\x00unencodable"
	}
	return string(b)
}

func numbersAsFloat(v any) any {
	switch x := v.(type) {
	case int:
		return float64OrInt(int64(x))
	case int32:
		return float64(x)
	case int64:
		return float64OrInt(x)
	case float32:
		return float64(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			// Not JSON: kept apart from every JSON value.
			return "\x00" + strconv.FormatFloat(x, 'g', -1, 64)
		}
		return x
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = numbersAsFloat(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = numbersAsFloat(e)
		}
		return out
	}
	return v
}

func float64OrInt(n int64) any {
	if n > 1<<53 || n < -(1<<53) {
		return n
	}
	return float64(n)
}
