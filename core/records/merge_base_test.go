package records

import (
	"reflect"
	"testing"

	"github.com/strata-archaeo/strata/core/schema"
)

// With the base gone (retention pruned it), nothing tells whose change a
// difference is: every field the device sets to a value other than the
// server's conflicts, with a null base, whatever Base holds; a field set
// to the server's value (as the save would store it) is no change.
func TestMerge3BaseUnknown(t *testing.T) {
	types := map[string]schema.DBType{"code": schema.DBText, "n": schema.DBInt}
	for _, c := range []struct {
		name         string
		base, mine   map[string]any
		theirs       map[string]any
		conflicts    []string
		conflictBase []any
	}{
		// A stale base equal to the device's value would make the
		// device's change look like no change; one equal to the server's
		// would let it overwrite the server's: neither counts.
		{name: "base like theirs", base: m("code", "b"), mine: m("code", "mine"), theirs: m("code", "b"), conflicts: []string{"code"}, conflictBase: []any{nil}},
		{name: "base like mine", base: m("code", "mine"), mine: m("code", "mine"), theirs: m("code", "b"), conflicts: []string{"code"}, conflictBase: []any{nil}},
		{name: "same value", base: m("n", 1), mine: m("n", "7"), theirs: m("n", int64(7))},
		{name: "two fields", base: nil, mine: m("code", "x", "n", 2), theirs: m("code", "x", "n", 3), conflicts: []string{"n"}, conflictBase: []any{nil}},
		{name: "nothing set", base: m("code", "a"), mine: map[string]any{}, theirs: m("code", "b")},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Merge3(MergeInput{Base: c.base, Mine: c.mine, Theirs: c.theirs, Types: types, BaseUnknown: true})
			if len(r.Write) != 0 {
				t.Errorf("writes %v with the base unknown", r.Write)
			}
			var got []string
			var bases []any
			for _, cf := range r.Conflicts {
				got, bases = append(got, cf.Field), append(bases, cf.Base)
			}
			if !reflect.DeepEqual(got, c.conflicts) || !reflect.DeepEqual(bases, c.conflictBase) {
				t.Errorf("conflicts %v (bases %v), want %v (%v)", got, bases, c.conflicts, c.conflictBase)
			}
		})
	}
}
