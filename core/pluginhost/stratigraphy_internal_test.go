package pluginhost

import (
	"testing"

	"github.com/strata-archaeo/strata/core/errs"
)

// matrixProto carries records.Matrix's answer to the wire: a dating only
// where the unit has one (a null is no dating, not year 0), each
// relation's order from its code, and a matrix past the bound refused
// with its code rather than sent.
func TestMatrixProto(t *testing.T) {
	m := map[string]any{
		"has_chronology": true,
		"nodes": []map[string]any{
			{"id": int64(1), "label": "US1", "chrono_from": int64(-300), "chrono_to": int64(-250), "chrono_label": "Hellenistic"},
			{"id": int64(2), "label": "US2", "chrono_from": nil, "chrono_to": int64(0), "chrono_label": nil},
			{"id": int64(3), "label": nil},
		},
		"relations": []map[string]any{
			{"id": int64(7), "first": int64(1), "second": int64(2), "relation": int64(6)},
			{"id": int64(8), "first": int64(2), "second": int64(3), "relation": int64(3)},
			{"id": int64(9), "first": int64(1), "second": int64(3), "relation": int64(10)},
		},
	}
	out, err := matrixProto(m)
	if err != nil {
		t.Fatal(err)
	}
	if !out.GetHasChronology() || len(out.GetUnits()) != 3 || len(out.GetRelations()) != 3 {
		t.Fatalf("%v", out)
	}
	u1, u2, u3 := out.GetUnits()[0], out.GetUnits()[1], out.GetUnits()[2]
	if u1.ChronoFrom == nil || *u1.ChronoFrom != -300 || u1.GetChronoTo() != -250 || u1.GetChronoLabel() != "Hellenistic" || u1.GetLabel() != "US1" {
		t.Errorf("US1: %v", u1)
	}
	if u2.ChronoFrom != nil || u2.ChronoTo == nil || *u2.ChronoTo != 0 || u2.GetChronoLabel() != "" {
		t.Errorf("US2: %v", u2)
	}
	if u3.ChronoFrom != nil || u3.ChronoTo != nil || u3.GetLabel() != "" {
		t.Errorf("US3: %v", u3)
	}
	for i, want := range []string{"above", "below", "same"} {
		if r := out.GetRelations()[i]; r.GetOrder() != want {
			t.Errorf("relation %d (code %d): %q, want %q", r.GetId(), r.GetRelation(), r.GetOrder(), want)
		}
	}

	for _, n := range []int{maxStratRelations, maxStratRelations + 1} {
		rels := make([]map[string]any, n)
		for i := range rels {
			rels[i] = map[string]any{"id": int64(i + 1), "first": int64(1), "second": int64(2), "relation": int64(5)}
		}
		_, err := matrixProto(map[string]any{"nodes": []map[string]any{}, "relations": rels})
		e, ok := errs.As(err)
		switch {
		case n <= maxStratRelations && err != nil:
			t.Errorf("%d relations: %v", n, err)
		case n > maxStratRelations && (!ok || e.Code != "stratigraphy_too_large"):
			t.Errorf("%d relations: %v, want stratigraphy_too_large", n, err)
		}
	}
}
