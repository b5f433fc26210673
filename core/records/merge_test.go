package records

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/strata-archaeo/strata/core/schema"
)

func TestMerge3(t *testing.T) {
	types := map[string]schema.DBType{"code": schema.DBText, "n": schema.DBInt, "w": schema.DBFloat,
		"ok": schema.DBBool, "on": schema.DBDate, "tags": schema.DBText}
	for _, c := range []struct {
		name               string
		base, mine, theirs map[string]any
		write              map[string]any
		conflicts          []string
	}{
		{name: "device only", base: m("code", "a"), mine: m("code", "b"), theirs: m("code", "a"), write: m("code", "b")},
		{name: "server only", base: m("code", "a"), mine: m("code", "a"), theirs: m("code", "c"), write: m()},
		{name: "disjoint fields", base: m("code", "a", "n", 1), mine: m("code", "b"), theirs: m("code", "a", "n", 2),
			write: m("code", "b")},
		{name: "same change both sides", base: m("code", "a"), mine: m("code", "b"), theirs: m("code", "b"), write: m()},
		{name: "different changes", base: m("code", "a"), mine: m("code", "b"), theirs: m("code", "c"), write: m(),
			conflicts: []string{"code"}},
		{name: "1 equals 1.0 from a snapshot", base: m("n", float64(1)), mine: m("n", 2), theirs: m("n", int64(1)),
			write: m("n", 2)},
		{name: "a number sent as text in an int column", base: m("n", int64(5)), mine: m("n", "5"), theirs: m("n", int64(6)),
			write: m()},
		{name: "blank is null outside text", base: m("w", nil), mine: m("w", " "), theirs: m("w", 3.5), write: m()},
		{name: "blank is a value in text", base: m("code", nil), mine: m("code", ""), theirs: m("code", nil),
			write: m("code", "")},
		{name: "boolean as 1 on SQLite", base: m("ok", false), mine: m("ok", true), theirs: m("ok", true), write: m()},
		{name: "multi-select list vs its stored text", base: m("tags", `["a"]`), mine: m("tags", []any{"a"}),
			theirs: m("tags", `["b"]`), write: m()},
		{name: "field absent from base is null", base: m(), mine: m("code", "x"), theirs: m("code", nil), write: m("code", "x")},
		{name: "clearing on the device", base: m("code", "a"), mine: m("code", nil), theirs: m("code", "a"),
			write: m("code", nil)},
		{name: "clear vs change", base: m("code", "a"), mine: m("code", nil), theirs: m("code", "z"), write: m(),
			conflicts: []string{"code"}},
		{name: "several conflicts sorted", base: m("code", "a", "n", 1), mine: m("n", 2, "code", "b"),
			theirs: m("code", "c", "n", 3), write: m(), conflicts: []string{"code", "n"}},
		{name: "untyped field compares JSON", base: m("x", 1), mine: m("x", 1.0), theirs: m("x", 2), write: m()},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Merge3(MergeInput{Base: c.base, Mine: c.mine, Theirs: c.theirs, Types: types})
			if !reflect.DeepEqual(got.Write, c.write) {
				t.Errorf("write = %v, want %v", got.Write, c.write)
			}
			var fields []string
			for _, cf := range got.Conflicts {
				fields = append(fields, cf.Field)
				if !reflect.DeepEqual(cf.Mine, c.mine[cf.Field]) || !reflect.DeepEqual(cf.Theirs, c.theirs[cf.Field]) ||
					!reflect.DeepEqual(cf.Base, c.base[cf.Field]) {
					t.Errorf("conflict %v does not hold the three values", cf)
				}
			}
			if !reflect.DeepEqual(fields, c.conflicts) {
				t.Errorf("conflicts = %v, want %v", fields, c.conflicts)
			}
		})
	}
}

// m builds a field map from name, value pairs.
func m(kv ...any) map[string]any {
	out := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// FuzzMerge3 checks the merge's rules on any three JSON objects (values
// compared untyped, and typed as text, int and float):
//   - a field changed on the device only is written with the device's value;
//   - a field changed on the server only is neither written nor a conflict;
//   - a field changed on both sides to one value is not a conflict;
//   - a conflict exists iff both sides changed a field to different values;
//   - nothing is written for a field the device did not set, nor for a
//     conflict (the server value stays).
func FuzzMerge3(f *testing.F) {
	f.Add(`{"a":1}`, `{"a":2}`, `{"a":1}`, uint8(0))
	f.Add(`{"a":"x"}`, `{"a":"y"}`, `{"a":"z"}`, uint8(1))
	f.Add(`{"a":1,"b":null}`, `{"b":""}`, `{"a":1.0,"b":"q"}`, uint8(2))
	f.Add(`{}`, `{"a":[1,2]}`, `{"a":"[1,2]"}`, uint8(1))
	f.Add(`{"n":"5"}`, `{"n":5}`, `{"n":" "}`, uint8(3))
	f.Fuzz(func(t *testing.T, baseJSON, mineJSON, theirsJSON string, typeSel uint8) {
		var base, mine, theirs map[string]any
		if json.Unmarshal([]byte(baseJSON), &base) != nil || json.Unmarshal([]byte(mineJSON), &mine) != nil ||
			json.Unmarshal([]byte(theirsJSON), &theirs) != nil {
			t.Skip()
		}
		types := map[string]schema.DBType{}
		typed := typeSel%4 != 0
		if typed {
			dt := []schema.DBType{schema.DBText, schema.DBInt, schema.DBFloat}[typeSel%4-1]
			for _, mp := range []map[string]any{base, mine, theirs} {
				for k := range mp {
					types[k] = dt
				}
			}
		}
		got := Merge3(MergeInput{Base: base, Mine: mine, Theirs: theirs, Types: types})
		inConflict := map[string]bool{}
		for _, c := range got.Conflicts {
			if inConflict[c.Field] {
				t.Fatalf("field %q in conflict twice", c.Field)
			}
			inConflict[c.Field] = true
		}
		for k := range got.Write {
			if _, ok := mine[k]; !ok {
				t.Fatalf("wrote %q, which the device did not set", k)
			}
			if inConflict[k] {
				t.Fatalf("wrote %q, which is in conflict", k)
			}
		}
		for k, v := range mine {
			same := func(a, b any) bool { return SameValue(types[k], typed, a, b) }
			mineChanged, theirsChanged := !same(v, base[k]), !same(theirs[k], base[k])
			_, written := got.Write[k]
			switch {
			case mineChanged && !theirsChanged:
				if !written || !reflect.DeepEqual(got.Write[k], v) {
					t.Fatalf("device-only change of %q not applied: %v", k, got.Write)
				}
			case !mineChanged && written:
				t.Fatalf("%q unchanged on the device but written", k)
			}
			wantConflict := mineChanged && theirsChanged && !same(v, theirs[k])
			if inConflict[k] != wantConflict {
				t.Fatalf("conflict on %q = %v, want %v (base %v mine %v theirs %v)", k, inConflict[k], wantConflict, base[k], v, theirs[k])
			}
		}
		// Equality is symmetric and reflexive, or the rules above mean nothing.
		for k, v := range mine {
			if !SameValue(types[k], typed, v, v) {
				t.Fatalf("%v is not the same as itself", v)
			}
			if SameValue(types[k], typed, v, base[k]) != SameValue(types[k], typed, base[k], v) {
				t.Fatalf("SameValue not symmetric on %v, %v", v, base[k])
			}
		}
	})
}
